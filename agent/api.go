package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/lubanhq/luban/api"
	"github.com/lubanhq/luban/askuser"
	"github.com/lubanhq/luban/model"
	"github.com/lubanhq/luban/people"
	"github.com/lubanhq/luban/store"
)

// StartParams starts a run: Message from Owner in SessionID (a new session
// when empty).
type StartParams struct {
	Owner, SessionID, Message string
	// CreateSession, when SessionID names no session, creates one with that
	// id for Owner (an AG-UI thread, docs/design.md §13). A session of another
	// principal is still ErrSessionNotFound. The caller validates the id.
	CreateSession bool
	// Agent names the agent of a new session (docs/design.md §9); empty means the
	// default agent. A session keeps its agent: for an existing session it
	// must be empty or that agent's name.
	Agent string
	// FrontendTools are the tools the client offers for this run
	// (docs/design.md §21 "Front-end tools": AG-UI's RunAgentInput.tools):
	// the model may call them beside the agent's own, and a call is put
	// to the client as an interaction. At most MaxFrontendTools, names of
	// 1–64 characters of [A-Za-z0-9_-], parameters a JSON Schema object
	// (none: no parameters); one named like a registered tool is left out.
	FrontendTools []model.ToolSpec
	// Follow, when not nil, is a Following made by Runner.Follow(""): Start
	// has it follow the run's session before its commit, so that
	// Follow.Events(ctx, SessionID, AfterSeq) is handed the start's events
	// instead of reading them back. Nil: nothing is followed.
	Follow *Following
}

// StartResult names the run; AfterSeq is the event sequence number just
// before the run's first event, for streaming it.
type StartResult struct {
	SessionID, RunID string
	AfterSeq         int64
}

// Start begins a run (POST /api/chat). Errors: ErrInvalidRequest (empty
// message, unknown agent, another agent than the session's), *PayloadTooLargeError
// (a message over MaxMessageRunes, naming the field "message"), ErrSessionNotFound, *InteractionPendingError,
// ErrRunInProgress.
func (r *Runner) Start(ctx context.Context, p StartParams) (*StartResult, error) {
	if strings.TrimSpace(p.Message) == "" {
		return nil, fieldRequest("message", api.DetailRequired, nil, "message is empty")
	}
	if n := utf8.RuneCountInString(p.Message); n > MaxMessageRunes {
		return nil, textTooLong("message", n, MaxMessageRunes)
	}
	sessionID := p.SessionID
	var sess *store.Session
	create := false
	if sessionID != "" {
		var err error
		if sess, err = r.session(ctx, p.Owner, sessionID); err != nil {
			if !p.CreateSession || !errors.Is(err, ErrSessionNotFound) {
				return nil, err
			}
			create = true
		}
	}
	agent, err := r.startAgent(sess, p.Agent)
	if err != nil {
		return nil, err
	}
	meta, err := r.frontendMetadata(p.FrontendTools)
	if err != nil {
		return nil, err
	}
	if create {
		if err := r.createSession(ctx, p.Owner, sessionID, p.Message, agent.Name); err != nil {
			return nil, err
		}
	}
	run, msgs, first, err := r.start(ctx, newRun{sessionID: sessionID, owner: p.Owner, title: titleOf(p.Message), agent: agent.Name, user: p.Message, userMeta: meta,
		follow: p.Follow})
	if err != nil {
		return nil, err
	}
	// The driver starts from the rows as start committed them.
	copied := *run
	r.driveFrom(run.ID, &state{run: &copied, msgs: msgs})
	return &StartResult{SessionID: run.SessionID, RunID: run.ID, AfterSeq: first - 1}, nil
}

// createSession creates session id for owner. Losing a race to another
// create of the same id is fine when the winner is owner; another
// principal's session is ErrSessionNotFound.
func (r *Runner) createSession(ctx context.Context, owner, id, msg, agent string) error {
	_, err := r.st.SessionCreate(ctx, &store.SessionCreateParams{ID: id, Owner: owner, Title: titleOf(msg), Agent: agent, Now: r.now()})
	if err == nil {
		return nil
	}
	s, gerr := r.st.SessionGet(ctx, id)
	if gerr != nil {
		return err
	}
	if s.Owner != owner {
		return ErrSessionNotFound
	}
	return nil
}

