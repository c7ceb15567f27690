package elicit_test

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lubanhq/luban/api"
	"github.com/lubanhq/luban/askuser"
	"github.com/lubanhq/luban/elicit"
	"github.com/lubanhq/luban/tool"
)

const schema = `{"type":"object","properties":{
 "note":{"type":"string","maxLength":5},
 "email":{"type":"string","format":"email","title":"E-mail"},
 "day":{"type":"string","format":"date"},
 "n":{"type":"integer","minimum":1,"maximum":3},
 "ok":{"type":"boolean","default":true},
 "pick":{"type":"string","enum":["a","b"],"enumNames":["Apple","Banana"]},
 "many":{"type":"array","items":{"type":"string","enum":["x","y"]},"maxItems":1}
},"required":["n"]}`

func form(t *testing.T) *api.Prompt {
	t.Helper()
	p, err := elicit.Prompt(tool.Elicitation{Server: "s", Mode: "form", Message: "Tell me", RequestedSchema: json.RawMessage(schema)})
	require.NoError(t, err)
	return p
}

func TestPromptForm(t *testing.T) {
	p := form(t)
	assert.Equal(t, api.ToolElicitation, p.Tool)
	assert.Equal(t, api.ModeForm, p.Mode)
	assert.Equal(t, "Tell me", p.Title)
	names := []string{}
	for _, f := range p.Fields {
		names = append(names, f.Name)
	}
	assert.Equal(t, []string{"n", "note", "email", "day", "ok", "pick", "many"}, names, "required first, then as written")
	assert.Equal(t, api.FieldDate, p.Fields[3].Type)
	assert.Equal(t, "E-mail", p.Fields[2].Title)
	assert.Equal(t, "note", p.Fields[1].Title, "the name when there is no title")
	assert.Equal(t, 5, *p.Fields[1].MaxLength)
	assert.Equal(t, []api.FieldOption{{Value: "a", Label: "Apple"}, {Value: "b", Label: "Banana"}}, p.Fields[5].Options)
	assert.Equal(t, api.FieldMulti, p.Fields[6].Type)
	assert.JSONEq(t, `true`, string(p.Fields[4].Default))
}

func TestPromptRefusesWhatMCPDoesNotAllow(t *testing.T) {
	for _, s := range []string{
		`{"type":"array"}`,
		`{"type":"object","properties":{"o":{"type":"object"}}}`,
		`{"type":"object","properties":{"a":{"type":"array","items":{"type":"string"}}}}`,
		`not json`,
	} {
		_, err := elicit.Prompt(tool.Elicitation{Mode: "form", RequestedSchema: json.RawMessage(s)})
		assert.Error(t, err, s)
	}
	_, err := elicit.Prompt(tool.Elicitation{Mode: "url", URL: "javascript:alert(1)"})
	assert.Error(t, err, "only http and https URLs are shown")
	_, err = elicit.Prompt(tool.Elicitation{Mode: "sampling"})
	assert.Error(t, err)
	p, err := elicit.Prompt(tool.Elicitation{Server: "s", Mode: "url", URL: "https://example.com/x"})
	require.NoError(t, err)
	assert.Equal(t, api.ModeURL, p.Mode)
	assert.Equal(t, "The MCP server s asks for input", p.Title)
}

func fieldsOf(t *testing.T, err error) []string {
	t.Helper()
	var ae *askuser.AnswerError
	require.True(t, errors.As(err, &ae), "%v", err)
	var out []string
	for _, d := range ae.Details {
		out = append(out, d.Field)
	}
	return out
}

