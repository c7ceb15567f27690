package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/lubanhq/luban/api"
	"github.com/lubanhq/luban/elicit"
	"github.com/lubanhq/luban/model"
	"github.com/lubanhq/luban/store"
	"github.com/lubanhq/luban/tool"
)

// Elicitations (docs/design.md §11) are an MCP server's questions during one of its
// tool calls, stored as interactions of tool "elicitation" whose
// InputRequest names the model's call that waits (toolCallId). A call may
// elicit more than once, so the row's own tool_call_id is the call's id
// plus elicitSuffix and the elicitation's number; receipts and events name
// the model's call.
//
// Two kinds, told apart by the stored request's "elicit" part:
//
//   - session: the server sent elicitation/create while the call was in
//     flight. The run stays running (the call is still open); the
//     question is put without a pause, and its answer goes back to the
//     server over the same session from the goroutine that waits for it
//     (Runner.elicits). Nothing outlives the process: a question left by a
//     restart is resolved not_resumable with a receipt, and the call gets
//     an error result saying so.
//   - input_required: a 2026-07-28 server answered the call with
//     input_required and a requestState. The question is put with the
//     ordinary pause, so it survives restarts; once every request of that
//     round is answered the run calls the tool again with the answers and
//     the same requestState.

const elicitSuffix = elicit.CallSuffix

const (
	elicitSession       = "session"
	elicitInputRequired = "input_required"
)

// elicitMeta is the part of a stored elicitation that clients never see.
type elicitMeta struct {
	Kind string `json:"kind"`
	// Seq numbers the call's elicitations from 1.
	Seq int `json:"seq"`
	// Round is, for input_required, the Seq of the round's first request;
	// Key is the server's key of this request, Requests every request of
	// the round and RequestState the state to send back.
	Round        int                         `json:"round,omitempty"`
	Key          string                      `json:"key,omitempty"`
	Requests     map[string]tool.Elicitation `json:"requests,omitempty"`
	RequestState string                      `json:"requestState,omitempty"`
}

// storedElicitation is the request column of an elicitation.
type storedElicitation struct {
	api.InputRequest
	Elicit *elicitMeta `json:"elicit,omitempty"`
}

// modelCallID is the model's tool call id of an interaction row's
// tool_call_id.
func modelCallID(rowCall string) string { return elicit.ModelCallID(rowCall) }

func isElicitation(it *store.Interaction) bool { return it.Tool == api.ToolElicitation }

func elicitMetaOf(it *store.Interaction) *elicitMeta {
	var s storedElicitation
	if json.Unmarshal(it.Request, &s) != nil || s.Elicit == nil {
		return &elicitMeta{Kind: elicitSession}
	}
	return s.Elicit
}

type elicitRow struct {
	it   *store.Interaction
	meta *elicitMeta
}

// elicitRows lists the elicitations of call callID, by Seq.
func (r *Runner) elicitRows(ctx context.Context, sessionID, callID string) ([]elicitRow, error) {
	its, err := r.st.InteractionList(ctx, sessionID)
	if err != nil {
		return nil, err
	}
	var out []elicitRow
	for _, it := range its {
		if isElicitation(it) && modelCallID(it.ToolCallID) == callID {
			out = append(out, elicitRow{it: it, meta: elicitMetaOf(it)})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].meta.Seq < out[j].meta.Seq })
	return out, nil
}

// waiter returns the channel the call's goroutine waits on for answer id
// (nil when nobody in this process waits for it).
func (r *Runner) waiter(id string) chan elicit.Answer {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.elicits[id]
}

// elicitor is the tool.Elicitor of one tool call of a run.
type elicitor struct {
	r    *Runner
	run  *store.Run
	call model.ToolCall
}

