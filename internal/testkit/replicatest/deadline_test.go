package replicatest

import (
	"io"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/lubanhq/luban/internal/testkit/fakeopenai"
)

// docs/design.md §16 "Deadlines": a question's timeout comes due on two
// replicas (both run the deadline scheduler) while answers arrive on both
// right at its expiresAt. Whoever wins, the question is resolved exactly
// once: one receipt, one ToolResult, one audit resolution, one done whose
// status agrees with the winner (completed after an answer, expired after
// the timeout), and every losing answer is told which.
func TestDeadlineRacesAnswerAcrossReplicas(t *testing.T) {
	t.Parallel()
	b := setup(t, setupOptions{TTL: "3s"})
	const sessions = 3
	type q struct{ sessionID, requestID string }
	var qs []q
	var due time.Time
	for i := 0; i < sessions; i++ {
		b.fake.Push(askTurn())
	}
	for i := 0; i < sessions; i++ {
		// The model's turn after an answer that wins.
		b.fake.Push(fakeopenai.Turn{Text: "好的。"})
	}
	for i := 0; i < sessions; i++ {
		evs, sessionID, requestID := asked(t, b.a)
		var ir struct{ ExpiresAt time.Time }
		require.NoError(t, evs[len(evs)-1].Decode(&ir))
		qs = append(qs, q{sessionID, requestID})
		if i == 0 {
			due = ir.ExpiresAt
		}
	}
	// Every answer goes out at the first question's expiresAt (each
	// question's is within a second of it, truncated to the second): the
	// deadline and the answers race on both replicas.
	<-time.After(time.Until(due))

	type result struct{ status int }
	results := make([][]result, sessions)
	var wg sync.WaitGroup
	var mu sync.Mutex
	for i, x := range qs {
		for _, target := range []*replica{b.a, b.b} {
			wg.Add(1)
			go func() {
				defer wg.Done()
				resp := target.API.Request(http.MethodPost, "/api/chat/continue", answer(x.sessionID, x.requestID), "", "Accept", "application/json")
				_, _ = io.ReadAll(resp.Body)
				resp.Body.Close()
				mu.Lock()
				results[i] = append(results[i], result{resp.StatusCode})
				mu.Unlock()
			}()
		}
	}
	wg.Wait()

	for i, x := range qs {
		all := b.b.API.EventsUntil(x.sessionID, 0, "done", waitEvents)
		answered := 0
		for _, r := range results[i] {
			switch r.status {
			case http.StatusAccepted:
				answered++
			case http.StatusConflict, http.StatusGone:
			default:
				t.Fatalf("session %d: an answer got %d", i, r.status)
			}
		}
		require.LessOrEqual(t, answered, 1, "session %d: one answer at most wins", i)
		status := "expired"
		if answered == 1 {
			status = "completed"
		}
		requireDone(t, all, status)
		t.Logf("session %d: %s (answers: %v)", i, status, results[i])
		require.Equal(t, 1, b.count(t, `SELECT count(*) FROM events WHERE session_id = $1 AND name = 'user_input_resolved'`, x.sessionID))
		require.Equal(t, 1, b.count(t, `SELECT count(*) FROM messages WHERE session_id = $1 AND role = 'tool' AND tool_call_id = 'call_1'`, x.sessionID))
		require.Equal(t, 1, b.count(t, `SELECT count(*) FROM audit WHERE session_id = $1 AND action IN ('answered', 'expired')`, x.sessionID))
		require.Equal(t, 1, b.count(t, `SELECT count(*) FROM events WHERE session_id = $1 AND name = 'done'`, x.sessionID))
		// The question's timeout, kept in its row, fired or closed by the answer.
		require.Equal(t, 1, b.count(t, `SELECT count(*) FROM interactions WHERE id = $1 AND timeout IS NOT NULL AND timeout_fired IS NOT NULL`, x.requestID))
	}
}
