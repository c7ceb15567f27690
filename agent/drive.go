package agent

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"time"

	"github.com/lubanhq/luban/askuser"
	"github.com/lubanhq/luban/model"
	"github.com/lubanhq/luban/store"
	"github.com/lubanhq/luban/tool"
)

// Drive makes this process drive run id until it pauses or ends, in a
// goroutine of its own; it returns at once. It does nothing when another
// process holds the run's lease. When the run is already driven here, its
// driver looks at it once more before it lets go, so a run resumed while its
// driver was finishing (an answer right after the pause) is not left waiting
// for a lease to expire. During Shutdown it only releases the run's lease,
// so that the next process continues it at once.
func (r *Runner) Drive(id string) {
	r.mu.Lock()
	if r.baseCtx.Err() != nil {
		r.mu.Unlock()
		r.release(id)
		return
	}
	if _, ok := r.active[id]; ok {
		if r.again == nil {
			r.again = map[string]bool{}
		}
		r.again[id] = true
		r.mu.Unlock()
		return
	}
	ctx, cancel := context.WithCancel(r.baseCtx)
	r.active[id] = cancel
	r.wg.Add(1)
	r.mu.Unlock()
	go func() {
		defer r.wg.Done()
		defer cancel()
		for {
			r.drive(ctx, id)
			r.mu.Lock()
			if r.again[id] && ctx.Err() == nil {
				delete(r.again, id)
				r.mu.Unlock()
				continue
			}
			delete(r.again, id)
			delete(r.active, id)
			r.mu.Unlock()
			return
		}
	}()
}

func (r *Runner) drive(ctx context.Context, id string) {
	ok, next := r.leased(ctx, id)
	if !ok {
		return
	}
	// A lost lease (another process took the run over) stops this driver's
	// model call or tool at once; its writes would lose anyway.
	ctx, lost := context.WithCancel(ctx)
	defer lost()
	hbDone := make(chan struct{})
	defer close(hbDone)
	go r.heartbeat(ctx, id, hbDone, lost)
	failures := 0
	for {
		carried := next
		next = nil
		sctx, end := ctx, func(bool, error) {}
		if r.opts.Step != nil {
			sctx, end = r.opts.Step(ctx, id)
		}
		paused, err := r.step(sctx, id, carried, &next)
		end(paused, err)
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

// maxStepRetries is how often a step that failed on a store error is
// retried (after 100 ms, 200 ms, 400 ms) before the run fails.
const maxStepRetries = 3

// leased takes the run's lease for this process. A run that Start or an
// answer has just leased to this process needs no second write, and the run
// row read to find that out is handed to the first step, which then does
// not read it again (issue 8).
func (r *Runner) leased(ctx context.Context, id string) (bool, *carry) {
	now := r.now()
	if run, err := r.st.RunGet(ctx, id); err == nil && run.Status == store.RunRunning &&
		run.LeaseOwner == r.opts.InstanceID && run.LeaseUntil.After(now.Add(r.opts.LeaseDuration/2)) {
		return true, &carry{run: run}
	}
	won, err := r.st.RunLease(ctx, &store.RunLeaseParams{ID: id, Owner: r.opts.InstanceID, Until: now.Add(r.opts.LeaseDuration), Now: now})
	return err == nil && won, nil
}

// carry is what one step of a run hands to the next one in the same driver,
// so that the next step does not read it from the store again (issue 8):
// the run row as this driver last read or wrote it, and, when not nil, the
// session's messages as the last step committed them. Both are only
// shortcuts for reads: every write of a step stays conditional on the run
// still being running under this process's lease, so a carried row that went
// stale (a cancel in between) loses its write exactly as a fresh read would.
type carry struct {
	run  *store.Run
	msgs []*store.Message
}

// heartbeat extends the lease of run id every LeaseDuration/3 until done;
// when the lease is lost it calls lost.
func (r *Runner) heartbeat(ctx context.Context, id string, done <-chan struct{}, lost context.CancelFunc) {
	t := time.NewTicker(r.opts.LeaseDuration / 3)
	defer t.Stop()
	for {
		select {
		case <-done:
			return
		case <-ctx.Done():
			return
		case <-t.C:
			now := r.now()
			won, err := r.st.RunLease(ctx, &store.RunLeaseParams{ID: id, Owner: r.opts.InstanceID, Until: now.Add(r.opts.LeaseDuration), Now: now})
			if err == nil && !won {
				// Paused, ended, or taken over by another process: stop.
				lost()
				return
			}
		}
	}
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
		_, err := r.finish(ctx, tx, run, []store.RunStatus{store.RunRunning}, store.RunFailed, &ErrorEvent{Code: code, Message: msg}, nil)
		return err
	})
	if err != nil {
		r.log.Error("run fail", "runId", id, "err", err)
	}
}

