package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"

	"github.com/lubanhq/luban/store"
)

// Rows of the append-only log tables (events, feed, trace, audit) that a
// group commit member writes are held back and written when the member
// ends, one multi-row INSERT per table, instead of one statement per row
// (a statement costs more than the row it writes). Nothing else changes:
//
//   - An event's number is known when EventAppend returns: the writer
//     keeps the last event number of each session and the last feed
//     number of each owner it has seen (seqs), so numbering a row needs no
//     statement. A number it does not know is read once, in one statement
//     (the same rule as before: one past the larger of the last row's and
//     the kept last_seq).
//   - Before any other statement of the member that names one of those
//     tables (a read of the log, a delete), the held rows are written
//     first, so every statement sees the rows written before it, as if
//     each had been written at once.
//   - A member that fails is rolled back to its savepoint with what it
//     learnt of the numbers; a batch that does not commit forgets them all.
//   - The numbers are only trusted while no other connection (another
//     process, or this store's own writes outside the group commit)
//     committed since this writer's last commit: SQLite's WAL index header
//     counts every commit (iChange), and a batch that finds it moved by
//     anything but its own previous commit starts from what the database
//     says.

// bufTables are the tables whose rows a member holds back: a statement
// naming one of them writes the held rows first.
var bufTables = []string{"events", "feed", "trace", "audit", "principals", "log_seqs"}

// maxRowsPerInsert bounds the rows of one multi-row INSERT (SQLite bounds a
// statement's parameters).
const maxRowsPerInsert = 200

// seqs are the numbers the writer goroutine knows: the last event number
// of a session, a session's owner and key (sessions.k), the key of the
// last feed entry of an owner (feedKey), the last number given in a
// session's range of trace and audit entries (one counter, nextLog), the
// last audit id of no session (0 when not known).
type seqs struct {
	ev    map[string]int64
	owner map[string]string
	key   map[string]int64
	feed  map[string]int64
	logs  map[string]int64
	audit int64
}

func newSeqs() *seqs {
	return &seqs{ev: map[string]int64{}, owner: map[string]string{}, key: map[string]int64{}, feed: map[string]int64{}, logs: map[string]int64{}}
}

func (q *seqs) reset() {
	clear(q.ev)
	clear(q.owner)
	clear(q.key)
	clear(q.feed)
	clear(q.logs)
	q.audit = 0
}

// merge adds what o learnt.
func (q *seqs) merge(o *seqs) {
	for k, v := range o.ev {
		q.ev[k] = v
	}
	for k, v := range o.owner {
		q.owner[k] = v
	}
	for k, v := range o.key {
		q.key[k] = v
	}
	for k, v := range o.feed {
		q.feed[k] = v
	}
	for k, v := range o.logs {
		q.logs[k] = v
	}
	if o.audit > 0 {
		q.audit = o.audit
	}
}

type eventRow struct {
	name, data, ref any
	runID           string
	k, at           int64
}

// traceRow is a trace entry, or an audit entry of a session (kind
// auditKindValue; request, call, action and reason set).
type traceRow struct {
	runID, kind, data             any
	request, call, action, reason any
	id, at                        int64
	audit                         bool
}

type auditRow struct {
	id                                               int64
	session, request, call, run, action, reason, sum any
	at                                               int64
}

type feedRow struct {
	name, data                    string
	ref                           any
	k, sk, sessionSeq, at, fanned int64
}

// msgRef is a message a member inserted: its session, its id and its
// number in the session (the low 32 bits of its seq, messagesOf).
type msgRef struct {
	session, id string
	n           int64
}

// rowBuf is one member's held-back rows and what it learnt of the numbers
// (its own, merged into the writer's when the member succeeds).
type rowBuf struct {
	r      *rawConn
	known  *seqs // the writer's, valid since its last commit
	learnt *seqs
	events []eventRow
	feed   []feedRow
	trace  []traceRow
	audit  []auditRow
	// msgs are the messages the member inserted, for its events'
	// references (messageRef).
	msgs []msgRef
	// wrote is set once held rows were written.
	wrote bool
	// touches caches, per query text, whether it names a bufTables table.
	touches map[string]bool
	// hand is what the member appended, for its session's Followers;
	// hub is the store's, which says whether a session has any.
	hand *handing
	hub  *store.Hub
}

