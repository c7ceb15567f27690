package people_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/lubanhq/luban/api"
	"github.com/lubanhq/luban/internal/testkit/lubantest"
	"github.com/lubanhq/luban/store/postgres"
	"github.com/lubanhq/luban/store/postgres/pgtest"
)

// TestAskToPrincipalStreamLatency measures how long a question takes from
// being asked to reaching its person's GET /api/events (the inbox's live
// feed, docs/design.md §12 "within a second"): for each of several questions, from
// the request's createdAt (stamped by the server when the run asks) to the
// moment the client read the frame. It is a logged measurement (go test -v
// prints p50/p95/max), not a timed assertion; it asserts that every
// question arrives, in order, with its session and owner right. On SQLite
// the stream and the run share one process; on PostgreSQL
// (LUBAN_TEST_POSTGRES) the question is asked on one replica and read from
// the other, through LISTEN/NOTIFY.
func TestAskToPrincipalStreamLatency(t *testing.T) {
	t.Parallel()
	t.Run("sqlite", func(t *testing.T) {
		t.Parallel()
		s := start(t)
		measureAskToStream(t, s, s)
	})
	t.Run("postgres two replicas", func(t *testing.T) {
		t.Parallel()
		pgtest.Skip(t)
		url := pgtest.Schema(t)
		open := func() *lubantest.Server {
			st, err := postgres.Open(context.Background(), url, nil)
			require.NoError(t, err)
			return start(t, func(o *lubantest.Options) { o.Store = st })
		}
		asker, reader := open(), open()
		measureAskToStream(t, asker, reader)
	})
}

func measureAskToStream(t *testing.T, asker, reader *lubantest.Server) {
	const n = 20
	const token = "test-token"
	resp := reader.Request("GET", "/api/events", nil, token, "Accept", "text/event-stream")
	require.Equal(t, 200, resp.StatusCode)
	feed := reader.Open(resp, "events")
	defer feed.Close()

	var lat []time.Duration
	for i := range n {
		sess, req := chatAs(t, asker, token, "question "+string(rune('a'+i)))
		evs, err := feed.Until(api.EventUserInputRequired, waitFor)
		got := time.Now()
		require.NoError(t, err)
		var ev api.InputRequest
		require.NoError(t, evs[len(evs)-1].Decode(&ev))
		require.Equal(t, req.ID, ev.ID, "the question just asked, in order")
		require.Equal(t, sess, ev.SessionID)
		lat = append(lat, got.Sub(req.CreatedAt))
	}
	slices.Sort(lat)
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
	t.Logf("%s: ask → GET /api/events over %d questions: p50 %.1f ms, p95 %.1f ms, max %.1f ms", t.Name(), n, ms(lat[n/2]), ms(lat[n*95/100]), ms(lat[n-1]))
}
