package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/lubanhq/luban/store"
)

// appendFeed writes the feed entry of an event just appended as seq of its
// session (of owner), when the event is one of store.FeedEvents, on q (the event's own
// transaction). The principals row lock orders the owner's entries, so
// they commit in sequence order. Every transaction of the owner's runs
// takes that lock, so in a transaction (pipeTx) the bump and the insert are
// one statement queued after all the others (pipeTx.atEnd): the lock is held
// for the NOTIFY's round trip and the commit, not for the rest of the
// transaction. It returns the keys to NOTIFY.
//
// In a transaction the entry's session_seq is read from the session's row
// when the entry is written, after the transaction's events: its last_seq
// less the events the transaction appended after this one (held.n), so
// that an event whose number is not known yet (txSession.deferred) gets
// its entry all the same.
func appendFeed(ctx context.Context, q querier, p *store.EventAppendParams, seq int64, owner string, held *txSession) ([]string, error) {
	if !store.IsFeedEvent(p.Name) {
		return nil, nil
	}
	// An event that references its interaction has a feed entry that
	// does too (FeedList reads the request).
	data, ref := string(p.Data), any(nil)
	if p.Ref != "" {
		data, ref = "", p.Ref
	}
	pipe, inTx := q.(*pipeTx)
	var fix func([]any)
	if inTx {
		idx := held.n
		fix = func(args []any) { args[2] = int64(held.n - idx) }
	}
	args := []any{owner, p.SessionID, seq, p.Name, data, ref, tstz(p.Now)}
	if inTx {
		pipe.atEnd(fix, feedSQL(false, true), args...)
	} else if _, err := q.Exec(ctx, feedSQL(false, false), args...); err != nil {
		return nil, fmt.Errorf("postgres: feed append: %w", err)
	}
	keys := []string{store.PrincipalKey(owner), store.FeedKey}
	seen := map[string]bool{owner: true}
	for _, who := range p.Audience {
		if seen[who] {
			continue
		}
		seen[who] = true
		// The audience's entries are no webhook outbox rows (fanned): a
		// webhook gets the event once, from the owner's entry.
		args := []any{who, p.SessionID, seq, p.Name, data, ref, tstz(p.Now)}
		if inTx {
			pipe.atEnd(fix, feedSQL(true, true), args...)
		} else if _, err := q.Exec(ctx, feedSQL(true, false), args...); err != nil {
			return nil, fmt.Errorf("postgres: feed append: %w", err)
		}
		keys = append(keys, store.PrincipalKey(who))
	}
	return keys, nil
}

// feedSQLs are feedSQL's statements, by fanned and inTx. The owner's
// number is bumped by an UPDATE, and inserted only for an owner without a
// row (ON CONFLICT for two first entries racing): an INSERT … ON CONFLICT
// DO UPDATE of an existing row takes a speculative check and a lock record
// of its own before its update.
var feedSQLs = func() (q [2][2]string) {
	for i, fanned := range []string{"FALSE", "TRUE"} {
		for j, sessionSeq := range []string{"$3", "(SELECT last_seq FROM sessions WHERE id = $2) - $3"} {
			q[i][j] = `WITH u AS (UPDATE principals SET last_seq = last_seq + 1 WHERE owner = $1 RETURNING last_seq),
		n AS (INSERT INTO principals (owner, last_seq) SELECT $1, 1 WHERE NOT EXISTS (SELECT 1 FROM u)
			ON CONFLICT (owner) DO UPDATE SET last_seq = principals.last_seq + 1 RETURNING last_seq),
		p AS (SELECT last_seq FROM u UNION ALL SELECT last_seq FROM n)
	INSERT INTO feed (owner, seq, session_id, session_seq, name, data, ref, created_at, fanned)
	SELECT $1, p.last_seq, $2, ` + sessionSeq + `, $4, $5, $6, $7, ` + fanned + ` FROM p`
		}
	}
	return q
}()

// feedSQL appends feed entry ($1 the principal, $2 the session, $4 the
// event's name, $5 data, $6 ref, $7 when) after bumping the principal's
// number; fanned: it is no webhook outbox row. $3 is the event's number,
// or (inTx) how many events of the session follow it: its number is then
// the session's last_seq less $3.
func feedSQL(fanned, inTx bool) string {
	i, j := 0, 0
	if fanned {
		i = 1
	}
	if inTx {
		j = 1
	}
	return feedSQLs[i][j]
}

