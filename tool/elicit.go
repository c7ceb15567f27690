package tool

import (
	"context"
	"encoding/json"
	"fmt"
)

// Elicitation is a question a tool's server asks a person while the tool
// runs (an MCP server's elicitation/create, docs/design.md §11). Mode is "form"
// (RequestedSchema, a flat JSON Schema object, as the server sent it) or
// "url" (URL, ElicitationID). Server is the configured name of the server;
// Message is the text the person reads.
type Elicitation struct {
	Server          string          `json:"server"`
	Mode            string          `json:"mode"`
	Message         string          `json:"message"`
	RequestedSchema json.RawMessage `json:"requestedSchema,omitempty"`
	URL             string          `json:"url,omitempty"`
	ElicitationID   string          `json:"elicitationId,omitempty"`
}

// ElicitAnswer is a person's answer to an Elicitation, MCP's ElicitResult:
// Action "accept" (Content holds a form's values, validated against its
// requestedSchema; nil for a URL), "decline" or "cancel".
type ElicitAnswer struct {
	Action  string         `json:"action"`
	Content map[string]any `json:"content,omitempty"`
}

// Elicitor puts an Elicitation in front of the person behind a tool call and
// waits for the answer. Its error is the context's when ctx ends first, or
// says why the question could not be asked.
type Elicitor interface {
	Elicit(ctx context.Context, e Elicitation) (ElicitAnswer, error)
}

type elicitorKey struct{}

// WithElicitor returns ctx carrying e: the run passes one to every tool
// call, bound to that call.
func WithElicitor(ctx context.Context, e Elicitor) context.Context {
	return context.WithValue(ctx, elicitorKey{}, e)
}

// ElicitorFrom returns the Elicitor ctx carries (nil outside a run).
func ElicitorFrom(ctx context.Context) Elicitor {
	e, _ := ctx.Value(elicitorKey{}).(Elicitor)
	return e
}

// InputRequired is a tool's answer that it needs a person's input before it
// can give a result (an MCP 2026-07-28 input_required result, docs/design.md §11):
// Requests by the server's key, and the opaque RequestState the retry must
// send back. The run stores both with the question, so the answer may come
// after a restart; it then calls the tool again with WithInputResponses.
type InputRequired struct {
	Requests     map[string]Elicitation `json:"requests"`
	RequestState string                 `json:"requestState"`
}

// Error makes an InputRequired what a Remote tool's Call returns as its
// error when it needs input (Tool).
func (e *InputRequired) Error() string {
	return fmt.Sprintf("tool: input required (%d requests)", len(e.Requests))
}

// InputResponses is what the retry of a call that returned InputRequired
// carries: an answer per request key and the same RequestState.
type InputResponses struct {
	Responses    map[string]ElicitAnswer `json:"responses"`
	RequestState string                  `json:"requestState"`
}

type responsesKey struct{}

// WithInputResponses returns ctx carrying the answers of a call's retry.
func WithInputResponses(ctx context.Context, r *InputResponses) context.Context {
	return context.WithValue(ctx, responsesKey{}, r)
}

// InputResponsesFrom returns the answers ctx carries (nil on a first call).
func InputResponsesFrom(ctx context.Context) *InputResponses {
	r, _ := ctx.Value(responsesKey{}).(*InputResponses)
	return r
}

// Remote marks a tool served by another program (an MCP server): the run
// looks up the elicitations of its calls before it calls it.
type Remote interface {
	Tool
	// Server is the configured name of the program serving the tool.
	Server() string
}
