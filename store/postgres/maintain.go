package postgres

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/pressly/goose/v3"

	"github.com/lubanhq/luban/store"
)

var _ store.Maintainer = (*Store)(nil)

// SessionDelete implements store.Maintainer in one transaction that locks
// the session row first.
func (s *Store) SessionDelete(ctx context.Context, id string) error {
	tx, err := s.pool.Begin(ctx)
	if err != nil {
		return fmt.Errorf("postgres: begin: %w", err)
	}
	defer tx.Rollback(context.WithoutCancel(ctx))
	var one int
	if err := tx.QueryRow(ctx, `SELECT 1 FROM sessions WHERE id = $1 FOR UPDATE`, id).Scan(&one); err != nil {
		if errors.Is(err, pgx.ErrNoRows) {
			return fmt.Errorf("postgres: session %s: %w", id, store.ErrNotFound)
		}
		return fmt.Errorf("postgres: session delete: %w", err)
	}
	var n int
	if err := tx.QueryRow(ctx, `SELECT COUNT(*) FROM runs WHERE session_id = $1 AND status IN ('running', 'waiting_input')`, id).Scan(&n); err != nil {
		return fmt.Errorf("postgres: session delete: %w", err)
	}
	if n > 0 {
		return fmt.Errorf("postgres: session %s: %w", id, store.ErrRunActive)
	}
	for _, q := range []string{
		`DELETE FROM events WHERE session_id = $1`,
		`DELETE FROM feed WHERE session_id = $1`, // no index by session: the feed read whole
		`DELETE FROM webhook_deliveries WHERE session_id = $1`,
		`DELETE FROM notify_messages WHERE session_id = $1`,
		`DELETE FROM trace WHERE session_id = $1`,
		`DELETE FROM interaction_deadlines WHERE session_id = $1`,
		`DELETE FROM mcp_tasks WHERE session_id = $1`,
		`DELETE FROM interactions WHERE session_id = $1`,
		`DELETE FROM messages WHERE session_id = $1`,
		`DELETE FROM runs WHERE session_id = $1`,
		`DELETE FROM sessions WHERE id = $1`,
	} {
		if _, err := tx.Exec(ctx, q, id); err != nil {
			return fmt.Errorf("postgres: session delete: %w", err)
		}
	}
	// An open stream of the session on any replica learns that it is gone:
	// the NOTIFY is delivered at the commit; this replica's hub is woken at
	// once as well.
	if err := notifyAll(ctx, tx, s.channel, []string{id}); err != nil {
		return err
	}
	if err := tx.Commit(ctx); err != nil {
		return fmt.Errorf("postgres: commit: %w", err)
	}
	s.hub.Notify(id)
	return nil
}

// SessionSetTitle implements store.Maintainer in one statement.
func (s *Store) SessionSetTitle(ctx context.Context, id, title string) error {
	tag, err := s.pool.Exec(ctx, `UPDATE sessions SET title = $1 WHERE id = $2`, title, id)
	if err != nil {
		return fmt.Errorf("postgres: session set title: %w", err)
	}
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("postgres: session %s: %w", id, store.ErrNotFound)
	}
	return nil
}

