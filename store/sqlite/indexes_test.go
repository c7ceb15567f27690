package sqlite

import (
	"context"
	"database/sql"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/lubanhq/luban/store"
	"github.com/lubanhq/luban/store/storetest"
)

// collecting is a Store that hands the query texts its statement caches
// and the group commit's statements saw to seen when it closes.
type collecting struct {
	*Store
	seen func(qs []string)
}

func (c collecting) Close() error {
	var qs []string
	for _, sc := range []*stmtCache{c.rc, c.wc} {
		sc.mu.RLock()
		for q := range sc.m {
			qs = append(qs, q)
		}
		sc.mu.RUnlock()
	}
	// The group commit's statements (the writer is idle once every InTx
	// returned).
	for q := range c.raw.stmts {
		qs = append(qs, q)
	}
	c.seen(qs)
	return c.Store.Close()
}

// constraintIndexes enforce a rule (docs/design.md §3–4) rather than serve a query:
// a unique index is needed even when no plan reads it.
var constraintIndexes = map[string]bool{
	"messages_one_result":    true, // one ToolResult per tool call
	"interactions_tool_call": true, // one interaction per tool call
	"webhook_deliveries_row": true, // one delivery per feed row and hook
}

var usingIndex = regexp.MustCompile(`USING (?:COVERING )?INDEX (\w+)|USING (?:INTEGER )?(PRIMARY KEY)`)

// fullScan is a plan step that reads a whole table.
var fullScan = regexp.MustCompile(`^SCAN \w+$`)

// scansAllowed are the queries that may read a whole table: maintenance
// (retention, deleting a session), never a run's step.
var scansAllowed = []string{
	"DELETE FROM audit WHERE id IN (SELECT id FROM audit WHERE at < ?",               // Prune: oldest rows first, by rowid
	"END, MAX(id) FROM (SELECT id FROM audit WHERE at < ?",                           // Prune: the largest id it deletes of each range
	"DELETE FROM trace WHERE id IN (SELECT id FROM trace WHERE kind = -1 AND at < ?", // Prune: a session's audit entries in trace
	"END, MAX(id) FROM (SELECT id FROM trace WHERE kind = -1 AND at < ?",             // Prune: the largest id it deletes of each range
	"SELECT id FROM sessions s WHERE updated_at < ?",                                 // Prune: sessions idle since
	"DELETE FROM runs WHERE session_id = ?",                                          // SessionDelete
	"DELETE FROM feed WHERE sk = (SELECT k FROM sessions WHERE id = ?) RETURNING",    // SessionDelete: no index by session
}

