package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/lubanhq/luban/store"
)

// InboxList implements store.People.
func (e executor) InboxList(ctx context.Context, p *store.InboxListParams) ([]*store.InboxEntry, error) {
	limit := p.Limit
	if limit <= 0 {
		limit = 100
	}
	// The owner's own sessions' interactions, then those of other
	// principals' sessions assigned to the owner (docs/design.md §16): one
	// index walk each.
	var q, order string
	var cursor []any
	switch p.Status {
	case store.InboxPending:
		q = ` AND i.status = 0`
		if p.Cursor != "" {
			q += ` AND (i.created_at, i.id) > (SELECT c.created_at, c.id FROM interactions c WHERE c.id = ?)`
			cursor = []any{idAsk.enc(p.Cursor)}
		}
		order = ` ORDER BY created_at, id`
	case store.InboxResolved:
		q = ` AND i.status <> 0`
		if p.Cursor != "" {
			q += ` AND (i.resolved_at, i.id) < (SELECT c.resolved_at, c.id FROM interactions c WHERE c.id = ?)`
			cursor = []any{idAsk.enc(p.Cursor)}
		}
		order = ` ORDER BY resolved_at DESC, id DESC`
	default:
		return nil, fmt.Errorf("sqlite: inbox list: unknown status %q", p.Status)
	}
	const cols = `SELECT i.id AS id, i.session_id, i.run_id, i.tool_call_id, i.tool, i.request, i.status, i.answer,
		i.created_at AS created_at, i.expires_at, i.resolved_at AS resolved_at, i.receipt_jws, i.route, i.decided_by, s.title, COALESCE(r.agent, ''), COALESCE(r.status, '') AS run_status`
	args := append(append([]any{p.Owner}, cursor...), p.Owner, p.Owner)
	args = append(append(args, cursor...), limit)
	rows, err := e.r.QueryContext(ctx, cols+`
		FROM sessions s CROSS JOIN interactions i ON i.session_id = s.id LEFT JOIN runs r ON r.id = i.run_id
		WHERE s.owner = ?`+q+`
		UNION ALL `+cols+`
		FROM interaction_assignees a CROSS JOIN interactions i ON i.id = a.request_id JOIN sessions s ON s.id = i.session_id LEFT JOIN runs r ON r.id = i.run_id
		WHERE a.person = ? AND s.owner <> ?`+q+order+` LIMIT ?`, args...)
	if err != nil {
		return nil, fmt.Errorf("sqlite: inbox list: %w", err)
	}
	defer rows.Close()
	var out []*store.InboxEntry
	for rows.Next() {
		en := &store.InboxEntry{}
		var ir interactionRow
		var runStatus string
		if err := rows.Scan(append(ir.dest(), &en.SessionTitle, &en.Agent, runStatuses.into(&runStatus))...); err != nil {
			return nil, fmt.Errorf("sqlite: inbox list: %w", err)
		}
		it, err := ir.done()
		if err != nil {
			return nil, fmt.Errorf("sqlite: inbox list: %w", err)
		}
		en.Interaction = *it
		en.RunStatus = store.RunStatus(runStatus)
		out = append(out, en)
	}
	return out, rows.Err()
}

// SessionPage implements store.People.
func (e executor) SessionPage(ctx context.Context, p *store.SessionPageParams) ([]*store.Session, error) {
	limit := p.Limit
	if limit <= 0 {
		limit = 100
	}
	q := `SELECT ` + sessionCols + ` FROM sessions WHERE owner = ?`
	args := []any{p.Owner}
	if p.Before != "" {
		q += ` AND (updated_at, id) < (SELECT c.updated_at, c.id FROM sessions c WHERE c.id = ? AND c.owner = ?)`
		args = append(args, p.Before, p.Owner)
	}
	args = append(args, limit)
	rows, err := e.r.QueryContext(ctx, q+` ORDER BY updated_at DESC, id DESC LIMIT ?`, args...)
	if err != nil {
		return nil, fmt.Errorf("sqlite: session page: %w", err)
	}
	defer rows.Close()
	var out []*store.Session
	for rows.Next() {
		s, err := scanSession(rows)
		if err != nil {
			return nil, fmt.Errorf("sqlite: session page: %w", err)
		}
		out = append(out, s)
	}
	return out, rows.Err()
}

// feedSelect reads feed entries as f, the request of a referenced
// interaction in the place of data.
const feedSelect = `SELECT p.owner, f.k & 4294967295, s.id, f.session_seq, f.name, f.data, ` + requestCols + `, f.created_at
	FROM feed f JOIN principals p ON p.k = f.k >> 32 JOIN sessions s ON s.k = f.sk LEFT JOIN interactions i ON i.id = f.ref `

func scanFeed(rows rowsReader) ([]*store.FeedEntry, error) {
	defer rows.Close()
	var out []*store.FeedEntry
	for rows.Next() {
		f := &store.FeedEntry{}
		var data string
		var at int64
		var rq requestRef
		if err := rows.Scan(append(append([]any{&f.Owner, &f.Seq, &f.SessionID, &f.SessionSeq, &f.Name, &data}, rq.dest()...), &at)...); err != nil {
			return nil, fmt.Errorf("sqlite: feed: %w", err)
		}
		f.Data, f.CreatedAt = json.RawMessage(data), tm(at)
		if req, err := rq.request(); err != nil {
			return nil, fmt.Errorf("sqlite: feed: %w", err)
		} else if req != nil {
			f.Data = req
		}
		out = append(out, f)
	}
	return out, rows.Err()
}

