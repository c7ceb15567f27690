package agui

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"iter"
	"log/slog"
	"net/http"
	"regexp"
	"strings"
	"time"

	"github.com/lubanhq/luban/agent"
	"github.com/lubanhq/luban/api"
	"github.com/lubanhq/luban/internal/schemaerr"
	"github.com/lubanhq/luban/internal/ssepump"
	"github.com/lubanhq/luban/model"
)

// DefaultMaxBodyBytes bounds a RunAgentInput when Options.MaxBodyBytes is
// zero (4 MiB: AG-UI clients send the whole conversation with every run).
const DefaultMaxBodyBytes = 4 << 20

// ThreadIDPattern is what a threadId must match to name (or create) a
// session (docs/design.md §13).
var ThreadIDPattern = regexp.MustCompile(`^[A-Za-z0-9_-]{1,128}$`)

// Options configures a Handler. Runner, Principal and ErrorDetail are
// required.
type Options struct {
	Runner *agent.Runner
	// Principal returns the authenticated caller of a request (the
	// server's auth middleware runs first).
	Principal func(ctx context.Context) string
	// ErrorDetail maps a Runner error to its docs/design.md §3 code and message
	// (the server's one mapping), for RUN_ERROR.
	ErrorDetail func(err error) api.ErrorDetail
	// MaxBodyBytes bounds the request body. Default DefaultMaxBodyBytes.
	MaxBodyBytes int64
	// Heartbeat is the interval of SSE comment lines. Default 15s.
	Heartbeat time.Duration
	// Done, when closed, ends every open stream (server shutdown).
	Done <-chan struct{}
	// Logger receives internal errors. Default slog.Default().
	Logger *slog.Logger
}

// Handler is POST /api/agui (docs/design.md §13); see the package documentation.
type Handler struct {
	opts Options
}

// New returns a Handler; it fails when a required option is missing.
func New(opts Options) (*Handler, error) {
	if opts.Runner == nil || opts.Principal == nil || opts.ErrorDetail == nil {
		return nil, errors.New("agui: Options needs Runner, Principal and ErrorDetail")
	}
	if opts.MaxBodyBytes <= 0 {
		opts.MaxBodyBytes = DefaultMaxBodyBytes
	}
	if opts.Heartbeat <= 0 {
		opts.Heartbeat = 15 * time.Second
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	return &Handler{opts: opts}, nil
}

// ServeHTTP decodes a RunAgentInput and answers its AG-UI event stream.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	in, ok := h.decode(w, r)
	if !ok {
		return
	}
	ctx := r.Context()
	owner := h.opts.Principal(ctx)
	sw := h.startStream(w)
	t := &translator{threadID: in.ThreadID, runID: in.RunID, legacy: in.legacy(),
		waitingOn: func(runID string) []string {
			ids, _ := h.opts.Runner.WaitingRequests(ctx, in.ThreadID, runID)
			return ids
		}}
	switch {
	case len(in.Resume) == 1:
		h.resume(ctx, sw, t, owner, in)
		return
	case len(in.Resume) > 1:
		h.resumeAll(ctx, sw, t, owner, in)
		return
	}
	if results := toolResults(in.Messages); len(results) > 0 && h.answerFrontend(ctx, sw, t, owner, in, results) {
		return
	}
	if text, ok := lastUserText(in.Messages); ok {
		res, err := h.opts.Runner.Start(ctx, agent.StartParams{Owner: owner, SessionID: in.ThreadID, Message: text, CreateSession: true,
			FrontendTools: frontendTools(in.Tools)})
		if err != nil {
			sw.send(h.runError(err))
			return
		}
		t.lubanRun = res.RunID
		sw.send(h.runStarted(in, res.SessionID, res.RunID))
		h.follow(ctx, sw, t, res.SessionID, res.AfterSeq)
		return
	}
	h.attach(ctx, sw, t, owner, in, nil)
}

// resume answers the one interrupt of in.Resume (docs/design.md §13) through
// Runner.Resolve, the call behind POST /api/chat/continue.
func (h *Handler) resume(ctx context.Context, sw *stream, t *translator, owner string, in *RunAgentInput) {
	e := in.Resume[0]
	body, fe := resumeBody(e, "payload")
	if fe != nil {
		sw.send(errorEvent(api.ErrorDetail{Code: api.CodeInvalidAnswer, Message: "payload is not an answer object: " + fe.Field + ": " + fe.Message,
			Details: []api.FieldError{*fe}}))
		return
	}
	h.resolve(ctx, sw, t, owner, in, e.InterruptID, body)
}

