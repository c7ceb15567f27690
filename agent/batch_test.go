package agent_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/lubanhq/luban/agent"
	"github.com/lubanhq/luban/api"
	"github.com/lubanhq/luban/askuser"
	"github.com/lubanhq/luban/model"
	"github.com/lubanhq/luban/signing"
	"github.com/lubanhq/luban/store"
	"github.com/lubanhq/luban/tool"
)

// recordingModel is scriptModel that keeps every request's messages.
type recordingModel struct {
	mu    sync.Mutex
	calls [][]model.Message
	next  model.Provider
}

func (m *recordingModel) provider() model.Provider {
	return model.ProviderFunc{ProviderName: "test:record", Fn: func(ctx context.Context, req *model.Request, onDelta func(string)) (*model.Response, error) {
		m.mu.Lock()
		m.calls = append(m.calls, append([]model.Message(nil), req.Messages...))
		m.mu.Unlock()
		return m.next.Generate(ctx, req, onDelta)
	}}
}

func (m *recordingModel) last() []model.Message {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.calls[len(m.calls)-1]
}

func (m *recordingModel) count() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.calls)
}

// batchRunner is a Runner on st whose agent may call ask_user and "slow".
func batchRunner(t *testing.T, st store.Store, p model.Provider, opts ...func(*agent.Options)) *agent.Runner {
	t.Helper()
	reg := tool.NewRegistry()
	require.NoError(t, reg.Register(tool.Func{ToolSpec: model.ToolSpec{Name: "slow", Description: "a tool", Parameters: json.RawMessage(`{"type":"object"}`)},
		Fn: func(ctx context.Context, args json.RawMessage) (api.ToolResult, error) {
			return api.ToolResult{Content: "slow result"}, nil
		}}, true))
	o := agent.Options{Store: st, Tools: reg, Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
		Agents: []*agent.Agent{{Provider: p, Tools: tool.Allowlist{api.ToolAskUser, "slow"}}}}
	for _, f := range opts {
		f(&o)
	}
	r, err := agent.New(o)
	require.NoError(t, err)
	return r
}

// eachStore runs body as a parallel subtest on each store of
// raceDrivers, with a fresh store (closed after body) and a 30 s context.
func eachStore(t *testing.T, body func(t *testing.T, ctx context.Context, raw store.Store)) {
	t.Helper()
	for name, newStore := range raceDrivers(t) {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			raw := newStore(t)
			defer raw.Close()
			body(t, ctx, raw)
		})
	}
}

// pause starts a run of alice's on b.runner, waits until it pauses, and
// returns it with the questions it asked, in call order.
func (b *raceBundle) pause(t *testing.T) (*agent.StartResult, []*store.Interaction) {
	t.Helper()
	res, err := b.runner.Start(b.ctx, agent.StartParams{Owner: "alice", Message: "hi"})
	require.NoError(t, err)
	b.waitRun(t, res.SessionID, res.RunID, store.RunWaitingInput)
	its, err := b.st.InteractionList(b.ctx, res.SessionID)
	require.NoError(t, err)
	return res, its
}

const batchAsk2 = `{"title":"pick again","mode":"single","options":[{"id":"x","label":"X"},{"id":"y","label":"Y"}]}`

