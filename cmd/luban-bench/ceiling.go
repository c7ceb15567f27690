package main

import (
	"context"
	"database/sql"
	"fmt"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/lubanhq/luban/store/sqlite"
)

type ceilingResult struct {
	commitsPerSec, cyclesPerSec float64
	cpuPerCommit                time.Duration
}

// ceiling is the floor the hardware allows: plain Go on the settings
// store/sqlite opens with (its driver, sqlite.DriverName; WAL, synchronous NORMAL,
// busy_timeout 5000, BEGIN IMMEDIATE, one writer connection), committing
// small transactions (one ~200-byte row into an indexed table each) from
// `sessions` goroutines for d. A ceiling cycle is commitsPerCycle commits.
func ceiling(ctx context.Context, path string, sessions int, d time.Duration, commitsPerCycle float64) (*ceilingResult, error) {
	q := url.Values{}
	q.Add("_pragma", "busy_timeout(5000)")
	q.Add("_pragma", "journal_mode(WAL)")
	q.Add("_pragma", "synchronous(NORMAL)")
	q.Add("_pragma", "foreign_keys(1)")
	q.Add("_txlock", "immediate")
	db, err := sql.Open(sqlite.DriverName, "file:"+path+"?"+q.Encode())
	if err != nil {
		return nil, err
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	if _, err := db.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS t (id INTEGER PRIMARY KEY, session TEXT NOT NULL, data TEXT NOT NULL, at INTEGER NOT NULL);
		CREATE INDEX IF NOT EXISTS t_session ON t (session, id)`); err != nil {
		return nil, err
	}
	data := strings.Repeat("x", 200)
	var n atomic.Int64
	var wg sync.WaitGroup
	errc := make(chan error, sessions)
	cpu0 := cpuTime()
	start := time.Now()
	deadline := start.Add(d)
	for i := range sessions {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sess := fmt.Sprintf("sess_%d", i)
			for time.Now().Before(deadline) && ctx.Err() == nil {
				tx, err := db.BeginTx(ctx, nil)
				if err == nil {
					_, err = tx.ExecContext(ctx, `INSERT INTO t (session, data, at) VALUES (?, ?, ?)`, sess, data, time.Now().UnixMicro())
					if err == nil {
						err = tx.Commit()
					} else {
						_ = tx.Rollback()
					}
				}
				if err != nil {
					errc <- err
					return
				}
				n.Add(1)
			}
		}()
	}
	wg.Wait()
	close(errc)
	if err := <-errc; err != nil {
		return nil, fmt.Errorf("ceiling: %w", err)
	}
	cps := float64(n.Load()) / time.Since(start).Seconds()
	return &ceilingResult{commitsPerSec: cps, cyclesPerSec: cps / commitsPerCycle, cpuPerCommit: (cpuTime() - cpu0) / time.Duration(max(n.Load(), 1))}, nil
}