// InboxList implements store.People.
func (e executor) InboxList(ctx context.Context, p *store.InboxListParams) ([]*store.InboxEntry, error) {
	limit := p.Limit
	if limit <= 0 {
		limit = 100
	}
	// The owner's own sessions' interactions, then those of other
	// principals' sessions assigned to the owner (docs/design.md §16).
	var q, order string
	args := []any{p.Owner}
	switch p.Status {
	case store.InboxPending:
		q = ` AND i.status = 'pending'`
		if p.Cursor != "" {
			args = append(args, p.Cursor)
			q += ` AND (i.created_at, i.id) > (SELECT c.created_at, c.id FROM interactions c WHERE c.id = $2)`
		}
		order = ` ORDER BY created_at, id`
	case store.InboxResolved:
		q = ` AND i.status <> 'pending'`
		if p.Cursor != "" {
			args = append(args, p.Cursor)
			q += ` AND (i.resolved_at, i.id) < (SELECT c.resolved_at, c.id FROM interactions c WHERE c.id = $2)`
		}
		order = ` ORDER BY resolved_at DESC, id DESC`
	default:
		return nil, fmt.Errorf("postgres: inbox list: unknown status %q", p.Status)
	}
	args = append(args, limit)
	const cols = `SELECT i.id AS id, i.session_id, i.run_id, i.tool_call_id, i.tool, i.request, i.status, i.answer,
		i.created_at AS created_at, i.expires_at, i.resolved_at AS resolved_at, i.receipt_jws, i.route, i.decided_by, s.title, COALESCE(r.agent, ''), COALESCE(r.status, '') AS run_status`
	rows, err := e.q.Query(ctx, cols+`
		FROM interactions i JOIN sessions s ON s.id = i.session_id LEFT JOIN runs r ON r.id = i.run_id
		WHERE s.owner = $1`+q+`
		UNION ALL `+cols+`
		FROM interaction_assignees a JOIN interactions i ON i.id = a.request_id JOIN sessions s ON s.id = i.session_id LEFT JOIN runs r ON r.id = i.run_id
		WHERE a.person = $1 AND s.owner <> $1`+q+order+fmt.Sprintf(` LIMIT $%d`, len(args)), args...)
	if err != nil {
		return nil, fmt.Errorf("postgres: inbox list: %w", err)
	}
	return collect(rows, "inbox list", func(row pgx.Row) (*store.InboxEntry, error) {
		en := &store.InboxEntry{}
		it := &en.Interaction
		var req string
		var ans, route, by pgtype.Text
		var c, x, rs pgtype.Timestamptz
		var runStatus string
		if err := row.Scan(&it.ID, &it.SessionID, &it.RunID, &it.ToolCallID, &it.Tool, &req, &it.Status, &ans, &c, &x, &rs, &it.ReceiptJWS, &route, &by,
			&en.SessionTitle, &en.Agent, &runStatus); err != nil {
			return nil, err
		}
		it.Request, it.Answer, it.Route, it.DecidedBy = json.RawMessage(req), rawJSON(ans), rawJSON(route), rawJSON(by)
		it.CreatedAt, it.ExpiresAt, it.ResolvedAt = tm(c), tm(x), tm(rs)
		en.RunStatus = store.RunStatus(runStatus)
		return en, nil
	})
}

// SessionPage implements store.People.
func (e executor) SessionPage(ctx context.Context, p *store.SessionPageParams) ([]*store.Session, error) {
	limit := p.Limit
	if limit <= 0 {
		limit = 100
	}
	q := `SELECT ` + sessionCols + ` FROM sessions WHERE owner = $1`
	args := []any{p.Owner}
	if p.Before != "" {
		args = append(args, p.Before)
		q += ` AND (updated_at, id) < (SELECT c.updated_at, c.id FROM sessions c WHERE c.id = $2 AND c.owner = $1)`
	}
	args = append(args, limit)
	rows, err := e.q.Query(ctx, q+fmt.Sprintf(` ORDER BY updated_at DESC, id DESC LIMIT $%d`, len(args)), args...)
	if err != nil {
		return nil, fmt.Errorf("postgres: session page: %w", err)
	}
	return collect(rows, "session page", scanSession)
}

// feedSelect reads feed entries as f, the request of a referenced
// interaction in the place of data.
const feedSelect = `SELECT f.owner, f.seq, f.session_id, f.session_seq, f.name, COALESCE(i.request, f.data), f.created_at
	FROM feed f LEFT JOIN interactions i ON i.id = f.ref `

