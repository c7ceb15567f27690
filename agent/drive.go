package agent

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"sort"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/lubanhq/luban/api"
	"github.com/lubanhq/luban/askuser"
	"github.com/lubanhq/luban/model"
	"github.com/lubanhq/luban/store"
	"github.com/lubanhq/luban/tool"
)

// driveRun makes this process drive run id until it pauses or ends, in a
// goroutine of its own; it returns at once. It does nothing when another
// process holds the run's lease. When the run is already driven here, its
// driver looks at it once more before it lets go, so a run resumed while its
// driver was finishing (an answer right after the pause) is not left waiting
// for a lease to expire. During Shutdown it only releases the run's lease,
// so that the next process continues it at once.
func (r *Runner) driveRun(id string) { r.driveFrom(id, nil) }

// driveFrom is driveRun, whose first step starts from st (nil: it reads the
// run's rows): the rows a transition of this process just committed. When
// the run's driver here is finishing, its next round starts from st. Every write of a step is conditional on the
// run still running under this process's lease, so a row that went stale
// meanwhile loses its write, as a fresh read just before the change would.
func (r *Runner) driveFrom(id string, st *state) {
	r.mu.Lock()
	if r.baseCtx.Err() != nil {
		r.mu.Unlock()
		r.release(id)
		return
	}
	if _, ok := r.active[id]; ok {
		if r.again == nil {
			r.again = map[string]*state{}
		}
		if _, asked := r.again[id]; asked {
			st = nil // two transitions: read which came last
		}
		r.again[id] = st
		r.mu.Unlock()
		return
	}
	ctx, cancel := context.WithCancel(r.baseCtx)
	r.active[id] = cancel
	r.wg.Add(1)
	r.mu.Unlock()
	j := driveJob{ctx: ctx, cancel: cancel, id: id, st: st}
	select {
	case r.drivers <- j:
		// An idle driver took it; it is counted in r.wg already.
		r.wg.Done()
	default:
		go r.driver(j)
	}
}

// driveJob is one driveLoop a driver goroutine runs.
type driveJob struct {
	ctx    context.Context
	cancel context.CancelFunc
	id     string
	st     *state
}

// maxIdleDrivers is how many driver goroutines wait for a next run once
// theirs paused or ended; the others return.
const maxIdleDrivers = 32

// driver is the goroutine driveFrom hands run j to: it runs j's driveLoop,
// then waits for the next run driveFrom hands it, until the Runner stops or
// maxIdleDrivers others wait already. A goroutine that drives run after run
// keeps the stack its first drive grew (a new one starts small and is copied
// as it grows, three times in a drive: ≈ 35 K instructions). r.wg counts
// the driver goroutines, idle or not.
func (r *Runner) driver(j driveJob) {
	defer r.wg.Done()
	for {
		r.driveLoop(j.ctx, j.cancel, j.id, j.st)
		if r.idleDrivers.Add(1) > maxIdleDrivers {
			r.idleDrivers.Add(-1)
			return
		}
		select {
		case j = <-r.drivers:
			r.idleDrivers.Add(-1)
		case <-r.baseCtx.Done():
			r.idleDrivers.Add(-1)
			return
		}
	}
}

// driveLoop drives run id from st, and again as long as a transition asks
// it to.
func (r *Runner) driveLoop(ctx context.Context, cancel context.CancelFunc, id string, st *state) {
	defer cancel()
	for {
		r.drive(ctx, id, st)
		r.mu.Lock()
		next, again := r.again[id]
		if again && ctx.Err() == nil {
			// The transition that asked committed after this
			// driver's last write (it paused or ended the run):
			// its state is the newest.
			st = next
			delete(r.again, id)
			r.mu.Unlock()
			continue
		}
		delete(r.again, id)
		delete(r.active, id)
		r.mu.Unlock()
		return
	}
}

