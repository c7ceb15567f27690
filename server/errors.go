package server

import (
	"encoding/json"
	"errors"
	"net/http"
	"slices"
	"strings"

	"github.com/lubanhq/luban/agent"
	"github.com/lubanhq/luban/api"
	"github.com/lubanhq/luban/askuser"
)

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func writeError(w http.ResponseWriter, status int, d api.ErrorDetail) {
	writeJSON(w, status, api.ErrorBody{Error: d})
}

// handleNoEndpoint answers 404 not_found for every /api path without a route.
func handleNoEndpoint(w http.ResponseWriter, r *http.Request) {
	if allow := allowedMethods(r); allow != "" {
		w.Header().Set("Allow", allow)
		writeError(w, http.StatusMethodNotAllowed, api.ErrorDetail{Code: api.CodeMethodNotAllowed,
			Message: r.Method + " is not allowed on " + r.URL.Path + "; allowed: " + allow})
		return
	}
	writeError(w, http.StatusNotFound, api.ErrorDetail{Code: api.CodeNotFound, Message: "no such endpoint: " + r.Method + " " + r.URL.Path})
}

// endpointPaths routes every api.Endpoints path, whatever the method, so
// allowedMethods can tell "no such path" (404) from "not this method" (405);
// endpointMethods lists each path's methods.
var endpointPaths, endpointMethods = func() (*http.ServeMux, map[string][]string) {
	mux := http.NewServeMux()
	methods := map[string][]string{}
	for _, e := range api.Endpoints {
		if _, ok := methods[e.Path]; !ok {
			mux.Handle(e.Path, http.NotFoundHandler())
		}
		methods[e.Path] = append(methods[e.Path], e.Method)
	}
	for p := range methods {
		slices.Sort(methods[p])
	}
	return mux, methods
}()

// allowedMethods is the Allow header for r's path when the path is an /api
// route of other methods, "" when no route has the path.
func allowedMethods(r *http.Request) string {
	_, pattern := endpointPaths.Handler(r)
	return strings.Join(endpointMethods[pattern], ", ")
}

// errorFor maps the Runner's errors to docs/design.md §3's statuses and codes. It is
// the only place that does.
func errorFor(err error) (int, api.ErrorDetail) {
	var pending *agent.InteractionPendingError
	var resolved *agent.AlreadyResolvedError
	var answer *askuser.AnswerError
	var tooBig *http.MaxBytesError
	var delegation *agent.DelegationError
	switch {
	case errors.As(err, &pending):
		return http.StatusConflict, api.ErrorDetail{Code: api.CodeInteractionPending, Message: pending.Error(), Pending: pending.Pending}
	case errors.As(err, &resolved):
		return http.StatusConflict, api.ErrorDetail{Code: api.CodeAlreadyResolved, Message: resolved.Error(), Receipt: resolved.Receipt}
	case errors.As(err, &answer):
		return http.StatusUnprocessableEntity, answerDetail(answer)
	case errors.As(err, &tooBig), errors.Is(err, agent.ErrPayloadTooLarge):
		d := api.ErrorDetail{Code: api.CodePayloadTooLarge, Message: err.Error()}
		var long *agent.PayloadTooLargeError
		if errors.As(err, &long) {
			d.Details = long.Details
		}
		return http.StatusRequestEntityTooLarge, d
	case errors.Is(err, agent.ErrInvalidRequest):
		d := api.ErrorDetail{Code: api.CodeInvalidRequest, Message: err.Error()}
		var fe *agent.RequestFieldError
		if errors.As(err, &fe) {
			d.Details = fe.Details
		}
		return http.StatusBadRequest, d
	case errors.As(err, &delegation):
		return http.StatusUnprocessableEntity, api.ErrorDetail{Code: api.CodeInvalidDelegation, Message: delegation.Error(), Details: delegation.Details}
	case errors.Is(err, agent.ErrDelegateNotAssignee):
		return http.StatusForbidden, api.ErrorDetail{Code: api.CodeNotAssignee, Message: err.Error()}
	case errors.Is(err, agent.ErrNotAssignee):
		return http.StatusForbidden, api.ErrorDetail{Code: api.CodeNotAssignee, Message: err.Error()}
	case errors.Is(err, agent.ErrAlreadyDecided):
		return http.StatusConflict, api.ErrorDetail{Code: api.CodeAlreadyDecided, Message: err.Error()}
	case errors.Is(err, agent.ErrSessionNotFound):
		return http.StatusNotFound, api.ErrorDetail{Code: api.CodeSessionNotFound, Message: err.Error()}
	case errors.Is(err, agent.ErrInteractionNotFound):
		return http.StatusNotFound, api.ErrorDetail{Code: api.CodeInteractionNotFound, Message: err.Error()}
	case errors.Is(err, agent.ErrRunInProgress):
		return http.StatusConflict, api.ErrorDetail{Code: api.CodeRunInProgress, Message: err.Error()}
	case errors.Is(err, agent.ErrInteractionExpired):
		d := api.ErrorDetail{Code: api.CodeInteractionExpired, Message: err.Error()}
		var ex *agent.InteractionExpiredError
		if errors.As(err, &ex) {
			d.Receipt = ex.Receipt
		}
		return http.StatusGone, d
	case errors.Is(err, agent.ErrNotResumable):
		d := api.ErrorDetail{Code: api.CodeNotResumable, Message: err.Error()}
		var nr *agent.NotResumableError
		if errors.As(err, &nr) {
			d.Receipt = nr.Receipt
		}
		return http.StatusGone, d
	default:
		return http.StatusInternalServerError, api.ErrorDetail{Code: api.CodeInternal, Message: "internal error"}
	}
}
