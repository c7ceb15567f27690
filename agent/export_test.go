package agent

import "context"

// StopRequested reports whether a cancel is waiting for the tool call that
// run id is making in this process (awaitTool has asked it to stop), so a
// test can let the tool return during that wait rather than after a sleep.
func (r *Runner) StopRequested(id string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	t := r.toolRuns[id]
	if t == nil {
		return false
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.stop
}

// Driving reports whether a driver of run id is active in this process.
func (r *Runner) Driving(id string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	_, ok := r.active[id]
	return ok
}

// Sweep runs one pass of the sweeper (Runner.Serve's): expire what passed
// its expiresAt, drive what lost its driver.
func (r *Runner) Sweep(ctx context.Context) { r.sweep(ctx) }
