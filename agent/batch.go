package agent

import (
	"context"
	"errors"
	"fmt"

	"github.com/lubanhq/luban/api"
	"github.com/lubanhq/luban/askuser"
	"github.com/lubanhq/luban/model"
	"github.com/lubanhq/luban/store"
)

// ResolveEntry is one answer of a batch (ResolveBatchParams): the request
// it answers and the answer body, as a single answer's (Answer's own
// SessionID and RequestID are not read).
type ResolveEntry struct {
	RequestID string
	Answer    api.ContinueRequest
}

// ResolveBatchParams answers several interactions of one session at once
// (docs/design.md §32): POST /api/chat/continue with answers: [{requestId,
// …}], an AG-UI resume[] of several entries.
type ResolveBatchParams struct {
	// By is the principal answering, as ResolveParams.By.
	By string
	// SessionID is the session every entry's request must belong to;
	// required for SurfaceContinue. When empty, the first entry's request
	// names it.
	SessionID string
	Entries   []ResolveEntry
	// Surface is where the answers came from (a Surface constant).
	Surface string
	// Field is the name of the entries' list in the caller's body
	// ("answers", "resume"): a detail names an entry as Field[i].
	Field string
}

// ResolveBatch resolves every entry's request in one transaction, all or
// none (docs/design.md §32). Every entry is checked as Resolve checks one
// answer — who may answer (mayAnswer, per entry), the request's state, the
// answer (kind.validate) — before anything is written:
//   - an answer that breaks its request, a request named twice, a request
//     that is unknown or of another session, of another run, or of a kind
//     answered on its own (an elicitation, an MCP host's question, a
//     quorum approval): *askuser.AnswerError (422) whose details name the
//     entry (answers[1].selections), every entry's problems together;
//   - a request no longer pending: *AlreadyResolvedError (409),
//     *InteractionExpiredError (410), *NotResumableError, as for one
//     answer, naming the first such entry; a text over its limit:
//     *PayloadTooLargeError naming the entry's field;
//   - 403/404 as Resolve.
//
// Then one transaction resolves them all: when an entry ends the run (a
// cancel), the run ends with every answer before it recorded; otherwise
// the run resumes when no other question of it is pending, and stays
// waiting_input (ContinueResult.Waiting) when one is. A single entry is
// Resolve's answer with its details named as an entry.
func (r *Runner) ResolveBatch(ctx context.Context, p ResolveBatchParams) (*ContinueResult, error) {
	field := p.Field
	if field == "" {
		field = "answers"
	}
	at := func(i int, f string) string {
		if f == "" {
			return fmt.Sprintf("%s[%d]", field, i)
		}
		return fmt.Sprintf("%s[%d].%s", field, i, f)
	}
	if len(p.Entries) == 0 {
		return nil, &RequestFieldError{Msg: field + " is empty", Details: []api.FieldError{{Field: field, Code: api.DetailRequired, Message: "at least one answer is required"}}}
	}
	if p.Surface == SurfaceContinue && p.SessionID == "" {
		return nil, &RequestFieldError{Msg: "sessionId is required", Details: []api.FieldError{{Field: "sessionId", Code: api.DetailRequired, Message: "required"}}}
	}
	var details []api.FieldError
	seen := map[string]int{}
	for i, e := range p.Entries {
		if e.RequestID == "" {
			details = append(details, api.FieldError{Field: at(i, "requestId"), Code: api.DetailRequired, Message: "required"})
			continue
		}
		if j, dup := seen[e.RequestID]; dup {
			details = append(details, api.FieldError{Field: at(i, "requestId"), Code: api.DetailDuplicate, Params: map[string]any{"of": at(j, "requestId")},
				Message: "the same request is answered by " + at(j, "")})
			continue
		}
		seen[e.RequestID] = i
	}
	if len(details) > 0 {
		return nil, &askuser.AnswerError{Details: details}
	}
	if len(p.Entries) == 1 {
		e := p.Entries[0]
		res, err := r.Resolve(ctx, ResolveParams{By: p.By, SessionID: p.SessionID, RequestID: e.RequestID, Answer: e.Answer, Surface: p.Surface})
		return res, entryError(err, at(0, ""))
	}
	ins := make([]*answering, len(p.Entries))
	ress := make([]resolution, len(p.Entries))
	var owner string
	sessionID := p.SessionID
	for i, e := range p.Entries {
		ist, err := r.st.InteractionGetState(ctx, &store.InteractionGetStateParams{ID: e.RequestID, Messages: i == 0})
		if err != nil && !errors.Is(err, store.ErrNotFound) {
			return nil, err
		}
		if sessionID == "" && err == nil {
			sessionID = ist.Interaction.SessionID
		}
		if err != nil || ist.Interaction.SessionID != sessionID {
			// The session's owner (or an assignee who may see it) learns
			// which entry is wrong; anyone else that the session is none
			// of theirs.
			if sessionID != "" && r.mayAnswerSession(ctx, p.By, sessionID) != nil {
				return nil, ErrSessionNotFound
			}
			if err == nil {
				r.audit(ctx, r.st, ist.Interaction, "rejected", "session_mismatch", nil)
			}
			details = append(details, api.FieldError{Field: at(i, "requestId"), Code: api.DetailInvalid, Message: "no request of this session has this id"})
			continue
		}
		it := ist.Interaction
		owner = ist.Session.Owner
		if p.By != owner || it.Status == string(api.StatusPending) {
			if err := r.mayAnswer(ctx, p.By, it, owner); err != nil {
				if errors.Is(err, ErrInteractionNotFound) && p.SessionID != "" {
					err = ErrSessionNotFound
				}
				return nil, err
			}
		}
		in, err := r.answerable(ctx, ist)
		if err != nil {
			return nil, err
		}
		if i > 0 && ins[0] != nil {
			in.msgs = ins[0].msgs
		}
		ins[i] = in
		switch {
		case i > 0 && ins[0] != nil && it.RunID != ins[0].it.RunID:
			details = append(details, api.FieldError{Field: at(i, "requestId"), Code: api.DetailNotAllowed, Message: "this request waits in another run: answer it on its own"})
			continue
		case !batchable(in):
			details = append(details, api.FieldError{Field: at(i, "requestId"), Code: api.DetailNotAllowed, Message: "a " + in.kind.name() + " request is answered on its own, not in a batch"})
			continue
		}
		res, err := in.kind.validate(ctx, r, in, e.Answer, p.By)
		var ae *askuser.AnswerError
		var tl *PayloadTooLargeError
		switch {
		case errors.As(err, &ae):
			r.audit(ctx, r.st, it, "rejected", "invalid_answer", nil)
			for _, d := range ae.Details {
				d.Field = at(i, d.Field)
				details = append(details, d)
			}
			continue
		case errors.As(err, &tl):
			return nil, entryError(err, at(i, ""))
		case err != nil:
			return nil, err
		}
		// The owner's own approval under selfApproval: false is refused
		// here (a quorum approval is not batchable, so nothing is written).
		if _, err := r.quorumStep(ctx, in, res); err != nil {
			return nil, err
		}
		ress[i] = res
	}
	if len(details) > 0 {
		return nil, &askuser.AnswerError{Details: details}
	}
	done, err := r.resolveAll(ctx, ins, ress)
	if errors.Is(err, errNotWaiting) || errors.Is(err, errResolveLost) {
		// One was resolved, expired or ended since it was read: the first
		// such entry's state is the answer, and nothing was written.
		for _, in := range ins {
			if err := r.notResumable(ctx, in.it); !errors.Is(err, ErrNotResumable) {
				return nil, err
			}
		}
		return nil, ErrNotResumable
	}
	if err != nil {
		return nil, err
	}
	done.Owner = owner
	return done, nil
}