func (r *Runner) drive(ctx context.Context, id string, from *state) {
	ok, st := r.leased(ctx, id, from)
	if !ok {
		return
	}
	// A lost lease (another process took the run over) stops this driver's
	// model call or tool at once; its writes would lose anyway.
	// The heartbeat ends with ctx, which lost cancels when drive returns.
	ctx, lost := context.WithCancel(ctx)
	defer lost()
	defer r.heartbeat(ctx, id, lost).stop()
	failures := 0
	for {
		sctx, end := ctx, func(bool, error) {}
		if r.opts.Step != nil {
			sctx, end = r.opts.Step(ctx, id)
		}
		r.againStale(id)
		next, paused, err := r.step(sctx, id, st)
		end(paused, err)
		st = next
		if err == nil {
			failures = 0
			if !paused {
				continue
			}
			return
		}
		if ctx.Err() != nil {
			// Shutdown or cancel: the run keeps its checkpoint. Release
			// the lease so the next process continues at once.
			r.release(id)
			return
		}
		// A step is safe to repeat (every write is conditional), so a
		// transient store error (a lock held by another process, a dropped
		// connection) is retried before the run is failed.
		failures++
		r.log.Warn("run step failed", "runId", id, "attempt", failures, "err", err)
		if failures <= maxStepRetries {
			select {
			case <-time.After(time.Duration(50<<failures) * time.Millisecond):
				continue
			case <-ctx.Done():
				r.release(id)
				return
			}
		}
		r.log.Error("run failed", "runId", id, "err", err)
		// The error may name the database, its address or its SQL; clients
		// get a plain sentence, the log has the rest.
		r.fail(context.WithoutCancel(ctx), id, "internal_error", "the run stopped on an internal error; the server log has the details")
		return
	}
}

// againStale makes the state an asker left for this driver's next round
// (driveFrom) one to read again: the step about to start may write after
// it was committed.
func (r *Runner) againStale(id string) {
	r.mu.Lock()
	if st := r.again[id]; st != nil {
		r.again[id] = nil
	}
	r.mu.Unlock()
}

// maxStepRetries is how often a step that failed on a store error is
// retried (after 100 ms, 200 ms, 400 ms) before the run fails.
const maxStepRetries = 3

// leased takes the run's lease for this process. A run that Start or an
// answer has just leased to this process needs no second write; the run row
// read to find that out (or from, the rows the transition that leased it
// committed, when not nil) is the first step's state.
func (r *Runner) leased(ctx context.Context, id string, from *state) (bool, *state) {
	now := r.now()
	fresh := func(run *store.Run) bool {
		return run.Status == store.RunRunning && run.LeaseOwner == r.opts.InstanceID && run.LeaseUntil.After(now.Add(r.opts.LeaseDuration/2))
	}
	if from != nil && from.run != nil && fresh(from.run) {
		return true, from
	}
	if run, err := r.st.RunGet(ctx, id); err == nil && fresh(run) {
		return true, &state{run: run}
	}
	won, err := r.st.RunLease(ctx, &store.RunLeaseParams{ID: id, Owner: r.opts.InstanceID, Until: now.Add(r.opts.LeaseDuration), Now: now})
	return err == nil && won, nil
}

// heartbeat extends the lease of run id every LeaseDuration/3 until ctx is
// done or stop is called; when the lease is lost it calls lost. It runs on
// a timer, not a goroutine of its own: a drive shorter than
// LeaseDuration/3 starts nothing.
type heartbeat struct {
	r    *Runner
	ctx  context.Context
	id   string
	lost context.CancelFunc
	// mu guards stopped and the timer's re-arming.
	mu      sync.Mutex
	stopped bool
	t       *time.Timer
}

// heartbeat starts run id's heartbeat; stop it when the drive returns.
func (r *Runner) heartbeat(ctx context.Context, id string, lost context.CancelFunc) *heartbeat {
	h := &heartbeat{r: r, ctx: ctx, id: id, lost: lost}
	h.mu.Lock()
	h.t = time.AfterFunc(r.opts.LeaseDuration/3, h.beat)
	h.mu.Unlock()
	return h
}

// beat extends the lease once and arms the next beat.
func (h *heartbeat) beat() {
	if h.ctx.Err() != nil {
		return
	}
	r := h.r
	now := r.now()
	won, err := r.st.RunLease(h.ctx, &store.RunLeaseParams{ID: h.id, Owner: r.opts.InstanceID, Until: now.Add(r.opts.LeaseDuration), Now: now})
	if err == nil && !won {
		// Paused, ended, or taken over by another process: stop.
		h.lost()
		return
	}
	h.mu.Lock()
	if !h.stopped && h.ctx.Err() == nil {
		h.t.Reset(r.opts.LeaseDuration / 3)
	}
	h.mu.Unlock()
}