// One model message with two questions and a tool between them: the tool
// runs first, then both questions are put in one pause (one interaction and
// one user_input_required each, in call order); answering the first keeps
// the run waiting, across a restart; answering the last resumes it with one
// model call that sees both answers (docs/design.md §32).
func TestBatchPauseAsksEveryQuestionAtOnce(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, ctx context.Context, raw store.Store) {
		rec := &recordingModel{next: scriptModel([]model.ToolCall{
			{Name: api.ToolAskUser, Arguments: raceAsk}, {Name: "slow", Arguments: `{}`}, {Name: api.ToolAskUser, Arguments: batchAsk2}})}
		r1 := batchRunner(t, raw, rec.provider())
		res, err := r1.Start(ctx, agent.StartParams{Owner: "alice", Message: "hi"})
		require.NoError(t, err)
		b := &raceBundle{ctx: ctx, st: &hookStore{Store: raw}, runner: r1}
		b.waitRun(t, res.SessionID, res.RunID, store.RunWaitingInput)

		its, err := raw.InteractionList(ctx, res.SessionID)
		require.NoError(t, err)
		require.Len(t, its, 2)
		require.Equal(t, its[0].CreatedAt.Add(time.Microsecond), its[1].CreatedAt, "asked by one pause, in call order")
		evs, err := raw.EventList(ctx, &store.EventListParams{SessionID: res.SessionID, Limit: 100})
		require.NoError(t, err)
		var required []string
		sawResult := false
		for _, ev := range evs {
			switch ev.Name {
			case api.EventUserInputRequired:
				var req api.InputRequest
				require.NoError(t, json.Unmarshal(ev.Data, &req))
				required = append(required, req.ID)
				require.True(t, sawResult, "the call that needs no person ran first")
			case api.EventToolResult:
				sawResult = true
			}
		}
		require.Equal(t, []string{its[0].ID, its[1].ID}, required)
		p, err := r1.Pending(ctx, "alice", res.SessionID)
		require.NoError(t, err)
		require.Len(t, p.Requests, 2)
		require.Equal(t, its[0].ID, p.Pending.ID)
		require.Equal(t, its[1].ID, p.Requests[1].ID)

		done, err := r1.Resolve(ctx, agent.ResolveParams{Surface: agent.SurfaceContinue, By: "alice", SessionID: res.SessionID, RequestID: its[1].ID,
			Answer: api.ContinueRequest{Selections: []string{"y"}}})
		require.NoError(t, err)
		require.True(t, done.Waiting)
		run, err := raw.RunGet(ctx, res.RunID)
		require.NoError(t, err)
		require.Equal(t, store.RunWaitingInput, run.Status)
		require.Equal(t, 1, rec.count(), "no model call before the last answer")

		// A restart between the two answers loses nothing.
		r1.Shutdown()
		r2 := batchRunner(t, raw, rec.provider())
		defer r2.Shutdown()
		p, err = r2.Pending(ctx, "alice", res.SessionID)
		require.NoError(t, err)
		require.Len(t, p.Requests, 1)
		require.Equal(t, its[0].ID, p.Pending.ID)
		done, err = r2.Resolve(ctx, agent.ResolveParams{Surface: agent.SurfaceContinue, By: "alice", SessionID: res.SessionID, RequestID: its[0].ID,
			Answer: api.ContinueRequest{Selections: []string{"a"}}})
		require.NoError(t, err)
		require.False(t, done.Waiting)
		b.runner = r2
		b.waitRun(t, res.SessionID, res.RunID, store.RunCompleted)
		require.Equal(t, 2, rec.count(), "one model call after the last answer")
		var results []string
		for _, m := range rec.last() {
			if m.Role == model.RoleTool {
				results = append(results, m.Content)
			}
		}
		require.Len(t, results, 3)
		require.Contains(t, results[0], "A")
		require.Equal(t, "slow result", results[1])
		require.Contains(t, results[2], "Y")
	})
}

