package sqlite

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/lubanhq/luban/store"
)

// Migrations 00028 (feed_rowid) and 00029 (feed_key_only) make the feed a
// rowid table keyed by its owner's key and number, which the row no longer
// repeats as columns: every entry reads back as it was (an owner with
// a principals row and one without), an owner's numbers go on after its
// last and after the numbers Prune deleted, a new owner gets a key, an
// entry is fanned out by its number, and Down gives back both tables'
// rows.
func TestMigrationFeedRowid(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	v := sqlMigration(t, "feed_rowid")
	db, p, path := migratedTo(t, v-1)
	for _, q := range []string{
		`INSERT INTO sessions (k, id, owner, title, status, created_at, updated_at) VALUES (1, 'sess_a', 'alice', 'a', 'idle', 1, 1), (2, 'sess_b', 'bob', 'b', 'idle', 1, 1)`,
		`INSERT INTO principals (owner, last_seq) VALUES ('alice', 7), ('carol', 2)`,
		`INSERT INTO feed (owner, seq, sk, session_seq, name, data, created_at, fanned, ref) VALUES
			('bob', 1, 2, 1, 'done', '{"b":1}', 10, 1, NULL),
			('alice', 8, 1, 3, 'done', '{"a":8}', 11, 1, NULL),
			('alice', 9, 1, 4, 'user_input_resolved', '{"a":9}', 12, 0, NULL),
			('bob', 2, 2, 2, 'done', '{"b":2}', 13, 0, NULL)`,
	} {
		_, err := db.ExecContext(ctx, q)
		require.NoError(t, err, q)
	}
	dump := func(q string) []string {
		rs, err := db.QueryContext(ctx, q)
		require.NoError(t, err)
		defer rs.Close()
		cols, err := rs.Columns()
		require.NoError(t, err)
		var out []string
		for rs.Next() {
			vals := make([]any, len(cols))
			ptrs := make([]any, len(cols))
			for i := range vals {
				ptrs[i] = &vals[i]
			}
			require.NoError(t, rs.Scan(ptrs...))
			out = append(out, fmt.Sprintf("%v", vals))
		}
		require.NoError(t, rs.Err())
		return out
	}
	const feedRows = `SELECT owner, seq, sk, session_seq, name, data, created_at, fanned, ref FROM feed ORDER BY owner, seq`
	const principalRows = `SELECT owner, last_seq FROM principals ORDER BY owner`
	feedBefore, principalsBefore := dump(feedRows), dump(principalRows)

	s, err := Open(ctx, path, nil) // applies the migrations
	require.NoError(t, err)
	var cols int
	require.NoError(t, db.QueryRowContext(ctx, `SELECT COUNT(*) FROM pragma_table_info('feed') WHERE name IN ('owner', 'seq')`).Scan(&cols))
	require.Zero(t, cols, "the key holds the owner and the number")
	list := func(owner string) (out []string) {
		fs, err := s.FeedList(ctx, &store.FeedListParams{Owner: owner})
		require.NoError(t, err)
		for _, f := range fs {
			out = append(out, fmt.Sprint(f.Owner, " ", f.Seq, " ", f.SessionID, " ", f.SessionSeq, " ", f.Name, " ", string(f.Data), " ", f.CreatedAt.UnixMicro()))
		}
		return out
	}
	require.Equal(t, []string{`alice 8 sess_a 3 done {"a":8} 11`, `alice 9 sess_a 4 user_input_resolved {"a":9} 12`}, list("alice"))
	require.Equal(t, []string{`bob 1 sess_b 1 done {"b":1} 10`, `bob 2 sess_b 2 done {"b":2} 13`}, list("bob"), "an owner without a principals row")
	fs, err := s.FeedList(ctx, &store.FeedListParams{Owner: "alice", AfterSeq: 8})
	require.NoError(t, err)
	require.Len(t, fs, 1)
	require.Equal(t, int64(9), fs[0].Seq)
	for owner, want := range map[string]int64{"alice": 9, "bob": 2, "carol": 2, "dave": 0} {
		n, err := s.FeedLastSeq(ctx, owner)
		require.NoError(t, err)
		require.Equal(t, want, n, owner)
	}
	un, err := s.FeedListUnfanned(ctx, 10)
	require.NoError(t, err)
	require.Len(t, un, 2)
	require.NoError(t, s.WebhookEnqueue(ctx, &store.WebhookEnqueueParams{Owner: "alice", Seq: 9, Now: time.UnixMicro(20)}))
	un, err = s.FeedListUnfanned(ctx, 10)
	require.NoError(t, err)
	require.Len(t, un, 1)
	require.Equal(t, "bob", un[0].Owner)

	// New entries: numbered after the owner's last (and carol's deleted
	// ones); a new owner gets a key.
	_, err = s.SessionCreate(ctx, &store.SessionCreateParams{ID: "sess_c", Owner: "carol", Now: time.UnixMicro(21)})
	require.NoError(t, err)
	require.NoError(t, s.InTx(ctx, func(tx store.Tx) error {
		for _, sess := range []string{"sess_a", "sess_b", "sess_c"} {
			if _, err := tx.EventAppend(ctx, &store.EventAppendParams{SessionID: sess, Name: "done", Data: []byte(`{}`), Audience: []string{"erin"}, Now: time.UnixMicro(22)}); err != nil {
				return err
			}
		}
		return nil
	}))
	last := func(owner string) string {
		l := list(owner)
		return l[len(l)-1][:strings.Index(l[len(l)-1], " sess_")]
	}
	require.Equal(t, "alice 10", last("alice"))
	require.Equal(t, "bob 3", last("bob"))
	require.Equal(t, "carol 3", last("carol"))
	require.Equal(t, "erin 3", last("erin"), "an audience without a principals row before")
	require.NoError(t, s.Close())

	_, err = p.DownTo(ctx, v-1)
	require.NoError(t, err)
	_, err = db.ExecContext(ctx, `DELETE FROM feed WHERE created_at = 22`)
	require.NoError(t, err)
	_, err = db.ExecContext(ctx, `UPDATE feed SET fanned = 0 WHERE owner = 'alice' AND seq = 9`)
	require.NoError(t, err)
	require.Equal(t, feedBefore, dump(feedRows), "Down gives back the feed's rows")
	require.Equal(t, append(principalsBefore[:1:1], "[bob 0]", principalsBefore[1], "[erin 0]"), dump(principalRows), "and the principals', with the owners that got a key")
}
