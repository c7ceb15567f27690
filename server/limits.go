package server

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/lubanhq/luban/agui"
	"github.com/lubanhq/luban/api"
	"github.com/lubanhq/luban/askuser"
	"github.com/lubanhq/luban/internal/schemaerr"
)

// DefaultBodyReadTimeout is Options.BodyReadTimeout when it is zero: enough
// for a body of the default 1 MiB bound on a slow link.
const DefaultBodyReadTimeout = 30 * time.Second

// boundBody bounds every request body before any handler sees it: at most
// MaxBodyBytes (http.MaxBytesReader), and received within BodyReadTimeout
// (a read deadline on the connection). The deadline is cleared as soon as
// the body has been read to its end, so a stream that answers the request
// is not cut by it; a body that never ends runs into it, the read fails
// with os.ErrDeadlineExceeded and the connection is closed after the answer.
// Requests without a body get no deadline: their connection is only read to
// notice that the client went away. A body sent to a route that reads none
// (anything but /api, /mcp and POST /login: the page, /readyz, /livez,
// /metrics, a 404) is dropped as a refused request's is (dropBody). The size
// bound is bodyLimit's: POST /api/agui takes AG-UI's 4 MiB.
func (s *Server) boundBody(w http.ResponseWriter, r *http.Request) {
	if r.Body == nil || r.Body == http.NoBody {
		return
	}
	limit := s.bodyLimit(r)
	if !strings.HasPrefix(r.URL.Path, "/api/") && r.URL.Path != "/mcp" && (r.Method != http.MethodPost || r.URL.Path != "/login") {
		dropBody(w, r)
		r.Body = http.MaxBytesReader(w, r.Body, limit)
		return
	}
	rc := http.NewResponseController(w)
	// An error means the ResponseWriter cannot set deadlines (a wrapper
	// without Unwrap); the body is still bounded in size.
	_ = rc.SetReadDeadline(time.Now().Add(s.opts.BodyReadTimeout))
	r.Body = &deadlineBody{ReadCloser: http.MaxBytesReader(w, r.Body, limit), rc: rc}
}

// bodyLimit is the size bound of r's body: MaxBodyBytes, or for POST
// /api/agui aguiBodyBytes (AG-UI clients send the whole conversation with
// every run: docs/agui.md).
func (s *Server) bodyLimit(r *http.Request) int64 {
	if r.URL.Path == "/api/agui" {
		return s.aguiBodyBytes()
	}
	return s.opts.MaxBodyBytes
}

// aguiBodyBytes is POST /api/agui's bound: agui.DefaultMaxBodyBytes (4 MiB),
// or MaxBodyBytes when that is larger.
func (s *Server) aguiBodyBytes() int64 {
	return max(s.opts.MaxBodyBytes, agui.DefaultMaxBodyBytes)
}

// deadlineBody clears the connection's read deadline once the body has been
// read completely.
type deadlineBody struct {
	io.ReadCloser
	rc   *http.ResponseController
	done bool
}

func (b *deadlineBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if err == io.EOF && !b.done {
		b.done = true
		_ = b.rc.SetReadDeadline(time.Time{})
	}
	return n, err
}

// bodyFailed answers a request whose body could not be read in full because
// it was too large (413 payload_too_large) or too slow (408
// request_timeout), and reports whether it did. Both close the connection:
// what is left of the body on the wire is never read.
// The 413 carries schemaerr.BodyTooLarge's detail (field "", too_long,
// {max, got, unit: "bytes"}).
func (s *Server) bodyFailed(w http.ResponseWriter, r *http.Request, err error) bool {
	var tooBig *http.MaxBytesError
	switch {
	case errors.As(err, &tooBig):
		w.Header().Set("Connection", "close")
		writeError(w, http.StatusRequestEntityTooLarge, api.ErrorDetail{Code: api.CodePayloadTooLarge, Message: "request body is larger than " + strconv.FormatInt(tooBig.Limit, 10) + " bytes",
			Details: []api.FieldError{schemaerr.BodyTooLarge(tooBig.Limit, r.ContentLength)}})
		return true
	case errors.Is(err, os.ErrDeadlineExceeded):
		w.Header().Set("Connection", "close")
		writeError(w, http.StatusRequestTimeout, api.ErrorDetail{Code: api.CodeRequestTimeout, Message: "request body not received within " + s.opts.BodyReadTimeout.String()})
		return true
	}
	return false
}

// refusedDrain is how long the server keeps reading the body of a refused
// request after its answer: a client that sends its body at once and reads
// the answer afterwards still gets it (no reset), and one that trickles its
// body loses the connection.
const refusedDrain = time.Second

// refuse answers a request that is not let in (401, 403) without reading
// its body. A request with a body gets "Connection: close" and a read
// deadline refusedDrain away, so the answer is sent at once and an
// unauthenticated client cannot hold the connection by sending its body
// slowly.
func refuse(w http.ResponseWriter, r *http.Request, status int, d api.ErrorDetail) {
	dropBody(w, r)
	writeError(w, status, d)
}

// dropBody prepares the answer of a request whose body will not be read
// (refuse); call it before the answer is written.
func dropBody(w http.ResponseWriter, r *http.Request) {
	if r.ContentLength != 0 {
		w.Header().Set("Connection", "close")
		_ = http.NewResponseController(w).SetReadDeadline(time.Now().Add(refusedDrain))
	}
}

// MaxErrorDetails is how many field errors a 422 invalid_answer lists; a
// longer list is cut there and DetailsTotal gives its length, so the error
// body stays small whatever the answer held.
const MaxErrorDetails = 20

// maxDetailMessage bounds one field error's message in bytes (a message may
// quote what was sent).
const maxDetailMessage = 300

// answerDetail is the 422 body of a rejected answer: the first
// MaxErrorDetails details, each message at most maxDetailMessage bytes, and
// a Message that joins them and says how many more there are.
func answerDetail(e *askuser.AnswerError) api.ErrorDetail {
	d := api.ErrorDetail{Code: api.CodeInvalidAnswer}
	shown := e.Details
	if len(shown) > MaxErrorDetails {
		shown = shown[:MaxErrorDetails]
		d.DetailsTotal = len(e.Details)
	}
	d.Details = make([]api.FieldError, len(shown))
	for i, f := range shown {
		d.Details[i] = api.FieldError{Field: clip(f.Field), Code: f.Code, Params: clipParams(f.Params), Message: clip(f.Message)}
	}
	d.Message = (&askuser.AnswerError{Details: d.Details}).Error()
	if d.DetailsTotal > 0 {
		d.Message += fmt.Sprintf("; and %d more", d.DetailsTotal-len(shown))
	}
	return d
}

// clipParams is p with every string (also inside an array) clipped like a
// message; numbers and other values are kept.
func clipParams(p map[string]any) map[string]any {
	if p == nil {
		return nil
	}
	out := make(map[string]any, len(p))
	for k, v := range p {
		switch v := v.(type) {
		case string:
			out[k] = clip(v)
		case []string:
			c := make([]string, len(v))
			for i, s := range v {
				c[i] = clip(s)
			}
			out[k] = c
		case []any:
			c := make([]any, len(v))
			for i, e := range v {
				if s, ok := e.(string); ok {
					e = clip(s)
				}
				c[i] = e
			}
			out[k] = c
		default:
			out[k] = v
		}
	}
	return out
}

// clip cuts s to at most maxDetailMessage bytes on a rune boundary, marking
// the cut with "…".
func clip(s string) string {
	if len(s) <= maxDetailMessage {
		return s
	}
	cut := maxDetailMessage
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}