func (b *rowBuf) pending() bool {
	return len(b.events)+len(b.feed)+len(b.trace)+len(b.audit) > 0
}

// before writes the held rows when q names one of their tables.
func (b *rowBuf) before(q string) error {
	if !b.pending() {
		return nil
	}
	t, ok := b.touches[q]
	if !ok {
		l := strings.ToLower(q)
		for _, name := range bufTables {
			if strings.Contains(l, name) {
				t = true
				break
			}
		}
		b.touches[q] = t
	}
	if !t {
		return nil
	}
	return b.flush()
}

// session is what the writer knows of a session: its key, its owner, its
// last event number.
type session struct {
	key   int64
	owner string
	last  int64
}

func (b *rowBuf) lastEvent(id string) (session, bool) {
	for _, q := range []*seqs{b.learnt, b.known} {
		if v, ok := q.ev[id]; ok {
			return session{key: q.key[id], owner: q.owner[id], last: v}, true
		}
	}
	return session{}, false
}

func (b *rowBuf) lastFeed(owner string) (int64, bool) {
	if v, ok := b.learnt.feed[owner]; ok {
		return v, true
	}
	v, ok := b.known.feed[owner]
	return v, ok
}

// query runs a one-row read on the writer's connection, counted as a
// statement, without writing the held rows first: the numbers it reads are
// of a session or an owner that has no held rows (it would be known).
func (b *rowBuf) query(ctx context.Context, q string, args ...any) rowScanner {
	return rawTx{r: b.r}.QueryRowContext(ctx, q, args...)
}

// inserted notes that the member inserted message id of session with seq.
func (b *rowBuf) inserted(session, id string, seq int64) {
	b.msgs = append(b.msgs, msgRef{session: session, id: id, n: seq & (1<<32 - 1)})
}

// messageRef is what an event of session (key sk) stores as its reference
// to message id: the message's number in the session, an integer
// (EventList finds the message by its seq), or the id as text when the
// session has no such message (read as a reference to none, as before
// migration 00024).
func (b *rowBuf) messageRef(ctx context.Context, session string, sk int64, id string) (any, error) {
	for i := len(b.msgs) - 1; i >= 0; i-- {
		if m := &b.msgs[i]; m.id == id && m.session == session {
			return m.n, nil
		}
	}
	var seq int64
	err := b.query(ctx, `SELECT seq FROM messages WHERE seq BETWEEN ?1 << 32 AND (?1 << 32) + 4294967295 AND id = ?2`, sk, idMessage.enc(id)).Scan(&seq)
	if errors.Is(err, sql.ErrNoRows) {
		return id, nil
	}
	if err != nil {
		return nil, fmt.Errorf("sqlite: event append: message %s: %w", id, err)
	}
	return seq & (1<<32 - 1), nil
}

// nextEvent returns session id (its key and owner) with the number of its
// next event as last (one past the larger of its last event's and
// sessions.last_seq, which keeps the numbers of events Prune deleted);
// store.ErrNotFound when there is no such session.
func (b *rowBuf) nextEvent(ctx context.Context, id string) (session, error) {
	if s, ok := b.lastEvent(id); ok {
		s.last++
		return s, nil
	}
	var s session
	err := b.query(ctx, `SELECT s.k, s.owner, MAX(s.last_seq, `+lastEventSeq("s.k")+`)
		FROM sessions s WHERE s.id = ?`, id).Scan(&s.key, &s.owner, &s.last)
	if err != nil {
		return session{}, notFound(err, "event append: session "+id)
	}
	s.last++
	return s, nil
}

