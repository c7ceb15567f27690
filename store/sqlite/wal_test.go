package sqlite_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/lubanhq/luban/store"
	"github.com/lubanhq/luban/store/sqlite"
)

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
	path := filepath.Join(t.TempDir(), "luban.db")
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

	var maxWAL atomic.Int64
	sample := func() {
		if fi, err := os.Stat(path + "-wal"); err == nil {
			for {
				m := maxWAL.Load()
				if fi.Size() <= m || maxWAL.CompareAndSwap(m, fi.Size()) {
					break
				}
			}
		}
	}
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
				sample()
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
				sample()
			}
		}()
	}
	wwg.Wait()
	close(stop)
	rwg.Wait()

	written := int64(writers * txs * 2 * len(big))
	t.Logf("wrote %d MB of rows with %d reads alongside; largest -wal file %d KB (limit %d KB)", written>>20, reads.Load(), maxWAL.Load()>>10, limit>>10)
	require.Greater(t, written, int64(8*limit), "the load writes many times the limit")
	require.LessOrEqual(t, maxWAL.Load(), int64(2*limit), "the -wal file stays near WALLimit")
}
