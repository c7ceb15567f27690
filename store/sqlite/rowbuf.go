package sqlite

import (
	"context"
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
var bufTables = []string{"events", "feed", "trace", "audit", "principals"}

// maxRowsPerInsert bounds the rows of one multi-row INSERT (SQLite bounds a
// statement's parameters).
const maxRowsPerInsert = 200

// seqs are the numbers the writer goroutine knows: the last event number
// of a session, a session's owner, the last feed number of an owner.
type seqs struct {
	ev    map[string]int64
	owner map[string]string
	feed  map[string]int64
}

func newSeqs() *seqs {
	return &seqs{ev: map[string]int64{}, owner: map[string]string{}, feed: map[string]int64{}}
}

func (q *seqs) reset() {
	clear(q.ev)
	clear(q.owner)
	clear(q.feed)
}

// merge adds what o learnt.
func (q *seqs) merge(o *seqs) {
	for k, v := range o.ev {
		q.ev[k] = v
	}
	for k, v := range o.owner {
		q.owner[k] = v
	}
	for k, v := range o.feed {
		q.feed[k] = v
	}
}

type eventRow struct {
	sessionID, name, data string
	ref                   any
	runID                 string
	seq, at               int64
}

type feedRow struct {
	owner, sessionID, name, data string
	ref                          any
	seq, sessionSeq, at, fanned  int64
}

// rowBuf is one member's held-back rows and what it learnt of the numbers
// (its own, merged into the writer's when the member succeeds).
type rowBuf struct {
	r      *rawConn
	known  *seqs // the writer's, valid since its last commit
	learnt *seqs
	events []eventRow
	feed   []feedRow
	trace  []*store.TraceInsertParams
	audit  []*store.AuditInsertParams
	// wrote is set once held rows were written.
	wrote bool
	// touches caches, per query text, whether it names a bufTables table.
	touches map[string]bool
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

func (b *rowBuf) lastEvent(id string) (int64, string, bool) {
	if v, ok := b.learnt.ev[id]; ok {
		return v, b.learnt.owner[id], true
	}
	if v, ok := b.known.ev[id]; ok {
		return v, b.known.owner[id], true
	}
	return 0, "", false
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

// nextEvent returns the owner of session id and the number of its next
// event (one past the larger of its last event's and sessions.last_seq,
// which keeps the numbers of events Prune deleted); store.ErrNotFound when there is no such session.
func (b *rowBuf) nextEvent(ctx context.Context, id string) (string, int64, error) {
	if last, owner, ok := b.lastEvent(id); ok {
		return owner, last + 1, nil
	}
	var owner string
	var last int64
	err := b.query(ctx, `SELECT s.owner, MAX(s.last_seq, COALESCE((SELECT MAX(e.seq) FROM events e WHERE e.session_id = s.id), 0))
		FROM sessions s WHERE s.id = ?`, id).Scan(&owner, &last)
	if err != nil {
		return "", 0, notFound(err, "event append: session "+id)
	}
	b.learnt.owner[id] = owner
	return owner, last + 1, nil
}

// nextFeed returns the number of owner's next feed entry: one past the
// larger of its last entry and principals.last_seq (the numbers of entries
// that were deleted).
func (b *rowBuf) nextFeed(ctx context.Context, owner string) (int64, error) {
	if last, ok := b.lastFeed(owner); ok {
		return last + 1, nil
	}
	var last int64
	if err := b.query(ctx, `SELECT MAX(COALESCE((SELECT last_seq FROM principals WHERE owner = ?1), 0),
		COALESCE((SELECT MAX(seq) FROM feed WHERE owner = ?1), 0))`, owner).Scan(&last); err != nil {
		return 0, fmt.Errorf("sqlite: feed append: %w", err)
	}
	return last + 1, nil
}

// created notes a session this member created: no events yet.
func (b *rowBuf) created(id, owner string) {
	b.learnt.ev[id], b.learnt.owner[id] = 0, owner
}

// appendEvent holds back p's event and, for a store.FeedEvents name, its
// feed entries: the owner's (the webhook outbox row) and one per Audience
// principal besides the owner; an event that references its interaction
// (Ref) has entries that do too (FeedList reads the request). It returns
// the event and the Subscribe keys to wake after the commit.
func (b *rowBuf) appendEvent(ctx context.Context, p *store.EventAppendParams) (*store.Event, []string, error) {
	owner, seq, err := b.nextEvent(ctx, p.SessionID)
	if err != nil {
		return nil, nil, err
	}
	data, ref := string(p.Data), any(nil)
	if p.Ref != "" {
		data, ref = "", idAsk.enc(p.Ref)
	} else if p.MessageRef != "" {
		ref = p.MessageRef
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
			fseq, err := b.nextFeed(ctx, who)
			if err != nil {
				return nil, nil, err
			}
			// Only the owner's entry is a webhook outbox row (fanned 0).
			fanned := int64(1)
			if i == 0 {
				fanned = 0
				keys = append(keys, store.PrincipalKey(who), store.FeedKey)
			} else {
				keys = append(keys, store.PrincipalKey(who))
			}
			feed = append(feed, feedRow{owner: who, seq: fseq, sessionID: p.SessionID, sessionSeq: seq, name: p.Name, data: fdata, ref: fref, at: ts(p.Now), fanned: fanned})
			b.learnt.feed[who] = fseq
		}
	}
	b.learnt.ev[p.SessionID], b.learnt.owner[p.SessionID] = seq, owner
	b.events = append(b.events, eventRow{sessionID: p.SessionID, seq: seq, name: p.Name, data: data, ref: ref, runID: p.RunID, at: ts(p.Now)})
	b.feed = append(b.feed, feed...)
	return &store.Event{SessionID: p.SessionID, Seq: seq, Name: p.Name, Data: p.Data, RunID: p.RunID, CreatedAt: p.Now}, keys, nil
}

// insertMany writes rows of n columns each with one INSERT per
// maxRowsPerInsert rows: head is the statement up to VALUES, tail follows
// each row's placeholders.
func (b *rowBuf) insertMany(ctx context.Context, head string, cols, n int, arg func(i int, args []any) []any) error {
	row := "(" + strings.TrimSuffix(strings.Repeat("?, ", cols), ", ") + ")"
	for start := 0; start < n; start += maxRowsPerInsert {
		end := min(n, start+maxRowsPerInsert)
		args := make([]any, 0, (end-start)*cols)
		for i := start; i < end; i++ {
			args = arg(i, args)
		}
		q := head + " VALUES " + strings.TrimSuffix(strings.Repeat(row+", ", end-start), ", ")
		if _, err := (rawTx{r: b.r}).ExecContext(ctx, q, args...); err != nil {
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
	b.wrote = true
	if err := b.insertMany(ctx, `INSERT INTO events (session_id, seq, name, data, ref, run_id, created_at)`, 7, len(ev), func(i int, a []any) []any {
		e := &ev[i]
		var run any
		if e.runID != "" {
			run = e.runID
		}
		return append(a, e.sessionID, e.seq, e.name, e.data, e.ref, run, e.at)
	}); err != nil {
		return fmt.Errorf("sqlite: event append: %w", err)
	}
	if err := b.insertMany(ctx, `INSERT INTO feed (owner, seq, session_id, session_seq, name, data, ref, created_at, fanned)`, 9, len(fd), func(i int, a []any) []any {
		f := &fd[i]
		return append(a, f.owner, f.seq, f.sessionID, f.sessionSeq, f.name, f.data, f.ref, f.at, f.fanned)
	}); err != nil {
		return fmt.Errorf("sqlite: feed append: %w", err)
	}
	if err := b.insertMany(ctx, `INSERT INTO trace (session_id, run_id, kind, data, at)`, 5, len(tr), func(i int, a []any) []any {
		p := tr[i]
		return append(a, p.SessionID, p.RunID, p.Kind, string(p.Data), ts(p.Now))
	}); err != nil {
		return fmt.Errorf("sqlite: trace insert: %w", err)
	}
	if err := b.insertMany(ctx, `INSERT INTO audit (session_id, request_id, tool_call_id, run_id, action, reason, summary, at)`, 8, len(au), func(i int, a []any) []any {
		p := au[i]
		return append(a, p.SessionID, p.RequestID, p.ToolCallID, p.RunID, p.Action, p.Reason, nullJSON(p.Summary), ts(p.Now))
	}); err != nil {
		return fmt.Errorf("sqlite: audit insert: %w", err)
	}
	return nil
}
