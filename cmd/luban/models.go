package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/lubanhq/luban/model"
	"github.com/lubanhq/luban/model/openai"
	"github.com/lubanhq/luban/model/scripted"
	"github.com/lubanhq/luban/store"
	"github.com/lubanhq/luban/store/postgres"
)

// providerFor turns --model into a provider (DESIGN §6, §8). With no
// --model: openai:<OPENAI_MODEL or gpt-4o-mini> when OPENAI_API_KEY or
// OPENAI_BASE_URL is set, otherwise the scripted demo.
func providerFor(spec string, getenv func(string) string) (model.Provider, error) {
	if spec == "" {
		if getenv("OPENAI_API_KEY") != "" || getenv("OPENAI_BASE_URL") != "" {
			name := getenv("OPENAI_MODEL")
			if name == "" {
				name = "gpt-4o-mini"
			}
			spec = "openai:" + name
		} else {
			spec = "scripted"
		}
	}
	kind, name, _ := strings.Cut(spec, ":")
	switch kind {
	case "scripted":
		if name == "" {
			return scripted.New(scripted.Demo()), nil
		}
		sc, err := scripted.Load(name)
		if err != nil {
			return nil, fmt.Errorf("--model %s: %w", spec, err)
		}
		return scripted.New(sc), nil
	case "openai":
		if name == "" {
			return nil, &usageError{"--model openai:<name> needs a model name, e.g. openai:gpt-4o-mini"}
		}
		base, key := getenv("OPENAI_BASE_URL"), getenv("OPENAI_API_KEY")
		if key == "" && base == "" {
			return nil, fmt.Errorf("--model %s needs OPENAI_API_KEY (or OPENAI_BASE_URL for a local server such as Ollama, vLLM or llama.cpp)", spec)
		}
		if base == "" {
			base = "https://api.openai.com/v1"
		}
		return openai.New(openai.Options{BaseURL: base, APIKey: key, Model: name})
	default:
		return nil, &usageError{fmt.Sprintf("--model %q: use openai:<name>, anthropic:<name>, scripted or scripted:<file>", spec)}
	}
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
