package agent

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"time"

	"github.com/lubanhq/luban/api"
	"github.com/lubanhq/luban/model"
	"github.com/lubanhq/luban/store"
)

// The transitions of docs/design.md §4. Each is one transaction that writes the
// run's row first (a conditional write, so a transition on a run that moved
// on loses), then its rows, events, trace and audit entries together, and
// returns what it committed. docs/design.md draws them:
//
//	start            → running                            (a message, an outside ask)
//	recordModelTurn  running → running | completed        (a model turn)
//	recordToolResult running → running                    (a ToolResult)
//	pause            running → waiting_input              (a question put)
//	resolve          waiting_input → running | cancelled | expired
//	finish           running | waiting_input → an end state
//
// pause takes an interaction of any kind (a question, later an approval or an
// elicitation); finish and resolve take an extra func that writes the rows of
// whatever ended the run in the same transaction.

// newRun is what start stores: a run of agent in session sessionID (a new
// session of owner titled title when empty) and its first message, the
// user's text or, for a run that holds an outside program's question
// (Runner.Ask), an assistant message with that one call.
type newRun struct {
	sessionID, owner, title, agent string
	user                           string
	// userMeta is the user message's metadata (userMetadata: the run's
	// front-end tools); nil for none.
	userMeta json.RawMessage
	call     *model.ToolCall
	// follow, when not nil, follows the session before the commit.
	follow *Following
}

// start is the start transition: it inserts the run running under this
// process's lease (a store that holds an active run of the session refuses
// it), creating the session first when nr names none, writes the session
// event, the first message and its events (a call's tool_call trace and
// event too), and sets the session running. It returns the run as
// committed, the session's messages as committed when it created the
// session (nil otherwise), and the Seq of its session event. Errors:
// *InteractionPendingError when the session waits on a question,
// ErrRunInProgress when another run of it is active.
func (r *Runner) start(ctx context.Context, nr newRun) (*store.Run, []*store.Message, int64, error) {
	now := r.now()
	run := &store.Run{ID: NewID("run"), SessionID: nr.sessionID, Agent: nr.agent, Status: store.RunRunning,
		LeaseOwner: r.opts.InstanceID, LeaseUntil: now.Add(r.opts.LeaseDuration), CreatedAt: now, UpdatedAt: now}
	var callsJSON json.RawMessage
	if nr.call != nil {
		var err error
		if callsJSON, err = json.Marshal([]model.ToolCall{*nr.call}); err != nil {
			return nil, nil, 0, err
		}
	}
	var first int64
	var msgs []*store.Message
	created := run.SessionID == ""
	if created {
		run.SessionID = NewID("sess")
	}
	nr.follow.follow(run.SessionID)
	err := r.st.InTx(ctx, func(tx store.Tx) error {
		msgs = nil
		if created {
			if _, err := tx.SessionCreate(ctx, &store.SessionCreateParams{ID: run.SessionID, Owner: nr.owner, Title: nr.title, Agent: sessionAgent(nr.agent),
				Status: string(store.RunRunning), Now: now}); err != nil {
				return err
			}
		}
		if _, err := tx.RunInsert(ctx, &store.RunInsertParams{ID: run.ID, SessionID: run.SessionID, Agent: run.Agent,
			LeaseOwner: run.LeaseOwner, LeaseUntil: run.LeaseUntil, Now: now}); err != nil {
			return err
		}
		ev, err := r.emit(ctx, tx, run.SessionID, api.EventSession, api.SessionEvent{SessionID: run.SessionID, RunID: run.ID})
		if err != nil {
			return err
		}
		first = ev.Seq
		msgID := NewID("msg")
		role := "user"
		if nr.call != nil {
			role = "assistant"
		}
		m, err := tx.MessageInsert(ctx, &store.MessageInsertParams{ID: msgID, SessionID: run.SessionID, RunID: run.ID, Role: role,
			Content: nr.user, ToolCalls: callsJSON, Metadata: nr.userMeta, Now: now})
		if err != nil {
			return err
		}
		if created {
			msgs = []*store.Message{m}
		}
		if _, err := r.emitContent(ctx, tx, run.SessionID, api.EventMessage, msgID, api.MessageEvent{MessageID: msgID, Role: api.Role(role)}); err != nil {
			return err
		}
		if c := nr.call; c != nil {
			r.trace(ctx, tx, run, "tool_call", toolCallTrace(*c))
			if _, err := r.emitContent(ctx, tx, run.SessionID, api.EventToolCall, msgID, api.ToolCallEvent{ToolCallID: c.ID, Name: c.Name}); err != nil {
				return err
			}
		}
		// RunInsert set the session running.
		return nil
	})
	if errors.Is(err, store.ErrRunActive) {
		if it, perr := r.st.InteractionGetPending(ctx, run.SessionID); perr == nil {
			req, _ := r.inputRequest(ctx, it)
			return nil, nil, 0, &InteractionPendingError{Pending: req}
		}
		return nil, nil, 0, ErrRunInProgress
	}
	if err != nil {
		return nil, nil, 0, err
	}
	return run, msgs, first, nil
}