// stop ends the heartbeat: no beat starts after it returned.
func (h *heartbeat) stop() {
	h.mu.Lock()
	h.stopped = true
	h.t.Stop()
	h.mu.Unlock()
}

func (r *Runner) release(id string) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_, _ = r.st.RunLease(ctx, &store.RunLeaseParams{ID: id, Owner: r.opts.InstanceID, Now: r.now()})
}

func (r *Runner) fail(ctx context.Context, id, code, msg string) {
	run, err := r.st.RunGet(ctx, id)
	if err != nil {
		return
	}
	err = r.st.InTx(ctx, func(tx store.Tx) error {
		_, err := r.finish(ctx, tx, run, []store.RunStatus{store.RunRunning}, store.RunFailed, &api.ErrorEvent{Code: code, Message: msg}, nil)
		return err
	})
	if err != nil {
		r.log.Error("run fail", "runId", id, "err", err)
	}
}

// step is one turn of the loop: load the run's state (unless the last
// transition returned it), decide the next action (a pure function of the
// rows), apply it (one transition). It returns the state the transition
// committed, nil when the next step must load it, and paused=true when the
// run is now waiting for input, has ended, or is not this process's.
func (r *Runner) step(ctx context.Context, id string, st *state) (*state, bool, error) {
	st, err := r.load(ctx, id, st)
	if err != nil {
		return nil, true, err
	}
	if st.run.Agent == externalAgent {
		return nil, true, r.externalStep(ctx, st)
	}
	agent := r.agents[st.run.Agent]
	in := r.decideTools
	in.state, in.instance, in.agent, in.frontend = st, r.opts.InstanceID, agent, runFrontendTools(st.msgs, st.run.ID)
	if needsApprovals(agent, st.msgs, st.run.ID) {
		if in.approvals, err = r.loadApprovals(ctx, st.run.SessionID); err != nil {
			return nil, true, err
		}
		if agent.Approval.Conditional() {
			ss, err := r.st.SessionGet(ctx, st.run.SessionID)
			if err != nil {
				return nil, true, err
			}
			in.owner = ss.Owner
		}
	}
	act := decide(in)
	switch act.kind {
	case actFail:
		r.fail(ctx, id, act.code, act.message)
		return nil, true, nil
	case actModel:
		return r.callModel(ctx, st, agent)
	case actResult:
		return r.applyResult(ctx, st, act, act.result)
	case actTool:
		// A cancel waits for the call's result (toolstop.go) and then
		// ends the run: the driver stops once the result is recorded.
		tr := r.startToolRun(st.run.ID)
		next, paused, err := r.toolStep(ctx, st, act)
		if r.endToolRun(st.run.ID, tr) {
			return nil, true, err
		}
		return next, paused, err
	case actAsk:
		return nil, true, r.askAll(ctx, st.run, act.asks, nil)
	}
	return nil, true, nil
}

// toolStep runs the tool of act and records its result.
func (r *Runner) toolStep(ctx context.Context, st *state, act action) (*state, bool, error) {
	var res api.ToolResult
	var err error
	if act.approved != nil {
		res, err = r.runApproved(ctx, st.run, act)
	} else {
		entry, _ := r.tools.Get(act.call.call.Name)
		res, err = r.runTool(ctx, st.run, entry.Tool, entry.Idempotent, act.call.call)
	}
	var ni *needInput
	if errors.As(err, &ni) {
		return nil, true, r.pauseElicitation(ctx, st.run, ni)
	}
	if errors.Is(err, errLeaseLost) {
		// The run ended (a cancel) or moved before the tool started:
		// it did not run.
		return nil, true, nil
	}
	if err != nil {
		return nil, true, err
	}
	return r.applyResult(ctx, st, act, res)
}

// load completes st (nil: nothing known) with the run's row and, when the
// run is this process's to drive, its session's messages.
func (r *Runner) load(ctx context.Context, id string, st *state) (*state, error) {
	if st == nil || st.run == nil {
		run, err := r.st.RunGet(ctx, id)
		if err != nil {
			return nil, err
		}
		st = &state{run: run}
	}
	if st.msgs == nil && st.run.Status == store.RunRunning && st.run.LeaseOwner == r.opts.InstanceID {
		msgs, err := r.st.MessageList(ctx, st.run.SessionID)
		if err != nil {
			return nil, err
		}
		st = &state{run: st.run, msgs: msgs, prompts: st.prompts}
	}
	return st, nil
}