func scanFeed(row pgx.Row) (*store.FeedEntry, error) {
	f := &store.FeedEntry{}
	var data string
	var at pgtype.Timestamptz
	if err := row.Scan(&f.Owner, &f.Seq, &f.SessionID, &f.SessionSeq, &f.Name, &data, &at); err != nil {
		return nil, err
	}
	f.Data, f.CreatedAt = json.RawMessage(data), tm(at)
	return f, nil
}

// FeedList implements store.People.
func (e executor) FeedList(ctx context.Context, p *store.FeedListParams) ([]*store.FeedEntry, error) {
	limit := p.Limit
	if limit <= 0 {
		limit = 500
	}
	rows, err := e.q.Query(ctx, feedSelect+`WHERE f.owner = $1 AND f.seq > $2 ORDER BY f.seq LIMIT $3`, p.Owner, p.AfterSeq, limit)
	if err != nil {
		return nil, fmt.Errorf("postgres: feed list: %w", err)
	}
	return collect(rows, "feed list", scanFeed)
}

// FeedLastSeq implements store.People.
func (e executor) FeedLastSeq(ctx context.Context, owner string) (int64, error) {
	var n int64
	err := e.q.QueryRow(ctx, `SELECT last_seq FROM principals WHERE owner = $1`, owner).Scan(&n)
	if errors.Is(err, pgx.ErrNoRows) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("postgres: feed last seq: %w", err)
	}
	return n, nil
}

// FeedListUnfanned implements store.People.
func (e executor) FeedListUnfanned(ctx context.Context, limit int) ([]*store.FeedEntry, error) {
	if limit <= 0 {
		limit = 100
	}
	rows, err := e.q.Query(ctx, feedSelect+`WHERE NOT f.fanned ORDER BY f.created_at, f.owner, f.seq LIMIT $1`, limit)
	if err != nil {
		return nil, fmt.Errorf("postgres: feed unfanned: %w", err)
	}
	return collect(rows, "feed unfanned", scanFeed)
}

// WebhookEnqueue implements store.People.
func (s *Store) WebhookEnqueue(ctx context.Context, p *store.WebhookEnqueueParams) error {
	return pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		q := textQuerier{tx}
		for _, d := range p.Deliveries {
			if _, err := q.Exec(ctx, `INSERT INTO webhook_deliveries (id, hook, owner, seq, session_id, type, body, status, next_at, created_at, updated_at)
				VALUES ($1, $2, $3, $4, $5, $6, $7, 'pending', $8, $8, $8) ON CONFLICT (owner, seq, hook) DO NOTHING`,
				d.ID, d.Hook, p.Owner, p.Seq, d.SessionID, d.Type, string(d.Body), p.Now.UTC()); err != nil {
				return fmt.Errorf("postgres: webhook enqueue: %w", err)
			}
		}
		if _, err := q.Exec(ctx, `UPDATE feed SET fanned = true WHERE owner = $1 AND seq = $2`, p.Owner, p.Seq); err != nil {
			return fmt.Errorf("postgres: webhook enqueue: %w", err)
		}
		return nil
	})
}

const deliveryCols = `id, hook, owner, seq, session_id, type, body, status, attempts, next_at, lease_owner, lease_until, last_code, last_error, created_at, updated_at`

func scanDelivery(row pgx.Row) (*store.WebhookDelivery, error) {
	d := &store.WebhookDelivery{}
	var body string
	var next, lu, c, u pgtype.Timestamptz
	if err := row.Scan(&d.ID, &d.Hook, &d.Owner, &d.Seq, &d.SessionID, &d.Type, &body, &d.Status, &d.Attempts, &next,
		&d.LeaseOwner, &lu, &d.LastCode, &d.LastError, &c, &u); err != nil {
		return nil, err
	}
	d.Body = json.RawMessage(body)
	d.NextAt, d.LeaseUntil, d.CreatedAt, d.UpdatedAt = tm(next), tm(lu), tm(c), tm(u)
	return d, nil
}