func titleOf(msg string) string {
	msg = strings.Join(strings.Fields(msg), " ")
	if utf8.RuneCountInString(msg) <= 60 {
		return msg
	}
	return string([]rune(msg)[:60]) + "…"
}

// session loads a session that belongs to owner (anything else is
// ErrSessionNotFound: another principal's session does not exist for you).
func (r *Runner) session(ctx context.Context, owner, id string) (*store.Session, error) {
	s, err := r.st.SessionGet(ctx, id)
	if errors.Is(err, store.ErrNotFound) || (err == nil && s.Owner != owner) {
		return nil, ErrSessionNotFound
	}
	return s, err
}

// interaction loads request requestID of one of owner's sessions (a
// request that does not exist or is in another principal's session is
// ErrInteractionNotFound).
func (r *Runner) interaction(ctx context.Context, owner, requestID string) (*store.Interaction, error) {
	it, err := r.st.InteractionGet(ctx, requestID)
	if errors.Is(err, store.ErrNotFound) {
		return nil, ErrInteractionNotFound
	}
	if err != nil {
		return nil, err
	}
	if _, err := r.session(ctx, owner, it.SessionID); err != nil {
		if errors.Is(err, ErrSessionNotFound) {
			return nil, ErrInteractionNotFound
		}
		return nil, err
	}
	return it, nil
}

// The surfaces an answer comes from (ResolveParams.Surface): where the
// person (or the clock) answered. What is checked and written does not
// depend on them, except that the continue endpoint must name the session
// (docs/design.md §3).
const (
	SurfaceContinue = "continue" // POST /api/chat/continue
	SurfaceAGUI     = "agui"     // an AG-UI resume (docs/design.md §13)
	SurfaceMCP      = "mcp"      // luban's MCP server: a host's decline or cancel (docs/design.md §11)
	SurfaceInbox    = "inbox"    // the inbox page
	SurfaceLink     = "link"     // a signed action link
	SurfaceEmail    = "email"    // an email reply
	SurfaceSlack    = "slack"    // a Slack action
	SurfaceTimeout  = "timeout"  // a deadline's onTimeout
	SurfaceCancel   = "cancel"   // a cancel of the run
)

// ResolveParams is one answer (or decline) to one interaction, from any
// surface (docs/design.md §15).
type ResolveParams struct {
	// By is the principal answering: a person's id, or the token's
	// principal when no people: directory is configured.
	By string
	// SessionID is optional; when set it must be the interaction's session
	// (else ErrInteractionNotFound), and a session that does not exist or
	// that By may not see is ErrSessionNotFound.
	SessionID string
	// RequestID names the interaction (required).
	RequestID string
	// Answer is the one answer body: an ask's selections, customInput and
	// answers; an approval's decision, arguments, message and remember; an
	// elicitation's decision and content; or cancelled, for every kind. Its
	// SessionID and RequestID are not read.
	Answer api.ContinueRequest
	// Surface is where the answer came from (one of the Surface
	// constants); SurfaceContinue requires SessionID.
	Surface string
}

// ContinueResult is the receipt; AfterSeq is the sequence number just before
// the user_input_resolved event, for streaming the continuation.
type ContinueResult struct {
	Receipt  *api.Receipt
	RunID    string
	AfterSeq int64
	// Owner is the session's owner: an assignee who is not may not read
	// the session's stream.
	Owner string
	// Pending, when not nil, is the request still pending after an
	// approval recorded towards its quorum (docs/design.md §16); Receipt is
	// then nil.
	Pending *api.InputRequest
	// Receipts are the receipts of every request a batch resolved
	// (ResolveBatch), in the order of its entries; Receipt is the first.
	// One answer's is its Receipt alone.
	Receipts []*api.Receipt
	// Waiting: the run still waits on other questions it asked at once
	// (docs/design.md §32), so the continuation ends with the event whose
	// Seq is LastSeq (the resolution's last) instead of the run's pause or
	// end.
	Waiting bool
	LastSeq int64
}