// nextFeed returns the key (rowid, feedKey) of owner's next feed entry:
// its number is one past the larger of its last entry's and
// principals.last_seq (the numbers of entries that were deleted). An
// owner without a principals row gets one, and with it its key.
func (b *rowBuf) nextFeed(ctx context.Context, owner string) (int64, error) {
	if last, ok := b.lastFeed(owner); ok {
		return last + 1, nil
	}
	var pk, last int64
	err := b.query(ctx, `SELECT p.k, MAX(p.last_seq, COALESCE((SELECT MAX(f.k) FROM feed f WHERE f.`+feedOf("p.k")+`), 0) & 4294967295)
		FROM principals p WHERE p.owner = ?`, owner).Scan(&pk, &last)
	if errors.Is(err, sql.ErrNoRows) {
		err = b.query(ctx, `INSERT INTO principals (owner) VALUES (?) RETURNING k`, owner).Scan(&pk)
	}
	if err != nil {
		return 0, fmt.Errorf("sqlite: feed append: %w", err)
	}
	if last >= feedMax {
		return 0, fmt.Errorf("sqlite: feed append: owner %s has %d entries", owner, int64(feedMax))
	}
	return feedKey(pk, last+1), nil
}

// created notes a session this member created, with key k: no events,
// no trace and no audit entries yet.
func (b *rowBuf) created(id, owner string, k int64) {
	b.learnt.ev[id], b.learnt.owner[id], b.learnt.key[id], b.learnt.logs[id] = 0, owner, k, 0
}

// nextLog returns the key of session id and the next number of its range
// of trace and audit entries (traceID, nextLogOf); ok is false when there
// is no such session.
func (b *rowBuf) nextLog(ctx context.Context, id string) (sk, n int64, ok bool, err error) {
	for _, q := range []*seqs{b.learnt, b.known} {
		if v, ok := q.logs[id]; ok {
			if k, ok := q.key[id]; ok {
				return k, v + 1, true, nil
			}
		}
	}
	err = b.query(ctx, `SELECT s.k, `+nextLogOf("s.k")+` FROM sessions s WHERE s.id = ?`, id).Scan(&sk, &n)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, 0, false, nil
	}
	if err != nil {
		return 0, 0, false, err
	}
	b.learnt.key[id] = sk
	return sk, n + 1, true, nil
}

// appendTrace holds back p's trace entry.
func (b *rowBuf) appendTrace(ctx context.Context, p *store.TraceInsertParams) error {
	sk, n, ok, err := b.nextLog(ctx, p.SessionID)
	if err != nil {
		return fmt.Errorf("sqlite: trace insert: %w", err)
	}
	if !ok {
		return fmt.Errorf("sqlite: trace insert: session %s: %w", p.SessionID, store.ErrNotFound)
	}
	if n > traceMax {
		return fmt.Errorf("sqlite: trace insert: session %s has %d entries", p.SessionID, int64(traceMax))
	}
	b.learnt.logs[p.SessionID], b.learnt.key[p.SessionID] = n, sk
	b.trace = append(b.trace, traceRow{id: traceID(sk, n), runID: b.r.ids.enc(idRun, p.RunID), kind: traceKinds.enc(p.Kind), data: packTrace(p.Data), at: ts(p.Now)})
	return nil
}

// An audit entry's id is its session's key (sessions.k) in the high 32
// bits and its number in the session's range in the low 32 (auditOf), as
// a trace entry's: a session's entries are one range, read without an
// index. A session's new entries are rows of trace (migration 00033,
// auditInTrace), numbered with its trace entries from one counter: one
// past the largest of the range's last trace entry, its last audit entry
// in audit (stored before the migration) and its mark in log_seqs
// ('audit:' and the key, auditMark), which Prune raises to the largest
// audit id it deletes of the range: no audit id is given twice, and a
// trace entry's number is not given twice while its session's entries
// are not all deleted. An entry of no session, every entry stored before
// migration 00025 and the entries of a deleted session (SessionDelete
// renumbers them into audit, and its range starts empty for a session
// that takes the key later) have ids below 2³² (auditOld), read from
// audit through the partial index audit_session.
const auditOld = `id < 4294967296`

// auditKind is, in a statement, the kind of an audit entry stored in
// trace (auditKindValue); no trace entry's kind is a negative integer
// (traceKinds).
const auditKind = `-1`