// ResolveBatch is all or none: an invalid entry (named answers[i].field),
// a request twice, or one no longer pending changes nothing; a valid batch
// resolves every entry in one transaction and resumes the run.
func TestResolveBatchAllOrNone(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, ctx context.Context, raw store.Store) {
		rec := &recordingModel{next: scriptModel([]model.ToolCall{{Name: api.ToolAskUser, Arguments: raceAsk}, {Name: api.ToolAskUser, Arguments: batchAsk2}})}
		r := batchRunner(t, raw, rec.provider())
		defer r.Shutdown()
		b := &raceBundle{ctx: ctx, st: &hookStore{Store: raw}, runner: r}
		res, its := b.pause(t)
		require.Len(t, its, 2)
		batch := func(entries ...agent.ResolveEntry) (*agent.ContinueResult, error) {
			return r.ResolveBatch(ctx, agent.ResolveBatchParams{By: "alice", SessionID: res.SessionID, Entries: entries, Surface: agent.SurfaceContinue, Field: "answers"})
		}
		pick := func(id string, sel ...string) agent.ResolveEntry {
			return agent.ResolveEntry{RequestID: id, Answer: api.ContinueRequest{Selections: sel}}
		}
		stillPending := func() {
			t.Helper()
			p, err := r.Pending(ctx, "alice", res.SessionID)
			require.NoError(t, err)
			require.Len(t, p.Requests, 2)
		}

		_, err := batch(pick(its[0].ID, "a"), pick(its[1].ID, "nope"))
		var ae *askuser.AnswerError
		require.ErrorAs(t, err, &ae)
		require.Equal(t, "answers[1].selections[0]", ae.Details[0].Field)
		require.Equal(t, api.DetailUnknownOption, ae.Details[0].Code)
		stillPending()

		_, err = batch(pick(its[0].ID, "a"), pick(its[0].ID, "b"))
		require.ErrorAs(t, err, &ae)
		require.Equal(t, "answers[1].requestId", ae.Details[0].Field)
		require.Equal(t, api.DetailDuplicate, ae.Details[0].Code)
		stillPending()

		_, err = batch(pick(its[0].ID, "a"), pick("ask_unknown", "x"))
		require.ErrorAs(t, err, &ae)
		require.Equal(t, "answers[1].requestId", ae.Details[0].Field)
		stillPending()

		_, err = r.ResolveBatch(ctx, agent.ResolveBatchParams{By: "mallory", SessionID: res.SessionID, Entries: []agent.ResolveEntry{pick(its[0].ID, "a"), pick(its[1].ID, "x")},
			Surface: agent.SurfaceContinue})
		require.ErrorIs(t, err, agent.ErrSessionNotFound)
		stillPending()

		// One answered alone first: the batch naming it is 409 and
		// leaves the other pending.
		one, err := r.Resolve(ctx, agent.ResolveParams{Surface: agent.SurfaceContinue, By: "alice", SessionID: res.SessionID, RequestID: its[0].ID,
			Answer: api.ContinueRequest{Selections: []string{"b"}}})
		require.NoError(t, err)
		require.True(t, one.Waiting)
		_, err = batch(pick(its[1].ID, "x"), pick(its[0].ID, "a"))
		var ar *agent.AlreadyResolvedError
		require.ErrorAs(t, err, &ar)
		require.Equal(t, its[0].ID, ar.Receipt.RequestID)
		p, err := r.Pending(ctx, "alice", res.SessionID)
		require.NoError(t, err)
		require.Len(t, p.Requests, 1)
		require.Equal(t, its[1].ID, p.Pending.ID)
	})
}

// A valid batch resolves both in one call, with a receipt each, and the
// run resumes once; a batch whose entry cancels ends the run with the
// other answer recorded.
func TestResolveBatchResolvesTogether(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, ctx context.Context, raw store.Store) {
		rec := &recordingModel{next: scriptModel([]model.ToolCall{{Name: api.ToolAskUser, Arguments: raceAsk}, {Name: api.ToolAskUser, Arguments: batchAsk2}})}
		r := batchRunner(t, raw, rec.provider())
		defer r.Shutdown()
		b := &raceBundle{ctx: ctx, st: &hookStore{Store: raw}, runner: r}
		for _, cancelSecond := range []bool{false, true} {
			res, its := b.pause(t)
			second := api.ContinueRequest{Selections: []string{"x"}}
			if cancelSecond {
				second = api.ContinueRequest{Cancelled: true}
			}
			done, err := r.ResolveBatch(ctx, agent.ResolveBatchParams{By: "alice", SessionID: res.SessionID, Surface: agent.SurfaceContinue,
				Entries: []agent.ResolveEntry{{RequestID: its[0].ID, Answer: api.ContinueRequest{Selections: []string{"a"}}}, {RequestID: its[1].ID, Answer: second}}})
			require.NoError(t, err)
			require.Len(t, done.Receipts, 2)
			require.Equal(t, its[0].ID, done.Receipts[0].RequestID)
			require.Equal(t, its[1].ID, done.Receipts[1].RequestID)
			require.Equal(t, done.Receipts[0], done.Receipt)
			require.False(t, done.Waiting)
			after, err := raw.InteractionList(ctx, res.SessionID)
			require.NoError(t, err)
			require.Equal(t, string(api.StatusAnswered), after[0].Status)
			if cancelSecond {
				require.Equal(t, string(api.StatusCancelled), after[1].Status)
				b.waitRun(t, res.SessionID, res.RunID, store.RunCancelled)
				continue
			}
			require.Equal(t, string(api.StatusAnswered), after[1].Status)
			b.waitRun(t, res.SessionID, res.RunID, store.RunCompleted)
			var results []string
			for _, m := range rec.last() {
				if m.Role == model.RoleTool {
					results = append(results, m.Content)
				}
			}
			require.Len(t, results, 2)
		}
	})
}