// Resolve answers a pending interaction once and resumes what waits on it
// (the run, or an MCP server's call): the one entry point of every surface
// (docs/design.md §15). Who may answer is decided by mayAnswer. Errors:
// *RequestFieldError (RequestID missing, or SessionID on SurfaceContinue),
// ErrSessionNotFound (SessionID names a session that is unknown or not
// By's), ErrInteractionNotFound (the request is unknown, in another session,
// or not By's to see), *AlreadyResolvedError, *InteractionExpiredError,
// ErrNotResumable (or *NotResumableError), *PayloadTooLargeError,
// *askuser.AnswerError (422: nothing consumed, the request stays pending).
func (r *Runner) Resolve(ctx context.Context, p ResolveParams) (*ContinueResult, error) {
	if p.RequestID == "" || (p.Surface == SurfaceContinue && p.SessionID == "") {
		e := &RequestFieldError{Msg: "sessionId and requestId are required"}
		if p.Surface != SurfaceContinue {
			e.Msg = "requestId is required"
		}
		for _, f := range []struct{ name, v string }{{"sessionId", p.SessionID}, {"requestId", p.RequestID}} {
			if f.v == "" && (f.name == "requestId" || p.Surface == SurfaceContinue) {
				e.Details = append(e.Details, api.FieldError{Field: f.name, Code: api.DetailRequired, Message: "required"})
			}
		}
		return nil, e
	}
	// One read: the interaction with its session, run and messages.
	ist, err := r.st.InteractionGetState(ctx, &store.InteractionGetStateParams{ID: p.RequestID, Messages: true})
	if errors.Is(err, store.ErrNotFound) {
		if p.SessionID != "" {
			// An unknown session, or another principal's, is
			// session_not_found, not "no such question".
			if _, err := r.session(ctx, p.By, p.SessionID); err != nil {
				return nil, err
			}
		}
		return nil, ErrInteractionNotFound
	}
	if err != nil {
		return nil, err
	}
	it := ist.Interaction
	if p.SessionID != "" && it.SessionID != p.SessionID {
		if _, err := r.session(ctx, p.By, p.SessionID); err != nil {
			return nil, err
		}
		r.audit(ctx, r.st, it, "rejected", "session_mismatch", nil)
		return nil, ErrInteractionNotFound
	}
	// A question no longer pending is answered with its state (409, 410
	// with the receipt) to whoever may see it: the session's owner always
	// (the transcript shows it anyway), anyone else only once mayAnswer
	// lets them.
	if p.By != ist.Session.Owner || it.Status == string(api.StatusPending) {
		if err := r.mayAnswer(ctx, p.By, it, ist.Session.Owner); err != nil {
			if errors.Is(err, ErrInteractionNotFound) && p.SessionID != "" {
				// The session the caller named is not theirs to see.
				err = ErrSessionNotFound
			}
			return nil, err
		}
	}
	in, err := r.answerable(ctx, ist)
	if err != nil {
		return nil, err
	}
	res, err := in.kind.validate(ctx, r, in, p.Answer, p.By)
	if err != nil {
		if _, invalid := err.(*askuser.AnswerError); invalid {
			r.audit(ctx, r.st, it, "rejected", "invalid_answer", nil)
		}
		return nil, err
	}
	if held, err := r.quorumStep(ctx, in, res); err != nil || held != nil {
		return held, err
	}
	done, err := r.resolveInteraction(ctx, in, res)
	if errors.Is(err, errNotWaiting) || errors.Is(err, errResolveLost) {
		// Resolved, expired or ended since it was read.
		return nil, r.notResumable(ctx, it)
	}
	if err != nil {
		return nil, err
	}
	// The result and its one receipt's slice, in one allocation.
	out := &struct {
		ContinueResult
		receipts [1]*api.Receipt
	}{receipts: [1]*api.Receipt{done.receipt}}
	out.ContinueResult = ContinueResult{Receipt: done.receipt, Receipts: out.receipts[:], RunID: it.RunID, AfterSeq: done.seq - 1, Owner: ist.Session.Owner,
		Waiting: done.waiting, LastSeq: done.last}
	return &out.ContinueResult, nil
}