func (r *Runner) registered(name string) bool {
	_, ok := r.tools.Get(name)
	return ok
}

func (r *Runner) spec(name string) model.ToolSpec {
	if e, ok := r.tools.Get(name); ok {
		return e.Spec
	}
	return model.ToolSpec{Name: name}
}

// applyResult records a ToolResult. The result of a tool that ran is
// committed even when a shutdown began meanwhile: it is the checkpoint.
func (r *Runner) applyResult(ctx context.Context, st *state, act action, res api.ToolResult) (*state, bool, error) {
	next, err := r.recordToolResult(context.WithoutCancel(ctx), st, act.parent, act.call, res)
	if errors.Is(err, errLeaseLost) || errors.Is(err, store.ErrDuplicate) {
		return nil, true, nil
	}
	if err != nil {
		return nil, true, err
	}
	return next, false, nil
}

var errLeaseLost = errors.New("agent: run is no longer driven by this process")

func errLost(err error) error {
	if err != nil {
		return err
	}
	return errLeaseLost
}

// runTool executes a non-ask tool. A tool that a crash interrupted before
// (a tool_started trace without a result) is not run again when it is not
// idempotent: its result says it was interrupted.
func (r *Runner) runTool(ctx context.Context, run *store.Run, t tool.Tool, idempotent bool, c model.ToolCall) (api.ToolResult, error) {
	_, remote := t.(tool.Remote)
	if remote {
		var res *api.ToolResult
		var err error
		if ctx, res, err = r.prepareRemote(ctx, run, c); err != nil || res != nil {
			if res == nil {
				return api.ToolResult{}, err
			}
			return *res, nil
		}
		ctx = tool.WithElicitor(ctx, &elicitor{r: r, run: run, call: c})
		if tool.InputResponsesFrom(ctx) != nil {
			// The retry of an input_required round: the server's
			// requestState makes it the same call, not a second one.
			idempotent = true
		}
	}
	if !idempotent {
		started, err := startedCalls(ctx, r.st, run)
		if err != nil {
			return api.ToolResult{}, err
		}
		if started[c.ID] {
			return api.ToolResult{Content: interruptedToolMessage, IsError: true}, nil
		}
	}
	// The marker must be durable before the tool runs: without it a crash
	// could make a non-idempotent tool run twice. It is written only while
	// the run still runs under this process's lease (errLeaseLost
	// otherwise), so a run that a cancel ended never starts a tool, and
	// the transaction that ends a run sees every call that started
	// (finish: "interrupted", never "not run").
	err := r.st.InTx(ctx, func(tx store.Tx) error {
		now := r.now()
		won, err := tx.RunCheckpoint(ctx, &store.RunCheckpointParams{ID: run.ID, LeaseOwner: r.opts.InstanceID, Now: now})
		if err != nil || !won {
			return errLost(err)
		}
		return tx.TraceInsert(ctx, &store.TraceInsertParams{SessionID: run.SessionID, RunID: run.ID, Kind: "tool_started",
			Data: mustJSON(map[string]any{"toolCallId": c.ID, "name": c.Name}), Now: now})
	})
	if err != nil {
		return api.ToolResult{}, err
	}
	r.fault("tool_running")
	res, err := t.Call(tool.WithCall(ctx, r.callIdentity(ctx, run, c)), json.RawMessage(c.Arguments))
	if in := (*tool.InputRequired)(nil); remote && errors.As(err, &in) {
		return r.inputRequired(ctx, run, c, in)
	}
	if err != nil {
		if ctx.Err() != nil {
			return api.ToolResult{}, ctx.Err()
		}
		return api.ToolResult{Content: "tool error: " + err.Error(), IsError: true}, nil
	}
	return res, nil
}

// ask puts a validated question in front of a person (the pause transition).
// src, when not nil, is stored in the request (a question an MCP host asked).
func (r *Runner) ask(ctx context.Context, run *store.Run, c model.ToolCall, p *api.Prompt, src *api.InputSource) error {
	return r.askAll(ctx, run, []askCall{{call: pendingCall{call: c}, prompt: p}}, src)
}

