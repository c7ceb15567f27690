package sqlite_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/lubanhq/luban/store"
	"github.com/lubanhq/luban/store/sqlite"
	"github.com/lubanhq/luban/store/storetest"
)

func TestMaintainerConformance(t *testing.T) {
	t.Parallel()
	storetest.ExerciseMaintainer(t, openFile)
}

// A backup taken while a writer commits holds every transaction committed
// before it began, and only whole transactions.
func TestBackupDuringLoadIsConsistent(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := sqlite.MigratedPath(t)
	dir := filepath.Dir(db)
	st, err := sqlite.Open(ctx, db, nil)
	require.NoError(t, err)
	t.Cleanup(func() { st.Close() })

	var committed atomic.Int64
	warm := make(chan struct{})
	stop := make(chan struct{})
	done := make(chan error, 1)
	go func() {
		for i := 0; i < 100000; i++ {
			select {
			case <-stop:
				done <- nil
				return
			default:
			}
			id := fmt.Sprintf("sess_%06d", i)
			err := st.InTx(ctx, func(tx store.Tx) error {
				now := time.Now()
				if _, err := tx.SessionCreate(ctx, &store.SessionCreateParams{ID: id, Owner: "o", Now: now}); err != nil {
					return err
				}
				for range 3 {
					if _, err := tx.EventAppend(ctx, &store.EventAppendParams{SessionID: id, Name: "message", Data: json.RawMessage(`{"x":1}`), Now: now}); err != nil {
						return err
					}
				}
				return nil
			})
			if err != nil {
				done <- err
				return
			}
			if committed.Add(1) == 200 {
				close(warm)
			}
		}
		done <- nil
	}()
	<-warm
	before := committed.Load()
	out := filepath.Join(dir, "backup.db")
	require.NoError(t, sqlite.Backup(ctx, db, out))
	close(stop)
	require.NoError(t, <-done)
	require.Greater(t, committed.Load(), before, "the writer went on during the backup")

	raw, err := sql.Open(sqlite.DriverName, "file:"+out)
	require.NoError(t, err)
	defer raw.Close()
	var sessions, mismatched int64
	require.NoError(t, raw.QueryRow(`SELECT COUNT(*) FROM sessions`).Scan(&sessions))
	require.GreaterOrEqual(t, sessions, before, "every transaction committed before the backup is in it")
	require.NoError(t, raw.QueryRow(`SELECT COUNT(*) FROM sessions s WHERE (SELECT COUNT(*) FROM events e WHERE e.k >> 32 = s.k) != 3`).Scan(&mismatched))
	require.Zero(t, mismatched, "no half transaction")
	for i := int64(0); i < before; i++ {
		var n int
		require.NoError(t, raw.QueryRow(`SELECT COUNT(*) FROM sessions WHERE id = ?`, fmt.Sprintf("sess_%06d", i)).Scan(&n))
		require.Equal(t, 1, n, "sess_%06d", i)
	}
}