// sessionAgent is the agent a new session keeps: none for a session an
// outside program's question created.
func sessionAgent(agent string) string {
	if agent == externalAgent {
		return ""
	}
	return agent
}

// modelTurn is what a model call produced, as recordModelTurn stores it.
type modelTurn struct {
	msgID     string
	message   model.Message    // content and reasoning
	calls     []model.ToolCall // as stored: unique ids, rejected arguments bounded
	callsJSON json.RawMessage  // calls encoded (the message's tool_calls column); nil: encoded when stored
	traces    []toolCallData   // the tool_call trace of each call (the whole arguments' length and hash)
	callTrace any              // the model_call trace
	// streamed is the first and last Seq of the message_delta and
	// reasoning_delta events committed while the call streamed (zero when
	// none): the message's transaction deletes them, its message event
	// has the whole text.
	streamed [2]int64
	streak   int // the run's invalid-ask streak after this turn
	prompts  map[string]*api.Prompt
	// pause, when not empty, is the questions the run's next step would
	// put (decide on the turn as it will be stored): the pause transition's
	// writes ride in the turn's own transaction, one commit instead of two.
	pause []interaction
}

// recordModelTurn stores a model turn: the run's step count and invalid
// streak, the model_call trace, the assistant message with its tool calls,
// the message and tool_call events, and deletes the deltas the call
// streamed (the message event has their text; docs/design.md "Streamed
// text"). A turn
// without tool calls completes the run in the same transaction. It returns
// the run and messages as committed (errLeaseLost when the run is no longer
// running under this process's lease).
func (r *Runner) recordModelTurn(ctx context.Context, st *state, t modelTurn) (*state, error) {
	run := st.run
	// One allocation holds the turn and what its transaction needs.
	c := &turnCommit{r: r, ctx: ctx, run: run, t: t, steps: run.Steps + 1, callsJSON: t.callsJSON}
	if c.callsJSON == nil && len(t.calls) > 0 {
		var err error
		if c.callsJSON, err = json.Marshal(t.calls); err != nil {
			return nil, err
		}
	}
	c.now = r.now()
	c.fresh = true
	err := r.st.InTx(ctx, c.commit)
	if errors.Is(err, store.ErrDuplicate) && len(t.pause) > 0 {
		// A question's tool call was asked before (putRows).
		c.fresh = false
		err = r.st.InTx(ctx, c.commit)
	}
	if err != nil {
		return nil, mustWon(err)
	}
	if len(t.pause) > 0 {
		r.fault("interaction_committed")
		return nil, nil
	}
	out := &committedState{run: *run}
	after := &out.run
	after.Steps, after.InvalidStreak, after.UpdatedAt = c.steps, t.streak, c.now
	if len(t.calls) == 0 {
		after.Status, after.LeaseOwner, after.LeaseUntil = store.RunCompleted, "", time.Time{}
	}
	out.state = state{run: after, msgs: append(st.msgs[:len(st.msgs):len(st.msgs)], c.stored), prompts: t.prompts}
	return &out.state, nil
}

// committedState is a state and the run it points to, in one allocation.
type committedState struct {
	state
	run store.Run
}

