package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"

	"github.com/pressly/goose/v3"

	"github.com/lubanhq/luban/store"
)

var _ store.Maintainer = (*Store)(nil)

// keepFeedSeq … keepFeedSeqEnd, around a WHERE clause on feed, keeps in
// principals.last_seq the largest number of the feed entries it selects,
// before they are deleted: the feed's next number is one past the larger of
// the owner's last entry and last_seq (appendFeed), so a number a client
// saw is never given again.
const (
	keepFeedSeq    = `INSERT INTO principals (owner, last_seq) SELECT p.owner, MAX(f.k & 4294967295) FROM feed f JOIN principals p ON p.k = f.k >> 32 `
	keepFeedSeqEnd = ` GROUP BY p.owner ON CONFLICT (owner) DO UPDATE SET last_seq = MAX(last_seq, excluded.last_seq)`
)

// pruneFeed deletes at most limit feed entries fanned out and created
// before before, owner by owner on the primary key: an owner's entries are
// numbered in the order they are committed, so its old ones are the first
// of its numbers, up to its first entry created at or after before (one
// created earlier past that waits for a later prune). No index of the
// feed is read or written.
func pruneFeed(ctx context.Context, tx cachedTx, before int64, limit int) (int64, error) {
	var total int64
	owner := ""
	for total < int64(limit) {
		var next sql.NullString
		if err := tx.QueryRowContext(ctx, `SELECT MIN(owner) FROM principals WHERE owner > ?`, owner).Scan(&next); err != nil {
			return total, err
		}
		if !next.Valid {
			break
		}
		owner = next.String
		// The owner's old entries: its numbers below its first recent one,
		// in its range of keys (rowbuf.go, feedKey).
		in := feedOf(`(SELECT k FROM principals WHERE owner = ?1)`)
		old := `(SELECT k FROM feed WHERE ` + in + ` AND fanned = 1 AND k < COALESCE((SELECT k FROM feed WHERE ` + in + ` AND created_at >= ?2 ORDER BY k LIMIT 1), 9223372036854775807) ORDER BY k LIMIT ?3)`
		if _, err := tx.ExecContext(ctx, keepFeedSeq+`WHERE f.k IN `+old+keepFeedSeqEnd, owner, before, int64(limit)-total); err != nil {
			return total, err
		}
		r, err := tx.ExecContext(ctx, `DELETE FROM feed WHERE k IN `+old, owner, before, int64(limit)-total)
		if err != nil {
			return total, err
		}
		n, _ := r.RowsAffected()
		total += n
	}
	return total, nil
}