// WaitingRequests is the ids of the requests run runID of session
// sessionID waits on, in call order: several when one model message asked
// several questions at once (docs/design.md §32). A stream that reached
// the run's pause ends once it has shown the user_input_required of each.
func (r *Runner) WaitingRequests(ctx context.Context, sessionID, runID string) ([]string, error) {
	its, err := r.st.InteractionListPending(ctx, sessionID)
	if err != nil {
		return nil, err
	}
	var ids []string
	for _, it := range its {
		if it.RunID == runID {
			ids = append(ids, it.ID)
		}
	}
	return ids, nil
}

// mayAnswerSession reports (nil) whether by may name sessionID in a batch:
// its owner, or an assignee of one of its pending questions.
func (r *Runner) mayAnswerSession(ctx context.Context, by, sessionID string) error {
	s, err := r.st.SessionGet(ctx, sessionID)
	if err != nil {
		return ErrSessionNotFound
	}
	if s.Owner == by {
		return nil
	}
	its, err := r.st.InteractionListPending(ctx, sessionID)
	if err != nil {
		return err
	}
	for _, it := range its {
		if routeOf(it) != nil {
			rows, err := r.st.AssigneeList(ctx, it.ID)
			if err != nil {
				return err
			}
			for _, a := range rows {
				if a.Person == by {
					return nil
				}
			}
		}
	}
	return ErrSessionNotFound
}

// batchable reports whether in may be answered in a batch: a question, an
// approval (not one that needs a quorum) or a front-end tool call of a
// waiting run.
func batchable(in *answering) bool {
	switch in.kind.(type) {
	case askKind, frontendKind:
	case approvalKind:
		if rt := routeOf(in.it); rt != nil && rt.Quorum > 1 {
			return false
		}
	default:
		return false
	}
	return true
}