// resumeBody is the answer body of resume entry e: a cancel, or its
// payload decoded as the answer part of POST /api/chat/continue's body; a
// payload that is no such object is the FieldError (named field) that
// refuses it.
func resumeBody(e ResumeEntry, field string) (api.ContinueRequest, *api.FieldError) {
	var body api.ContinueRequest
	if e.Status == ResumeCancelled {
		return api.ContinueRequest{Cancelled: true}, nil
	}
	if p := bytes.TrimSpace(e.Payload); len(p) > 0 && string(p) != "null" {
		if err := json.Unmarshal(p, &body); err != nil {
			fe := schemaerr.DecodeText(err, field, p, &body)
			if fe.Field == field && fe.Code == api.DetailInvalidType {
				fe.Message = "must be an object such as {\"selections\": [...], \"customInput\": \"...\"} or {\"decision\": \"approve\"}"
			}
			return api.ContinueRequest{}, &fe
		}
	}
	body.SessionID, body.RequestID = "", ""
	return body, nil
}

// resumeAll answers every interrupt of in.Resume together, all or none
// (docs/design.md §32): Runner.ResolveBatch, the call behind POST
// /api/chat/continue's batch form. One entry that is refused refuses them
// all (RUN_ERROR invalid_answer whose details name it: resume[1].payload…)
// and every interrupt stays open.
func (h *Handler) resumeAll(ctx context.Context, sw *stream, t *translator, owner string, in *RunAgentInput) {
	entries := make([]agent.ResolveEntry, len(in.Resume))
	var bad []api.FieldError
	for i, e := range in.Resume {
		body, fe := resumeBody(e, fmt.Sprintf("resume[%d].payload", i))
		if fe != nil {
			bad = append(bad, *fe)
			continue
		}
		entries[i] = agent.ResolveEntry{RequestID: e.InterruptID, Answer: body}
	}
	if len(bad) > 0 {
		sw.send(errorEvent(api.ErrorDetail{Code: api.CodeInvalidAnswer, Message: "a resume payload is not an answer object: " + bad[0].Field + ": " + bad[0].Message,
			Details: bad}))
		return
	}
	res, err := h.opts.Runner.ResolveBatch(ctx, agent.ResolveBatchParams{By: owner, SessionID: in.ThreadID, Entries: entries, Surface: agent.SurfaceAGUI, Field: "resume"})
	var dup *agent.AlreadyResolvedError
	if errors.As(err, &dup) {
		// A replayed resume (or one of its entries answered since):
		// nothing is consumed; report the run's own outcome.
		run, rerr := h.opts.Runner.RequestRun(ctx, owner, dup.Receipt.RequestID)
		if rerr != nil {
			sw.send(h.runError(rerr))
			return
		}
		h.attach(ctx, sw, t, owner, in, run)
		return
	}
	if err != nil {
		sw.send(h.runError(err))
		return
	}
	h.continued(ctx, sw, t, owner, in, res)
}

// resolve answers interaction requestID with body through Runner.Resolve
// and streams what follows: the resumed run, the run's own outcome for a
// replay, or the RUN_ERROR of a refused answer.
func (h *Handler) resolve(ctx context.Context, sw *stream, t *translator, owner string, in *RunAgentInput, requestID string, body api.ContinueRequest) {
	res, err := h.opts.Runner.Resolve(ctx, agent.ResolveParams{By: owner, SessionID: in.ThreadID, RequestID: requestID,
		Answer: body, Surface: agent.SurfaceAGUI})
	var dup *agent.AlreadyResolvedError
	if errors.As(err, &dup) {
		// A replayed resume: nothing is consumed again; report the run's
		// own outcome.
		run, rerr := h.opts.Runner.RequestRun(ctx, owner, requestID)
		if rerr != nil {
			sw.send(h.runError(rerr))
			return
		}
		h.attach(ctx, sw, t, owner, in, run)
		return
	}
	if err != nil {
		sw.send(h.runError(err))
		return
	}
	h.continued(ctx, sw, t, owner, in, res)
}