// hotQueries are the queries of every cycle (and of every replay), each
// with the index its plan must use: a query that stops using it reads a
// table's worth of pages per step.
var hotQueries = []struct{ name, sql, index string }{
	{"group commit's next event number", "SELECT s.k, s.owner, MAX(s.last_seq, COALESCE((SELECT (e.k & 4294967295) FROM events e", "PRIMARY KEY"},
	{"EventList", "SELECT (e.k & 4294967295), e.name, e.data, i.request", "PRIMARY KEY"},
	{"EventList (interaction reference)", "SELECT (e.k & 4294967295), e.name, e.data, i.request", "PRIMARY KEY"},
	{"EventList (message reference)", "LEFT JOIN messages m ON m.seq = CASE WHEN e.ref < 4294967296 THEN (s.k) * 4294967296 + e.ref", "PRIMARY KEY"},
	{"EventDelete", "DELETE FROM events AS e WHERE e.k BETWEEN (SELECT k * 4294967296 FROM sessions WHERE id = ?1)", "PRIMARY KEY"},
	{"SessionGet's last event number", "MAX(last_seq, COALESCE((SELECT (e.k & 4294967295) FROM events e WHERE e.k > (sessions.k)", "PRIMARY KEY"},
	{"MessageList", "FROM messages WHERE seq BETWEEN (SELECT k << 32 FROM sessions WHERE id = ?1)", "PRIMARY KEY"},
	{"MessageInsert's next number", "SELECT m.seq FROM messages m WHERE m.seq BETWEEN k << 32", "PRIMARY KEY"},
	{"InteractionGetPending", "WHERE session_id = ? AND status = 0 ORDER BY created_at LIMIT 1", "interactions_session_pending"},
	{"InboxList (pending)", "WHERE s.owner = ? AND i.status = 0", "interactions_session_pending"},
	{"InteractionList", "FROM interactions WHERE session_id = ? ORDER BY created_at, id", "interactions_tool_call"},
	{"InteractionListPending", "FROM interactions WHERE session_id = ? AND status = 0 ORDER BY created_at, id", "interactions_session_pending"},
	{"InteractionGetByToolCall", "FROM interactions WHERE session_id = ? AND tool_call_id = ?", "interactions_tool_call"},
	{"InteractionListExpired", "WHERE status = 0 AND expires_at", "interactions_session_pending"},
	{"InteractionGet", "FROM interactions WHERE id = ?", "PRIMARY KEY"},
	{"RunGet", "FROM runs WHERE id = ?", "PRIMARY KEY"},
	{"RunGetActive", "FROM runs WHERE id = (SELECT active_run FROM sessions WHERE id = ?)", "PRIMARY KEY"},
	{"RunListRecoverable", "FROM runs WHERE open = 1 AND status = 1 AND lease_until", "runs_open"},
	{"DeadlineListDue", "WHERE d.fired_at IS NULL AND d.due_at <= ?", "interaction_deadlines_due"},
	{"DeadlineListDue (timeouts)", "FROM interactions i WHERE i.timeout_fired IS NULL AND i.expires_at <= ?1", "interactions_timeout"},
	{"DeadlineNextDue (timeouts)", "FROM interactions WHERE timeout_fired IS NULL ORDER BY expires_at LIMIT 1", "interactions_timeout"},
	{"SessionGet", "FROM sessions WHERE id = ?", "sqlite_autoindex_sessions_1"},
	{"SessionList", "FROM sessions WHERE owner = ?", "sessions_owner_updated"},
	{"TraceList", "FROM trace WHERE id BETWEEN (SELECT k FROM sessions WHERE id = ?1) << 32", "PRIMARY KEY"},
	{"AuditList", "FROM audit WHERE id BETWEEN (SELECT k FROM sessions WHERE id = ?2) << 32", "PRIMARY KEY"},
	{"AuditList (entries stored before 00025)", "FROM audit WHERE session_id = ?1 AND id < 4294967296", "audit_session"},
	{"AuditList (a session's entries in trace)", "FROM trace\n\t\tWHERE id BETWEEN (SELECT k FROM sessions WHERE id = ?2) << 32", "PRIMARY KEY"},
	{"group commit's next trace or audit number", "SELECT s.k, (MAX(COALESCE((SELECT MAX(t.id) FROM trace t WHERE t.id BETWEEN s.k << 32", "PRIMARY KEY"},
	{"FeedList", "WHERE f.k > (SELECT k << 32 FROM principals WHERE owner = ?1)", "PRIMARY KEY"},
	{"FeedListUnfanned", "WHERE f.fanned = 0 ORDER BY", "feed_unfanned"},
}