// step performs one step of the run: tool calls still without results, or
// one model call. It reports paused=true when the run is now waiting for
// input or has ended. It uses what the previous step carried instead of
// reading it, and leaves in *next what the following step may use.
func (r *Runner) step(ctx context.Context, id string, carried *carry, next **carry) (paused bool, err error) {
	var run *store.Run
	if carried != nil && carried.run != nil {
		run = carried.run
	} else if run, err = r.st.RunGet(ctx, id); err != nil {
		return true, err
	}
	if run.Status != store.RunRunning || run.LeaseOwner != r.opts.InstanceID {
		return true, nil
	}
	agent := r.agents[run.Agent]
	if agent == nil {
		r.fail(ctx, id, "agent_not_found", fmt.Sprintf("agent %q no longer exists", run.Agent))
		return true, nil
	}
	var msgs []*store.Message
	if carried != nil && carried.msgs != nil {
		msgs = carried.msgs
	} else if msgs, err = r.st.MessageList(ctx, run.SessionID); err != nil {
		return true, err
	}
	if last, missing := missingCalls(msgs, run.ID); len(missing) > 0 {
		return r.toolCalls(ctx, run, agent, last, missing)
	}
	return r.modelTurn(ctx, run, agent, msgs, next)
}

// toolCalls gives every tool call of the assistant message its ToolResult:
// first everything that needs no person (other tools, unknown tools, invalid
// ask arguments) in call order, then the questions one after another.
func (r *Runner) toolCalls(ctx context.Context, run *store.Run, agent *Agent, last *store.Message, missing []pendingCall) (bool, error) {
	type ask struct {
		pc     pendingCall
		prompt *askuser.Prompt
	}
	var asks []ask
	for _, pc := range missing {
		c := pc.call
		entry, registered := r.tools.Get(c.Name)
		var res askuser.ToolResult
		switch {
		case !registered || !agent.Tools.Allows(c.Name):
			res = askuser.ToolResult{Content: fmt.Sprintf("unknown tool %q: this agent has no such tool", c.Name), IsError: true}
		case truncatedCall(c):
			why, _ := truncatedArguments(c.Arguments)
			res = askuser.ToolResult{Content: "invalid arguments for " + c.Name + ": " + why, IsError: true}
		case askuser.IsAskTool(c.Name):
			p, perr := r.prompts.parse(last.ID, pc.index, c.Name, c.Arguments)
			if perr == nil {
				asks = append(asks, ask{pc, p})
				continue
			}
			res = askuser.ToolResult{Content: "invalid arguments for " + c.Name + ": " + perr.Error(), IsError: true}
		default:
			var err error
			if res, err = r.runTool(ctx, run, entry.Tool, entry.Idempotent, c); err != nil {
				return true, err
			}
		}
		// The result of a tool that ran is committed even when a shutdown
		// began meanwhile: it is the checkpoint (issue 5).
		cctx := context.WithoutCancel(ctx)
		err := r.st.InTx(cctx, func(tx store.Tx) error {
			// The run's row is written first, as in every transaction of a
			// run: a cancel committing at the same time waits for this one
			// (or this one loses), never both writing the call's result.
			won, err := tx.RunUpdate(cctx, &store.RunUpdateParams{ID: run.ID, From: []store.RunStatus{store.RunRunning}, LeaseOwner: r.opts.InstanceID,
				To: store.RunRunning, Now: r.now()})
			if err != nil || !won {
				return errLost(err)
			}
			return r.writeResult(cctx, tx, run, last.ID, pc.index, c, res)
		})
		if errors.Is(err, errLeaseLost) || errors.Is(err, store.ErrDuplicate) {
			return true, nil
		}
		if err != nil {
			return true, err
		}
	}
	if len(asks) == 0 {
		return false, nil
	}
	return true, r.ask(ctx, run, asks[0].pc.call, asks[0].prompt)
}

