package acceptance

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/lubanhq/luban/api"
	"github.com/lubanhq/luban/approval"
	"github.com/lubanhq/luban/askuser"
	"github.com/lubanhq/luban/elicit"
	"github.com/lubanhq/luban/internal/schemaerr"
	"github.com/lubanhq/luban/model"
	"github.com/lubanhq/luban/tool"
)

// codedView is what a client words a detail from: its field path, code and
// params (the message is the English fallback and is not compared here).
type codedView struct {
	Field  string         `json:"field"`
	Code   api.FieldCode  `json:"code"`
	Params map[string]any `json:"params,omitempty"`
}

// coded is the JSON of ds's field, code and params, as a client receives
// them.
func coded(t *testing.T, ds []api.FieldError) string {
	t.Helper()
	out := make([]codedView, len(ds))
	for i, d := range ds {
		out[i] = codedView{Field: d.Field, Code: d.Code, Params: d.Params}
	}
	b, err := json.Marshal(out)
	require.NoError(t, err)
	return string(b)
}

func answerDetails(t *testing.T, err error) []api.FieldError {
	t.Helper()
	var ae *askuser.AnswerError
	require.True(t, errors.As(err, &ae), "want *askuser.AnswerError, got %T %v", err, err)
	return ae.Details
}

// Every producer of field errors sets a code and the params its wording
// needs (docs/design.md "Field error codes"): ask_user and AskUser answers,
// approval decisions and edited arguments (JSON Schema keywords), form
// elicitations, a tool's own argument rules (write_file) and request bodies.
func TestFieldCodesOfEveryProducer(t *testing.T) {
	t.Parallel()
	ask := func(tool, args string) *api.Prompt {
		p, err := askuser.ParseArgs(tool, args)
		require.NoError(t, err)
		return p
	}
	single := ask(api.ToolAskUser, `{"title":"t","mode":"single","options":[{"id":"a","label":"A"},{"id":"b","label":"B"}]}`)
	multiple := ask(api.ToolAskUser, `{"title":"t","mode":"multiple","options":[{"id":"a","label":"A"},{"id":"b","label":"B"}]}`)
	toggle := ask(api.ToolAskUser, `{"title":"t","mode":"toggle","options":[{"id":"a","label":"A"}]}`)
	text := ask(api.ToolAskUser, `{"title":"t","mode":"text"}`)
	number := ask(api.ToolAskUser, `{"title":"t","mode":"number"}`)
	date := ask(api.ToolAskUser, `{"title":"t","mode":"date"}`)
	dir := ask(api.ToolAskUser, `{"title":"t","mode":"directory"}`)
	batch := ask(api.ToolAskUserBatch, `{"questions":[{"question":"Which database?","header":"DB","options":[{"label":"SQLite","description":""},{"label":"PostgreSQL","description":""}]}]}`)
	ws := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(ws, "file.txt"), []byte("x"), 0o644))
	require.NoError(t, os.MkdirAll(filepath.Join(ws, "adir"), 0o755))
	validate := func(p *api.Prompt, a api.Answer) func() error {
		return func() error {
			_, err := askuser.ValidateAnswer(p, a, askuser.AnswerOptions{Workspace: ws})
			return err
		}
	}

	appr, err := approval.NewPrompt(model.ToolSpec{Name: "deploy", Parameters: json.RawMessage(`{"type":"object","properties":{
		"env":{"type":"string","pattern":"^[a-z]+$","maxLength":8},
		"replicas":{"type":"integer","minimum":1,"maximum":5},
		"tags":{"type":"array","items":{"type":"string"},"minItems":1,"uniqueItems":true},
		"tier":{"enum":["free","pro"]}
	},"required":["env"],"additionalProperties":false}`)}, `{"env":"prod"}`)
	require.NoError(t, err)
	decide := func(a approval.Answer) func() error {
		return func() error { _, err := approval.ValidateAnswer(appr, a); return err }
	}
	edit := func(args string) func() error {
		return decide(approval.Answer{Decision: api.DecisionEdit, Arguments: json.RawMessage(args)})
	}

	form, err := elicit.Prompt(tool.Elicitation{Server: "s", Mode: "form", Message: "m", RequestedSchema: json.RawMessage(`{"type":"object","properties":{
		"email":{"type":"string","format":"email"},
		"n":{"type":"integer","minimum":1,"maximum":3},
		"note":{"type":"string","minLength":2},
		"pick":{"type":"string","enum":["a","b"]}
	},"required":["n"]}`)})
	require.NoError(t, err)
	url, err := elicit.Prompt(tool.Elicitation{Server: "s", Mode: "url", Message: "m", URL: "https://example.com/x", ElicitationID: "e1"})
	require.NoError(t, err)
	elicitation := func(p *api.Prompt, a elicit.Answer) func() error {
		return func() error { _, err := elicit.ValidateAnswer(p, a); return err }
	}
	accept := func(content string) func() error {
		return elicitation(form, elicit.Answer{Decision: api.DecisionAccept, Content: json.RawMessage(content)})
	}

	writeFile := tool.WriteFile(ws).(tool.ArgsChecker)
	check := func(args string) func() error {
		return func() error {
			return &askuser.AnswerError{Details: writeFile.CheckArgs(json.RawMessage(args))}
		}
	}
	decodeInto := func(v any, body string, strict bool) func() error {
		return func() error {
			dec := json.NewDecoder(strings.NewReader(body))
			if strict {
				dec.DisallowUnknownFields()
			}
			err := dec.Decode(v)
			require.Error(t, err)
			return &askuser.AnswerError{Details: []api.FieldError{schemaerr.Decode(err, "")}}
		}
	}

	for _, tc := range []struct {
		name string
		run  func() error
		want string
	}{
		// ask_user
		{"no question", func() error {
			_, err := askuser.ValidateAnswer(nil, api.Answer{}, askuser.AnswerOptions{})
			return err
		},
			`[{"field":"requestId","code":"no_question"}]`},
		{"unknown option", validate(single, api.Answer{Selections: []string{"z"}}), `[{"field":"selections[0]","code":"unknown_option","params":{"option":"z"}}]`},
		{"single: two", validate(single, api.Answer{Selections: []string{"a", "b"}}), `[{"field":"selections","code":"too_many","params":{"max":1,"got":2}}]`},
		{"single: none", validate(single, api.Answer{}), `[{"field":"selections","code":"too_few","params":{"min":1,"got":0}}]`},
		{"toggle: none", validate(toggle, api.Answer{}), `[{"field":"selections","code":"too_few","params":{"min":1,"got":0}}]`},
		{"custom not allowed", validate(single, api.Answer{Selections: []string{"a"}, CustomInput: "x"}), `[{"field":"customInput","code":"not_allowed"}]`},
		{"duplicate", validate(multiple, api.Answer{Selections: []string{"a", "a"}}), `[{"field":"selections[1]","code":"duplicate","params":{"of":"selections[0]","option":"a"}}]`},
		{"text: blank", validate(text, api.Answer{CustomInput: " \u200b"}), `[{"field":"customInput","code":"required"}]`},
		{"text: too long", validate(text, api.Answer{CustomInput: strings.Repeat("字", askuser.MaxCustomInput+1)}),
			`[{"field":"customInput","code":"too_long","params":{"max":8000,"got":8001,"unit":"characters"}}]`},
		{"text: selections", validate(text, api.Answer{Selections: []string{"a"}, CustomInput: "x"}), `[{"field":"selections","code":"not_allowed"}]`},
		{"text: AskUser answers", validate(text, api.Answer{CustomInput: "x", Answers: []api.QuestionAnswer{{Question: "q"}}}), `[{"field":"answers","code":"conflict_with_answer_kind"}]`},
		{"number: not a number", validate(number, api.Answer{CustomInput: "42xyz"}), `[{"field":"customInput","code":"format","params":{"format":"number"}}]`},
		{"number: overflow", validate(number, api.Answer{CustomInput: "1e400"}), `[{"field":"customInput","code":"out_of_range"}]`},
		{"date: not a day", validate(date, api.Answer{CustomInput: "2023-02-29"}), `[{"field":"customInput","code":"format","params":{"format":"date"}}]`},
		{"directory: outside", validate(dir, api.Answer{CustomInput: "../x"}), `[{"field":"customInput","code":"outside_workspace","params":{"path":"../x"}}]`},
		{"directory: absolute", validate(dir, api.Answer{CustomInput: "/etc"}), `[{"field":"customInput","code":"outside_workspace","params":{"path":"/etc"}}]`},
		{"directory: a file", validate(dir, api.Answer{CustomInput: "file.txt"}), `[{"field":"customInput","code":"not_directory","params":{"path":"file.txt"}}]`},
		{"directory: no workspace", func() error {
			_, err := askuser.ValidateAnswer(dir, api.Answer{CustomInput: "x"}, askuser.AnswerOptions{})
			return err
		}, `[{"field":"customInput","code":"no_workspace"}]`},
		// AskUser
		{"AskUser: missing", validate(batch, api.Answer{}), `[{"field":"answers","code":"required","params":{"question":"Which database?"}}]`},
		{"AskUser: unknown question and label", validate(batch, api.Answer{Answers: []api.QuestionAnswer{
			{Question: "Which database?", Selected: []string{"MySQL"}}, {Question: "Which color?"}}}),
			`[{"field":"answers[0].selected[0]","code":"unknown_option","params":{"option":"MySQL"}},{"field":"answers[1].question","code":"unknown_question","params":{"question":"Which color?"}}]`},
		{"AskUser: selections", validate(batch, api.Answer{Selections: []string{"a"}, Answers: []api.QuestionAnswer{{Question: "Which database?", Selected: []string{"SQLite"}}}}),
			`[{"field":"selections","code":"conflict_with_answer_kind"}]`},

		// approval decisions
		{"approval: no decision", decide(approval.Answer{}), `[{"field":"decision","code":"required","params":{"allowed":["approve","edit","reject"]}}]`},
		{"approval: unknown decision", decide(approval.Answer{Decision: "yes"}), `[{"field":"decision","code":"enum","params":{"allowed":["approve","edit","reject"]}}]`},
		{"approval: arguments with approve", decide(approval.Answer{Decision: api.DecisionApprove, Arguments: json.RawMessage(`{}`)}), `[{"field":"arguments","code":"not_allowed"}]`},
		{"approval: edit without arguments", decide(approval.Answer{Decision: api.DecisionEdit}), `[{"field":"arguments","code":"required"}]`},
		{"approval: remember unknown", decide(approval.Answer{Decision: api.DecisionApprove, Remember: "forever"}), `[{"field":"remember","code":"enum","params":{"allowed":["session"]}}]`},
		{"approval: remember with reject", decide(approval.Answer{Decision: api.DecisionReject, Remember: "session"}), `[{"field":"remember","code":"not_allowed"}]`},
		{"approval: message with approve", decide(approval.Answer{Decision: api.DecisionApprove, Message: "hi"}), `[{"field":"message","code":"not_allowed"}]`},
		{"approval: message too long", decide(approval.Answer{Decision: api.DecisionReject, Message: strings.Repeat("x", approval.MaxMessageLen+1)}),
			`[{"field":"message","code":"too_long","params":{"max":8000,"got":8001,"unit":"characters"}}]`},
		// edited arguments: JSON Schema keywords
		{"arguments: not JSON", edit(`{"env":`), `[{"field":"arguments","code":"invalid_json"}]`},
		{"arguments: not an object", edit(`["prod"]`), `[{"field":"arguments","code":"invalid_type","params":{"expected":"object"}}]`},
		{"arguments: too large", edit(`{"env":"` + strings.Repeat("a", approval.MaxArgumentsBytes) + `"}`),
			`[{"field":"arguments","code":"too_long","params":{"max":` + itoa(int64(approval.MaxArgumentsBytes)) + `,"got":` + itoa(int64(approval.MaxArgumentsBytes+10)) + `,"unit":"bytes"}}]`},
		{"arguments: required and unknown", edit(`{"x":1}`), `[{"field":"arguments.env","code":"required"},{"field":"arguments.x","code":"unknown_field"}]`},
		{"arguments: type", edit(`{"env":3}`), `[{"field":"arguments.env","code":"invalid_type","params":{"expected":"string","got":"number"}}]`},
		{"arguments: pattern and maxLength", edit(`{"env":"PRODUCTION"}`),
			`[{"field":"arguments.env","code":"pattern","params":{"pattern":"^[a-z]+$"}},{"field":"arguments.env","code":"too_long","params":{"max":8,"got":10,"unit":"characters"}}]`},
		{"arguments: minimum", edit(`{"env":"a","replicas":0}`), `[{"field":"arguments.replicas","code":"out_of_range","params":{"min":1}}]`},
		{"arguments: maximum", edit(`{"env":"a","replicas":9}`), `[{"field":"arguments.replicas","code":"out_of_range","params":{"max":5}}]`},
		{"arguments: minItems", edit(`{"env":"a","tags":[]}`), `[{"field":"arguments.tags","code":"too_few","params":{"min":1,"got":0,"unit":"items"}}]`},
		{"arguments: uniqueItems", edit(`{"env":"a","tags":["x","x"]}`), `[{"field":"arguments.tags","code":"duplicate","params":{"of":0}}]`},
		{"arguments: enum", edit(`{"env":"a","tier":"gold"}`), `[{"field":"arguments.tier","code":"enum","params":{"allowed":["free","pro"]}}]`},

		// form elicitations
		{"elicit: no decision", elicitation(form, elicit.Answer{}), `[{"field":"decision","code":"required","params":{"allowed":["accept","decline"]}}]`},
		{"elicit: unknown decision", elicitation(form, elicit.Answer{Decision: "approve"}), `[{"field":"decision","code":"enum","params":{"allowed":["accept","decline"]}}]`},
		{"elicit: decline with content", elicitation(form, elicit.Answer{Decision: api.DecisionDecline, Content: json.RawMessage(`{"n":1}`)}), `[{"field":"content","code":"not_allowed"}]`},
		{"elicit: url accept with content", elicitation(url, elicit.Answer{Decision: api.DecisionAccept, Content: json.RawMessage(`{"n":1}`)}), `[{"field":"content","code":"not_allowed"}]`},
		{"elicit: accept without content", accept(``), `[{"field":"content","code":"required"}]`},
		{"elicit: content not an object", accept(`[1]`), `[{"field":"content","code":"invalid_type","params":{"expected":"object"}}]`},
		{"elicit: content too large", accept(`{"note":"` + strings.Repeat("a", elicit.MaxContentBytes) + `"}`),
			`[{"field":"content","code":"too_long","params":{"max":` + itoa(elicit.MaxContentBytes) + `,"got":` + itoa(elicit.MaxContentBytes+11) + `,"unit":"bytes"}}]`},
		{"elicit: schema keywords", accept(`{"email":"not-an-email","n":1.5,"note":"x","pick":"c"}`),
			`[{"field":"content.email","code":"format","params":{"format":"email"}},` +
				`{"field":"content.n","code":"invalid_type","params":{"expected":"integer","got":"number"}},` +
				`{"field":"content.note","code":"too_short","params":{"min":2,"got":1,"unit":"characters"}},` +
				`{"field":"content.pick","code":"enum","params":{"allowed":["a","b"]}}]`},
		{"elicit: required and range", accept(`{"email":"a@example.com"}`), `[{"field":"content.n","code":"required"}]`},
		{"elicit: above maximum", accept(`{"n":4}`), `[{"field":"content.n","code":"out_of_range","params":{"max":3}}]`},

		// a tool's own rules (tool.ArgsChecker)
		{"write_file: outside", check(`{"path":"../escape.md","content":"x"}`), `[{"field":"path","code":"outside_workspace","params":{"path":"../escape.md"}}]`},
		{"write_file: absolute", check(`{"path":"/etc/passwd","content":"x"}`), `[{"field":"path","code":"outside_workspace","params":{"path":"/etc/passwd"}}]`},
		{"write_file: a directory", check(`{"path":"adir","content":"x"}`), `[{"field":"path","code":"is_directory","params":{"path":"adir"}}]`},
		{"write_file: through a file", check(`{"path":"file.txt/x","content":"x"}`), `[{"field":"path","code":"not_directory","params":{"path":"file.txt/x"}}]`},
		{"write_file: too large", check(`{"path":"a.md","content":"` + strings.Repeat("a", tool.MaxWriteBytes+1) + `"}`),
			`[{"field":"content","code":"too_long","params":{"max":` + itoa(tool.MaxWriteBytes) + `,"got":` + itoa(tool.MaxWriteBytes+1) + `,"unit":"bytes"}}]`},

		// request bodies
		{"body: an array", decodeInto(&api.ChatRequest{}, `["hi"]`, false), `[{"field":"","code":"invalid_type","params":{"expected":"object","got":"array"}}]`},
		{"body: a field of the wrong type", decodeInto(&api.ContinueRequest{}, `{"selections":"a"}`, true), `[{"field":"selections","code":"invalid_type","params":{"expected":"array","got":"string"}}]`},
		{"body: a number for a string", decodeInto(&api.ContinueRequest{}, `{"customInput":-1}`, true), `[{"field":"customInput","code":"invalid_type","params":{"expected":"string","got":"number"}}]`},
		{"body: unknown field", decodeInto(&api.ContinueRequest{}, `{"selection":[]}`, true), `[{"field":"selection","code":"unknown_field"}]`},
		{"body: not JSON", decodeInto(&api.ContinueRequest{}, `{"selections":[}`, true), `[{"field":"","code":"invalid_json","params":{"offset":16}}]`},
		{"body: cut short", decodeInto(&api.ContinueRequest{}, `{"selections":[`, true), `[{"field":"","code":"invalid_json"}]`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ds := answerDetails(t, tc.run())
			require.JSONEq(t, tc.want, coded(t, ds))
			for _, d := range ds {
				require.NotEmpty(t, d.Message, "every detail keeps its English message")
				require.NotRegexp(t, `Go value|api\.|\*`, d.Message, "no Go type names")
			}
		})
	}
}