// Every index of the schema is used by the plan of some query the store
// makes (the conformance suites' queries, EXPLAIN QUERY PLAN), or enforces
// a uniqueness rule. An index no query reads costs pages and a B-tree
// write per row for nothing. Every hot query uses its index (hotQueries),
// and no query reads a whole table but the maintenance ones (scansAllowed).
func TestIndexesServeQueries(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	queries := map[string]bool{}
	newStore := func(t *testing.T) store.Store {
		s, err := Open(context.Background(), MigratedPath(t), nil)
		require.NoError(t, err)
		return collecting{s, func(qs []string) {
			mu.Lock()
			defer mu.Unlock()
			for _, q := range qs {
				queries[q] = true
			}
		}}
	}
	t.Run("suites", func(t *testing.T) {
		t.Run("Exercise", func(t *testing.T) { storetest.Exercise(t, newStore) })
		t.Run("People", func(t *testing.T) { storetest.ExercisePeople(t, newStore) })
		t.Run("Assignees", func(t *testing.T) { storetest.ExerciseAssignees(t, newStore) })
		t.Run("Maintainer", func(t *testing.T) { storetest.ExerciseMaintainer(t, newStore) })
	})
	require.NotEmpty(t, queries)

	s, err := Open(context.Background(), MigratedPath(t), nil)
	require.NoError(t, err)
	defer s.Close()
	db, err := sql.Open(DriverName, "file:"+s.Path()+"?_pragma=query_only(1)")
	require.NoError(t, err)
	defer db.Close()

	var indexes []string
	rows, err := db.Query(`SELECT name FROM sqlite_schema WHERE type = 'index' AND name NOT LIKE 'sqlite_autoindex_%'`)
	require.NoError(t, err)
	for rows.Next() {
		var n string
		require.NoError(t, rows.Scan(&n))
		indexes = append(indexes, n)
	}
	require.NoError(t, rows.Err())
	rows.Close()

	used := map[string][]string{}
	plans := map[string][]string{} // query → its plan's details
	for q := range queries {
		args := make([]any, strings.Count(q, "?")+10) // unbound parameters plan as NULL
		plan, err := db.Query(`EXPLAIN QUERY PLAN `+q, args[:numParams(q)]...)
		if err != nil {
			continue // a statement EXPLAIN cannot plan here (PRAGMA, multi-statement)
		}
		for plan.Next() {
			var id, parent, notused int
			var detail string
			require.NoError(t, plan.Scan(&id, &parent, &notused, &detail))
			plans[q] = append(plans[q], detail)
			for _, m := range usingIndex.FindAllStringSubmatch(detail, -1) {
				used[m[1]+m[2]] = append(used[m[1]+m[2]], q)
			}
		}
		plan.Close()
	}
	var unused []string
	for _, ix := range indexes {
		if len(used[ix]) == 0 && !constraintIndexes[ix] {
			unused = append(unused, ix)
		}
	}
	sort.Strings(unused)
	require.Empty(t, unused, "indexes that no query's plan uses (drop them, or name the rule they enforce)")

	for q, details := range plans {
		for _, d := range details {
			if fullScan.MatchString(d) && !slices.ContainsFunc(scansAllowed, func(a string) bool { return strings.Contains(q, a) }) {
				t.Errorf("%s reads a whole table (%s)", q, d)
			}
		}
	}
	for _, h := range hotQueries {
		found, uses := false, false
		var seen []string
		for q := range plans {
			if !strings.Contains(q, h.sql) {
				continue
			}
			found = true
			uses = uses || slices.Contains(used[h.index], q)
			seen = append(seen, plans[q]...)
		}
		require.True(t, found, "%s: no query like %q was made", h.name, h.sql)
		require.True(t, uses, "%s does not use %s (plan: %q)", h.name, h.index, seen)
	}
	// EventList finds a message an event references by its seq (the
	// session's key and the number the event stores), not by its id.
	for q, details := range plans {
		if strings.Contains(q, "LEFT JOIN messages m ON m.seq = CASE WHEN e.ref < 4294967296 THEN (s.k) * 4294967296 + e.ref") {
			require.Contains(t, details, "SEARCH m USING INTEGER PRIMARY KEY (rowid=?) LEFT-JOIN", q)
		}
	}
}

// numParams is the number of parameters of q (?, ?N).
func numParams(q string) int {
	n, max := 0, 0
	for i := 0; i < len(q); i++ {
		if q[i] != '?' {
			continue
		}
		j := i + 1
		v := 0
		for j < len(q) && q[j] >= '0' && q[j] <= '9' {
			v = v*10 + int(q[j]-'0')
			j++
		}
		if j > i+1 {
			if v > max {
				max = v
			}
		} else {
			n++
		}
	}
	if max > n {
		return max
	}
	return n
}