// turnCommit is recordModelTurn's transaction: the turn, the run it
// belongs to, its step count and time, and the message it stored.
type turnCommit struct {
	r         *Runner
	ctx       context.Context
	run       *store.Run
	t         modelTurn
	steps     int
	callsJSON json.RawMessage
	now       time.Time
	stored    *store.Message
	tx        store.Tx // commit's, for rowsInTx
	fresh     bool     // the questions' inserts are MustWin (putRows)
}

// commit writes the turn: the run's row first (the order every
// transaction of a run keeps), in one statement: the step's checkpoint, or
// the pause or the end of the run it leads to with the step's counts; then
// the turn's own rows.
func (c *turnCommit) commit(tx store.Tx) error {
	r, ctx, run, t := c.r, c.ctx, c.run, &c.t
	switch {
	case len(t.calls) == 0:
		c.tx = tx
		won, err := r.finishRun(ctx, tx, run, &store.RunFinishParams{ID: run.ID, From: []store.RunStatus{store.RunRunning}, LeaseOwner: r.opts.InstanceID,
			To: store.RunCompleted, Steps: &c.steps, InvalidStreak: &t.streak, Now: r.now(), MustWin: true}, nil, c.rowsInTx)
		if err != nil || !won {
			return errLost(err)
		}
		return nil
	case len(t.pause) > 0:
		won, err := tx.RunPause(ctx, &store.RunPauseParams{ID: run.ID, LeaseOwner: r.opts.InstanceID, Steps: &c.steps, InvalidStreak: &t.streak, Now: c.now, MustWin: true})
		if err != nil || !won {
			return errLost(err)
		}
		if err := c.rows(tx); err != nil {
			return err
		}
		return r.pauseRows(ctx, tx, run, t.pause, c.now, c.fresh)
	}
	won, err := tx.RunCheckpoint(ctx, &store.RunCheckpointParams{ID: run.ID, LeaseOwner: r.opts.InstanceID, Steps: &c.steps, InvalidStreak: &t.streak, Now: c.now})
	if err != nil || !won {
		return errLost(err)
	}
	return c.rows(tx)
}

// rowsInTx is rows in commit's transaction.
func (c *turnCommit) rowsInTx() error { return c.rows(c.tx) }

// rows are the turn's own writes: the model_call trace, the assistant
// message, its event, the deltas deleted, each tool call's trace and event.
func (c *turnCommit) rows(tx store.Tx) error {
	r, ctx, run, t, now := c.r, c.ctx, c.run, &c.t, c.now
	if err := tx.TraceInsert(ctx, &store.TraceInsertParams{SessionID: run.SessionID, RunID: run.ID, Kind: "model_call", Data: mustJSON(t.callTrace), Now: now}); err != nil {
		return err
	}
	var err error
	if c.stored, err = tx.MessageInsert(ctx, &store.MessageInsertParams{ID: t.msgID, SessionID: run.SessionID, RunID: run.ID, Role: "assistant",
		Content: t.message.Content, ToolCalls: c.callsJSON, Calls: insertedCalls(t.calls), Metadata: assistantMetadata(t.message), Now: now}); err != nil {
		return err
	}
	if _, err := r.emitContent(ctx, tx, run.SessionID, api.EventMessage, t.msgID, api.MessageEvent{MessageID: t.msgID, Role: "assistant", Reasoning: reasoningText(t.message)}); err != nil {
		return err
	}
	// After the message event, never before: the log's last event
	// must stay (SQLite numbers the next event after it).
	if t.streamed[0] > 0 {
		if _, err := tx.EventDelete(ctx, &store.EventDeleteParams{SessionID: run.SessionID, FromSeq: t.streamed[0], ToSeq: t.streamed[1],
			Names: []string{api.EventMessageDelta, api.EventReasoningDelta}}); err != nil {
			return err
		}
	}
	for i, call := range t.calls {
		r.trace(ctx, tx, run, "tool_call", t.traces[i])
		if _, err := r.emitContent(ctx, tx, run.SessionID, api.EventToolCall, t.msgID, api.ToolCallEvent{ToolCallID: call.ID, Name: call.Name}); err != nil {
			return err
		}
	}
	return nil
}