// SessionDelete implements store.Maintainer in one write transaction.
func (s *Store) SessionDelete(ctx context.Context, id string) error {
	tx, warm, err := s.beginCached(ctx)
	if err != nil {
		return fmt.Errorf("sqlite: begin: %w", err)
	}
	defer warm()
	defer tx.Rollback()
	var n int
	if err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM sessions WHERE id = ?`, id).Scan(&n); err != nil {
		return fmt.Errorf("sqlite: session delete: %w", err)
	}
	if n == 0 {
		return fmt.Errorf("sqlite: session %s: %w", id, store.ErrNotFound)
	}
	if err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM sessions s JOIN runs r ON r.id = s.active_run WHERE s.id = ? AND r.open = 1`, id).Scan(&n); err != nil {
		return fmt.Errorf("sqlite: session delete: %w", err)
	}
	if n > 0 {
		return fmt.Errorf("sqlite: session %s: %w", id, store.ErrRunActive)
	}
	// The feed has no index by session: its entries are found in one
	// pass, deleted, and the largest number of each owner's is kept in
	// principals.last_seq (as keepFeedSeq does), so that no number a
	// client saw is given again.
	rows, err := tx.QueryContext(ctx, `DELETE FROM feed WHERE sk = `+sessionKey+` RETURNING k`, id)
	if err != nil {
		return fmt.Errorf("sqlite: session delete: %w", err)
	}
	last := map[int64]int64{} // an owner's key (principals.k) → its largest number deleted
	for rows.Next() {
		var k int64
		if err := rows.Scan(&k); err != nil {
			rows.Close()
			return fmt.Errorf("sqlite: session delete: %w", err)
		}
		last[k>>32] = max(last[k>>32], k&feedMax)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return fmt.Errorf("sqlite: session delete: %w", err)
	}
	for pk, seq := range last {
		if _, err := tx.ExecContext(ctx, `UPDATE principals SET last_seq = MAX(last_seq, ?) WHERE k = ?`, seq, pk); err != nil {
			return fmt.Errorf("sqlite: session delete: %w", err)
		}
	}
	// The audit entries are kept: those of the session's range, in audit
	// and in trace (rowbuf.go, auditOf), become rows of audit of no
	// session, numbered on in their order, so AuditList still finds them
	// (audit_session), and the range starts empty, without its mark, for
	// a session that takes the key later (the writer numbers a session it
	// creates from 1). A number of the range is given once, to a trace or
	// an audit entry, so the renumbered ids are distinct.
	var base int64
	if err := tx.QueryRowContext(ctx, `SELECT `+nextAuditID+` - 1`).Scan(&base); err != nil {
		return fmt.Errorf("sqlite: session delete: %w", err)
	}
	if _, err := tx.ExecContext(ctx, `DELETE FROM log_seqs WHERE name = 'audit:' || (SELECT k FROM sessions WHERE id = ?)`, id); err != nil {
		return fmt.Errorf("sqlite: session delete: %w", err)
	}
	if _, err := tx.ExecContext(ctx, `UPDATE audit SET id = ?1 + (id & 4294967295) WHERE `+auditOf(`(SELECT k FROM sessions WHERE id = ?2)`)+` AND session_id = ?3`,
		base, id, idSession.enc(id)); err != nil {
		return fmt.Errorf("sqlite: session delete: %w", err)
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO audit (id, session_id, request_id, tool_call_id, run_id, action, reason, summary, at)
		SELECT ?1 + (id & 4294967295), ?3, request_id, tool_call_id, run_id, action, reason, NULLIF(data, ''), at FROM trace
		WHERE `+traceOf(`(SELECT k FROM sessions WHERE id = ?2)`)+` AND kind = `+auditKind+` ORDER BY id`,
		base, id, idSession.enc(id)); err != nil {
		return fmt.Errorf("sqlite: session delete: %w", err)
	}
	for _, q := range []string{
		`DELETE FROM events AS e WHERE ` + eventsOf(`SELECT k FROM sessions WHERE id = ?1`),
		`DELETE FROM webhook_deliveries WHERE session_id = ?`,
		`DELETE FROM notify_messages WHERE session_id = ?`,
		`DELETE FROM trace WHERE ` + traceOf(`(SELECT k FROM sessions WHERE id = ?1)`),
		`DELETE FROM interaction_deadlines WHERE request_id IN (SELECT id FROM interactions WHERE session_id = ?)`,
		`DELETE FROM mcp_tasks WHERE session_id = ?`,
		`DELETE FROM interactions WHERE session_id = ?`,
		`DELETE FROM messages WHERE ` + messagesOf("?1"),
		`DELETE FROM runs WHERE session_id = ?`,
		`DELETE FROM sessions WHERE id = ?`,
	} {
		if _, err := tx.ExecContext(ctx, q, id); err != nil {
			return fmt.Errorf("sqlite: session delete: %w", err)
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("sqlite: commit: %w", err)
	}
	s.hub.Notify(id) // an open stream of the session learns that it is gone
	return nil
}

// SessionSetTitle implements store.Maintainer in one statement.
func (s *Store) SessionSetTitle(ctx context.Context, id, title string) error {
	res, err := s.wdb.ExecContext(ctx, `UPDATE sessions SET title = ? WHERE id = ?`, title, id)
	if err != nil {
		return fmt.Errorf("sqlite: session set title: %w", err)
	}
	if n, err := res.RowsAffected(); err != nil {
		return fmt.Errorf("sqlite: session set title: %w", err)
	} else if n == 0 {
		return fmt.Errorf("sqlite: session %s: %w", id, store.ErrNotFound)
	}
	return nil
}

// Prune implements store.Maintainer in one write transaction.
func (s *Store) Prune(ctx context.Context, p *store.PruneParams) (*store.PruneResult, error) {
	limit := p.Limit
	if limit <= 0 {
		limit = 100
	}
	tx, warm, err := s.beginCached(ctx)
	if err != nil {
		return nil, fmt.Errorf("sqlite: begin: %w", err)
	}
	defer warm()
	defer tx.Rollback()
	res := &store.PruneResult{}
	if !p.EventsBefore.IsZero() {
		// Idle since the cutoff: no run open, and the last one (whose
		// end no longer moves updated_at) ended before it.
		rows, err := tx.QueryContext(ctx, `SELECT id FROM sessions s WHERE updated_at < ?1
			AND (s.active_run IS NULL OR (SELECT r.open IS NULL AND r.updated_at < ?1 FROM runs r WHERE r.id = s.active_run))
			AND (EXISTS (SELECT 1 FROM events e WHERE `+eventsOf("s.k")+`) OR EXISTS (SELECT 1 FROM trace WHERE `+traceOf("s.k")+` AND kind IS NOT `+auditKind+`))
			LIMIT ?`, ts(p.EventsBefore), limit)
		if err != nil {
			return nil, fmt.Errorf("sqlite: prune: %w", err)
		}
		var ids []any
		for rows.Next() {
			var id string
			if err := rows.Scan(&id); err != nil {
				rows.Close()
				return nil, fmt.Errorf("sqlite: prune: %w", err)
			}
			ids = append(ids, id)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return nil, fmt.Errorf("sqlite: prune: %w", err)
		}
		if len(ids) > 0 {
			in := "(" + strings.TrimSuffix(strings.Repeat("?,", len(ids)), ",") + ")"
			// The sessions keep their last event number, so that the next
			// event of a pruned session does not reuse one a client saw.
			if _, err := tx.ExecContext(ctx, `UPDATE sessions SET last_seq = MAX(last_seq, `+lastEventSeq("sessions.k")+`)
				WHERE id IN `+in, ids...); err != nil {
				return nil, fmt.Errorf("sqlite: prune events: %w", err)
			}
			r, err := tx.ExecContext(ctx, `DELETE FROM events WHERE k IN (SELECT e.k FROM sessions s JOIN events e ON `+eventsOf("s.k")+` WHERE s.id IN `+in+`)`, ids...)
			if err != nil {
				return nil, fmt.Errorf("sqlite: prune events: %w", err)
			}
			res.Events, _ = r.RowsAffected()
			for _, id := range ids {
				// A session's audit entries in trace stay (their own
				// retention, AuditBefore).
				r, err = tx.ExecContext(ctx, `DELETE FROM trace WHERE `+traceOf(`(SELECT k FROM sessions WHERE id = ?1)`)+` AND kind IS NOT `+auditKind, id)
				if err != nil {
					return nil, fmt.Errorf("sqlite: prune trace: %w", err)
				}
				n, _ := r.RowsAffected()
				res.Trace += n
			}
		}
		n, err := pruneFeed(ctx, tx, ts(p.EventsBefore), limit*100)
		if err != nil {
			return nil, fmt.Errorf("sqlite: prune feed: %w", err)
		}
		res.Feed = n
		r, err := tx.ExecContext(ctx, `DELETE FROM webhook_deliveries WHERE id IN
			(SELECT id FROM webhook_deliveries WHERE status <> 'pending' AND updated_at < ? ORDER BY updated_at LIMIT ?)`, ts(p.EventsBefore), limit*100)
		if err != nil {
			return nil, fmt.Errorf("sqlite: prune webhook deliveries: %w", err)
		}
		res.Webhooks, _ = r.RowsAffected()
	}
	if !p.AuditBefore.IsZero() {
		// log_seqs keeps the largest id deleted of each range (rowbuf.go,
		// auditMark): the next id of the range is one past it, so an id is
		// never given twice.
		// A session's entries in trace (rowbuf.go, auditOf) are read
		// with the trace entries: Prune is maintenance, not a run's step.
		for _, t := range []struct{ table, where string }{{"audit", ""}, {"trace", "kind = " + auditKind + " AND "}} {
			prunable := `(SELECT id FROM ` + t.table + ` WHERE ` + t.where + `at < ? ORDER BY id LIMIT ?)`
			if _, err := tx.ExecContext(ctx, `INSERT INTO log_seqs (name, last) SELECT `+auditMark("id")+`, MAX(id) FROM `+prunable+`
				WHERE true GROUP BY 1 ON CONFLICT (name) DO UPDATE SET last = MAX(last, excluded.last)`, ts(p.AuditBefore), limit*100); err != nil {
				return nil, fmt.Errorf("sqlite: prune audit: %w", err)
			}
			r, err := tx.ExecContext(ctx, `DELETE FROM `+t.table+` WHERE id IN `+prunable, ts(p.AuditBefore), limit*100)
			if err != nil {
				return nil, fmt.Errorf("sqlite: prune audit: %w", err)
			}
			n, _ := r.RowsAffected()
			res.Audit += n
		}
	}
	if err := tx.Commit(); err != nil {
		return nil, fmt.Errorf("sqlite: commit: %w", err)
	}
	return res, nil
}

// Stats implements store.Maintainer on the read pool.
func (s *Store) Stats(ctx context.Context) (*store.Stats, error) {
	out := &store.Stats{Runs: map[store.RunStatus]int64{}}
	rows, err := s.rdb.QueryContext(ctx, `SELECT status, COUNT(*) FROM runs GROUP BY status`)
	if err != nil {
		return nil, fmt.Errorf("sqlite: stats: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var st string
		var n int64
		if err := rows.Scan(runStatuses.into(&st), &n); err != nil {
			return nil, fmt.Errorf("sqlite: stats: %w", err)
		}
		out.Runs[store.RunStatus(st)] = n
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sqlite: stats: %w", err)
	}
	if err := s.rdb.QueryRowContext(ctx, `SELECT COUNT(*) FROM interactions WHERE status = 0`).Scan(&out.PendingInteractions); err != nil {
		return nil, fmt.Errorf("sqlite: stats: %w", err)
	}
	return out, nil
}

// Ping checks that the database answers a query.
func (s *Store) Ping(ctx context.Context) error {
	return s.rdb.QueryRowContext(ctx, `SELECT 1`).Scan(new(int))
}

// Backup writes a consistent copy of the database at path to dst with
// VACUUM INTO: one read transaction, so a copy taken while luban serves
// holds exactly the transactions committed before it began, and writers go
// on meanwhile (WAL). dst must not exist; the copy is written beside it
// under a temporary name, checked with PRAGMA integrity_check, made mode
// 0600 and renamed into place, so dst is either absent or complete.
func Backup(ctx context.Context, path, dst string) error {
	if _, err := os.Stat(path); err != nil {
		return fmt.Errorf("sqlite: backup: no database at %s: %w", path, err)
	}
	if _, err := os.Stat(dst); err == nil {
		return fmt.Errorf("sqlite: backup: %s already exists (choose a new file name)", dst)
	}
	tmp := filepath.Join(filepath.Dir(dst), "."+filepath.Base(dst)+".partial")
	_ = os.Remove(tmp)
	db, err := openPlain(path)
	if err != nil {
		return err
	}
	defer db.Close()
	if _, err := db.ExecContext(ctx, `VACUUM INTO ?`, tmp); err != nil {
		_ = os.Remove(tmp)
		return fmt.Errorf("sqlite: backup %s: %w", path, err)
	}
	if err := checkIntegrity(ctx, tmp); err != nil {
		_ = os.Remove(tmp)
		return err
	}
	if err := os.Chmod(tmp, 0o600); err != nil {
		_ = os.Remove(tmp)
		return fmt.Errorf("sqlite: backup: %w", err)
	}
	if err := os.Rename(tmp, dst); err != nil {
		_ = os.Remove(tmp)
		return fmt.Errorf("sqlite: backup: %w", err)
	}
	return nil
}

func checkIntegrity(ctx context.Context, path string) error {
	db, err := openPlain(path)
	if err != nil {
		return err
	}
	defer db.Close()
	var res string
	if err := db.QueryRowContext(ctx, `PRAGMA integrity_check`).Scan(&res); err != nil {
		return fmt.Errorf("sqlite: check %s: %w", path, err)
	}
	if res != "ok" {
		return fmt.Errorf("sqlite: check %s: integrity_check says %q", path, res)
	}
	return nil
}

// openPlain opens one connection to an existing database file, without
// migrations.
func openPlain(path string) (*sql.DB, error) {
	q := url.Values{}
	q.Add("_pragma", "busy_timeout(5000)")
	q.Add("_pragma", "secure_delete(1)")
	db, err := sql.Open(DriverName, "file:"+path+"?"+q.Encode())
	if err != nil {
		return nil, fmt.Errorf("sqlite: open %s: %w", path, err)
	}
	db.SetMaxOpenConns(1)
	return db, nil
}

// Migrations lists the embedded migrations and whether the database at
// path has each one. It neither creates the file nor changes it: a missing
// file is an error. On a database a newer luban migrated past the newest
// migration embedded here it returns the list and an error wrapping
// store.ErrSchemaTooNew, the error Open returns for that database.
func Migrations(ctx context.Context, path string) ([]store.Migration, error) {
	if _, err := os.Stat(path); err != nil {
		return nil, fmt.Errorf("sqlite: no database at %s: %w", path, err)
	}
	db, err := openPlain(path)
	if err != nil {
		return nil, err
	}
	defer db.Close()
	fsys, err := fsSub(migrations, "migrations")
	if err != nil {
		return nil, err
	}
	p, err := goose.NewProvider(goose.DialectSQLite3, db, fsys, migrationOptions()...)
	if err != nil {
		return nil, fmt.Errorf("sqlite: migrations: %w", err)
	}
	out, err := migrationStatus(ctx, p)
	if err != nil {
		return nil, err
	}
	if len(out) > 0 && out[len(out)-1].Applied {
		// Every known migration is applied: the database may be ahead.
		if err := schemaNotNewer(ctx, p, "sqlite"); err != nil {
			return out, err
		}
	}
	return out, nil
}

func migrationStatus(ctx context.Context, p *goose.Provider) ([]store.Migration, error) {
	st, err := p.Status(ctx)
	if err != nil {
		var out []store.Migration
		if errors.Is(err, goose.ErrNoCurrentVersion) || strings.Contains(err.Error(), "no such table") || strings.Contains(err.Error(), "does not exist") {
			for _, src := range p.ListSources() {
				out = append(out, store.Migration{Version: src.Version, Name: migrationName(src.Version, src.Path)})
			}
			return out, nil
		}
		return nil, fmt.Errorf("migration status: %w", err)
	}
	out := make([]store.Migration, 0, len(st))
	for _, m := range st {
		out = append(out, store.Migration{Version: m.Source.Version, Name: migrationName(m.Source.Version, m.Source.Path),
			Applied: m.State == goose.StateApplied, AppliedAt: m.AppliedAt.UTC()})
	}
	return out, nil
}

// migrationName is a migration's file name; a migration written in Go
// (compactMigration, sessionKeyMigration, logsMigration, eventsMigration,
// rowsMigration, timeoutsMigration, eventRefsMigration,
// messageIDsMigration, auditTraceMigration) is named after what it does.
func migrationName(version int64, path string) string {
	if path == "" {
		switch version {
		case sessionKeyVersion:
			return fmt.Sprintf("%05d_session_key.go", version)
		case logsVersion:
			return fmt.Sprintf("%05d_compact_trace_audit.go", version)
		case eventsVersion:
			return fmt.Sprintf("%05d_compact_events.go", version)
		case rowsVersion:
			return fmt.Sprintf("%05d_compact_messages.go", version)
		case timeoutsVersion:
			return fmt.Sprintf("%05d_timeouts_in_interactions.go", version)
		case eventRefsVersion:
			return fmt.Sprintf("%05d_event_refs.go", version)
		case messageIDsVersion:
			return fmt.Sprintf("%05d_message_ids.go", version)
		case auditTraceVersion:
			return fmt.Sprintf("%05d_audit_in_trace.go", version)
		default:
			return fmt.Sprintf("%05d_compact_runs_interactions.go", version)
		}
	}
	return filepath.Base(path)
}