// FeedList implements store.People.
func (e executor) FeedList(ctx context.Context, p *store.FeedListParams) ([]*store.FeedEntry, error) {
	limit := p.Limit
	if limit <= 0 {
		limit = 500
	}
	// The owner's range of keys (rowbuf.go, feedKey) after AfterSeq.
	rows, err := e.r.QueryContext(ctx, feedSelect+`WHERE f.k > (SELECT k << 32 FROM principals WHERE owner = ?1) + MAX(?2, 0)
		AND f.k <= (SELECT (k << 32) + 4294967295 FROM principals WHERE owner = ?1) ORDER BY f.k LIMIT ?3`, p.Owner, p.AfterSeq, limit)
	if err != nil {
		return nil, fmt.Errorf("sqlite: feed list: %w", err)
	}
	return scanFeed(rows)
}

// FeedLastSeq implements store.People.
func (e executor) FeedLastSeq(ctx context.Context, owner string) (int64, error) {
	var n int64
	err := e.r.QueryRowContext(ctx, `SELECT COALESCE((SELECT MAX(p.last_seq, COALESCE((SELECT MAX(f.k) FROM feed f WHERE f.`+feedOf("p.k")+`), 0) & 4294967295)
		FROM principals p WHERE p.owner = ?), 0)`, owner).Scan(&n)
	if err != nil {
		return 0, fmt.Errorf("sqlite: feed last seq: %w", err)
	}
	return n, nil
}

// FeedListUnfanned implements store.People.
func (e executor) FeedListUnfanned(ctx context.Context, limit int) ([]*store.FeedEntry, error) {
	if limit <= 0 {
		limit = 100
	}
	rows, err := e.r.QueryContext(ctx, feedSelect+`WHERE f.fanned = 0 ORDER BY f.created_at, p.owner, f.k LIMIT ?`, limit)
	if err != nil {
		return nil, fmt.Errorf("sqlite: feed unfanned: %w", err)
	}
	return scanFeed(rows)
}

// WebhookEnqueue implements store.People.
func (s *Store) WebhookEnqueue(ctx context.Context, p *store.WebhookEnqueueParams) error {
	tx, warm, err := s.beginCached(ctx)
	if err != nil {
		return fmt.Errorf("sqlite: webhook enqueue: begin: %w", err)
	}
	defer warm()
	defer tx.Rollback()
	for _, d := range p.Deliveries {
		if _, err := tx.ExecContext(ctx, `INSERT INTO webhook_deliveries (id, hook, owner, seq, session_id, type, body, status, next_at, created_at, updated_at)
			VALUES (?, ?, ?, ?, ?, ?, ?, 'pending', ?, ?, ?) ON CONFLICT (owner, seq, hook) DO NOTHING`,
			d.ID, d.Hook, p.Owner, p.Seq, d.SessionID, d.Type, string(d.Body), ts(p.Now), ts(p.Now), ts(p.Now)); err != nil {
			return fmt.Errorf("sqlite: webhook enqueue: %w", err)
		}
	}
	if _, err := tx.ExecContext(ctx, `UPDATE feed SET fanned = 1 WHERE k = (SELECT k << 32 FROM principals WHERE owner = ?) + ?`, p.Owner, p.Seq); err != nil {
		return fmt.Errorf("sqlite: webhook enqueue: %w", err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("sqlite: webhook enqueue: commit: %w", err)
	}
	return nil
}

const deliveryCols = `id, hook, owner, seq, session_id, type, body, status, attempts, next_at, lease_owner, lease_until, last_code, last_error, created_at, updated_at`

func scanDeliveries(rows rowsReader) ([]*store.WebhookDelivery, error) {
	defer rows.Close()
	var out []*store.WebhookDelivery
	for rows.Next() {
		d := &store.WebhookDelivery{}
		var body string
		var next, lu, c, u int64
		if err := rows.Scan(&d.ID, &d.Hook, &d.Owner, &d.Seq, &d.SessionID, &d.Type, &body, &d.Status, &d.Attempts, &next,
			&d.LeaseOwner, &lu, &d.LastCode, &d.LastError, &c, &u); err != nil {
			return nil, fmt.Errorf("sqlite: webhook deliveries: %w", err)
		}
		d.Body = json.RawMessage(body)
		d.NextAt, d.LeaseUntil, d.CreatedAt, d.UpdatedAt = tm(next), tm(lu), tm(c), tm(u)
		out = append(out, d)
	}
	return out, rows.Err()
}

// WebhookClaim implements store.People. SQLite has one writer, so the
// UPDATE ... RETURNING is the whole claim.
func (e executor) WebhookClaim(ctx context.Context, p *store.WebhookClaimParams) ([]*store.WebhookDelivery, error) {
	limit := p.Limit
	if limit <= 0 {
		limit = 16
	}
	rows, err := e.w.QueryContext(ctx, `UPDATE webhook_deliveries SET lease_owner = ?, lease_until = ?, updated_at = ?
		WHERE id IN (SELECT id FROM webhook_deliveries WHERE status = 'pending' AND next_at <= ? AND lease_until <= ? ORDER BY next_at LIMIT ?)
		RETURNING `+deliveryCols, p.Owner, ts(p.Until), ts(p.Now), ts(p.Now), ts(p.Now), limit)
	if err != nil {
		return nil, fmt.Errorf("sqlite: webhook claim: %w", err)
	}
	return scanDeliveries(rows)
}

// WebhookFinish implements store.People. Outside InTx, the outcome and its
// trace entry are one group-commit transaction.
func (e executor) WebhookFinish(ctx context.Context, p *store.WebhookFinishParams) (bool, error) {
	if e.group == nil || len(p.Trace) == 0 {
		return e.webhookFinish(ctx, p)
	}
	won := false
	err := e.group(ctx, func(tx store.Tx) error {
		var err error
		won, err = tx.(*txExecutor).webhookFinish(ctx, p)
		return err
	})
	return won, err
}

// webhookFinish runs WebhookFinish's statements on e.w.
func (e executor) webhookFinish(ctx context.Context, p *store.WebhookFinishParams) (bool, error) {
	var sessionID string
	err := e.w.QueryRowContext(ctx, `UPDATE webhook_deliveries SET status = ?, attempts = attempts + 1, next_at = ?, lease_owner = '', lease_until = 0,
		last_code = ?, last_error = ?, updated_at = ? WHERE id = ? AND lease_owner = ? AND status = 'pending' RETURNING session_id`,
		p.Status, ts(p.NextAt), p.LastCode, p.LastError, ts(p.Now), p.ID, p.LeaseOwner).Scan(&sessionID)
	if errors.Is(err, sql.ErrNoRows) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("sqlite: webhook finish: %w", err)
	}
	if len(p.Trace) == 0 {
		return true, nil
	}
	// The delivery's session may be gone (its deliveries go with it, but
	// one claimed before may finish after): no trace entry then.
	if err := e.TraceInsert(ctx, &store.TraceInsertParams{SessionID: sessionID, Kind: "webhook", Data: p.Trace, Now: p.Now}); err != nil && !errors.Is(err, store.ErrNotFound) {
		return false, fmt.Errorf("sqlite: webhook finish: trace: %w", err)
	}
	return true, nil
}