// entryError names the entry at in the fields of a single answer's error
// details (422, 413); other errors are returned as they are.
func entryError(err error, at string) error {
	name := func(ds []api.FieldError) []api.FieldError {
		out := make([]api.FieldError, len(ds))
		for i, d := range ds {
			d.Field = at + "." + d.Field
			out[i] = d
		}
		return out
	}
	var ae *askuser.AnswerError
	var tl *PayloadTooLargeError
	switch {
	case errors.As(err, &ae):
		return &askuser.AnswerError{Details: name(ae.Details)}
	case errors.As(err, &tl):
		return &PayloadTooLargeError{Msg: tl.Msg, Details: name(tl.Details)}
	}
	return err
}

// resolveAll is the resolve transition of several interactions of one
// waiting run at once (docs/design.md §32), each resolved as res[i]: one
// transaction writes the run's row first — its end, when an entry ends the
// run (a cancel), else its resume when nothing else of it is pending, else
// a hold that leaves it waiting — then each interaction's conditional write
// (any loss rolls everything back: errResolveLost), its receipt, event,
// ToolResult, audit and trace rows, in entry order. A resumed run is
// driven from its rows as read again.
func (r *Runner) resolveAll(ctx context.Context, ins []*answering, ress []resolution) (*ContinueResult, error) {
	outs := make([]outcome, len(ins))
	parents := make([]string, len(ins))
	idxs := make([]int, len(ins))
	ids := make([]string, len(ins))
	var end *resolution
	for i, in := range ins {
		outs[i] = in.kind.apply(in, ress[i])
		ids[i] = in.it.ID
		if outs[i].result != nil {
			var err error
			if parents[i], idxs[i], err = r.findCall(ctx, in, in.it.ToolCallID); err != nil {
				return nil, err
			}
		}
		if outs[i].effect == effEnd && end == nil {
			end = &ress[i]
		}
	}
	first := ins[0].it
	now := r.now()
	var out ContinueResult
	resumed := false
	err := r.st.InTx(ctx, func(tx store.Tx) error {
		out, resumed = ContinueResult{RunID: first.RunID}, false
		run := new(store.Run)
		*run = *ins[0].run
		consume := func() error {
			var rows store.RowsInsertParams
			for i, in := range ins {
				rc := r.receipt(ctx, in, ress[i], outs[i], now)
				won, err := tx.InteractionResolve(ctx, &store.InteractionResolveParams{ID: in.it.ID, SessionID: in.it.SessionID, Status: string(ress[i].status),
					Answer: outs[i].stored, Now: now, ReceiptJWS: rc.Signature, DecidedBy: in.it.DecidedBy, MustWin: true})
				if err != nil {
					return err
				}
				if !won {
					return errResolveLost
				}
				out.Receipts = append(out.Receipts, r.resolvedRows(&rows, run, in, ress[i], outs[i], rc))
				if res := outs[i].result; res != nil {
					m, tr, ev := r.resultRows(run, parents[i], idxs[i], model.ToolCall{ID: in.it.ToolCallID, Name: outs[i].resultName}, *res)
					rows.Messages = append(rows.Messages, m)
					rows.Events = append(rows.Events, ev)
					rows.Traces = append(rows.Traces, tr)
				}
			}
			ins, err := tx.RowsInsert(ctx, &rows)
			if err != nil {
				return err
			}
			out.AfterSeq, out.LastSeq = ins.Events[0].Seq-1, ins.Events[len(ins.Events)-1].Seq
			return nil
		}
		if end != nil {
			to := store.RunCancelled
			if end.status == api.StatusExpired {
				to = store.RunExpired
			}
			won, err := r.finish(endedBy(ctx, *end), tx, run, []store.RunStatus{store.RunWaitingInput}, to, nil, consume)
			if err == nil && !won {
				err = errNotWaiting
			}
			return err
		}
		until := now.Add(r.opts.LeaseDuration)
		resume := &store.RunResumeParams{ID: run.ID, LeaseOwner: r.opts.InstanceID, LeaseUntil: until, Now: now, Settled: true, Resolving: ids}
		ok, err := tx.RunResume(ctx, resume)
		if err != nil {
			return err
		}
		if !ok {
			held, err := tx.RunHold(ctx, &store.RunHoldParams{ID: run.ID, Now: now})
			if err != nil {
				return err
			}
			if !held {
				return errNotWaiting
			}
		}
		if err := consume(); err != nil {
			return err
		}
		if !ok {
			resume.Resolving = nil
			if ok, err = tx.RunResume(ctx, resume); err != nil {
				return err
			}
		}
		resumed = ok
		return nil
	})
	if errors.Is(err, store.ErrLost) {
		// A resolution lost after all (MustWin).
		err = errResolveLost
	}
	if err != nil {
		return nil, err
	}
	r.fault("answer_committed")
	out.Receipt = out.Receipts[0]
	out.Waiting = end == nil && !resumed
	if resumed {
		r.driveFrom(first.RunID, nil)
	}
	return &out, nil
}