// Elicit puts a server's in-session question in front of the person and
// waits for the answer (or ctx's end). The question is stored, announced
// (user_input_required) and audited in one transaction that also checks
// this process still drives the run.
func (e *elicitor) Elicit(ctx context.Context, el tool.Elicitation) (tool.ElicitAnswer, error) {
	r, run, c := e.r, e.run, e.call
	p, err := elicit.Prompt(el)
	if err != nil {
		return tool.ElicitAnswer{}, fmt.Errorf("luban cannot show this elicitation: %w", err)
	}
	rows, err := r.elicitRows(ctx, run.SessionID, c.ID)
	if err != nil {
		return tool.ElicitAnswer{}, err
	}
	meta := &elicitMeta{Kind: elicitSession, Seq: len(rows) + 1}
	asg, err := r.assign(ctx, run, api.ToolElicitation, c)
	if err != nil {
		return tool.ElicitAnswer{}, err
	}
	req, stored, err := r.elicitRequest(run, c, p, meta, asg)
	if err != nil {
		return tool.ElicitAnswer{}, err
	}
	ch := make(chan elicit.Answer, 1)
	r.mu.Lock()
	r.elicits[req.ID] = ch
	r.mu.Unlock()
	r.elicitingTool(run.ID, 1)
	defer func() {
		r.elicitingTool(run.ID, -1)
		r.mu.Lock()
		delete(r.elicits, req.ID)
		r.mu.Unlock()
	}()
	now := r.now()
	err = r.st.InTx(ctx, func(tx store.Tx) error {
		won, err := tx.RunCheckpoint(ctx, &store.RunCheckpointParams{ID: run.ID, LeaseOwner: r.opts.InstanceID, Now: now})
		if err != nil || !won {
			return errLost(err)
		}
		td, deadlines := asg.deadlines().specs(now)
		it, err := tx.InteractionInsert(ctx, &store.InteractionInsertParams{ID: req.ID, SessionID: run.SessionID, RunID: run.ID,
			ToolCallID: c.ID + elicitSuffix + strconv.Itoa(meta.Seq), Tool: api.ToolElicitation, Request: stored, Route: asg.routeJSON(), Now: now, ExpiresAt: req.ExpiresAt,
			TimeoutData: td, Deadlines: deadlines})
		if err != nil {
			return err
		}
		if err := asg.store(ctx, tx, req.ID, now); err != nil {
			return err
		}
		ev := *req
		ev.Resumable = true
		if _, err := r.emitTo(ctx, tx, run.SessionID, api.EventUserInputRequired, ev, asg.audience()); err != nil {
			return err
		}
		r.audit(ctx, tx, it, "requested", "", elicitSummary(p, meta, nil))
		r.trace(ctx, tx, run, "interaction", map[string]any{"requestId": req.ID, "toolCallId": c.ID, "action": "requested", "kind": meta.Kind})
		return tx.SessionSetStatus(ctx, &store.SessionSetStatusParams{ID: run.SessionID, Status: string(store.RunWaitingInput), Now: now})
	})
	if err != nil {
		return tool.ElicitAnswer{}, err
	}
	r.fault("elicitation_committed")
	return r.awaitElicitation(ctx, run.SessionID, req.ID, ch)
}

// awaitElicitation waits for the answer to in-session elicitation id: from
// ch (an answer given through this process, or the sweeper's cancel), or
// from the store when another process (a replica) resolved the row: every
// wake-up of the session (PG NOTIFY) re-reads it. An answered row gives its
// stored answer, any other resolution (cancelled, expired) MCP's cancel.
func (r *Runner) awaitElicitation(ctx context.Context, sessionID, id string, ch <-chan elicit.Answer) (tool.ElicitAnswer, error) {
	wake, unsubscribe := r.st.Subscribe(sessionID)
	defer unsubscribe()
	for {
		select {
		case a := <-ch:
			return elicit.Result(a), nil
		case <-ctx.Done():
			return tool.ElicitAnswer{}, ctx.Err()
		case <-wake:
			it, err := r.st.InteractionGet(ctx, id)
			if err != nil || it.Status == string(api.StatusPending) {
				continue
			}
			if it.Status != string(api.StatusAnswered) {
				return elicit.Result(elicit.Answer{Cancelled: true}), nil
			}
			var a elicit.Answer
			if err := json.Unmarshal(it.Answer, &a); err != nil {
				return tool.ElicitAnswer{}, fmt.Errorf("agent: the stored answer of %s: %w", id, err)
			}
			return elicit.Result(a), nil
		}
	}
}