// Prune implements store.Maintainer in one transaction.
func (s *Store) Prune(ctx context.Context, p *store.PruneParams) (*store.PruneResult, error) {
	limit := p.Limit
	if limit <= 0 {
		limit = 100
	}
	tx, err := s.pool.Begin(ctx)
	if err != nil {
		return nil, fmt.Errorf("postgres: begin: %w", err)
	}
	defer tx.Rollback(context.WithoutCancel(ctx))
	res := &store.PruneResult{}
	if !p.EventsBefore.IsZero() {
		rows, err := tx.Query(ctx, `SELECT id FROM sessions s WHERE updated_at < $1
			AND NOT EXISTS (SELECT 1 FROM runs r WHERE r.session_id = s.id AND (r.status IN ('running', 'waiting_input') OR r.updated_at >= $1))
			AND (EXISTS (SELECT 1 FROM events e WHERE e.session_id = s.id) OR EXISTS (SELECT 1 FROM trace t WHERE t.session_id = s.id))
			LIMIT $2`, p.EventsBefore.UTC(), limit)
		if err != nil {
			return nil, fmt.Errorf("postgres: prune: %w", err)
		}
		ids, err := pgx.CollectRows(rows, pgx.RowTo[string])
		if err != nil {
			return nil, fmt.Errorf("postgres: prune: %w", err)
		}
		if len(ids) > 0 {
			tag, err := tx.Exec(ctx, `DELETE FROM events WHERE session_id = ANY($1)`, ids)
			if err != nil {
				return nil, fmt.Errorf("postgres: prune events: %w", err)
			}
			res.Events = tag.RowsAffected()
			tag, err = tx.Exec(ctx, `DELETE FROM trace WHERE session_id = ANY($1)`, ids)
			if err != nil {
				return nil, fmt.Errorf("postgres: prune trace: %w", err)
			}
			res.Trace = tag.RowsAffected()
		}
		tag, err := tx.Exec(ctx, `DELETE FROM feed WHERE (owner, seq) IN
			(SELECT owner, seq FROM feed WHERE fanned AND created_at < $1 ORDER BY created_at LIMIT $2)`, p.EventsBefore.UTC(), limit*100)
		if err != nil {
			return nil, fmt.Errorf("postgres: prune feed: %w", err)
		}
		res.Feed = tag.RowsAffected()
		tag, err = tx.Exec(ctx, `DELETE FROM webhook_deliveries WHERE id IN
			(SELECT id FROM webhook_deliveries WHERE status <> 'pending' AND updated_at < $1 ORDER BY updated_at LIMIT $2)`, p.EventsBefore.UTC(), limit*100)
		if err != nil {
			return nil, fmt.Errorf("postgres: prune webhook deliveries: %w", err)
		}
		res.Webhooks = tag.RowsAffected()
	}
	if !p.AuditBefore.IsZero() {
		tag, err := tx.Exec(ctx, `DELETE FROM audit WHERE id IN (SELECT id FROM audit WHERE at < $1 ORDER BY id LIMIT $2)`, p.AuditBefore.UTC(), limit*100)
		if err != nil {
			return nil, fmt.Errorf("postgres: prune audit: %w", err)
		}
		res.Audit = tag.RowsAffected()
	}
	if err := tx.Commit(ctx); err != nil {
		return nil, fmt.Errorf("postgres: commit: %w", err)
	}
	return res, nil
}

// Stats implements store.Maintainer.
func (s *Store) Stats(ctx context.Context) (*store.Stats, error) {
	out := &store.Stats{Runs: map[store.RunStatus]int64{}}
	rows, err := s.pool.Query(ctx, `SELECT status, COUNT(*) FROM runs GROUP BY status`)
	if err != nil {
		return nil, fmt.Errorf("postgres: stats: %w", err)
	}
	for rows.Next() {
		var st string
		var n int64
		if err := rows.Scan(&st, &n); err != nil {
			rows.Close()
			return nil, fmt.Errorf("postgres: stats: %w", err)
		}
		out.Runs[store.RunStatus(st)] = n
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("postgres: stats: %w", err)
	}
	if err := s.pool.QueryRow(ctx, `SELECT COUNT(*) FROM interactions WHERE status = 'pending'`).Scan(&out.PendingInteractions); err != nil {
		return nil, fmt.Errorf("postgres: stats: %w", err)
	}
	return out, nil
}

// Ping checks that the database answers a query.
func (s *Store) Ping(ctx context.Context) error { return s.pool.Ping(ctx) }

// Migrations lists the embedded migrations and whether the database at url
// (its connection's schema) has each one, without changing anything. On a
// database a newer luban migrated past the newest migration embedded here
// it returns the list and an error wrapping store.ErrSchemaTooNew, the
// error Open returns for that database.
func Migrations(ctx context.Context, url string) ([]store.Migration, error) {
	pool, err := pgxpool.New(ctx, url)
	if err != nil {
		return nil, fmt.Errorf("postgres: connect: %w", err)
	}
	defer pool.Close()
	fsys, err := fs.Sub(migrations, "migrations")
	if err != nil {
		return nil, err
	}
	db := stdlib.OpenDBFromPool(pool)
	defer db.Close()
	p, err := goose.NewProvider(goose.DialectPostgres, db, fsys)
	if err != nil {
		return nil, fmt.Errorf("postgres: migrations: %w", err)
	}
	st, err := p.Status(ctx)
	if err != nil {
		if strings.Contains(err.Error(), "does not exist") {
			var out []store.Migration
			for _, src := range p.ListSources() {
				out = append(out, store.Migration{Version: src.Version, Name: filepath.Base(src.Path)})
			}
			return out, nil
		}
		return nil, fmt.Errorf("postgres: migration status: %w", err)
	}
	out := make([]store.Migration, 0, len(st))
	for _, m := range st {
		out = append(out, store.Migration{Version: m.Source.Version, Name: filepath.Base(m.Source.Path),
			Applied: m.State == goose.StateApplied, AppliedAt: m.AppliedAt.UTC()})
	}
	if len(out) > 0 && out[len(out)-1].Applied {
		// Every known migration is applied: the database may be ahead.
		cur, err := p.GetDBVersion(ctx)
		if err != nil {
			return nil, fmt.Errorf("postgres: schema version: %w", err)
		}
		if err := store.CheckSchemaVersion(cur, out[len(out)-1].Version); err != nil {
			return out, fmt.Errorf("postgres: %w", err)
		}
	}
	return out, nil
}