func TestValidateAnswer(t *testing.T) {
	p := form(t)
	_, err := elicit.ValidateAnswer(p, elicit.Answer{Decision: api.DecisionAccept, Content: json.RawMessage(`{"note":"toolong","email":"nope","n":9,"pick":"c","many":["x","y"],"extra":1}`)})
	assert.Equal(t, []string{"content.email", "content.many", "content.n", "content.note", "content.pick"}, fieldsOf(t, err))
	_, err = elicit.ValidateAnswer(p, elicit.Answer{Decision: api.DecisionAccept, Content: json.RawMessage(`{}`)})
	assert.Equal(t, []string{"content.n"}, fieldsOf(t, err))
	_, err = elicit.ValidateAnswer(p, elicit.Answer{Decision: api.DecisionAccept, Content: json.RawMessage(`[1]`)})
	assert.Equal(t, []string{"content"}, fieldsOf(t, err))
	_, err = elicit.ValidateAnswer(p, elicit.Answer{Decision: "approve"})
	assert.Equal(t, []string{"decision"}, fieldsOf(t, err))
	_, err = elicit.ValidateAnswer(p, elicit.Answer{})
	assert.Equal(t, []string{"decision"}, fieldsOf(t, err))
	_, err = elicit.ValidateAnswer(p, elicit.Answer{Decision: api.DecisionDecline, Content: json.RawMessage(`{"n":1}`)})
	assert.Equal(t, []string{"content"}, fieldsOf(t, err))

	a, err := elicit.ValidateAnswer(p, elicit.Answer{Decision: api.DecisionAccept, Content: json.RawMessage(`{ "n": 2, "day": "2026-12-01" }`)})
	require.NoError(t, err)
	assert.Equal(t, `{"n":2,"day":"2026-12-01"}`, string(a.Content))
	assert.Equal(t, tool.ElicitAnswer{Action: "accept", Content: map[string]any{"n": 2.0, "day": "2026-12-01"}}, elicit.Result(a))

	a, err = elicit.ValidateAnswer(p, elicit.Answer{Cancelled: true, Decision: "whatever"})
	require.NoError(t, err, "a cancel is never validated")
	assert.Equal(t, "cancel", elicit.Result(a).Action)
	a, err = elicit.ValidateAnswer(p, elicit.Answer{Decision: api.DecisionDecline})
	require.NoError(t, err)
	assert.Equal(t, tool.ElicitAnswer{Action: "decline"}, elicit.Result(a))
}

// A negative zero is the integer 0 to JSON Schema: it is accepted where an
// integer of at least 0 is asked, and sent on without its sign; a name
// written twice is refused (the schema saw only one of its values).
func TestValidateAnswerNegativeZeroAndDuplicates(t *testing.T) {
	p, err := elicit.Prompt(tool.Elicitation{Server: "s", Mode: "form", Message: "m", RequestedSchema: json.RawMessage(`{"type":"object","properties":{
		"count":{"type":"integer","minimum":0},"ratio":{"type":"number"},"tags":{"type":"array","items":{"type":"string","enum":["a","b"]}}}}`)})
	require.NoError(t, err)
	a, err := elicit.ValidateAnswer(p, elicit.Answer{Decision: api.DecisionAccept, Content: json.RawMessage(`{"count": -0, "ratio": -0.0, "tags": ["a"]}`)})
	require.NoError(t, err)
	assert.Equal(t, `{"count":0,"ratio":0.0,"tags":["a"]}`, string(a.Content))
	assert.Equal(t, map[string]any{"count": 0.0, "ratio": 0.0, "tags": []any{"a"}}, elicit.Result(a).Content)
	a, err = elicit.ValidateAnswer(p, elicit.Answer{Decision: api.DecisionAccept, Content: json.RawMessage(`{"ratio":-0.5}`)})
	require.NoError(t, err)
	assert.Equal(t, `{"ratio":-0.5}`, string(a.Content))

	_, err = elicit.ValidateAnswer(p, elicit.Answer{Decision: api.DecisionAccept, Content: json.RawMessage(`{"count":1,"count":2}`)})
	var ae *askuser.AnswerError
	require.ErrorAs(t, err, &ae)
	assert.Equal(t, api.DetailDuplicate, ae.Details[0].Code)
	assert.Equal(t, "content", ae.Details[0].Field)
}