// answerable is the answering of ist's interaction when it can take an
// answer now: pending, before its expiresAt, of a run that can resume.
// Otherwise the error the answer gets (each refusal audited): 410
// *InteractionExpiredError (past expiresAt whether or not the deadline
// keeper got there first: expiredAnswer resolves it by its timeout),
// *NotResumableError or ErrNotResumable, 409 *AlreadyResolvedError.
func (r *Runner) answerable(ctx context.Context, ist *store.InteractionState) (*answering, error) {
	it := ist.Interaction
	switch it.Status {
	case string(api.StatusExpired):
		r.audit(ctx, r.st, it, "rejected", "expired", nil)
		return nil, &InteractionExpiredError{Receipt: receiptOf(it)}
	case string(api.StatusNotResumable):
		r.audit(ctx, r.st, it, "rejected", "not_resumable", nil)
		return nil, &NotResumableError{Receipt: receiptOf(it)}
	case string(api.StatusPending):
	default:
		r.audit(ctx, r.st, it, "rejected", "duplicate", nil)
		return nil, &AlreadyResolvedError{Receipt: receiptOf(it)}
	}
	in, err := newAnswering(it)
	if !r.now().Before(it.ExpiresAt) {
		return nil, r.expiredAnswer(ctx, in)
	}
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrNotResumable, err)
	}
	if !r.resumableRun(ist.Run) {
		return nil, r.notResumable(ctx, it)
	}
	in.run, in.msgs = ist.Run, ist.Messages
	return in, nil
}

// expiredAnswer resolves in, an answer's question past its expiresAt, by
// its timeout (the deadline scheduler may not have got there yet) and returns the error
// the answer gets: 410 with the expiry's receipt, or, when an answer that
// came first resolved it since it was read, 409 with that receipt.
func (r *Runner) expiredAnswer(ctx context.Context, in *answering) error {
	it := in.it
	var rc *api.Receipt
	action, err := r.storedTimeout(ctx, it)
	if err != nil {
		return err
	}
	if run, ok := r.resumable(ctx, it); ok {
		in.run = run
	} else {
		action = TimeoutExpire
	}
	done, err := r.resolveInteraction(ctx, in, timeoutResolution(in, action))
	switch {
	case err == nil:
		rc = done.receipt
	case errors.Is(err, errResolveLost) || errors.Is(err, errNotWaiting):
		cur, err := r.st.InteractionGet(ctx, it.ID)
		if err != nil {
			return err
		}
		if cur.Status != string(api.StatusPending) && cur.Status != string(api.StatusExpired) {
			r.audit(ctx, r.st, cur, "rejected", "duplicate", nil)
			return &AlreadyResolvedError{Receipt: receiptOf(cur)}
		}
		if cur.Status == string(api.StatusExpired) {
			rc = receiptOf(cur)
		}
	default:
		return err
	}
	r.audit(ctx, r.st, it, "rejected", "expired", nil)
	return &InteractionExpiredError{Receipt: rc}
}

// mayAnswer is the one check of who may answer interaction it
// (docs/design.md §15, §16), whose session owner is given: a question a
// route assigned is its assignees' (an escalation's or a delegation's rows
// included), anyone else gets ErrNotAssignee; any other question is the
// owner's and no one else's: ErrInteractionNotFound when it is not by's to
// see (Resolve turns that into ErrSessionNotFound when the caller named the
// session). The owner's approval under selfApproval: false is refused
// after the answer is read (quorumStep).
func (r *Runner) mayAnswer(ctx context.Context, by string, it *store.Interaction, owner string) error {
	if routeOf(it) == nil {
		// No route assigned it: the owner's, and nobody else's to see.
		if by != owner {
			return ErrInteractionNotFound
		}
		return nil
	}
	// A route's question (docs/design.md §16): its assignees', whoever
	// owns the session.
	rows, err := r.st.AssigneeList(ctx, it.ID)
	if err != nil {
		return err
	}
	for _, a := range rows {
		if a.Person == by {
			return nil
		}
	}
	r.audit(ctx, r.st, it, "rejected", "not_assignee", map[string]any{"principal": by})
	return ErrNotAssignee
}

