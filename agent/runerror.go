package agent

import (
	"context"
	"encoding/json"

	"github.com/lubanhq/luban/api"
	"github.com/lubanhq/luban/store"
)

// runErrorCodeFailed is the code of a failed run whose stored error has no
// code (a row written before codes were kept).
const runErrorCodeFailed = "run_failed"

// encodeRunError is the run row's error column for ev: the JSON object
// {"code", "message"}, so the transcript can give the code back after a
// restart (runErrorOf).
func encodeRunError(ev *api.ErrorEvent) string {
	b, err := json.Marshal(struct {
		Code    string `json:"code"`
		Message string `json:"message"`
	}{ev.Code, ev.Message})
	if err != nil {
		return ev.Message
	}
	return string(b)
}

// runErrorOf decodes a failed run's error column: the object encodeRunError
// wrote, or plain text (code run_failed).
func runErrorOf(run *store.Run) api.RunErrorView {
	v := api.RunErrorView{RunID: run.ID, At: run.UpdatedAt}
	var e struct {
		Code    string `json:"code"`
		Message string `json:"message"`
	}
	if json.Unmarshal([]byte(run.Error), &e) == nil && e.Code != "" {
		v.Code, v.Message = e.Code, e.Message
	} else {
		v.Code, v.Message = runErrorCodeFailed, run.Error
	}
	return v
}

// runErrors returns the failed runs among the runs that wrote msgs, in the
// order of their first message.
func (r *Runner) runErrors(ctx context.Context, msgs []*store.Message) ([]api.RunErrorView, error) {
	out := []api.RunErrorView{}
	seen := map[string]bool{}
	for _, m := range msgs {
		if m.RunID == "" || seen[m.RunID] {
			continue
		}
		seen[m.RunID] = true
		run, err := r.st.RunGet(ctx, m.RunID)
		if err != nil {
			return nil, err
		}
		if run.Status == store.RunFailed {
			out = append(out, runErrorOf(run))
		}
	}
	return out, nil
}
