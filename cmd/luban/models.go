package main

import (
	"context"
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/lubanhq/luban/model"
	"github.com/lubanhq/luban/model/anthropic"
	"github.com/lubanhq/luban/model/openai"
	"github.com/lubanhq/luban/model/scripted"
	"github.com/lubanhq/luban/store"
	"github.com/lubanhq/luban/store/postgres"
)

// providerFor turns --model into a provider (docs/design.md §6, §8, issue 6). With no
// --model: openai:<OPENAI_MODEL or gpt-4o-mini> when OPENAI_API_KEY or
// OPENAI_BASE_URL is set, else anthropic:<ANTHROPIC_MODEL or
// claude-sonnet-4-5> when ANTHROPIC_API_KEY is set, otherwise the scripted
// demo. A chosen model whose key is missing is a startup error that names
// the variable (docs/models.md). A scripted scenario streams at its own pace
// (the demo's "delay"), or at LUBAN_SCRIPTED_DELAY (a Go duration; 0 streams
// at once) when that is set.
func providerFor(spec string, getenv func(string) string) (model.Provider, error) {
	if spec == "" {
		switch {
		case getenv("OPENAI_API_KEY") != "" || getenv("OPENAI_BASE_URL") != "":
			spec = "openai:" + or(getenv("OPENAI_MODEL"), "gpt-4o-mini")
		case getenv("ANTHROPIC_API_KEY") != "":
			spec = "anthropic:" + or(getenv("ANTHROPIC_MODEL"), "claude-sonnet-4-5")
		default:
			spec = "scripted"
		}
	}
	kind, name, _ := strings.Cut(spec, ":")
	switch kind {
	case "scripted":
		sc := scripted.Demo()
		if name != "" {
			var err error
			if sc, err = scripted.Load(name); err != nil {
				return nil, fmt.Errorf("--model %s: %w", spec, err)
			}
		}
		p := scripted.New(sc)
		// LUBAN_SCRIPTED_DELAY paces any scenario's text ("0": at once, as tests want).
		if v := getenv("LUBAN_SCRIPTED_DELAY"); v != "" {
			d, err := time.ParseDuration(v)
			if err != nil || d < 0 {
				return nil, fmt.Errorf("LUBAN_SCRIPTED_DELAY=%q: a duration such as 15ms or 0 is required", v)
			}
			p.SetDelay(d)
		}
		return p, nil
	case "openai":
		if name == "" {
			return nil, &usageError{"--model (LUBAN_MODEL) openai:<name> needs a model name, e.g. openai:gpt-4o-mini"}
		}
		base, key := getenv("OPENAI_BASE_URL"), getenv("OPENAI_API_KEY")
		if key == "" && base == "" {
			return nil, fmt.Errorf("--model %s needs OPENAI_API_KEY (or OPENAI_BASE_URL for a local server such as Ollama, vLLM or llama.cpp); see docs/models.md", spec)
		}
		if key == "" && needsKey(base) {
			return nil, fmt.Errorf("--model %s: OPENAI_BASE_URL %s is a hosted API and OPENAI_API_KEY is not set; see docs/models.md", spec, base)
		}
		if base == "" {
			base = "https://api.openai.com/v1"
		}
		return openai.New(openai.Options{BaseURL: base, APIKey: key, Model: name})
	case "anthropic":
		if name == "" {
			return nil, &usageError{"--model (LUBAN_MODEL) anthropic:<name> needs a model name, e.g. anthropic:claude-sonnet-4-5"}
		}
		base, key := getenv("ANTHROPIC_BASE_URL"), getenv("ANTHROPIC_API_KEY")
		if key == "" && (base == "" || needsKey(base)) {
			return nil, fmt.Errorf("--model %s needs ANTHROPIC_API_KEY (ANTHROPIC_BASE_URL may point at a gateway); see docs/models.md", spec)
		}
		var budget int64
		if v := getenv("ANTHROPIC_THINKING_BUDGET"); v != "" {
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil || n < 0 || (n > 0 && n < anthropic.MinThinkingBudget) {
				return nil, fmt.Errorf("ANTHROPIC_THINKING_BUDGET=%q: want 0 (off) or a number of tokens >= %d; see docs/models.md", v, anthropic.MinThinkingBudget)
			}
			budget = n
		}
		return anthropic.New(anthropic.Options{BaseURL: base, APIKey: key, Model: name, ThinkingBudget: budget})
	default:
		return nil, &usageError{fmt.Sprintf("--model (LUBAN_MODEL) %q: use openai:<name>, anthropic:<name>, scripted or scripted:<file>", spec)}
	}
}

// hostedAPIs are the hosts of hosted model APIs that refuse every request
// without a key, so a missing key is reported at startup rather than as a
// 401 on the first model call.
var hostedAPIs = []string{
	"api.openai.com", "api.deepseek.com", "dashscope.aliyuncs.com", "dashscope-intl.aliyuncs.com",
	"api.anthropic.com", "openrouter.ai", "api.together.xyz", "api.groq.com", "api.mistral.ai",
}

// needsKey reports whether base is one of hostedAPIs.
func needsKey(base string) bool {
	u, err := url.Parse(base)
	if err != nil {
		return false
	}
	return slices.Contains(hostedAPIs, strings.ToLower(u.Hostname()))
}

func or(v, def string) string {
	if v == "" {
		return def
	}
	return v
}

// openPostgres opens --db postgres://… (issue 7). Pool settings travel in the
// URL (pool_max_conns, pool_min_conns, pool_max_conn_lifetime, …; see
// docs/deploy.md); the schema is the URL's search_path.
func openPostgres(ctx context.Context, url string) (store.Store, error) {
	st, err := postgres.Open(ctx, url, nil)
	if err != nil {
		return nil, fmt.Errorf("--db %s: %w", describeDB(url), err)
	}
	return st, nil
}