// A batch answer races a single answer to one of its requests and a
// cancel of the run: every request is resolved exactly once (one
// user_input_resolved each), and the batch either resolved both or
// neither.
func TestBatchRacesSingleAnswerAndCancel(t *testing.T) {
	t.Parallel()
	for name, newStore := range raceDrivers(t) {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			for round := 0; round < 8; round++ {
				ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
				raw := newStore(t)
				r := batchRunner(t, raw, scriptModel([]model.ToolCall{{Name: api.ToolAskUser, Arguments: raceAsk}, {Name: api.ToolAskUser, Arguments: batchAsk2}}))
				b := &raceBundle{ctx: ctx, st: &hookStore{Store: raw}, runner: r}
				res, its := b.pause(t)
				start := make(chan struct{})
				var wg sync.WaitGroup
				var batchErr, singleErr error
				var batchRes *agent.ContinueResult
				wg.Add(3)
				go func() {
					defer wg.Done()
					<-start
					batchRes, batchErr = r.ResolveBatch(ctx, agent.ResolveBatchParams{By: "alice", SessionID: res.SessionID, Surface: agent.SurfaceContinue,
						Entries: []agent.ResolveEntry{{RequestID: its[0].ID, Answer: api.ContinueRequest{Selections: []string{"a"}}},
							{RequestID: its[1].ID, Answer: api.ContinueRequest{Selections: []string{"x"}}}}})
				}()
				go func() {
					defer wg.Done()
					<-start
					_, singleErr = r.Resolve(ctx, agent.ResolveParams{Surface: agent.SurfaceContinue, By: "alice", SessionID: res.SessionID, RequestID: its[1].ID,
						Answer: api.ContinueRequest{Selections: []string{"y"}}})
				}()
				go func() {
					defer wg.Done()
					<-start
					if round%2 == 1 {
						_, _ = r.Cancel(ctx, agent.CancelParams{Owner: "alice", SessionID: res.SessionID})
					}
				}()
				close(start)
				wg.Wait()
				// The batch lost to the single answer: the first question
				// is still to be answered before the run can end.
				if cur, err := raw.InteractionGet(ctx, its[0].ID); err == nil && cur.Status == string(api.StatusPending) {
					_, err := r.Resolve(ctx, agent.ResolveParams{Surface: agent.SurfaceContinue, By: "alice", SessionID: res.SessionID, RequestID: its[0].ID,
						Answer: api.ContinueRequest{Selections: []string{"b"}}})
					require.NoError(t, err, "round %d", round)
				}
				require.NoError(t, waitFor(ctx, raw, res.SessionID, func() (bool, error) {
					run, err := raw.RunGet(ctx, res.RunID)
					return err == nil && run.Status.Terminal(), err
				}), "round %d: the run ends (completed or cancelled)", round)
				evs, err := raw.EventList(ctx, &store.EventListParams{SessionID: res.SessionID, Limit: 1000})
				require.NoError(t, err)
				resolved := map[string]int{}
				for _, ev := range evs {
					if ev.Name == api.EventUserInputResolved {
						var rc api.Receipt
						require.NoError(t, json.Unmarshal(ev.Data, &rc))
						resolved[rc.RequestID]++
					}
				}
				require.Equal(t, map[string]int{its[0].ID: 1, its[1].ID: 1}, resolved, "round %d", round)
				after, err := raw.InteractionList(ctx, res.SessionID)
				require.NoError(t, err)
				if batchErr == nil {
					require.Len(t, batchRes.Receipts, 2)
					require.Equal(t, string(api.StatusAnswered), after[0].Status)
					require.Error(t, singleErr, "round %d: the single answer lost to the batch", round)
					require.Equal(t, []string{"x"}, selectionsOf(t, after[1]), "round %d", round)
				} else if singleErr == nil {
					require.Equal(t, []string{"y"}, selectionsOf(t, after[1]), "round %d", round)
				}
				if batchErr != nil {
					require.False(t, errors.Is(batchErr, context.DeadlineExceeded), "round %d: %v", round, batchErr)
				}
				r.Shutdown()
				raw.Close()
				cancel()
			}
		})
	}
}