// WebhookNextDue implements store.People.
func (e executor) WebhookNextDue(ctx context.Context) (time.Time, error) {
	var v sql.NullInt64
	if err := e.r.QueryRowContext(ctx, `SELECT MIN(next_at) FROM webhook_deliveries WHERE status = 'pending'`).Scan(&v); err != nil {
		return time.Time{}, fmt.Errorf("sqlite: webhook next due: %w", err)
	}
	return tm(v.Int64), nil
}

// WebhookList implements store.People.
func (e executor) WebhookList(ctx context.Context, sessionID string) ([]*store.WebhookDelivery, error) {
	rows, err := e.r.QueryContext(ctx, `SELECT `+deliveryCols+` FROM webhook_deliveries WHERE session_id = ? ORDER BY created_at, id`, sessionID)
	if err != nil {
		return nil, fmt.Errorf("sqlite: webhook list: %w", err)
	}
	return scanDeliveries(rows)
}

// NotifyMessagePut implements store.People.
func (e executor) NotifyMessagePut(ctx context.Context, m *store.NotifyMessage) error {
	if _, err := e.w.ExecContext(ctx, `INSERT INTO notify_messages (request_id, channel, person, session_id, address, ref, created_at)
		VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (request_id, channel, person) DO UPDATE SET address = excluded.address, ref = excluded.ref, created_at = excluded.created_at`,
		idAsk.enc(m.RequestID), m.Channel, m.Person, m.SessionID, m.Address, m.Ref, ts(m.CreatedAt)); err != nil {
		return fmt.Errorf("sqlite: notify message put: %w", err)
	}
	return nil
}

// NotifyMessageList implements store.People.
func (e executor) NotifyMessageList(ctx context.Context, requestID string) ([]*store.NotifyMessage, error) {
	rows, err := e.r.QueryContext(ctx, `SELECT request_id, channel, person, session_id, address, ref, created_at FROM notify_messages
		WHERE request_id = ? ORDER BY created_at, channel, person`, idAsk.enc(requestID))
	if err != nil {
		return nil, fmt.Errorf("sqlite: notify message list: %w", err)
	}
	defer rows.Close()
	var out []*store.NotifyMessage
	for rows.Next() {
		m := &store.NotifyMessage{}
		var c int64
		if err := rows.Scan(idAsk.into(&m.RequestID), &m.Channel, &m.Person, &m.SessionID, &m.Address, &m.Ref, &c); err != nil {
			return nil, fmt.Errorf("sqlite: notify message list: %w", err)
		}
		m.CreatedAt = tm(c)
		out = append(out, m)
	}
	return out, rows.Err()
}