// recordToolResult stores the ToolResult of one tool call of the run's last
// assistant message (parent) and its tool_result event, conditionally on
// the run still running under this process's lease. It returns the state
// with the result appended (errLeaseLost when the write lost,
// store.ErrDuplicate when the call already had a result).
func (r *Runner) recordToolResult(ctx context.Context, st *state, parent string, pc pendingCall, res api.ToolResult) (*state, error) {
	run := st.run
	now := r.now()
	var stored *store.Message
	err := r.st.InTx(ctx, func(tx store.Tx) error {
		won, err := tx.RunCheckpoint(ctx, &store.RunCheckpointParams{ID: run.ID, LeaseOwner: r.opts.InstanceID, Now: now})
		if err != nil || !won {
			return errLost(err)
		}
		stored, err = r.writeResult(ctx, tx, run, parent, pc.index, pc.call, res)
		return err
	})
	if err != nil {
		return nil, err
	}
	after := *run
	after.UpdatedAt = now
	return &state{run: &after, msgs: append(st.msgs[:len(st.msgs):len(st.msgs)], stored), prompts: st.prompts}, nil
}

// interaction is what pause puts in front of a person: a question (ask_user,
// AskUser) or any later kind (docs/design.md §10 approvals, §11 elicitations).
type interaction struct {
	ID, ToolCallID, Tool string
	// Request is the stored request (api.InputRequest without
	// resumable for a question).
	Request json.RawMessage
	// Event is the payload of the user_input_required event; nil when the
	// payload is Request itself, byte for byte: the event then references
	// the interaction row instead of copying it.
	Event any
	// Audit is the summary of the "requested" audit entry.
	Audit     any
	ExpiresAt time.Time
	// Assign, when not nil, is the route that assigned the question and its
	// people (docs/design.md §16); nil: the session's owner answers.
	Assign *assignment
	// CreatedAt is when it was asked (the zero time: the pause's time).
	CreatedAt time.Time
}

// pause moves the run to waiting_input and, in the same transaction, stores
// the interactions (one, or every question of one assistant message:
// docs/design.md §32), emits user_input_required for each in order and
// writes the audit and trace entries (persist first, then emit). It returns
// errLeaseLost when the run is no longer running under this process's
// lease, so that a run that a cancel ended never pauses.
func (r *Runner) pause(ctx context.Context, run *store.Run, ins ...interaction) error {
	now := r.now()
	err := r.st.InTx(ctx, func(tx store.Tx) error { return r.pauseTx(ctx, tx, run, ins, now, true) })
	if errors.Is(err, store.ErrDuplicate) {
		// A question's tool call was asked before (putRows).
		err = r.st.InTx(ctx, func(tx store.Tx) error { return r.pauseTx(ctx, tx, run, ins, now, false) })
	}
	return mustWon(err)
}

// mustWon is the error of a transaction whose MustWin run write lost:
// errLeaseLost for a store.ErrLost (the store failed the transaction
// rather than report the loss), err otherwise.
func mustWon(err error) error {
	if errors.Is(err, store.ErrLost) {
		return errLeaseLost
	}
	return err
}

// pauseTx is pause's writes in tx (its own transaction, or the model turn's
// that asked the questions, see modelTurn.pause); fresh as in putRows.
func (r *Runner) pauseTx(ctx context.Context, tx store.Tx, run *store.Run, ins []interaction, now time.Time, fresh bool) error {
	won, err := tx.RunPause(ctx, &store.RunPauseParams{ID: run.ID, LeaseOwner: r.opts.InstanceID, Now: now, MustWin: true})
	if err != nil || !won {
		return errLost(err)
	}
	return r.pauseRows(ctx, tx, run, ins, now, fresh)
}

// pauseRows is pauseTx's writes after the run's row (RunPause won in tx,
// and set the session waiting_input); fresh as in putRows.
func (r *Runner) pauseRows(ctx context.Context, tx store.Tx, run *store.Run, ins []interaction, now time.Time, fresh bool) error {
	for _, in := range ins {
		if err := r.putRows(ctx, tx, run, in, now, fresh); err != nil {
			return err
		}
	}
	return nil
}