// elicitRequest builds the InputRequest of an elicitation of call c and its
// stored form (with meta), assigned to asg's people (nil: the owner).
func (r *Runner) elicitRequest(run *store.Run, c model.ToolCall, p *api.Prompt, meta *elicitMeta, asg *assignment) (*api.InputRequest, json.RawMessage, error) {
	now := r.now()
	req := &api.InputRequest{ID: NewID("ask"), ToolCallID: c.ID, SessionID: run.SessionID, RunID: run.ID, Prompt: *p,
		CreatedAt: now, ExpiresAt: now.Add(r.opts.InteractionTTL).Truncate(1e9)}
	asg.apply(r, req)
	stored, err := json.Marshal(storedElicitation{InputRequest: *req, Elicit: meta})
	return req, stored, err
}

// elicitSummary is the audit summary of an elicitation: its server, mode,
// kind and field names; with the answer, its action and the names of the
// fields it filled (never their values).
func elicitSummary(p *api.Prompt, meta *elicitMeta, a *elicit.Answer) map[string]any {
	names := make([]string, len(p.Fields))
	for i, f := range p.Fields {
		names[i] = f.Name
	}
	out := map[string]any{"server": p.Server, "mode": p.Mode, "kind": meta.Kind, "fields": names}
	if a != nil {
		out["action"] = a.Action()
		if len(a.Content) > 0 {
			var m map[string]json.RawMessage
			_ = json.Unmarshal(a.Content, &m)
			filled := make([]string, 0, len(m))
			for k := range m {
				filled = append(filled, k)
			}
			sort.Strings(filled)
			out["filled"] = filled
		}
	}
	return out
}

// elicitLive reports whether an in-session elicitation can still reach its
// server: a goroutine here waits for it, or the run is driven by another
// process that is alive (which may be the one waiting). A holder killed
// before its lease ran out is dead at once (store.Store.InstanceAlive);
// when liveness cannot be read, the lease decides. run is it's run, as the
// caller read it.
func (r *Runner) elicitLive(ctx context.Context, it *store.Interaction, run *store.Run) bool {
	if r.waiter(it.ID) != nil {
		return true
	}
	if run.Status != store.RunRunning || run.LeaseOwner == r.opts.InstanceID || !run.LeaseUntil.After(r.now()) {
		return false
	}
	alive, err := r.st.InstanceAlive(ctx, run.LeaseOwner)
	return alive || err != nil
}

// NotResumableError is ErrNotResumable with the receipt of the request it
// closed (an MCP server's in-session elicitation orphaned by a restart).
type NotResumableError struct {
	Receipt *api.Receipt
}

// Error is ErrNotResumable's text.
func (e *NotResumableError) Error() string {
	return "the MCP server's question cannot be answered any more: luban restarted, and the server's session that asked it is gone"
}

// Unwrap returns ErrNotResumable.
func (e *NotResumableError) Unwrap() error { return ErrNotResumable }

// closeNotResumable resolves an orphaned in-session elicitation as
// not_resumable (through resolveInteraction, with its receipt, audit and
// trace entries). It returns nil when someone else resolved it first.
func (r *Runner) closeNotResumable(ctx context.Context, in *answering) (*api.Receipt, error) {
	res := closingResolution(api.StatusNotResumable, elicit.Answer{Cancelled: true})
	res.reason = "restarted"
	done, err := r.resolveInteraction(ctx, in, res)
	if errors.Is(err, errResolveLost) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return done.receipt, nil
}

// needInput is runTool's answer for a call that needs a person's input
// first: the elicitation to put (with the ordinary pause).
type needInput struct {
	call   model.ToolCall
	prompt *api.Prompt
	meta   *elicitMeta
}

func (e *needInput) Error() string { return "agent: the tool call needs input" }

