package api_test

import (
	"encoding/json"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/lubanhq/luban/api"
)

func TestNewEventPayload(t *testing.T) {
	t.Parallel()
	want := map[string]any{
		api.EventSession:           &api.SessionEvent{},
		api.EventMessageDelta:      &api.MessageDeltaEvent{},
		api.EventReasoningDelta:    &api.ReasoningDeltaEvent{},
		api.EventMessage:           &api.MessageEvent{},
		api.EventToolCall:          &api.ToolCallEvent{},
		api.EventToolResult:        &api.ToolResultEvent{},
		api.EventUserInputRequired: &api.InputRequest{},
		api.EventUserInputResolved: &api.Receipt{},
		api.EventUserInputReminder: &api.InputReminder{},
		api.EventDone:              &api.DoneEvent{},
		api.EventError:             &api.ErrorEvent{},
	}
	require.Len(t, api.Events, len(want))
	for name, w := range want {
		got := api.NewEventPayload(name)
		require.IsType(t, w, got, name)
		require.NoError(t, json.Unmarshal([]byte(`{}`), got))
	}
	require.Nil(t, api.NewEventPayload("approval_required_someday"))

	var done api.DoneEvent
	v := api.NewEventPayload(api.EventDone)
	require.NoError(t, json.Unmarshal([]byte(`{"runId":"run_1","status":"completed"}`), v))
	done = *v.(*api.DoneEvent)
	require.Equal(t, api.DoneEvent{RunID: "run_1", Status: api.RunCompleted}, done)
}

// HTTPStatus is docs/design.md §3's table; only internal_error (and an unknown
// code) is 500.
func TestErrorCodeHTTPStatus(t *testing.T) {
	t.Parallel()
	tests := map[api.ErrorCode]int{
		api.CodeInvalidRequest:      http.StatusBadRequest,
		api.CodeUnauthorized:        http.StatusUnauthorized,
		api.CodeForbiddenOrigin:     http.StatusForbidden,
		api.CodeUnknownSlackUser:    http.StatusForbidden,
		api.CodeNotAssignee:         http.StatusForbidden,
		api.CodeAlreadyDecided:      http.StatusConflict,
		api.CodeInteractionNotFound: http.StatusNotFound,
		api.CodeSessionNotFound:     http.StatusNotFound,
		api.CodeNotFound:            http.StatusNotFound,
		api.CodeMethodNotAllowed:    http.StatusMethodNotAllowed,
		api.CodeAlreadyResolved:     http.StatusConflict,
		api.CodeRunInProgress:       http.StatusConflict,
		api.CodeInteractionPending:  http.StatusConflict,
		api.CodeInteractionExpired:  http.StatusGone,
		api.CodeNotResumable:        http.StatusGone,
		api.CodePayloadTooLarge:     http.StatusRequestEntityTooLarge,
		api.CodeRequestTimeout:      http.StatusRequestTimeout,
		api.CodeInvalidAnswer:       http.StatusUnprocessableEntity,
		api.CodeInvalidDelegation:   http.StatusUnprocessableEntity,
		api.CodeInternal:            http.StatusInternalServerError,
		"no_such_code":              http.StatusInternalServerError,
	}
	for code, status := range tests {
		require.Equal(t, status, code.HTTPStatus(), code)
	}
}

// The JSON of the wire types is the contract: a nil slice or pointer the
// server fills is spelled exactly as docs/design.md §3 shows it.
func TestJSONShapes(t *testing.T) {
	t.Parallel()
	b, err := json.Marshal(api.PendingResponse{})
	require.NoError(t, err)
	require.JSONEq(t, `{"pending":null,"requests":[],"last":null}`, string(b))
	b, err = json.Marshal(api.ErrorBody{Error: api.ErrorDetail{Code: api.CodeRunInProgress, Message: "busy"}})
	require.NoError(t, err)
	require.JSONEq(t, `{"error":{"code":"run_in_progress","message":"busy"}}`, string(b))
	var req api.InputRequest
	require.NoError(t, json.Unmarshal([]byte(`{"id":"ask_1","toolCallId":"call_1","tool":"ask_user","title":"t","mode":"single","resumable":true}`), &req))
	require.Equal(t, "t", req.Prompt.Title, "the Prompt is flattened into the InputRequest object")
}
