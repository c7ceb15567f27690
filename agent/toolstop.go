package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"time"

	"github.com/lubanhq/luban/api"
	"github.com/lubanhq/luban/store"
)

// DefaultToolStopWait is Options.ToolStopWait's default.
const DefaultToolStopWait = 5 * time.Second

// toolRun is a tool call a run driven here is making (docs/design.md §18,
// "a tool that started is never 'not run'"): Cancel asks it to stop at the
// end of its step and waits, within Options.ToolStopWait, for its result.
type toolRun struct {
	done chan struct{} // closed once the call's result is recorded (or lost)
	mu   sync.Mutex    // inside Runner.mu when both are held
	stop bool          // a cancel waits: the driver stops after recording the result
	// eliciting counts the in-session questions the call's server is
	// waiting on: a cancel does not wait for a call that waits for a person.
	eliciting int
}

// startToolRun records that run id is about to run a tool in this process.
func (r *Runner) startToolRun(id string) *toolRun {
	t := &toolRun{done: make(chan struct{})}
	r.mu.Lock()
	r.toolRuns[id] = t
	r.mu.Unlock()
	return t
}

// endToolRun records that t's result was recorded (or lost). It reports
// whether a cancel is waiting: the driver then stops instead of making the
// run's next step.
func (r *Runner) endToolRun(id string, t *toolRun) bool {
	r.mu.Lock()
	if r.toolRuns[id] == t {
		delete(r.toolRuns, id)
	}
	t.mu.Lock()
	stop := t.stop
	t.mu.Unlock()
	r.mu.Unlock()
	close(t.done)
	return stop
}

// elicitingTool marks the tool call run id makes here as waiting for (d=1)
// or no longer waiting for (d=-1) an in-session question.
func (r *Runner) elicitingTool(id string, d int) {
	r.mu.Lock()
	t := r.toolRuns[id]
	r.mu.Unlock()
	if t != nil {
		t.mu.Lock()
		t.eliciting += d
		t.mu.Unlock()
	}
}

// awaitTool is Cancel's wait for a tool call run id is making in this
// process: the driver is asked to stop once the call's result is recorded,
// and awaitTool returns when it is, or after Options.ToolStopWait (or ctx's
// end). A call waiting for an in-session question is not waited for: the
// cancel closes the question and the call gets the "interrupted" result.
func (r *Runner) awaitTool(ctx context.Context, id string) {
	r.mu.Lock()
	t := r.toolRuns[id]
	eliciting := false
	if t != nil {
		t.mu.Lock()
		t.stop = true
		eliciting = t.eliciting > 0
		t.mu.Unlock()
	}
	r.mu.Unlock()
	if t == nil || eliciting {
		return
	}
	timer := time.NewTimer(r.opts.ToolStopWait)
	defer timer.Stop()
	select {
	case <-t.done:
	case <-timer.C:
		r.log.Warn("cancel: the running tool did not return in time; its call is recorded as interrupted", "runId", id, "waited", r.opts.ToolStopWait)
	case <-ctx.Done():
	}
}

// startedCalls returns the ids of the run's tool calls whose tool_started
// marker is stored, read from ex (the store, or the transaction that ends
// the run).
func startedCalls(ctx context.Context, ex store.Executor, run *store.Run) (map[string]bool, error) {
	entries, err := ex.TraceList(ctx, run.SessionID)
	if err != nil {
		return nil, err
	}
	out := map[string]bool{}
	for _, e := range entries {
		if e.Kind != "tool_started" || e.RunID != run.ID {
			continue
		}
		var d struct {
			ToolCallID string `json:"toolCallId"`
		}
		if json.Unmarshal(e.Data, &d) == nil && d.ToolCallID != "" {
			out[d.ToolCallID] = true
		}
	}
	return out, nil
}

// endedResult is the ToolResult finish gives a call of a run that ended
// (to) without the call's result: "not run" only when the tool never
// started; a tool that started may have taken effect, and says so.
func endedResult(name string, to store.RunStatus, started bool) api.ToolResult {
	if started {
		return api.ToolResult{Content: fmt.Sprintf("interrupted: the run ended (%s) while %s was running; it may have taken effect", to, name), IsError: true}
	}
	return api.ToolResult{Content: fmt.Sprintf("not run: the run ended (%s) before this tool call was handled", to), IsError: true}
}