// notResumable is the error of an answer to question it whose run cannot
// take it (ended, or not waiting), decided by the question as it is now,
// not as it was read: resolved since then, the run went on because another
// answer came first, so this one is its duplicate (409 with that receipt);
// expired since then, 410 interaction_expired; still pending, the run
// really cannot continue: ErrNotResumable.
func (r *Runner) notResumable(ctx context.Context, it *store.Interaction) error {
	cur, err := r.st.InteractionGet(ctx, it.ID)
	if err != nil {
		return err
	}
	switch cur.Status {
	case string(api.StatusPending):
		return ErrNotResumable
	case string(api.StatusExpired):
		r.audit(ctx, r.st, cur, "rejected", "expired", nil)
		return &InteractionExpiredError{Receipt: receiptOf(cur)}
	}
	r.audit(ctx, r.st, cur, "rejected", "duplicate", nil)
	return &AlreadyResolvedError{Receipt: receiptOf(cur)}
}

// resumable reports whether the interaction's run can be continued here: its
// run is stored, has not ended and its agent exists (docs/design.md §4). It
// returns the run as it read it.
func (r *Runner) resumable(ctx context.Context, it *store.Interaction) (*store.Run, bool) {
	run, err := r.st.RunGet(ctx, it.RunID)
	if err != nil || !r.resumableRun(run) {
		return nil, false
	}
	return run, true
}

// resumableRun is resumable of a run already read (nil: its row is gone).
func (r *Runner) resumableRun(run *store.Run) bool {
	if run == nil || run.Status.Terminal() {
		return false
	}
	_, ok := r.agents[run.Agent]
	return ok || run.Agent == externalAgent
}

// CancelParams stops SessionID's active run (POST /api/sessions/{id}/cancel).
type CancelParams struct {
	Owner, SessionID string
}

// Cancel stops the session's active run with no further model call: the run
// ends cancelled, and in the same transaction every question it left pending
// is resolved as cancelled (its ToolResult says so) and every other tool call
// without a result gets one saying it was not run, or, when its tool started,
// that it was interrupted and may have taken effect. A tool call this process
// is making is first waited for, up to Options.ToolStopWait, so that it gets
// its real result (docs/design.md §18). It returns the status the
// session has after the call: "cancelled", or, when no run was active (or the
// run ended first), the status it ended with.
func (r *Runner) Cancel(ctx context.Context, p CancelParams) (string, error) {
	ctx = withActor(ctx, p.Owner)
	if _, err := r.session(ctx, p.Owner, p.SessionID); err != nil {
		return "", err
	}
	run, err := r.st.RunGetActive(ctx, p.SessionID)
	if errors.Is(err, store.ErrNotFound) {
		// No active run. A question left pending by a run that ended
		// without closing it (rows written before runs closed their
		// questions) is closed here.
		if it, err := r.st.InteractionGetPending(ctx, p.SessionID); err == nil {
			in, _ := newAnswering(it)
			_, err := r.resolveInteraction(ctx, in, closingResolution(api.StatusCancelled, api.Answer{Selections: []string{}, Cancelled: true}))
			if err != nil && !errors.Is(err, errResolveLost) {
				return "", err
			}
		}
		s, err := r.st.SessionGet(ctx, p.SessionID)
		if err != nil {
			return "", err
		}
		return s.Status, nil
	}
	if err != nil {
		return "", err
	}
	// A tool call in flight here gets its real result when it returns
	// within Options.ToolStopWait; after that, finish records it as
	// interrupted (it may have taken effect), never as not run.
	r.awaitTool(ctx, run.ID)
	// A streaming reply is kept: the text streamed so far becomes the
	// assistant message, marked stopped, in the transaction that ends the
	// run. A reply streaming in another process (a replica) is read from
	// the deltas it committed; that process sees the run end and stops.
	lt := r.claimLive(run.ID)
	won := false
	err = r.st.InTx(ctx, func(tx store.Tx) error {
		extra := func() error { return r.storeLoggedStopped(ctx, tx, run) }
		if lt != nil {
			extra = func() error { return r.storeStopped(ctx, tx, run, lt) }
		}
		var ferr error
		won, ferr = r.finish(ctx, tx, run, []store.RunStatus{store.RunRunning, store.RunWaitingInput}, store.RunCancelled, nil, extra)
		return ferr
	})
	if err != nil {
		return "", err
	}
	r.mu.Lock()
	if cancel := r.active[run.ID]; cancel != nil {
		cancel()
	}
	r.mu.Unlock()
	if !won {
		cur, err := r.st.RunGet(ctx, run.ID)
		if err != nil {
			return "", err
		}
		return string(cur.Status), nil
	}
	return string(store.RunCancelled), nil
}