// askAll puts every question of asks (the calls of one assistant message
// that need a person, in call order) in front of people in one pause
// transition (docs/design.md §32).
func (r *Runner) askAll(ctx context.Context, run *store.Run, asks []askCall, src *api.InputSource) error {
	ins := make([]interaction, len(asks))
	now := r.now()
	for i, a := range asks {
		asg, err := r.assign(ctx, run, a.prompt.Tool, a.call.call)
		if err != nil {
			return err
		}
		if ins[i], err = r.question(run, a.call.call, a.prompt, src, asg, askedAt(now, i)); err != nil {
			return err
		}
	}
	err := r.pause(ctx, run, ins...)
	if errors.Is(err, errLeaseLost) {
		return nil
	}
	if err == nil {
		r.fault("interaction_committed")
	}
	return err
}

// askedAt is when the question at place order of those one pause puts
// was asked: order microseconds after the pause's time now, so that every
// list of a session's interactions (ordered by createdAt, stored to the
// microsecond) keeps call order (docs/design.md §32).
func askedAt(now time.Time, order int) time.Time {
	return now.Add(time.Duration(order) * time.Microsecond)
}

// question is the interaction that asks p (call c of run) of a person:
// the session's owner, or the people asg names, asked at now.
func (r *Runner) question(run *store.Run, c model.ToolCall, p *api.Prompt, src *api.InputSource, asg *assignment, now time.Time) (interaction, error) {
	req := api.InputRequest{ID: NewID("ask"), ToolCallID: c.ID, SessionID: run.SessionID, RunID: run.ID, Prompt: *p,
		CreatedAt: now, ExpiresAt: now.Add(r.opts.InteractionTTL).Truncate(time.Second), Source: src}
	asg.apply(r, &req)
	// The request is stored as the user_input_required event shows it
	// (resumable: readers recompute that flag), so that the event can
	// reference the row instead of copying the question.
	req.Resumable = true
	stored, err := json.Marshal(req)
	if err != nil {
		return interaction{}, err
	}
	return interaction{ID: req.ID, ToolCallID: c.ID, Tool: p.Tool, Request: stored, ExpiresAt: req.ExpiresAt, Assign: asg, CreatedAt: now,
		Audit: questionAudit{Mode: p.Mode, Tool: c.Name, OptionCount: len(p.Options), QuestionCount: len(p.Questions)}}, nil
}

// nextQuestions are the questions the step after turn t would ask, when
// that step is a pause (decide on the run and messages as t will store
// them) and needs nothing read first; nil otherwise.
func (r *Runner) nextQuestions(st *state, agent *Agent, t *modelTurn) []interaction {
	run := *st.run
	run.Steps, run.InvalidStreak = run.Steps+1, t.streak
	msgs := append(st.msgs[:len(st.msgs):len(st.msgs)], &store.Message{ID: t.msgID, SessionID: run.SessionID, RunID: run.ID,
		Role: "assistant", Content: t.message.Content, ToolCalls: t.callsJSON, Calls: storeCalls(t.calls)})
	if needsApprovals(agent, msgs, run.ID) {
		return nil
	}
	din := r.decideTools
	din.check = nil
	din.state, din.instance, din.agent, din.frontend = &state{run: &run, msgs: msgs, prompts: t.prompts}, r.opts.InstanceID, agent, runFrontendTools(msgs, run.ID)
	act := decide(din)
	if act.kind != actAsk || act.approved != nil || len(agent.Routes) > 0 {
		// A routed question reads the session's owner first (assign).
		return nil
	}
	ins := make([]interaction, len(act.asks))
	now := r.now()
	for i, a := range act.asks {
		in, err := r.question(&run, a.call.call, a.prompt, nil, nil, askedAt(now, i))
		if err != nil {
			return nil
		}
		ins[i] = in
	}
	return ins
}