// auditKindValue is auditKind bound as a parameter.
const auditKindValue = int64(-1)

// auditOf is the condition, on audit, that selects the ids of the range
// of the session key the SQL expression k gives.
func auditOf(k string) string {
	return `id BETWEEN ` + k + ` << 32 AND (` + k + ` << 32) + 4294967295`
}

// nextLogOf is, in a statement, the last number given in the range of
// trace and audit entries of the session key the SQL expression k gives
// (0: none).
func nextLogOf(k string) string {
	return `(MAX(COALESCE((SELECT MAX(t.id) FROM trace t WHERE t.` + traceOf(k) + `), 0),
		COALESCE((SELECT MAX(a.id) FROM audit a WHERE a.` + auditOf(k) + `), 0),
		COALESCE((SELECT last FROM log_seqs WHERE name = 'audit:' || ` + k + `), 0)) & 4294967295)`
}

// auditMark is, in a statement, the log_seqs name of the range of the
// audit id the SQL expression id gives ('audit' below 2³²).
func auditMark(id string) string {
	return `CASE WHEN ` + id + ` < 4294967296 THEN 'audit' ELSE 'audit:' || (` + id + ` >> 32) END`
}

// A feed entry's key (its rowid) is its owner's key (principals.k) in
// the high 32 bits and its number in the owner's feed (FeedEntry.Seq) in
// the low 32: an owner's entries are one range of the table's own b-tree,
// appended at its end (migration 00028); the key is all the row holds of
// the owner and the number (migration 00029).
const feedMax = 1<<32 - 1

// feedKey is the rowid of owner key pk's entry number n.
func feedKey(pk, n int64) int64 { return pk<<32 | n }

// feedOf is the condition, on feed, that selects the entries of the owner
// whose key the SQL expression k gives.
func feedOf(k string) string {
	return `k BETWEEN ` + k + ` << 32 AND (` + k + ` << 32) + 4294967295`
}

// nextAuditID is, in a statement, the next id of an entry of no session:
// one past the larger of the last such row's and the largest deleted
// (log_seqs 'audit').
const nextAuditID = `(SELECT MAX(COALESCE((SELECT MAX(id) FROM audit WHERE ` + auditOld + `), 0),
	COALESCE((SELECT last FROM log_seqs WHERE name = 'audit'), 0)) + 1)`

// appendAudit holds back p's audit entry: a session's as a row of trace
// with the next number of its range (nextLog), an entry of no session as
// a row of audit with the next id of no session (nextAuditID, read once
// and then kept).
func (b *rowBuf) appendAudit(ctx context.Context, p *store.AuditInsertParams) error {
	sk, n, ok, err := b.nextLog(ctx, p.SessionID)
	if err != nil {
		return fmt.Errorf("sqlite: audit insert: %w", err)
	}
	ids := &b.r.ids
	if ok {
		if n > traceMax {
			return fmt.Errorf("sqlite: audit insert: session %s has %d entries", p.SessionID, int64(traceMax))
		}
		b.learnt.logs[p.SessionID], b.learnt.key[p.SessionID] = n, sk
		data := packSummary(p.Summary)
		if data == nil {
			data = ""
		}
		b.trace = append(b.trace, traceRow{id: traceID(sk, n), runID: ids.enc(idRun, p.RunID), kind: auditKindValue, data: data, at: ts(p.Now), audit: true,
			request: ids.enc(idAsk, p.RequestID), call: ids.enc(idCall, p.ToolCallID), action: auditActions.enc(p.Action), reason: auditReasons.enc(p.Reason)})
		return nil
	}
	last := b.learnt.audit
	if last == 0 {
		last = b.known.audit
	}
	if last == 0 {
		if err := b.query(ctx, `SELECT `+nextAuditID+` - 1`).Scan(&last); err != nil {
			return fmt.Errorf("sqlite: audit insert: %w", err)
		}
	}
	b.learnt.audit = last + 1
	b.audit = append(b.audit, auditRow{id: last + 1, session: ids.enc(idSession, p.SessionID), request: ids.enc(idAsk, p.RequestID), call: ids.enc(idCall, p.ToolCallID),
		run: ids.enc(idRun, p.RunID), action: auditActions.enc(p.Action), reason: auditReasons.enc(p.Reason), sum: packSummary(p.Summary), at: ts(p.Now)})
	return nil
}

