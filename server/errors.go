package server

import (
	"encoding/json"
	"errors"
	"net/http"

	"github.com/lubanhq/luban/agent"
	"github.com/lubanhq/luban/askuser"
)

// Error codes of DESIGN §3. They are a contract: never rename them.
const (
	CodeInvalidRequest      = "invalid_request"
	CodeUnauthorized        = "unauthorized"
	CodeForbiddenOrigin     = "forbidden_origin"
	CodeInteractionNotFound = "interaction_not_found"
	CodeSessionNotFound     = "session_not_found"
	CodeAlreadyResolved     = "already_resolved"
	CodeRunInProgress       = "run_in_progress"
	CodeInteractionPending  = "interaction_pending"
	CodeInteractionExpired  = "interaction_expired"
	CodeNotResumable        = "not_resumable"
	CodeInvalidAnswer       = "invalid_answer"
	CodePayloadTooLarge     = "payload_too_large"
	CodeInternal            = "internal_error"
	CodeNotFound            = "not_found"
)

// ErrorBody is the JSON of every error response: {"error": {...}}.
type ErrorBody struct {
	Error ErrorDetail `json:"error"`
}

// ErrorDetail names the error (Code, stable) and explains it (Message), with
// what a client needs to recover: the Receipt of an already resolved
// request, the Pending request that blocks a new message, or field-level
// Details of a rejected answer.
type ErrorDetail struct {
	Code    string                `json:"code"`
	Message string                `json:"message"`
	Details []askuser.FieldError  `json:"details,omitempty"`
	Receipt *askuser.Receipt      `json:"receipt,omitempty"`
	Pending *askuser.InputRequest `json:"pending,omitempty"`
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func writeError(w http.ResponseWriter, status int, d ErrorDetail) {
	writeJSON(w, status, ErrorBody{Error: d})
}

// errorFor maps the Runner's errors to DESIGN §3's statuses and codes. It is
// the only place that does.
func errorFor(err error) (int, ErrorDetail) {
	var pending *agent.InteractionPendingError
	var resolved *agent.AlreadyResolvedError
	var answer *askuser.AnswerError
	var tooBig *http.MaxBytesError
	switch {
	case errors.As(err, &pending):
		return http.StatusConflict, ErrorDetail{Code: CodeInteractionPending, Message: pending.Error(), Pending: pending.Pending}
	case errors.As(err, &resolved):
		return http.StatusConflict, ErrorDetail{Code: CodeAlreadyResolved, Message: resolved.Error(), Receipt: resolved.Receipt}
	case errors.As(err, &answer):
		return http.StatusUnprocessableEntity, ErrorDetail{Code: CodeInvalidAnswer, Message: answer.Error(), Details: answer.Details}
	case errors.As(err, &tooBig), errors.Is(err, agent.ErrPayloadTooLarge):
		return http.StatusRequestEntityTooLarge, ErrorDetail{Code: CodePayloadTooLarge, Message: err.Error()}
	case errors.Is(err, agent.ErrInvalidRequest):
		return http.StatusBadRequest, ErrorDetail{Code: CodeInvalidRequest, Message: err.Error()}
	case errors.Is(err, agent.ErrSessionNotFound):
		return http.StatusNotFound, ErrorDetail{Code: CodeSessionNotFound, Message: err.Error()}
	case errors.Is(err, agent.ErrInteractionNotFound):
		return http.StatusNotFound, ErrorDetail{Code: CodeInteractionNotFound, Message: "interaction not found (after a restart of a server without storage, 服务已重启，请重新发起任务)"}
	case errors.Is(err, agent.ErrRunInProgress):
		return http.StatusConflict, ErrorDetail{Code: CodeRunInProgress, Message: err.Error()}
	case errors.Is(err, agent.ErrInteractionExpired):
		d := ErrorDetail{Code: CodeInteractionExpired, Message: err.Error()}
		var ex *agent.InteractionExpiredError
		if errors.As(err, &ex) {
			d.Receipt = ex.Receipt
		}
		return http.StatusGone, d
	case errors.Is(err, agent.ErrNotResumable):
		return http.StatusGone, ErrorDetail{Code: CodeNotResumable, Message: err.Error()}
	default:
		return http.StatusInternalServerError, ErrorDetail{Code: CodeInternal, Message: "internal error"}
	}
}
