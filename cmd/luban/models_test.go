package main

import (
	"bytes"
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/lubanhq/luban/internal/testkit/fakeanthropic"
	"github.com/lubanhq/luban/internal/testkit/fakeopenai"
	"github.com/lubanhq/luban/model"
	"github.com/lubanhq/luban/model/scripted"
)

func envOf(m map[string]string) func(string) string {
	return func(k string) string { return m[k] }
}

func TestProviderForChoosesAndNamesMissingKeys(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		spec    string
		env     map[string]string
		want    string // provider name on success
		wantErr string // substring of the error otherwise
		usage   bool   // the error is a usage error (exit 2)
	}{
		{name: "nothing set is the scripted demo", want: "scripted:demo"},
		{name: "the demo without pacing", env: map[string]string{"LUBAN_SCRIPTED_DELAY": "0"}, want: "scripted:demo"},
		{name: "the demo's pace not a duration", spec: "scripted", env: map[string]string{"LUBAN_SCRIPTED_DELAY": "fast"}, wantErr: "LUBAN_SCRIPTED_DELAY"},
		{name: "openai key picks openai", env: map[string]string{"OPENAI_API_KEY": "sk"}, want: "openai:gpt-4o-mini"},
		{name: "openai model variable", env: map[string]string{"OPENAI_BASE_URL": "http://127.0.0.1:11434/v1", "OPENAI_MODEL": "qwen2.5:7b"}, want: "openai:qwen2.5:7b"},
		{name: "anthropic key picks anthropic", env: map[string]string{"ANTHROPIC_API_KEY": "sk-ant"}, want: "anthropic:claude-sonnet-4-5"},
		{name: "anthropic model variable", env: map[string]string{"ANTHROPIC_API_KEY": "sk-ant", "ANTHROPIC_MODEL": "claude-haiku-4-5"}, want: "anthropic:claude-haiku-4-5"},
		{name: "explicit anthropic", spec: "anthropic:claude-opus-4-1", env: map[string]string{"ANTHROPIC_API_KEY": "sk-ant"}, want: "anthropic:claude-opus-4-1"},
		{name: "anthropic without key", spec: "anthropic:claude-sonnet-4-5", env: map[string]string{"OPENAI_API_KEY": "sk"}, wantErr: "needs ANTHROPIC_API_KEY"},
		{name: "anthropic base url of the real API without key", spec: "anthropic:claude-sonnet-4-5", env: map[string]string{"ANTHROPIC_BASE_URL": "https://api.anthropic.com"}, wantErr: "needs ANTHROPIC_API_KEY"},
		{name: "anthropic gateway without key", spec: "anthropic:claude-sonnet-4-5", env: map[string]string{"ANTHROPIC_BASE_URL": "http://127.0.0.1:4000"}, want: "anthropic:claude-sonnet-4-5"},
		{name: "anthropic without a name", spec: "anthropic:", env: map[string]string{"ANTHROPIC_API_KEY": "k"}, wantErr: "needs a model name", usage: true},
		{name: "openai without key", spec: "openai:gpt-4o", env: map[string]string{"ANTHROPIC_API_KEY": "k"}, wantErr: "needs OPENAI_API_KEY"},
		{name: "deepseek base url without key", spec: "openai:deepseek-chat", env: map[string]string{"OPENAI_BASE_URL": "https://api.deepseek.com/v1"}, wantErr: "OPENAI_API_KEY is not set"},
		{name: "qwen compatible mode without key", spec: "openai:qwen-plus", env: map[string]string{"OPENAI_BASE_URL": "https://dashscope.aliyuncs.com/compatible-mode/v1"}, wantErr: "OPENAI_API_KEY is not set"},
		{name: "ollama needs no key", spec: "openai:qwen2.5:7b", env: map[string]string{"OPENAI_BASE_URL": "http://127.0.0.1:11434/v1"}, want: "openai:qwen2.5:7b"},
		{name: "unknown kind", spec: "gemini:pro", wantErr: "use openai:<name>, anthropic:<name>", usage: true},
		{name: "anthropic thinking budget", spec: "anthropic:claude-sonnet-4-5", env: map[string]string{"ANTHROPIC_API_KEY": "k", "ANTHROPIC_THINKING_BUDGET": "2048"}, want: "anthropic:claude-sonnet-4-5"},
		{name: "anthropic thinking budget too small", spec: "anthropic:claude-sonnet-4-5", env: map[string]string{"ANTHROPIC_API_KEY": "k", "ANTHROPIC_THINKING_BUDGET": "100"}, wantErr: "ANTHROPIC_THINKING_BUDGET"},
		{name: "anthropic thinking budget not a number", spec: "anthropic:claude-sonnet-4-5", env: map[string]string{"ANTHROPIC_API_KEY": "k", "ANTHROPIC_THINKING_BUDGET": "lots"}, wantErr: "want 0 (off)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			p, err := providerFor(tc.spec, envOf(tc.env))
			if tc.wantErr != "" {
				require.ErrorContains(t, err, tc.wantErr)
				var u *usageError
				require.Equal(t, tc.usage, errors.As(err, &u))
				return
			}
			require.NoError(t, err)
			require.Equal(t, tc.want, p.Name())
		})
	}
}