// storeStopped stores the text lt streamed so far as run's assistant
// message, marked stopped, with its message event, and deletes lt's delta
// events (as recordModelTurn does for a complete turn). A turn that streamed
// no text stores no message.
func (r *Runner) storeStopped(ctx context.Context, tx store.Tx, run *store.Run, lt *liveTurn) error {
	if text := lt.deltas.streamed(); text != "" {
		if _, err := tx.MessageInsert(ctx, &store.MessageInsertParams{ID: lt.msgID, SessionID: run.SessionID, RunID: run.ID, Role: "assistant",
			Content: text, Metadata: mustJSON(messageMetadata{Stopped: true}), Now: r.now()}); err != nil {
			return err
		}
		if _, err := r.emitContent(ctx, tx, run.SessionID, api.EventMessage, lt.msgID, api.MessageEvent{MessageID: lt.msgID, Role: "assistant", Stopped: true}); err != nil {
			return err
		}
	}
	if span := lt.seqs.span(); span[0] > 0 {
		_, err := tx.EventDelete(ctx, &store.EventDeleteParams{SessionID: run.SessionID, FromSeq: span[0], ToSeq: span[1],
			Names: []string{api.EventMessageDelta, api.EventReasoningDelta}})
		return err
	}
	return nil
}

// Pending returns what a refreshed page needs to restore its cards: every
// pending request of the session in call order (docs/design.md §32), the
// first of them, and the last receipt.
func (r *Runner) Pending(ctx context.Context, owner, sessionID string) (*api.PendingResponse, error) {
	if _, err := r.session(ctx, owner, sessionID); err != nil {
		return nil, err
	}
	out := &api.PendingResponse{Requests: []*api.InputRequest{}}
	its, err := r.st.InteractionListPending(ctx, sessionID)
	if err != nil {
		return nil, err
	}
	for _, it := range its {
		req, err := r.inputRequest(ctx, it)
		if err != nil {
			return nil, err
		}
		out.Requests = append(out.Requests, req)
	}
	if len(out.Requests) > 0 {
		out.Pending = out.Requests[0]
	}
	if it, err := r.st.InteractionGetLastResolved(ctx, sessionID); err == nil {
		out.Last = receiptOf(it)
	} else if !errors.Is(err, store.ErrNotFound) {
		return nil, err
	}
	return out, nil
}

// InputRequest decodes a stored interaction into the InputRequest a client
// sees, with Resumable computed now.
func (r *Runner) inputRequest(ctx context.Context, it *store.Interaction) (*api.InputRequest, error) {
	req, err := decodeRequest(it)
	if err != nil {
		return nil, err
	}
	req.Resumable = false
	if it.Status != string(api.StatusPending) {
		req.WaitingFor = nil // the receipt says who decided
		return req, nil
	}
	if err := r.refreshAssignees(ctx, it, req); err != nil {
		return nil, err
	}
	run, ok := r.resumable(ctx, it)
	req.Resumable = ok
	if ok && isElicitation(it) && elicitMetaOf(it).Kind == elicitSession {
		req.Resumable = r.elicitLive(ctx, it, run)
	}
	return req, nil
}

// interactions lists a session's interactions with their receipts.
func (r *Runner) interactions(ctx context.Context, sessionID string) ([]api.InteractionView, error) {
	its, err := r.st.InteractionList(ctx, sessionID)
	if err != nil {
		return nil, err
	}
	out := make([]api.InteractionView, 0, len(its))
	for _, it := range its {
		req, err := r.inputRequest(ctx, it)
		if err != nil {
			return nil, err
		}
		v := api.InteractionView{Request: *req, Status: api.Status(it.Status)}
		if it.Status != string(api.StatusPending) {
			v.Receipt = receiptOf(it)
		}
		out = append(out, v)
	}
	return out, nil
}

func decodeRequest(it *store.Interaction) (*api.InputRequest, error) {
	var req api.InputRequest
	if err := json.Unmarshal(it.Request, &req); err != nil {
		return nil, fmt.Errorf("stored request %s: %w", it.ID, err)
	}
	return &req, nil
}

func receiptOf(it *store.Interaction) *api.Receipt { return people.ReceiptOf(it) }