// callModel makes one model call with the whole conversation and records
// the turn (recordModelTurn). It returns paused=true when the turn ended the
// run (no tool calls) or the call failed.
func (r *Runner) callModel(ctx context.Context, st *state, agent *Agent) (*state, bool, error) {
	run, msgs := st.run, st.msgs
	specs, err := r.tools.Specs(agent.Tools)
	if err != nil {
		return nil, true, err
	}
	specs = withFrontend(specs, runFrontendTools(msgs, run.ID))
	msgID := NewID("msg")
	stream := r.newModelStream(ctx, run.SessionID, msgID)
	req := &stream.req
	req.Messages, req.Tools = buildMessages(agent.System, msgs), specs
	req.OnReasoning = stream.reasoning.add
	defer stream.text.take()
	lt := &stream.live
	r.setLive(run.ID, lt)
	defer r.unlive(run.ID, lt)
	// A stop committed by another process ends the call here too.
	callCtx, stopCall := context.WithCancel(ctx)
	defer stopCall()
	defer r.watchPeerStop(callCtx, run.SessionID, run.ID, lt, stopCall).end()
	start := time.Now()
	resp, err := agent.Provider.Generate(callCtx, req, stream.onText)
	stream.reasoning.take()
	if err != nil && ctx.Err() == nil && callCtx.Err() != nil {
		// watchPeerStop claimed the turn: the run ended elsewhere, with
		// the text streamed so far.
		return nil, true, nil
	}
	latency := time.Since(start)
	toolNames := make([]string, len(specs))
	for i, s := range specs {
		toolNames[i] = s.Name
	}
	callTrace := modelCallTrace(agent.Provider, toolNames, len(req.Messages), latency, resp, err)
	if err != nil {
		if ctx.Err() != nil {
			return nil, true, ctx.Err()
		}
		r.trace(ctx, r.st, run, "model_call", callTrace)
		r.fail(ctx, run.ID, "model_error", "the model call failed: "+err.Error())
		return nil, true, nil
	}
	t := modelTurn{msgID: msgID, message: resp.Message, calls: uniqueCallIDs(resp.Message.ToolCalls, msgs), callTrace: callTrace}
	// Every ask call is parsed here, once: the valid prompts ride in the
	// state the transition returns. Rejected arguments are kept bounded
	// (boundArguments); the trace still names the whole arguments.
	t.traces = make([]toolCallData, len(t.calls))
	for i, c := range t.calls {
		t.traces[i] = toolCallTrace(c)
		var perr error
		if askuser.IsAskTool(c.Name) {
			var p *api.Prompt
			if p, perr = askuser.ParseArgs(c.Name, c.Arguments); perr != nil {
				t.streak = run.InvalidStreak + 1
			} else {
				if t.prompts == nil {
					t.prompts = map[string]*api.Prompt{}
				}
				t.prompts[c.ID] = p
			}
		} else if !json.Valid([]byte(c.Arguments)) {
			perr = errors.New("the arguments are not valid JSON")
		}
		if perr != nil {
			t.calls[i].Arguments = boundArguments(c.Arguments, perr)
		}
	}
	if len(t.calls) > 0 {
		// Encoded once for the pause's decision and the stored message
		// (an error, unreachable for strings, is recordModelTurn's).
		if b, err := json.Marshal(t.calls); err == nil {
			t.callsJSON = b
			t.pause = r.nextQuestions(st, agent, &t)
		}
	}
	// The text not committed yet is not stored as a delta: the message
	// event carries the whole text (a turn that arrives whole streams no
	// delta at all), and the deltas committed so far go in its transaction.
	stream.text.take()
	if !r.unlive(run.ID, lt) {
		// A cancel claimed the turn: it stores the text streamed so far
		// and ends the run.
		return nil, true, nil
	}
	t.streamed = stream.seqs.span()
	// A turn the model completed is committed even when a shutdown began
	// meanwhile: it is the checkpoint, and the call is not made twice.
	next, err := r.recordModelTurn(context.WithoutCancel(ctx), st, t)
	if errors.Is(err, errLeaseLost) {
		return nil, true, nil
	}
	if err != nil {
		return nil, true, err
	}
	return next, len(t.calls) == 0 || len(t.pause) > 0, nil
}

// toolCallTrace is the data of a "tool_call" trace entry. The arguments
// themselves are kept in the assistant message (and its tool_call event);
// the trace names them by length in bytes and SHA-256 (hex), which is
// enough to match a trace line to its message.
func toolCallTrace(c model.ToolCall) toolCallData {
	sum := sha256.Sum256([]byte(c.Arguments))
	return toolCallData{ToolCallID: c.ID, Name: c.Name, ArgumentsBytes: len(c.Arguments), ArgumentsSha256: hex.EncodeToString(sum[:])}
}