// A requestedSchema (in-session or an input_required form) that refers to
// a file is refused before anything is asked: the error the server gets
// says so, is the same whether the file exists, and never holds its
// content.
func TestPromptLoadsNoReference(t *testing.T) {
	t.Parallel()
	secret := filepath.Join(t.TempDir(), "secret.json")
	require.NoError(t, os.WriteFile(secret, []byte(`{"type":"string","enum":["TOP-SECRET-VALUE"]}`), 0o600))
	e := tool.Elicitation{Server: "s", Mode: "form", Message: "Pick",
		RequestedSchema: json.RawMessage(`{"type":"object","properties":{"x":{"type":"string"}},"$ref":"file://` + secret + `"}`)}
	_, present := elicit.Prompt(e)
	require.Error(t, present)
	assert.Contains(t, present.Error(), "external references are not allowed")
	assert.NotContains(t, present.Error(), "TOP-SECRET-VALUE")
	require.NoError(t, os.Remove(secret))
	_, missing := elicit.Prompt(e)
	require.Error(t, missing)
	assert.Equal(t, present.Error(), missing.Error())
}

// An elicitation's message and URL are bounded: one byte over is refused
// with an error naming the bound, at the bound it is asked.
func TestPromptBoundsMessageAndURL(t *testing.T) {
	t.Parallel()
	_, err := elicit.Prompt(tool.Elicitation{Server: "s", Mode: "form", Message: strings.Repeat("m", elicit.MaxMessageBytes+1)})
	require.ErrorContains(t, err, "message is larger than 16384 bytes")
	_, err = elicit.Prompt(tool.Elicitation{Server: "s", Mode: "form", Message: strings.Repeat("m", elicit.MaxMessageBytes)})
	require.NoError(t, err)
	u := "https://example.com/?q="
	_, err = elicit.Prompt(tool.Elicitation{Server: "s", Mode: "url", Message: "Go", URL: u + strings.Repeat("q", elicit.MaxURLBytes-len(u)+1)})
	require.ErrorContains(t, err, "url is larger than 8192 bytes")
	_, err = elicit.Prompt(tool.Elicitation{Server: "s", Mode: "url", Message: "Go", URL: u + strings.Repeat("q", elicit.MaxURLBytes-len(u))})
	require.NoError(t, err)
}

// A titled single-select (oneOf of const/title, and anyOf of the same for a
// multi-select's items) answered with no option is one enum detail listing
// every allowed value in the schema's order, not one detail per option.
func TestTitledEnumIsOneDetail(t *testing.T) {
	p, err := elicit.Prompt(tool.Elicitation{Server: "s", Mode: "form", Message: "When?", RequestedSchema: json.RawMessage(`{"type":"object","properties":{
 "when":{"type":"string","oneOf":[{"const":"now","title":"Now"},{"const":"tonight","title":"Tonight"},{"const":"saturday","title":"Saturday"}]},
 "also":{"type":"array","items":{"anyOf":[{"const":"a","title":"A"},{"const":"b","title":"B"}]}}
},"required":["when"]}`)})
	require.NoError(t, err)
	_, err = elicit.ValidateAnswer(p, elicit.Answer{Decision: api.DecisionAccept, Content: json.RawMessage(`{"when":"sunday","also":["a","c"]}`)})
	var ae *askuser.AnswerError
	require.ErrorAs(t, err, &ae)
	require.Len(t, ae.Details, 2, "%+v", ae.Details)
	assert.Equal(t, "content.also[1]", ae.Details[0].Field)
	assert.Equal(t, api.DetailEnum, ae.Details[0].Code)
	assert.Equal(t, map[string]any{"allowed": []any{"a", "b"}}, ae.Details[0].Params)
	assert.Equal(t, "content.when", ae.Details[1].Field)
	assert.Equal(t, api.DetailEnum, ae.Details[1].Code)
	assert.Equal(t, map[string]any{"allowed": []any{"now", "tonight", "saturday"}}, ae.Details[1].Params)
	assert.Equal(t, "value must be one of 'now', 'tonight', 'saturday'", ae.Details[1].Message)
}