// continued streams what follows an accepted answer: the resumed run, or,
// when the run still waits on other questions it asked at once
// (docs/design.md §32), the answer's own events and the interrupts still
// open.
func (h *Handler) continued(ctx context.Context, sw *stream, t *translator, owner string, in *RunAgentInput, res *agent.ContinueResult) {
	t.lubanRun = res.RunID
	sw.send(h.runStarted(in, in.ThreadID, res.RunID))
	if res.Waiting {
		t.until = res.LastSeq
		h.follow(ctx, sw, t, in.ThreadID, res.AfterSeq)
		if ctx.Err() == nil {
			h.openInterrupts(ctx, sw, t, owner, in, res.RunID)
		}
		return
	}
	h.follow(ctx, sw, t, in.ThreadID, res.AfterSeq)
}

// answerFrontend answers the thread's pending front-end tool call with the
// client's tool message for it (docs/design.md §21 "Front-end tools"),
// results being the tool messages that end the input by toolCallId. It
// reports false, having sent nothing, when no front-end tool call of the
// thread waits for one of them (a tool message sent again later, or
// another client's).
func (h *Handler) answerFrontend(ctx context.Context, sw *stream, t *translator, owner string, in *RunAgentInput, results map[string]string) bool {
	p, err := h.opts.Runner.Pending(ctx, owner, in.ThreadID)
	if err != nil || p.Pending == nil || p.Pending.Tool != api.ToolFrontend {
		return false
	}
	content, ok := results[p.Pending.ToolCallID]
	if !ok {
		return false
	}
	t.answered = p.Pending.ToolCallID
	h.resolve(ctx, sw, t, owner, in, p.Pending.ID, api.ContinueRequest{CustomInput: content})
	return true
}

// attach reports the thread as it stands without starting anything: the
// open interrupt of a waiting run, the rest of a running one, or the outcome
// of an ended one. run names the run (a replayed resume); nil means the
// session's latest run.
func (h *Handler) attach(ctx context.Context, sw *stream, t *translator, owner string, in *RunAgentInput, run *agent.RunState) {
	ss, err := h.opts.Runner.SessionState(ctx, owner, in.ThreadID)
	if err != nil {
		sw.send(h.runError(err))
		return
	}
	// The position is read before the status, so an end that happens in
	// between is still in the log after it.
	after := ss.LastSeq
	status, why, runID := api.RunStatus(ss.Status), "", ""
	if run != nil {
		// Read again, after the position: the run may have moved on since
		// the caller looked it up.
		cur, err := h.opts.Runner.RunState(ctx, owner, run.ID)
		if err != nil {
			sw.send(h.runError(err))
			return
		}
		status, why, runID = cur.Status, cur.Error, cur.ID
	}
	t.lubanRun = runID
	sw.send(h.runStarted(in, in.ThreadID, runID))
	switch status {
	case api.RunRunning:
		h.follow(ctx, sw, t, in.ThreadID, after)
	case api.RunWaitingInput:
		h.openInterrupts(ctx, sw, t, owner, in, runID)
	case "idle":
		sw.send(Event{Type: EventRunFinished, ThreadID: t.threadID, RunID: t.runID, Outcome: &Outcome{Type: OutcomeSuccess}})
	default:
		sw.send(t.outcome(status, why))
	}
}

// openInterrupts ends the stream with the interrupts the thread's waiting
// run has open: every pending request of the session (several when one
// model message asked several questions, docs/design.md §32), of run runID
// when it is not empty; a front-end tool call that is the only one is
// announced again as its call and RUN_FINISHED success. When none is open
// (answered meanwhile), the run is followed instead.
func (h *Handler) openInterrupts(ctx context.Context, sw *stream, t *translator, owner string, in *RunAgentInput, runID string) {
	after := int64(0)
	if ss, err := h.opts.Runner.SessionState(ctx, owner, in.ThreadID); err == nil {
		after = ss.LastSeq
	}
	p, err := h.opts.Runner.Pending(ctx, owner, in.ThreadID)
	if err != nil {
		sw.send(h.runError(err))
		return
	}
	var its []Interrupt
	var reqs []*api.InputRequest
	for _, r := range p.Requests {
		if runID != "" && r.RunID != runID {
			continue
		}
		raw, err := json.Marshal(r)
		if err != nil {
			sw.send(h.runError(err))
			return
		}
		it, err := interruptOf(raw)
		if err != nil {
			sw.send(h.runError(err))
			return
		}
		its, reqs = append(its, it), append(reqs, r)
	}
	switch {
	case len(its) == 0:
		t.until = 0
		h.follow(ctx, sw, t, in.ThreadID, after)
	case len(its) == 1 && its[0].Reason == ReasonFrontendTool:
		// The call again, then the run's end that leaves it to the
		// client.
		for _, e := range frontendCall(reqs[0]) {
			sw.write(e)
		}
		sw.send(t.frontendPending(its[0]))
	default:
		sw.send(t.interrupts(its))
	}
}