// appendEvent holds back p's event and, for a store.FeedEvents name, its
// feed entries: the owner's (the webhook outbox row) and one per Audience
// principal besides the owner; an event that references its interaction
// (Ref) has entries that do too (FeedList reads the request). It returns
// the event and the Subscribe keys to wake after the commit.
func (b *rowBuf) appendEvent(ctx context.Context, p *store.EventAppendParams) (*store.Event, []string, error) {
	s, err := b.nextEvent(ctx, p.SessionID)
	if err != nil {
		return nil, nil, err
	}
	owner, seq := s.owner, s.last
	k, err := eventKey(s.key, seq)
	if err != nil {
		return nil, nil, err
	}
	data, ref := any(""), any(nil)
	if p.Ref != "" {
		ref = idAsk.enc(p.Ref)
	} else {
		data = packEventData(p.Data, p.SessionID, p.RunID, p.MessageRef)
		if p.MessageRef != "" {
			if ref, err = b.messageRef(ctx, p.SessionID, s.key, p.MessageRef); err != nil {
				return nil, nil, err
			}
		}
	}
	var keys []string
	var feed []feedRow
	if store.IsFeedEvent(p.Name) {
		fdata, fref := string(p.Data), any(nil)
		if p.Ref != "" {
			fdata, fref = "", idAsk.enc(p.Ref)
		}
		seen := map[string]bool{}
		for i, who := range append([]string{owner}, p.Audience...) {
			if seen[who] {
				continue
			}
			seen[who] = true
			fk, err := b.nextFeed(ctx, who)
			if err != nil {
				return nil, nil, err
			}
			if fk&feedMax == 0 {
				return nil, nil, fmt.Errorf("sqlite: feed append: owner %s has %d entries", who, int64(feedMax))
			}
			// Only the owner's entry is a webhook outbox row (fanned 0),
			// and only while the store has an outbox (SetOutbox).
			fanned := int64(1)
			if i == 0 {
				if !b.r.noOutbox.Load() {
					fanned = 0
				}
				keys = append(keys, store.PrincipalKey(who), store.FeedKey)
			} else {
				keys = append(keys, store.PrincipalKey(who))
			}
			feed = append(feed, feedRow{k: fk, sk: s.key, sessionSeq: seq, name: p.Name, data: fdata, ref: fref, at: ts(p.Now), fanned: fanned})
			b.learnt.feed[who] = fk
		}
	}
	b.learnt.ev[p.SessionID], b.learnt.owner[p.SessionID], b.learnt.key[p.SessionID] = seq, owner, s.key
	b.events = append(b.events, eventRow{k: k, name: eventNames.enc(p.Name), data: data, ref: ref, runID: p.RunID, at: ts(p.Now)})
	b.feed = append(b.feed, feed...)
	return &store.Event{SessionID: p.SessionID, Seq: seq, Name: p.Name, Data: p.Data, RunID: p.RunID, CreatedAt: p.Now}, keys, nil
}

// emptied is rows cleared and cut to length 0, for reuse; nil when it grew
// beyond maxKeptRows.
func emptied[T any](rows []T) []T {
	if cap(rows) > maxKeptRows {
		return nil
	}
	clear(rows)
	return rows[:0]
}

// maxKeptRows bounds the held rows of a table whose slice is reused.
const maxKeptRows = 64

// insertMany writes n rows with one INSERT per maxRowsPerInsert rows:
// head is the statement up to VALUES, row one row's values (cols
// parameters), arg appends row i's arguments.
func (b *rowBuf) insertMany(ctx context.Context, head, row string, cols, n int, arg func(i int, args []any) []any) error {
	for start := 0; start < n; start += maxRowsPerInsert {
		end := min(n, start+maxRowsPerInsert)
		args := b.r.manyArgs[:0]
		for i := start; i < end; i++ {
			args = arg(i, args)
		}
		_, err := (rawTx{r: b.r}).ExecContext(ctx, b.r.manyQuery(head, row, end-start), args...)
		clear(args) // hold no row's values
		b.r.manyArgs = args[:0]
		if err != nil {
			return err
		}
	}
	return nil
}

