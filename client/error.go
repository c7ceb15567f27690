package client

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/lubanhq/luban/api"
)

// Error is a request the server refused: Status is the HTTP status and the
// other fields are the JSON error body {"error": {code, message, details,
// receipt, pending}} of docs/design.md §3. Code is one of the server's stable codes
// (invalid_answer, already_resolved, interaction_pending, ...); it is empty
// when the body was not luban's JSON error (a proxy's page, say), and then
// Message holds the start of the body. Details lists the fields of a 422
// invalid_answer (the request stays pending); Receipt is set on 409
// already_resolved and 410 interaction_expired; Pending on 409
// interaction_pending.
type Error struct {
	Status  int
	Code    string
	Message string
	Details []api.FieldError
	Receipt *api.Receipt
	Pending *api.InputRequest
}

// Error reads "409 already_resolved: <message>".
func (e *Error) Error() string {
	if e.Code == "" {
		return fmt.Sprintf("%d %s: %s", e.Status, http.StatusText(e.Status), e.Message)
	}
	return fmt.Sprintf("%d %s: %s", e.Status, e.Code, e.Message)
}

// maxErrorBody bounds how much of an error response is read.
const maxErrorBody = 1 << 20

// errorOf builds the *Error of a non-2xx response and closes its body.
func errorOf(resp *http.Response) *Error {
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
	e := &Error{Status: resp.StatusCode}
	var body struct {
		Error *api.ErrorDetail `json:"error"`
	}
	if json.Unmarshal(b, &body) == nil && body.Error != nil {
		d := body.Error
		e.Code, e.Message, e.Details, e.Receipt, e.Pending = string(d.Code), d.Message, d.Details, d.Receipt, d.Pending
		return e
	}
	msg := strings.TrimSpace(string(b))
	if len(msg) > 200 {
		msg = strings.ToValidUTF8(msg[:200], "") + "…"
	}
	e.Message = msg
	return e
}

// IsCode reports whether err is an *Error with code c: for instance
// api.CodeNotAssignee (403: the request waits for other people,
// docs/design.md §16; nothing was consumed) or api.CodeAlreadyDecided (409:
// the caller's decision on a quorum approval is already recorded).
func IsCode(err error, c api.ErrorCode) bool {
	var e *Error
	return errors.As(err, &e) && e.Code == string(c)
}