func truncatedCall(c model.ToolCall) bool {
	_, ok := truncatedArguments(c.Arguments)
	return ok
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
// idempotent: its result says it was interrupted (issue 5).
func (r *Runner) runTool(ctx context.Context, run *store.Run, t tool.Tool, idempotent bool, c model.ToolCall) (askuser.ToolResult, error) {
	if !idempotent {
		entries, err := r.st.TraceList(ctx, run.SessionID)
		if err != nil {
			return askuser.ToolResult{}, err
		}
		for _, e := range entries {
			if e.Kind != "tool_started" {
				continue
			}
			var d struct {
				ToolCallID string `json:"toolCallId"`
			}
			if json.Unmarshal(e.Data, &d) == nil && d.ToolCallID == c.ID {
				return askuser.ToolResult{Content: interruptedToolMessage, IsError: true}, nil
			}
		}
	}
	// The marker must be durable before the tool runs: without it a crash
	// could make a non-idempotent tool run twice.
	if err := r.st.TraceInsert(ctx, &store.TraceInsertParams{SessionID: run.SessionID, RunID: run.ID, Kind: "tool_started",
		Data: mustJSON(map[string]any{"toolCallId": c.ID, "name": c.Name}), Now: r.now()}); err != nil {
		return askuser.ToolResult{}, err
	}
	r.fault("tool_running")
	res, err := t.Call(ctx, json.RawMessage(c.Arguments))
	if err != nil {
		if ctx.Err() != nil {
			return askuser.ToolResult{}, ctx.Err()
		}
		return askuser.ToolResult{Content: "tool error: " + err.Error(), IsError: true}, nil
	}
	return askuser.ToolResult{Content: res.Content, IsError: res.IsError}, nil
}

// ask puts a validated question in front of a person: the interaction, the
// run's move to waiting_input, the user_input_required event and the audit
// entry are one transaction (persist first, then emit).
func (r *Runner) ask(ctx context.Context, run *store.Run, c model.ToolCall, p *askuser.Prompt) error {
	if _, err := r.st.InteractionGetByToolCall(ctx, run.SessionID, c.ID); err == nil {
		// The interaction and the run's pause are one transaction, so a
		// stored interaction without a paused run cannot happen; pause anyway
		// rather than ask twice.
		_, err := r.st.RunUpdate(ctx, &store.RunUpdateParams{ID: run.ID, From: []store.RunStatus{store.RunRunning}, To: store.RunWaitingInput, Now: r.now()})
		return err
	}
	now := r.now()
	req := askuser.InputRequest{ID: NewID("ask"), ToolCallID: c.ID, SessionID: run.SessionID, RunID: run.ID, Prompt: *p,
		CreatedAt: now, ExpiresAt: now.Add(r.opts.InteractionTTL).Truncate(time.Second)}
	stored, err := json.Marshal(req)
	if err != nil {
		return err
	}
	req.Resumable = true
	err = r.st.InTx(ctx, func(tx store.Tx) error {
		won, err := tx.RunUpdate(ctx, &store.RunUpdateParams{ID: run.ID, From: []store.RunStatus{store.RunRunning}, LeaseOwner: r.opts.InstanceID, To: store.RunWaitingInput, Now: now})
		if err != nil || !won {
			return errLost(err)
		}
		it, err := tx.InteractionInsert(ctx, &store.InteractionInsertParams{ID: req.ID, SessionID: run.SessionID, RunID: run.ID,
			ToolCallID: c.ID, Tool: c.Name, Request: stored, Now: now, ExpiresAt: req.ExpiresAt})
		if err != nil {
			return err
		}
		if _, err := r.emit(ctx, tx, run.SessionID, EventUserInputRequired, req); err != nil {
			return err
		}
		r.audit(ctx, tx, it, "requested", "", map[string]any{"mode": p.Mode, "tool": c.Name, "optionCount": len(p.Options), "questionCount": len(p.Questions)})
		r.trace(ctx, tx, run, "interaction", map[string]any{"requestId": req.ID, "toolCallId": c.ID, "action": "requested"})
		return tx.SessionSetStatus(ctx, &store.SessionSetStatusParams{ID: run.SessionID, Status: string(store.RunWaitingInput), Now: now})
	})
	if errors.Is(err, errLeaseLost) {
		return nil
	}
	if err == nil {
		r.fault("interaction_committed")
	}
	return err
}

// modelTurn makes one model call with the whole conversation and stores the
// assistant message and its tool calls in one transaction.
// When the turn committed tool calls, *next carries the run and the session's
// messages as committed to the step that handles those calls.
func (r *Runner) modelTurn(ctx context.Context, run *store.Run, agent *Agent, msgs []*store.Message, next **carry) (bool, error) {
	if run.InvalidStreak > MaxInvalidAskRetries {
		r.fail(ctx, run.ID, "invalid_tool_arguments", fmt.Sprintf("the model sent invalid ask arguments %d times in a row", run.InvalidStreak))
		return true, nil
	}
	if run.Steps >= agent.MaxSteps {
		r.fail(ctx, run.ID, "max_steps", fmt.Sprintf("the run reached its limit of %d model calls", agent.MaxSteps))
		return true, nil
	}
	specs, err := r.tools.Specs(agent.Tools)
	if err != nil {
		return true, err
	}
	req := &model.Request{Messages: BuildMessages(agent.System, msgs), Tools: specs}
	msgID := NewID("msg")
	var stopReasoning func()
	req.OnReasoning, stopReasoning = r.reasoningStream(ctx, run.SessionID, msgID)
	deltas := newDeltaBatcher(func(text string) {
		if _, err := r.emit(ctx, r.st, run.SessionID, EventMessageDelta, MessageDeltaEvent{MessageID: msgID, Delta: text}); err != nil && ctx.Err() == nil {
			r.log.Error("emit delta", "err", err)
		}
	})
	defer deltas.take()
	onDelta := func(text string) {
		deltas.add(text)
		r.fault("model_stream")
	}
	start := time.Now()
	resp, err := agent.Provider.Generate(ctx, req, onDelta)
	stopReasoning()
	latency := time.Since(start)
	toolNames := make([]string, len(specs))
	for i, s := range specs {
		toolNames[i] = s.Name
	}
	callTrace := modelCallTrace(agent.Provider, toolNames, len(req.Messages), latency, resp, err)
	if err != nil {
		if ctx.Err() != nil {
			return true, ctx.Err()
		}
		r.trace(ctx, r.st, run, "model_call", callTrace)
		r.fail(ctx, run.ID, "model_error", "the model call failed: "+err.Error())
		return true, nil
	}
	calls := uniqueCallIDs(resp.Message.ToolCalls, msgs)
	// Every ask call is parsed here, once: the valid prompts wait in
	// r.prompts for toolCalls, the next step of this run.
	// Rejected arguments are kept bounded (boundArguments); the trace still
	// names the whole arguments by length and hash.
	streak := 0
	traces := make([]map[string]any, len(calls))
	for i, c := range calls {
		traces[i] = toolCallTrace(c)
		var perr error
		if askuser.IsAskTool(c.Name) {
			var p *askuser.Prompt
			if p, perr = askuser.ParseArgs(c.Name, c.Arguments); perr != nil {
				streak = run.InvalidStreak + 1
			} else {
				r.prompts.put(msgID, i, c.Arguments, p)
			}
		} else if !json.Valid([]byte(c.Arguments)) {
			perr = errors.New("the arguments are not valid JSON")
		}
		if perr != nil {
			calls[i].Arguments = boundArguments(c.Arguments, perr)
		}
	}
	steps := run.Steps + 1
	var callsJSON json.RawMessage
	if len(calls) > 0 {
		if callsJSON, err = json.Marshal(calls); err != nil {
			return true, err
		}
	}
	// The text not yet committed rides in the message's transaction.
	rest := deltas.take()
	now := r.now()
	// A turn the model completed is committed even when a shutdown began
	// meanwhile: it is the checkpoint, and the call is not made twice.
	ctx = context.WithoutCancel(ctx)
	var stored *store.Message
	err = r.st.InTx(ctx, func(tx store.Tx) error {
		won, err := tx.RunUpdate(ctx, &store.RunUpdateParams{ID: run.ID, From: []store.RunStatus{store.RunRunning}, LeaseOwner: r.opts.InstanceID,
			To: store.RunRunning, Steps: &steps, InvalidStreak: &streak, Now: now})
		if err != nil || !won {
			return errLost(err)
		}
		if err := tx.TraceInsert(ctx, &store.TraceInsertParams{SessionID: run.SessionID, RunID: run.ID, Kind: "model_call", Data: mustJSON(callTrace), Now: now}); err != nil {
			return err
		}
		if stored, err = tx.MessageInsert(ctx, &store.MessageInsertParams{ID: msgID, SessionID: run.SessionID, RunID: run.ID, Role: "assistant",
			Content: resp.Message.Content, ToolCalls: callsJSON, Metadata: assistantMetadata(resp.Message), Now: now}); err != nil {
			return err
		}
		if rest != "" {
			if _, err := r.emit(ctx, tx, run.SessionID, EventMessageDelta, MessageDeltaEvent{MessageID: msgID, Delta: rest}); err != nil {
				return err
			}
		}
		if _, err := r.emit(ctx, tx, run.SessionID, EventMessage, MessageEvent{MessageID: msgID, Role: "assistant", Content: resp.Message.Content, Reasoning: reasoningText(resp.Message)}); err != nil {
			return err
		}
		for i, c := range calls {
			r.trace(ctx, tx, run, "tool_call", traces[i])
			if _, err := r.emit(ctx, tx, run.SessionID, EventToolCall, ToolCallEvent{ToolCallID: c.ID, Name: c.Name, Arguments: c.Arguments}); err != nil {
				return err
			}
		}
		if len(calls) == 0 {
			_, err := r.finish(ctx, tx, run, []store.RunStatus{store.RunRunning}, store.RunCompleted, nil, nil)
			return err
		}
		return nil
	})
	if err != nil {
		r.prompts.drop(msgID, len(calls))
	} else if len(calls) > 0 {
		// The run row and the messages as this transaction left them.
		after := *run
		after.Steps, after.InvalidStreak, after.UpdatedAt = steps, streak, now
		*next = &carry{run: &after, msgs: append(msgs[:len(msgs):len(msgs)], stored)}
	}
	if errors.Is(err, errLeaseLost) {
		return true, nil
	}
	return len(calls) == 0, err
}

// toolCallTrace is the data of a "tool_call" trace entry. The arguments
// themselves are kept once, in the assistant message (and its tool_call
// event); the trace names them by length in bytes and SHA-256 (hex), which
// is enough to match a trace line to its message (issue 8: stored bytes).
func toolCallTrace(c model.ToolCall) map[string]any {
	sum := sha256.Sum256([]byte(c.Arguments))
	return map[string]any{"toolCallId": c.ID, "name": c.Name, "argumentsBytes": len(c.Arguments), "argumentsSha256": hex.EncodeToString(sum[:])}
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
		if m.Role == "assistant" && len(m.ToolCalls) > 0 {
			var cs []model.ToolCall
			if json.Unmarshal(m.ToolCalls, &cs) == nil {
				for _, c := range cs {
					used[c.ID] = true
				}
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

// BuildMessages turns stored messages into the model's conversation: the
// system prompt, then every message in order, each assistant message followed
// by the ToolResults of its calls in call order (whatever order they were
// produced in). The result depends only on the stored rows, so a request
// made after a restart is the request a process that never stopped makes.
func BuildMessages(system string, msgs []*store.Message) []model.Message {
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
			am := model.Message{Role: model.RoleAssistant, Content: m.Content, Reasoning: MessageReasoning(m)}
			if len(m.ToolCalls) > 0 {
				_ = json.Unmarshal(m.ToolCalls, &am.ToolCalls)
			}
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