// A 422 and a 400 carry their details' codes over HTTP: a wrong answer to a
// question, an approval's fields sent to a question, and a chat body that is
// not an object (its message names JSON, not a Go type).
func TestErrorBodiesCarryFieldCodes(t *testing.T) {
	t.Parallel()
	e := setup(t)
	e.model.push(turn{calls: []call{{id: "call_c", name: "ask_user", args: `{"title":"哪个？","mode":"single","options":[{"id":"a","label":"A"},{"id":"b","label":"B"}]}`}}})
	p := e.ask("", "问")

	ae := e.reject(body(p.sessionID, p.req.ID, []string{"z", "a"}, "note"), http.StatusUnprocessableEntity, "invalid_answer")
	require.JSONEq(t, `[{"field":"selections[0]","code":"unknown_option","params":{"option":"z"}},{"field":"customInput","code":"not_allowed"},{"field":"selections","code":"too_many","params":{"max":1,"got":2}}]`,
		coded(t, ae.Error.Details))

	b := body(p.sessionID, p.req.ID, []string{"a"}, "")
	b["decision"] = "approve"
	ae = e.reject(b, http.StatusUnprocessableEntity, "invalid_answer")
	require.JSONEq(t, `[{"field":"decision","code":"conflict_with_answer_kind"}]`, coded(t, ae.Error.Details))
	require.Equal(t, p.req.ID, e.pending(p.sessionID).Pending.ID, "nothing is consumed")

	resp := e.srv.Request("POST", "/api/chat", `["hello"]`, "")
	raw, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	require.NoError(t, err)
	require.Equal(t, http.StatusBadRequest, resp.StatusCode, "%s", raw)
	var out apiError
	require.NoError(t, json.Unmarshal(raw, &out))
	require.Equal(t, "invalid_request", out.Error.Code)
	require.Equal(t, "body must be a JSON object, not array", out.Error.Message)
	require.NotContains(t, string(raw), "ChatRequest")
	require.JSONEq(t, `[{"field":"","code":"invalid_type","params":{"expected":"object","got":"array"}}]`, coded(t, out.Error.Details))

	// The Runner's own 400s name their field too.
	for _, tc := range []struct {
		path string
		body map[string]any
		want string
	}{
		{"/api/chat", map[string]any{"message": "  "}, `[{"field":"message","code":"required"}]`},
		{"/api/chat", map[string]any{"message": "hi", "agent": "nope"}, `[{"field":"agent","code":"enum","params":{"allowed":["` + e.agentName() + `"]}}]`},
		{"/api/chat/continue", map[string]any{"sessionId": p.sessionID, "selections": []string{}}, `[{"field":"requestId","code":"required"}]`},
	} {
		ae := e.expectError(e.srv.Request("POST", tc.path, tc.body, ""), http.StatusBadRequest, "invalid_request")
		require.JSONEq(t, tc.want, coded(t, ae.Error.Details), tc.path)
	}
}

// agentName is the one configured agent's name.
func (e *env) agentName() string {
	e.t.Helper()
	var agents api.AgentList
	e.get("/api/agents", &agents)
	require.Len(e.t, agents.Agents, 1)
	return agents.Agents[0].Name
}