// insertTrace writes trace rows, a session's audit entries among them,
// one INSERT per maxRowsPerInsert rows: a trace entry's row binds 5
// values (the audit's columns NULL), an audit entry's 9.
func (b *rowBuf) insertTrace(ctx context.Context, tr []traceRow) error {
	const head, row, alt = `INSERT INTO trace (id, run_id, kind, data, at, request_id, tool_call_id, action, reason)`,
		`(?, ?, ?, ?, ?, NULL, NULL, NULL, NULL)`, `(?, ?, ?, ?, ?, ?, ?, ?, ?)`
	for start := 0; start < len(tr); start += maxRowsPerInsert {
		end := min(len(tr), start+maxRowsPerInsert)
		args := b.r.manyArgs[:0]
		var mask uint64
		allAudit := end-start > 64
		for i := start; i < end; i++ {
			t := &tr[i]
			args = append(args, t.id, t.runID, t.kind, t.data, t.at)
			if t.audit || allAudit {
				args = append(args, t.request, t.call, t.action, t.reason)
				mask |= 1 << (i - start)
			}
		}
		q := b.r.manyQueryMixed(head, row, alt, end-start, mask)
		if allAudit {
			q = b.r.manyQuery(head, alt, end-start)
		}
		_, err := (rawTx{r: b.r}).ExecContext(ctx, q, args...)
		clear(args) // hold no row's values
		b.r.manyArgs = args[:0]
		if err != nil {
			return err
		}
	}
	return nil
}

// flush writes the held rows, one statement per table.
func (b *rowBuf) flush() error {
	if !b.pending() {
		return nil
	}
	ctx := context.Background()
	ev, fd, tr, au := b.events, b.feed, b.trace, b.audit
	b.events, b.feed, b.trace, b.audit = nil, nil, nil, nil
	// The next rows reuse the slices, without this member's values.
	defer func() { b.events, b.feed, b.trace, b.audit = emptied(ev), emptied(fd), emptied(tr), emptied(au) }()
	b.wrote = true
	if err := b.insertMany(ctx, `INSERT INTO events (k, name, data, ref, run_id, created_at)`, `(?, ?, ?, ?, ?, ?)`, 6, len(ev), func(i int, a []any) []any {
		e := &ev[i]
		var run any
		if e.runID != "" {
			run = idRun.enc(e.runID)
		}
		return append(a, e.k, e.name, e.data, e.ref, run, e.at)
	}); err != nil {
		return fmt.Errorf("sqlite: event append: %w", err)
	}
	if err := b.insertMany(ctx, `INSERT INTO feed (k, sk, session_seq, name, data, ref, created_at, fanned)`, `(?, ?, ?, ?, ?, ?, ?, ?)`, 8, len(fd), func(i int, a []any) []any {
		f := &fd[i]
		return append(a, f.k, f.sk, f.sessionSeq, f.name, f.data, f.ref, f.at, f.fanned)
	}); err != nil {
		return fmt.Errorf("sqlite: feed append: %w", err)
	}
	if err := b.insertTrace(ctx, tr); err != nil {
		return fmt.Errorf("sqlite: trace insert: %w", err)
	}
	if err := b.insertMany(ctx, `INSERT INTO audit (id, session_id, request_id, tool_call_id, run_id, action, reason, summary, at)`, `(?, ?, ?, ?, ?, ?, ?, ?, ?)`, 9, len(au), func(i int, a []any) []any {
		r := &au[i]
		return append(a, r.id, r.session, r.request, r.call, r.run, r.action, r.reason, r.sum, r.at)
	}); err != nil {
		return fmt.Errorf("sqlite: audit insert: %w", err)
	}
	return nil
}