// WebhookClaim implements store.People: the due rows are locked with FOR
// UPDATE SKIP LOCKED, so a claim running at the same time on another
// replica passes over them instead of waiting for or repeating them.
func (e executor) WebhookClaim(ctx context.Context, p *store.WebhookClaimParams) ([]*store.WebhookDelivery, error) {
	limit := p.Limit
	if limit <= 0 {
		limit = 16
	}
	rows, err := e.q.Query(ctx, `UPDATE webhook_deliveries SET lease_owner = $1, lease_until = $2, updated_at = $3
		WHERE id IN (SELECT id FROM webhook_deliveries WHERE status = 'pending' AND next_at <= $3
			AND (lease_until IS NULL OR lease_until <= $3) ORDER BY next_at LIMIT $4 FOR UPDATE SKIP LOCKED)
		RETURNING `+deliveryCols, p.Owner, p.Until.UTC(), p.Now.UTC(), limit)
	if err != nil {
		return nil, fmt.Errorf("postgres: webhook claim: %w", err)
	}
	return collect(rows, "webhook claim", scanDelivery)
}

// WebhookFinish implements store.People: one statement, so the outcome
// and its trace entry commit together.
func (e executor) WebhookFinish(ctx context.Context, p *store.WebhookFinishParams) (bool, error) {
	var n int
	err := e.q.QueryRow(ctx, `WITH done AS (
			UPDATE webhook_deliveries SET status = $1, attempts = attempts + 1, next_at = $2, lease_owner = '', lease_until = NULL,
				last_code = $3, last_error = $4, updated_at = $5 WHERE id = $6 AND lease_owner = $7 AND status = 'pending'
			RETURNING session_id),
		traced AS (INSERT INTO trace (session_id, run_id, kind, data, at) SELECT session_id, '', 'webhook', $8, $5 FROM done WHERE $8 <> '')
		SELECT count(*) FROM done`,
		p.Status, p.NextAt.UTC(), p.LastCode, p.LastError, p.Now.UTC(), p.ID, p.LeaseOwner, string(p.Trace)).Scan(&n)
	if err != nil {
		return false, fmt.Errorf("postgres: webhook finish: %w", err)
	}
	return n == 1, nil
}

// WebhookNextDue implements store.People.
func (e executor) WebhookNextDue(ctx context.Context) (time.Time, error) {
	var v pgtype.Timestamptz
	if err := e.q.QueryRow(ctx, `SELECT MIN(next_at) FROM webhook_deliveries WHERE status = 'pending'`).Scan(&v); err != nil {
		return time.Time{}, fmt.Errorf("postgres: webhook next due: %w", err)
	}
	return tm(v), nil
}

// WebhookList implements store.People.
func (e executor) WebhookList(ctx context.Context, sessionID string) ([]*store.WebhookDelivery, error) {
	rows, err := e.q.Query(ctx, `SELECT `+deliveryCols+` FROM webhook_deliveries WHERE session_id = $1 ORDER BY created_at, id`, sessionID)
	if err != nil {
		return nil, fmt.Errorf("postgres: webhook list: %w", err)
	}
	return collect(rows, "webhook list", scanDelivery)
}

// NotifyMessagePut implements store.People.
func (e executor) NotifyMessagePut(ctx context.Context, m *store.NotifyMessage) error {
	if _, err := e.q.Exec(ctx, `INSERT INTO notify_messages (request_id, channel, person, session_id, address, ref, created_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT (request_id, channel, person) DO UPDATE SET address = excluded.address, ref = excluded.ref, created_at = excluded.created_at`,
		m.RequestID, m.Channel, m.Person, m.SessionID, m.Address, m.Ref, m.CreatedAt.UTC()); err != nil {
		return fmt.Errorf("postgres: notify message put: %w", err)
	}
	return nil
}

// NotifyMessageList implements store.People.
func (e executor) NotifyMessageList(ctx context.Context, requestID string) ([]*store.NotifyMessage, error) {
	rows, err := e.q.Query(ctx, `SELECT request_id, channel, person, session_id, address, ref, created_at FROM notify_messages
		WHERE request_id = $1 ORDER BY created_at, channel, person`, requestID)
	if err != nil {
		return nil, fmt.Errorf("postgres: notify message list: %w", err)
	}
	return collect(rows, "notify message list", func(r pgx.Row) (*store.NotifyMessage, error) {
		m := &store.NotifyMessage{}
		var c pgtype.Timestamptz
		err := r.Scan(&m.RequestID, &m.Channel, &m.Person, &m.SessionID, &m.Address, &m.Ref, &c)
		m.CreatedAt = tm(c)
		return m, err
	})
}
