package sqlite_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/lubanhq/luban/store"
	"github.com/lubanhq/luban/store/sqlite"
)

// walPeak is the largest size of a -wal file seen by sample, which may be
// called from many goroutines.
type walPeak struct{ atomic.Int64 }

func (w *walPeak) sample(db string) {
	fi, err := os.Stat(db + "-wal")
	if err != nil {
		return
	}
	for {
		m := w.Load()
		if fi.Size() <= m || w.CompareAndSwap(m, fi.Size()) {
			return
		}
	}
}

// The -wal file stays bounded under steady load with readers that always
// hold a snapshot: many writers commit far more than the bound while readers
// keep reading, and the file never grows past WALLimit plus a margin of a few
// transactions.
func TestWALStaysBounded(t *testing.T) {
	t.Parallel()
	const (
		limit   = 512 << 10 // WALLimit of this test
		writers = 4
		txs     = 60 // per writer
		readers = 4
	)
	path := sqlite.MigratedPath(t)
	ctx := context.Background()
	st, err := sqlite.Open(ctx, path, &sqlite.Options{WALLimit: limit})
	require.NoError(t, err)
	defer st.Close()
	now := time.Date(2026, 3, 14, 15, 9, 26, 0, time.UTC)
	_, err = st.SessionCreate(ctx, &store.SessionCreateParams{ID: "sess_r", Owner: "o", Title: "t", Now: now})
	require.NoError(t, err)

	big := strings.Repeat("字", 5000) // 15 KB of text per message and per event
	data, err := json.Marshal(map[string]string{"content": big})
	require.NoError(t, err)

	var maxWAL walPeak
	stop := make(chan struct{})
	var rwg sync.WaitGroup
	var reads atomic.Int64
	for i := range readers {
		rwg.Add(1)
		go func() {
			defer rwg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				var err error
				if i%2 == 0 {
					_, err = st.EventList(ctx, &store.EventListParams{SessionID: "sess_r", Limit: 10})
				} else {
					_, err = st.SessionList(ctx, &store.SessionListParams{Owner: "o"})
				}
				if err != nil {
					t.Error(err)
					return
				}
				reads.Add(1)
				maxWAL.sample(path)
			}
		}()
	}
	var wwg sync.WaitGroup
	for w := range writers {
		wwg.Add(1)
		go func() {
			defer wwg.Done()
			for i := range txs {
				sess := fmt.Sprintf("sess_%d_%d", w, i)
				err := st.InTx(ctx, func(tx store.Tx) error {
					if _, err := tx.SessionCreate(ctx, &store.SessionCreateParams{ID: sess, Owner: "o", Title: "t", Now: now}); err != nil {
						return err
					}
					if _, err := tx.MessageInsert(ctx, &store.MessageInsertParams{ID: "msg_" + sess, SessionID: sess, Role: "user", Content: big, Now: now}); err != nil {
						return err
					}
					_, err := tx.EventAppend(ctx, &store.EventAppendParams{SessionID: "sess_r", Name: "message", Data: data, Now: now})
					return err
				})
				if err != nil {
					t.Error(err)
					return
				}
				maxWAL.sample(path)
			}
		}()
	}
	wwg.Wait()
	close(stop)
	rwg.Wait()

	written := int64(writers * txs * 2 * len(big))
	t.Logf("wrote %d MB of rows with %d reads alongside; largest -wal file %d KB (limit %d KB)", written>>20, reads.Load(), maxWAL.Load()>>10, limit>>10)
	require.Greater(t, written, int64(8*limit), "the load writes many times the limit")
	// The writer checks the bound between batches, so the file can pass
	// WALLimit by what the batches committed while the checkpointer's round
	// runs write: here a batch is up to four 30 KB transactions, each with
	// its overflow pages and the leaves of every table and index it
	// touches (≈ 45 frames, 180 KB), and a loaded machine lets a few through.
	require.LessOrEqual(t, maxWAL.Load(), int64(limit+768<<10), "the -wal file stays near WALLimit")
}

// Under a steady load (one writer committing back to back, a reader reading
// alongside) the checkpointer keeps the log small by copying it back every
// ckFrames frames (254 at this WALLimit) and letting SQLite rewind it: the
// log is rewound at least once every 8 rounds' worth of frames, and at
// most one round in four of those has to truncate it instead (a truncating
// checkpoint holds the store back; on a quiet machine none does, on a
// loaded one a slow round can let the log pass half of WALLimit).
// The largest -wal file is logged, not asserted: it is what piles up while
// a round runs, which the machine's load decides.
func TestCheckpointsKeepTheLogSmall(t *testing.T) {
	t.Parallel()
	const limit = 4 << 20 // WALLimit of this test: rounds every 254 frames
	path := sqlite.MigratedPath(t)
	ctx := context.Background()
	st, err := sqlite.Open(ctx, path, &sqlite.Options{WALLimit: limit})
	require.NoError(t, err)
	defer st.Close()
	now := time.Date(2026, 3, 14, 15, 9, 26, 0, time.UTC)
	_, err = st.SessionCreate(ctx, &store.SessionCreateParams{ID: "sess_r", Owner: "o", Title: "t", Now: now})
	require.NoError(t, err)
	big := strings.Repeat("字", 2000) // 6 KB per message
	var maxWAL walPeak
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			select {
			case <-stop:
				return
			default:
			}
			if _, err := st.EventList(ctx, &store.EventListParams{SessionID: "sess_r", Limit: 10}); err != nil {
				t.Error(err)
				return
			}
			maxWAL.sample(path)
		}
	}()
	before := st.Counts()
	for i := range 1500 {
		err := st.InTx(ctx, func(tx store.Tx) error {
			_, err := tx.MessageInsert(ctx, &store.MessageInsertParams{ID: fmt.Sprintf("msg_%d", i), SessionID: "sess_r", Role: "user", Content: big, Now: now})
			return err
		})
		require.NoError(t, err)
		maxWAL.sample(path)
	}
	close(stop)
	wg.Wait()
	c := st.Counts()
	frames := c.WALFrames - before.WALFrames
	t.Logf("%d frames (%d MB) appended; largest -wal file %d KB; %d checkpoints, %d rewinds, %d truncations",
		frames, frames*4120>>20, maxWAL.Load()>>10, c.Checkpoints-before.Checkpoints, c.Rewinds-before.Rewinds, c.Truncations-before.Truncations)
	require.Greater(t, frames*4120, int64(limit), "the load writes more than the limit")
	require.GreaterOrEqual(t, c.Rewinds-before.Rewinds, frames/(8*254), "SQLite rewinds the log")
	require.LessOrEqual(t, 4*(c.Truncations-before.Truncations), c.Rewinds-before.Rewinds, "rounds rewind the log rather than truncate it")
}