// follow streams the session's events after seq (Runner.Events: replay,
// then live) through t until t reports the end of the run, the client
// leaves or the server shuts down, with a heartbeat comment every
// Heartbeat.
func (h *Handler) follow(ctx context.Context, sw *stream, t *translator, sessionID string, after int64) {
	events := func(ctx context.Context) iter.Seq2[agent.Event, error] {
		return h.opts.Runner.Events(ctx, sessionID, after)
	}
	ssepump.Run(ctx, events, h.opts.Heartbeat, h.opts.Done, ssepump.Writer[agent.Event]{
		Item: func(ev agent.Event) (bool, bool) {
			out, done := t.next(ev)
			for _, e := range out {
				if !sw.write(e) {
					return false, false
				}
			}
			return done, true
		},
		Flush: sw.flush,
		Ping:  sw.comment,
		Fail: func(err error) {
			h.opts.Logger.Error("agui: event log", "sessionId", sessionID, "err", err)
			sw.send(Event{Type: EventRunError, Code: api.CodeInternal, Message: "event log unavailable"})
		},
	})
}

func (h *Handler) runStarted(in *RunAgentInput, sessionID, runID string) Event {
	lm := map[string]any{"sessionId": sessionID}
	if runID != "" {
		lm["runId"] = runID
	}
	return Event{Type: EventRunStarted, ThreadID: in.ThreadID, RunID: in.RunID, Metadata: map[string]any{"luban": lm}}
}

// runError is the RUN_ERROR of a Runner error, with its docs/design.md §3 code.
func (h *Handler) runError(err error) Event {
	d := h.opts.ErrorDetail(err)
	if d.Code == api.CodeInternal {
		h.opts.Logger.Error("agui: request failed", "err", err)
	}
	return errorEvent(d)
}

// frontendTools is RunAgentInput.tools as the Runner takes them.
func frontendTools(tools []Tool) []model.ToolSpec {
	if len(tools) == 0 {
		return nil
	}
	out := make([]model.ToolSpec, len(tools))
	for i, t := range tools {
		out[i] = model.ToolSpec{Name: t.Name, Description: t.Description, Parameters: t.Parameters}
	}
	return out
}

// frontendCall is the TOOL_CALL_START/ARGS/END of a pending front-end tool
// call, sent again to a client that asks about the thread.
func frontendCall(req *api.InputRequest) []Event {
	out := []Event{{Type: EventToolCallStart, ToolCallID: req.ToolCallID, ToolCallName: req.ToolName}}
	if len(req.Arguments) > 0 {
		out = append(out, Event{Type: EventToolCallArgs, ToolCallID: req.ToolCallID, Delta: string(req.Arguments)})
	}
	return append(out, Event{Type: EventToolCallEnd, ToolCallID: req.ToolCallID})
}

// toolResults is the tool messages that end msgs (those after its last
// other message), their text by toolCallId: the results of front-end tool
// calls an application sends with its next run.
func toolResults(msgs []Message) map[string]string {
	var out map[string]string
	for i := len(msgs) - 1; i >= 0 && msgs[i].Role == "tool"; i-- {
		if out == nil {
			out = map[string]string{}
		}
		if _, seen := out[msgs[i].ToolCallID]; !seen {
			out[msgs[i].ToolCallID] = contentText(msgs[i].Content)
		}
	}
	return out
}

// lastUserText returns the text of the input's last message when that
// message is a user message (docs/design.md §13: only it can start a run).
func lastUserText(msgs []Message) (string, bool) {
	if len(msgs) == 0 || msgs[len(msgs)-1].Role != "user" {
		return "", false
	}
	return contentText(msgs[len(msgs)-1].Content), true
}

