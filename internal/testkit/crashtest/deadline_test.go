package crashtest

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/lubanhq/luban/internal/testkit/lubantest"
)

// deadlineConfig routes every question to its owner (the test token's
// person) with a reminder after 2s and a timeout after 5s that answers
// with the question's recommended option (docs/design.md §16).
func deadlineConfig(t *testing.T) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "luban.yaml")
	require.NoError(t, os.WriteFile(p, []byte(`people:
  - id: alice
    tokens: [test-token]
agents:
  - name: default
    tools: [current_time]
    routes:
      - match: {kind: ask}
        assignees: [owner]
        remind: [2s]
        timeout: 5s
        onTimeout: default
`), 0o600))
	return p
}

// docs/design.md §16 "Deadlines" with a real kill -9: a question's
// deadlines are stored with it, so the next process fires what the dead
// one had not (killed while the reminder was pending), and does not fire
// again what it had (killed right after the reminder committed). Either
// way the session holds one reminder, one resolution by the timeout
// (status expired, decision default, the recommended option) and a run
// that went on with that answer.
func TestCrashDeadline(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ name, fault string }{
		{"killed_while_reminder_pending", ""},
		{"killed_after_reminder_committed", "deadline_committed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			b := setup(t)
			cfg := deadlineConfig(t)
			b.fake.Push(askTurn("call_d"), endTurn())
			p1 := startProc(t, procOptions{Name: "p1", DB: b.db, Fake: b.fake, Config: cfg, Fault: tc.fault})
			var seen []lubantest.Event
			if tc.fault == "" {
				_, seen = chatUntilAsk(t, p1)
				p1.Kill9()
			} else {
				// p1 kills itself once the reminder committed, 2s after
				// the question: a client a loaded machine held back that
				// long may have read little of the stream, or none of it.
				seen, _ = chatMayDie(p1)
				p1.WaitFault()
			}

			p2 := startProc(t, procOptions{Name: "p2", DB: b.db, Fake: b.fake, Config: cfg})
			sessionID := sessionAfterCrash(t, seen, p2)
			evs := p2.API.EventsUntil(sessionID, 0, "done", waitEvents)
			require.Equal(t, 1, count(evs, "user_input_reminder"), "one reminder: %v", lubantest.Names(evs))
			require.Equal(t, 1, count(evs, "user_input_resolved"), "%v", lubantest.Names(evs))
			var rc struct {
				Status, Decision string
				Selections       []string
			}
			ev, _ := lubantest.Find(evs, "user_input_resolved")
			require.NoError(t, ev.Decode(&rc))
			require.Equal(t, "expired", rc.Status)
			require.Equal(t, "default", rc.Decision)
			require.Equal(t, []string{"safe"}, rc.Selections)
			var done struct{ Status string }
			require.NoError(t, evs[len(evs)-1].Decode(&done))
			require.Equal(t, "completed", done.Status, "the run went on with the recommended answer")
			require.Len(t, b.fake.Requests(), 2, "one model call after the timeout's answer")
		})
	}
}

func count(evs []lubantest.Event, name string) int {
	n := 0
	for _, ev := range evs {
		if ev.Name == name {
			n++
		}
	}
	return n
}