func TestProviderForTalksToTheConfiguredServer(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	req := &model.Request{Messages: []model.Message{{Role: model.RoleUser, Content: "hi"}}}

	fa := fakeanthropic.New(t)
	fa.Push(fakeanthropic.Turn{Text: "from claude"})
	p, err := providerFor("anthropic:claude-test", envOf(map[string]string{"ANTHROPIC_BASE_URL": fa.URL(), "ANTHROPIC_API_KEY": "sk-ant-secret"}))
	require.NoError(t, err)
	resp, err := p.Generate(ctx, req, nil)
	require.NoError(t, err)
	require.Equal(t, "from claude", resp.Message.Content)
	got := fa.Requests()[0]
	require.Equal(t, "claude-test", got.Model)
	require.Equal(t, "Bearer sk-ant-secret", got.Header.Get("Authorization"))

	fo := fakeopenai.New(t)
	fo.Push(fakeopenai.Turn{Text: "from gpt"})
	p, err = providerFor("", envOf(map[string]string{"OPENAI_BASE_URL": fo.URL(), "OPENAI_MODEL": "local-model"}))
	require.NoError(t, err)
	resp, err = p.Generate(ctx, req, nil)
	require.NoError(t, err)
	require.Equal(t, "from gpt", resp.Message.Content)
	require.Equal(t, "local-model", fo.Requests()[0].Model)
}

func TestServeStopsAtStartupWithoutTheKey(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	for spec, variable := range map[string]string{
		"anthropic:claude-sonnet-4-5": "ANTHROPIC_API_KEY",
		"openai:gpt-4o-mini":          "OPENAI_API_KEY",
	} {
		var out bytes.Buffer
		s := &Serve{Stdout: &out, Stderr: &out, Getenv: envOf(map[string]string{"LUBAN_DB": "memory"})}
		err := s.Run(ctx, []string{"--model", spec, "--addr", "127.0.0.1:0"})
		require.ErrorContains(t, err, variable, spec)
		require.NotContains(t, out.String(), "serving", "it never listened")
	}
}

// ANTHROPIC_THINKING_BUDGET turns extended thinking on: the request asks for
// it with that budget (docs/models.md "Reasoning models").
func TestAnthropicThinkingBudgetReachesTheRequest(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	fa := fakeanthropic.New(t)
	fa.EnforceThinking()
	fa.Push(fakeanthropic.Turn{Thinking: "想", Text: "ok"})
	p, err := providerFor("anthropic:claude-test", envOf(map[string]string{"ANTHROPIC_BASE_URL": fa.URL(), "ANTHROPIC_API_KEY": "k", "ANTHROPIC_THINKING_BUDGET": "2048"}))
	require.NoError(t, err)
	resp, err := p.Generate(ctx, &model.Request{Messages: []model.Message{{Role: model.RoleUser, Content: "hi"}}}, nil)
	require.NoError(t, err)
	require.Equal(t, "想", resp.Message.Reasoning.Text)
	require.Equal(t, map[string]any{"type": "enabled", "budget_tokens": float64(2048)}, fa.Requests()[0].Body["thinking"])
}

// The demo streams at its own pace; LUBAN_SCRIPTED_DELAY sets any scenario's
// (0: at once, which the tests use).
func TestScriptedDelayFromEnvironment(t *testing.T) {
	t.Parallel()
	delay := func(env map[string]string) time.Duration {
		p, err := providerFor("scripted", envOf(env))
		require.NoError(t, err)
		return p.(*scripted.Provider).Delay()
	}
	require.Positive(t, delay(nil))
	require.Zero(t, delay(map[string]string{"LUBAN_SCRIPTED_DELAY": "0"}))
	require.Equal(t, 250*time.Millisecond, delay(map[string]string{"LUBAN_SCRIPTED_DELAY": "250ms"}))
}