func selectionsOf(t *testing.T, it *store.Interaction) []string {
	t.Helper()
	var a api.Answer
	require.NoError(t, json.Unmarshal(it.Answer, &a))
	return a.Selections
}

// Runner.Run yields every user_input_required of a pause of several
// questions before it stops (docs/design.md §32).
func TestRunYieldsEveryQuestionOfAPause(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, ctx context.Context, raw store.Store) {
		r := batchRunner(t, raw, scriptModel([]model.ToolCall{{Name: api.ToolAskUser, Arguments: raceAsk}, {Name: api.ToolAskUser, Arguments: batchAsk2}}))
		defer r.Shutdown()
		var asked []string
		for ev, err := range r.Run(ctx, agent.StartParams{Owner: "alice", Message: "hi"}) {
			require.NoError(t, err)
			if req, ok := ev.Payload().(*api.InputRequest); ok {
				asked = append(asked, req.Title)
			}
		}
		require.Equal(t, []string{"pick", "pick again"}, asked)
	})
}

// A person's cancel of one question of a pause ends the run, and the run's
// end closes its other questions: their signed receipts name the person who
// cancelled ("the cancelling principal for a cancel", docs/design.md §17),
// not "system", whether the cancel came alone or in a batch.
func TestCancelOfOneQuestionNamesTheCancellerOnTheOthers(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, ctx context.Context, raw store.Store) {
		keys, err := signing.Generate()
		require.NoError(t, err)
		rec := &recordingModel{next: scriptModel([]model.ToolCall{{Name: api.ToolAskUser, Arguments: raceAsk}, {Name: api.ToolAskUser, Arguments: batchAsk2}, {Name: api.ToolAskUser, Arguments: raceAsk}})}
		r := batchRunner(t, raw, rec.provider(), func(o *agent.Options) { o.Signer = keys })
		defer r.Shutdown()
		b := &raceBundle{ctx: ctx, st: &hookStore{Store: raw}, runner: r}
		for _, batch := range []bool{false, true} {
			res, its := b.pause(t)
			require.Len(t, its, 3)
			if batch {
				_, err = r.ResolveBatch(ctx, agent.ResolveBatchParams{By: "alice", SessionID: res.SessionID, Surface: agent.SurfaceContinue,
					Entries: []agent.ResolveEntry{{RequestID: its[0].ID, Answer: api.ContinueRequest{Selections: []string{"a"}}},
						{RequestID: its[1].ID, Answer: api.ContinueRequest{Cancelled: true}}}})
			} else {
				_, err = r.Resolve(ctx, agent.ResolveParams{Surface: agent.SurfaceContinue, By: "alice", SessionID: res.SessionID, RequestID: its[1].ID,
					Answer: api.ContinueRequest{Cancelled: true}})
			}
			require.NoError(t, err)
			b.waitRun(t, res.SessionID, res.RunID, store.RunCancelled)
			after, err := raw.InteractionList(ctx, res.SessionID)
			require.NoError(t, err)
			for i, it := range after {
				want := api.StatusCancelled
				if batch && i == 0 {
					want = api.StatusAnswered
				}
				require.Equal(t, string(want), it.Status, "question %d", i)
				c, err := signing.VerifyReceipt(it.ReceiptJWS, keys.PublicJWKS())
				require.NoError(t, err, "question %d", i)
				require.Equal(t, "alice", c.By, "question %d (batch %v)", i, batch)
			}
		}
	})
}