// prepareRemote looks at the elicitations of call c of a remote tool before
// it is called. It returns a ToolResult when the call must not be made (an
// in-session question a restart orphaned), a *needInput when the next
// request of an input_required round must be asked first, or the context
// to call the tool with (carrying the answers of the last round).
func (r *Runner) prepareRemote(ctx context.Context, run *store.Run, c model.ToolCall) (context.Context, *api.ToolResult, error) {
	rows, err := r.elicitRows(ctx, run.SessionID, c.ID)
	if err != nil || len(rows) == 0 {
		return ctx, nil, err
	}
	for _, row := range rows {
		if row.meta.Kind != elicitSession {
			continue
		}
		if row.it.Status == string(api.StatusPending) && r.waiter(row.it.ID) == nil {
			in, _ := newAnswering(row.it)
			if _, err := r.closeNotResumable(ctx, in); err != nil {
				return ctx, nil, err
			}
			row.it.Status = string(api.StatusNotResumable)
		}
		if row.it.Status == string(api.StatusNotResumable) && row.meta.Seq == len(rows) {
			server := ""
			if req, err := decodeRequest(row.it); err == nil {
				server = req.Server
			}
			return ctx, &api.ToolResult{IsError: true, Content: fmt.Sprintf("not completed: luban restarted while the MCP server %s waited for an answer to its question; "+
				"that server's session is gone, so the answer could not reach it (the question is closed as not_resumable). The call may or may not have taken effect; call the tool again if it is still needed.", server)}, nil
		}
	}
	last := rows[len(rows)-1].meta
	if last.Kind != elicitInputRequired {
		return ctx, nil, nil
	}
	round := map[string]*store.Interaction{}
	for _, row := range rows {
		if row.meta.Kind == elicitInputRequired && row.meta.Round == last.Round {
			round[row.meta.Key] = row.it
		}
	}
	keys := make([]string, 0, len(last.Requests))
	for k := range last.Requests {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	resp := &tool.InputResponses{Responses: map[string]tool.ElicitAnswer{}, RequestState: last.RequestState}
	for _, k := range keys {
		it := round[k]
		if it == nil {
			p, err := elicit.Prompt(last.Requests[k])
			if err != nil {
				resp.Responses[k] = tool.ElicitAnswer{Action: "decline"}
				continue
			}
			return ctx, nil, &needInput{call: c, prompt: p, meta: &elicitMeta{Kind: elicitInputRequired, Seq: len(rows) + 1, Round: last.Round,
				Key: k, Requests: last.Requests, RequestState: last.RequestState}}
		}
		var a elicit.Answer
		_ = json.Unmarshal(it.Answer, &a)
		if it.Status != string(api.StatusAnswered) {
			a = elicit.Answer{Cancelled: true}
		}
		resp.Responses[k] = elicit.Result(a)
	}
	return tool.WithInputResponses(ctx, resp), nil, nil
}

// inputRequired turns a tool's input_required result into the first
// question of a new round (a *needInput), or an error result when none of
// its requests can be shown.
func (r *Runner) inputRequired(ctx context.Context, run *store.Run, c model.ToolCall, in *tool.InputRequired) (api.ToolResult, error) {
	rows, err := r.elicitRows(ctx, run.SessionID, c.ID)
	if err != nil {
		return api.ToolResult{}, err
	}
	keys := make([]string, 0, len(in.Requests))
	for k := range in.Requests {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	seq := len(rows) + 1
	var why []string
	for _, k := range keys {
		p, err := elicit.Prompt(in.Requests[k])
		if err != nil {
			why = append(why, err.Error())
			continue
		}
		return api.ToolResult{}, &needInput{call: c, prompt: p, meta: &elicitMeta{Kind: elicitInputRequired, Seq: seq, Round: seq,
			Key: k, Requests: in.Requests, RequestState: in.RequestState}}
	}
	return api.ToolResult{IsError: true, Content: "the MCP server asked for input luban cannot show: " + strings.Join(why, "; ")}, nil
}

// pauseElicitation puts an input_required request with the ordinary pause
// (run → waiting_input), so that it survives a restart.
func (r *Runner) pauseElicitation(ctx context.Context, run *store.Run, ni *needInput) error {
	asg, err := r.assign(ctx, run, api.ToolElicitation, ni.call)
	if err != nil {
		return err
	}
	req, stored, err := r.elicitRequest(run, ni.call, ni.prompt, ni.meta, asg)
	if err != nil {
		return err
	}
	ev := *req
	ev.Resumable = true
	err = r.pause(ctx, run, interaction{ID: req.ID, ToolCallID: ni.call.ID + elicitSuffix + strconv.Itoa(ni.meta.Seq), Tool: api.ToolElicitation,
		Request: stored, Event: ev, ExpiresAt: req.ExpiresAt, Audit: elicitSummary(ni.prompt, ni.meta, nil), Assign: asg})
	if errors.Is(err, errLeaseLost) {
		return nil
	}
	if err == nil {
		r.fault("interaction_committed")
	}
	return err
}
