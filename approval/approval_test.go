package approval_test

import (
	"encoding/json"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/lubanhq/luban/api"
	"github.com/lubanhq/luban/approval"
	"github.com/lubanhq/luban/askuser"
	"github.com/lubanhq/luban/model"
	"github.com/lubanhq/luban/tool"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/golden")

func requireGolden(t *testing.T, name string, v any) {
	t.Helper()
	got, err := json.MarshalIndent(v, "", "  ")
	require.NoError(t, err)
	got = append(got, '\n')
	path := filepath.Join("testdata", "golden", name)
	if *update {
		require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
		require.NoError(t, os.WriteFile(path, got, 0o644))
	}
	want, err := os.ReadFile(path)
	require.NoError(t, err, "missing golden file; run go test ./approval -update")
	require.Equal(t, string(want), string(got), "%s drifted; run go test ./approval -update and review the diff", path)
}

func writeFileSpec() model.ToolSpec { return tool.WriteFile("/ws").Spec() }

func prompt(t *testing.T) *api.Prompt {
	t.Helper()
	p, err := approval.NewPrompt(writeFileSpec(), ` {"path": "notes/plan.md", "content": "# Plan\n"} `)
	require.NoError(t, err)
	return p
}

func TestInputRequestShape(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	req := api.InputRequest{ID: "ask_1", ToolCallID: "call_1", SessionID: "sess_1", RunID: "run_1", Prompt: *prompt(t),
		CreatedAt: at, ExpiresAt: at.Add(24 * time.Hour), Resumable: true}
	requireGolden(t, "input_request.json", req)
	b, err := json.Marshal(req)
	require.NoError(t, err)
	back, err := approval.DecodeRequest(b)
	require.NoError(t, err)
	require.Equal(t, req, *back)
	_, err = approval.DecodeRequest([]byte(`{"tool":"ask_user"}`))
	require.Error(t, err)
}

func TestNewPromptRefusesWhatTheToolWouldRefuse(t *testing.T) {
	t.Parallel()
	cases := map[string]string{
		`{"path":"a"}`:                        "invalid arguments for write_file: content: required but missing",
		`{"path":"a","content":"x","mode":1}`: "invalid arguments for write_file: mode: unknown field: the tool's schema does not allow it",
		`{"path":"","content":3}`:             "invalid arguments for write_file: content: got number, want string; path: minLength: got 0, want 1",
		`[1]`:                                 "invalid arguments for write_file: must be a JSON object",
		`{"path":`:                            "invalid arguments for write_file: not valid JSON: unexpected EOF",
	}
	for args, want := range cases {
		_, err := approval.NewPrompt(writeFileSpec(), args)
		require.EqualError(t, err, want, args)
		var ae *approval.ArgsError
		require.True(t, errors.As(err, &ae), args)
	}
	_, err := approval.NewPrompt(writeFileSpec(), strings.Repeat(" ", 10)+`{"content":"`+strings.Repeat("x", approval.MaxArgumentsBytes)+`"}`)
	require.ErrorContains(t, err, "too large")
	p, err := approval.NewPrompt(model.ToolSpec{Name: "noargs"}, "")
	require.NoError(t, err, "no schema and no arguments: an empty object")
	require.JSONEq(t, `{}`, string(p.Arguments))
	_, err = approval.NewPrompt(model.ToolSpec{Name: "broken", Parameters: json.RawMessage(`{"type":"objekt"}`)}, "{}")
	require.Error(t, err)
	var ae *approval.ArgsError
	require.False(t, errors.As(err, &ae), "a broken schema is the tool's defect, not the model's")
}

func TestValidateAnswer(t *testing.T) {
	t.Parallel()
	p := prompt(t)
	ok := map[string]approval.Answer{
		"approve":          {Decision: api.DecisionApprove},
		"approve remember": {Decision: api.DecisionApprove, Remember: api.RememberSession},
		"edit":             {Decision: api.DecisionEdit, Arguments: json.RawMessage(`{ "path": "notes/plan.md", "content": "# Plan v2\n" }`)},
		"reject":           {Decision: api.DecisionReject, Message: "不要写这个文件"},
		"reject silently":  {Decision: api.DecisionReject},
		"cancel":           {Decision: "whatever", Arguments: json.RawMessage(`7`), Cancelled: true},
		"approve null":     {Decision: api.DecisionApprove, Arguments: json.RawMessage(`null`)},
	}
	got := map[string]approval.Answer{}
	for name, a := range ok {
		n, err := approval.ValidateAnswer(p, a)
		require.NoError(t, err, name)
		got[name] = n
	}
	require.Equal(t, approval.Answer{Cancelled: true}, got["cancel"], "a cancel is never validated")
	require.Equal(t, `{"path":"notes/plan.md","content":"# Plan v2\n"}`, string(got["edit"].Arguments), "edited arguments are kept compact")
	require.Nil(t, got["approve null"].Arguments)
	requireGolden(t, "answers_valid.json", got)

	bad := map[string]approval.Answer{
		"no decision":        {},
		"unknown decision":   {Decision: "yes"},
		"edit without args":  {Decision: api.DecisionEdit},
		"edit not object":    {Decision: api.DecisionEdit, Arguments: json.RawMessage(`"x"`)},
		"edit invalid":       {Decision: api.DecisionEdit, Arguments: json.RawMessage(`{"path":"","content":1,"extra":true}`)},
		"edit missing":       {Decision: api.DecisionEdit, Arguments: json.RawMessage(`{"path":"a"}`)},
		"approve with args":  {Decision: api.DecisionApprove, Arguments: json.RawMessage(`{}`)},
		"reject remember":    {Decision: api.DecisionReject, Remember: api.RememberSession},
		"bad remember":       {Decision: api.DecisionApprove, Remember: "forever"},
		"message on approve": {Decision: api.DecisionApprove, Message: "ok"},
		"message too long":   {Decision: api.DecisionReject, Message: strings.Repeat("长", approval.MaxMessageLen+1)},
	}
	details := map[string][]api.FieldError{}
	for name, a := range bad {
		_, err := approval.ValidateAnswer(p, a)
		var ae *askuser.AnswerError
		require.True(t, errors.As(err, &ae), "%s: %v", name, err)
		require.NotEmpty(t, ae.Details, name)
		details[name] = ae.Details
	}
	requireGolden(t, "answers_invalid.json", details)
}

func TestResultsAndAudit(t *testing.T) {
	t.Parallel()
	p := prompt(t)
	edited := json.RawMessage(`{"path":"notes/plan.md","content":"# Plan v2\n"}`)
	ran := api.ToolResult{Content: "wrote 10 bytes to notes/plan.md"}
	results := map[string]api.ToolResult{
		"edited":          approval.EditedResult(p, edited, ran),
		"edited failed":   approval.EditedResult(p, edited, api.ToolResult{Content: "cannot write", IsError: true}),
		"rejected":        approval.RejectedResult(p, "写到 docs/ 下面，\"不是\" <notes/> & co"),
		"rejected silent": approval.RejectedResult(p, ""),
		"cancelled":       approval.CancelledResult(p),
		"expired":         approval.ExpiredResult(p),
		"interrupted":     approval.InterruptedResult("write_file"),
	}
	for name, r := range results {
		if name != "edited" {
			require.True(t, r.IsError, name)
		}
	}
	require.False(t, results["edited"].IsError)
	requireGolden(t, "results.json", results)

	answers := map[string]approval.Answer{
		"approve": {Decision: api.DecisionApprove, Remember: api.RememberSession},
		"edit":    {Decision: api.DecisionEdit, Arguments: edited},
		"reject":  {Decision: api.DecisionReject, Message: "no"},
	}
	audits := map[string]approval.AuditSummary{}
	for name, a := range answers {
		audits[name] = approval.Summarize(p, a, "alice")
	}
	audits["cancelled"] = approval.Summarize(p, approval.Answer{Cancelled: true}, "bob")
	audits["expired"] = approval.Summarize(p, approval.Answer{}, "")
	requireGolden(t, "audit.json", audits)
	for _, s := range audits {
		b, _ := json.Marshal(s)
		require.NotContains(t, string(b), "Plan", "arguments never reach the audit")
		require.NotContains(t, string(b), `"no"`, "messages never reach the audit")
	}
}

// A tool's schema (an MCP server's inputSchema) that refers to a file is
// refused as a broken schema: the file is not read, so its content reaches
// neither the model's ToolResult nor the person, and a missing file gives
// the same error as a present one.
func TestNewPromptLoadsNoReference(t *testing.T) {
	t.Parallel()
	secret := filepath.Join(t.TempDir(), "secret.json")
	require.NoError(t, os.WriteFile(secret, []byte(`{"enum":["TOP-SECRET-VALUE"]}`), 0o600))
	spec := model.ToolSpec{Name: "srv__t", Parameters: json.RawMessage(`{"type":"object","properties":{"x":{"$ref":"file://` + secret + `"}}}`)}
	_, present := approval.NewPrompt(spec, `{"x":"guess"}`)
	require.Error(t, present)
	require.NotContains(t, present.Error(), "TOP-SECRET-VALUE")
	require.Contains(t, present.Error(), "external references are not allowed")
	var ae *approval.ArgsError
	require.False(t, errors.As(present, &ae), "the server's defect, not the model's")
	require.NoError(t, os.Remove(secret))
	_, missing := approval.NewPrompt(spec, `{"x":"guess"}`)
	require.Equal(t, present.Error(), missing.Error())
}