// contentText is the text of a message's content: the string, or its text
// parts joined by newlines ("" for anything else).
func contentText(c json.RawMessage) string {
	var s string
	if json.Unmarshal(c, &s) == nil {
		return s
	}
	var parts []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if json.Unmarshal(c, &parts) != nil {
		return ""
	}
	var b strings.Builder
	for _, p := range parts {
		if p.Type == "text" {
			if b.Len() > 0 {
				b.WriteString("\n")
			}
			b.WriteString(p.Text)
		}
	}
	return b.String()
}

// decode reads and checks the RunAgentInput; a malformed one is answered
// 400 invalid_request (413 payload_too_large) as JSON.
func (h *Handler) decode(w http.ResponseWriter, r *http.Request) (*RunAgentInput, bool) {
	body := http.MaxBytesReader(w, r.Body, h.opts.MaxBodyBytes)
	dec := json.NewDecoder(body)
	var in RunAgentInput
	fail := func(status int, code api.ErrorCode, msg string, details ...api.FieldError) (*RunAgentInput, bool) {
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
		w.Header().Set("Cache-Control", "no-store")
		w.WriteHeader(status)
		_ = json.NewEncoder(w).Encode(api.ErrorBody{Error: api.ErrorDetail{Code: code, Message: msg, Details: details}})
		return nil, false
	}
	if err := dec.Decode(&in); err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			return fail(http.StatusRequestEntityTooLarge, api.CodePayloadTooLarge, fmt.Sprintf("request body is larger than %d bytes", tooBig.Limit),
				schemaerr.BodyTooLarge(tooBig.Limit, r.ContentLength))
		}
		return fail(http.StatusBadRequest, api.CodeInvalidRequest, "malformed RunAgentInput: "+err.Error())
	}
	if _, err := dec.Token(); err != io.EOF {
		return fail(http.StatusBadRequest, api.CodeInvalidRequest, "malformed RunAgentInput: trailing data after the object")
	}
	switch {
	case !ThreadIDPattern.MatchString(in.ThreadID):
		return fail(http.StatusBadRequest, api.CodeInvalidRequest, "threadId must be 1 to 128 characters of A-Z, a-z, 0-9, _ and -")
	case in.RunID == "":
		return fail(http.StatusBadRequest, api.CodeInvalidRequest, "runId is required")
	case in.Messages == nil:
		return fail(http.StatusBadRequest, api.CodeInvalidRequest, "messages is required (an array)")
	}
	for _, e := range in.Resume {
		if e.InterruptID == "" || (e.Status != ResumeResolved && e.Status != ResumeCancelled) {
			return fail(http.StatusBadRequest, api.CodeInvalidRequest, `a resume entry needs interruptId and status "resolved" or "cancelled"`)
		}
	}
	return &in, true
}

// stream writes AG-UI events as SSE frames ("data: <json>\n\n").
type stream struct {
	w  http.ResponseWriter
	rc *http.ResponseController
}

func (h *Handler) startStream(w http.ResponseWriter) *stream {
	return &stream{w: w, rc: ssepump.Start(w)}
}

func (s *stream) write(e Event) bool {
	b, err := json.Marshal(e)
	if err != nil {
		return false
	}
	_, err = fmt.Fprintf(s.w, "data: %s\n\n", b)
	return err == nil
}

// send writes e and flushes.
func (s *stream) send(e Event) bool { return s.write(e) && s.flush() }

func (s *stream) flush() bool { return s.rc.Flush() == nil }

func (s *stream) comment() bool {
	_, err := io.WriteString(s.w, ": ping\n\n")
	return err == nil && s.flush()
}

// errorEvent is the RUN_ERROR of d: its code and message, and in metadata
// what a client needs to recover (details, receipt, pending).
func errorEvent(d api.ErrorDetail) Event {
	e := Event{Type: EventRunError, Code: d.Code, Message: d.Message}
	md := map[string]any{}
	if len(d.Details) > 0 {
		md["details"] = d.Details
	}
	if d.Receipt != nil {
		md["receipt"] = d.Receipt
	}
	if d.Pending != nil {
		md["pending"] = d.Pending
	}
	if len(md) > 0 {
		e.Metadata = md
	}
	return e
}