// putRows is the rows of one interaction a pause puts. fresh: the
// question's tool call is expected not to have one yet, so its insert is
// MustWin (a store may then fail the transaction on a duplicate, with
// store.ErrDuplicate, and its caller runs it again with fresh unset:
// docs/design.md §34).
func (r *Runner) putRows(ctx context.Context, tx store.Tx, run *store.Run, in interaction, now time.Time, fresh bool) error {
	at := now
	if !in.CreatedAt.IsZero() {
		at = in.CreatedAt
	}
	td, deadlines := in.Assign.deadlines().specs(at)
	it, err := tx.InteractionInsert(ctx, &store.InteractionInsertParams{ID: in.ID, SessionID: run.SessionID, RunID: run.ID,
		ToolCallID: in.ToolCallID, Tool: in.Tool, Request: in.Request, Route: in.Assign.routeJSON(), Now: at, ExpiresAt: in.ExpiresAt, TimeoutData: td, Deadlines: deadlines, MustWin: fresh})
	if errors.Is(err, store.ErrDuplicate) {
		// The call was asked before (an interaction and its pause are
		// one transaction): pause rather than ask twice. (A MustWin
		// insert may instead fail the transaction: fresh.)
		return nil
	}
	if err != nil {
		return err
	}
	if err := in.Assign.store(ctx, tx, in.ID, at); err != nil {
		return err
	}
	if in.Event == nil {
		_, err = tx.EventAppend(ctx, &store.EventAppendParams{SessionID: run.SessionID, Name: api.EventUserInputRequired, Data: in.Request, Ref: in.ID, RunID: run.ID,
			Audience: in.Assign.audience(), Now: r.now()})
	} else {
		_, err = r.emitTo(ctx, tx, run.SessionID, api.EventUserInputRequired, in.Event, in.Assign.audience())
	}
	if err != nil {
		return err
	}
	r.audit(ctx, tx, it, "requested", "", in.Audit)
	r.trace(ctx, tx, run, "interaction", interactionTrace{RequestID: in.ID, ToolCallID: in.ToolCallID, Action: "requested"})
	return nil
}

// writeResult stores the ToolResult of one tool call and emits tool_result.
// The content is kept in the message, which the event references; the
// trace names it by length and SHA-256 (Runner.Trace shows it from the
// message).
func (r *Runner) writeResult(ctx context.Context, tx store.Executor, run *store.Run, parentID string, idx int, call model.ToolCall, res api.ToolResult) (*store.Message, error) {
	mp, tr, ev := r.resultRows(run, parentID, idx, call, res)
	m, err := tx.MessageInsert(ctx, mp)
	if err != nil {
		return nil, err
	}
	if err := tx.TraceInsert(ctx, tr); err != nil {
		r.log.Error("trace insert", "err", err)
	}
	_, err = tx.EventAppend(ctx, ev)
	return m, err
}

// resultRows are writeResult's rows: the tool message, its tool_result
// trace entry and its tool_result event (which references the message).
func (r *Runner) resultRows(run *store.Run, parentID string, idx int, call model.ToolCall, res api.ToolResult) (*store.MessageInsertParams, *store.TraceInsertParams, *store.EventAppendParams) {
	id := NewID("msg")
	m := &store.MessageInsertParams{ID: id, SessionID: run.SessionID, RunID: run.ID, Role: "tool",
		Content: res.Content, ToolCallID: call.ID, Name: call.Name, IsError: res.IsError, Metadata: res.Metadata,
		ParentID: parentID, CallIndex: idx, Now: r.now()}
	sum := sha256.Sum256([]byte(res.Content))
	tr := r.traceRow(run, "tool_result", toolResultData{ToolCallID: call.ID, Name: call.Name, IsError: res.IsError,
		ContentBytes: len(res.Content), ContentSha256: hex.EncodeToString(sum[:])})
	ev := &store.EventAppendParams{SessionID: run.SessionID, Name: api.EventToolResult,
		Data: mustJSON(api.ToolResultEvent{ToolCallID: call.ID, Name: call.Name, IsError: res.IsError, Metadata: res.Metadata}), MessageRef: id, Now: r.now()}
	return m, tr, ev
}