func mustJSON(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

// uniqueCallIDs gives every tool call an id that is unique in the session:
// a missing id, or one the session already used (some local servers number
// their calls call_0, call_1, ... in every turn), is replaced by a fresh one.
func uniqueCallIDs(calls []model.ToolCall, msgs []*store.Message) []model.ToolCall {
	if len(calls) == 0 {
		return nil
	}
	used := map[string]bool{}
	for _, m := range msgs {
		if m.Role == "assistant" {
			for _, c := range storedCalls(m) {
				used[c.ID] = true
			}
		}
	}
	out := make([]model.ToolCall, len(calls))
	for i, c := range calls {
		if c.ID == "" || used[c.ID] {
			c.ID = NewID("call")
		}
		used[c.ID] = true
		out[i] = c
	}
	return out
}

// buildMessages turns stored messages into the model's conversation: the
// system prompt, then every message in order, each assistant message followed
// by the ToolResults of its calls in call order (whatever order they were
// produced in). The result depends only on the stored rows, so a request
// made after a restart is the request a process that never stopped makes.
func buildMessages(system string, msgs []*store.Message) []model.Message {
	out := make([]model.Message, 0, len(msgs)+1)
	if system != "" {
		out = append(out, model.Message{Role: model.RoleSystem, Content: system})
	}
	results := map[string][]*store.Message{}
	for _, m := range msgs {
		if m.Role == "tool" {
			results[m.ParentID] = append(results[m.ParentID], m)
		}
	}
	for _, m := range msgs {
		switch m.Role {
		case "user":
			out = append(out, model.Message{Role: model.RoleUser, Content: m.Content})
		case "assistant":
			am := model.Message{Role: model.RoleAssistant, Content: m.Content, Reasoning: messageReasoning(m)}
			am.ToolCalls = callsOf(m)
			out = append(out, am)
			rs := results[m.ID]
			sort.SliceStable(rs, func(i, j int) bool { return rs[i].CallIndex < rs[j].CallIndex })
			for _, t := range rs {
				out = append(out, model.Message{Role: model.RoleTool, Content: t.Content, ToolCallID: t.ToolCallID, Name: t.Name, IsError: t.IsError})
			}
		}
	}
	return out
}

// callsOf is m's tool calls as the model sees them, from the calls the
// store decoded once (store.Message.Calls); a message built by hand with
// only its ToolCalls column is decoded here.
func callsOf(m *store.Message) []model.ToolCall {
	cs := storedCalls(m)
	if len(cs) == 0 {
		return nil
	}
	out := make([]model.ToolCall, len(cs))
	for i, c := range cs {
		out[i] = model.ToolCall{ID: c.ID, Name: c.Name, Arguments: c.Arguments}
	}
	return out
}

// storedCalls is m's tool calls as the store decoded them once
// (store.Message.Calls, shared: not to be modified), or decoded here for a
// message built by hand with only its ToolCalls column. Readers that only
// look at the calls use it instead of callsOf's copy.
func storedCalls(m *store.Message) []store.ToolCall {
	if m.Calls == nil && len(m.ToolCalls) > 0 {
		return store.DecodeCalls(m.ToolCalls)
	}
	return m.Calls
}

// storeCalls is calls as store.Message.Calls holds them.
// insertedCalls are calls as the store decodes their JSON
// (MessageInsertParams.Calls): nil when there are none, or when a string
// is not valid UTF-8, which the JSON would not give back as it is (the
// store decodes those).
func insertedCalls(calls []model.ToolCall) []store.ToolCall {
	for _, c := range calls {
		if !utf8.ValidString(c.ID) || !utf8.ValidString(c.Name) || !utf8.ValidString(c.Arguments) {
			return nil
		}
	}
	if len(calls) == 0 {
		return nil
	}
	return storeCalls(calls)
}

func storeCalls(calls []model.ToolCall) []store.ToolCall {
	out := make([]store.ToolCall, len(calls))
	for i, c := range calls {
		out[i] = store.ToolCall{ID: c.ID, Name: c.Name, Arguments: c.Arguments}
	}
	return out
}
