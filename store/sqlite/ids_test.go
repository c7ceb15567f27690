package sqlite

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/base32"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// newID is agent.NewID (not imported: agent imports the store).
func newID(prefix string) string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return prefix + "_" + strings.ToLower(base32.StdEncoding.WithPadding(base32.NoPadding).EncodeToString(b[:]))
}

// Ids of agent.NewID's form are stored as 16-byte blobs and read back as
// the same strings; every other id is kept as its text. The blobs sort as
// the strings do, in SQLite too, and idCompare is SQLite's order of the
// stored values.
func TestIDCodec(t *testing.T) {
	t.Parallel()
	var ids []string
	for range 500 {
		ids = append(ids, newID("run"))
	}
	// The extremes of the alphabet and of the 26th character.
	ids = append(ids, "run_"+strings.Repeat("2", 25)+"4", "run_"+strings.Repeat("z", 25)+"y", "run_"+strings.Repeat("7", 25)+"a")
	for _, last := range "4aeimquy" {
		ids = append(ids, "run_"+strings.Repeat("q", 25)+string(last))
	}
	for _, id := range ids {
		v := idRun.enc(id)
		b, ok := v.([]byte)
		require.True(t, ok, id)
		require.Len(t, b, 16)
		back, err := idRun.dec(b)
		require.NoError(t, err)
		require.Equal(t, id, back)
	}
	texts := []string{"", "run_1", "ask_" + ids[0][4:], "run_" + strings.ToUpper(ids[0][4:]), ids[0] + "a", ids[0][:len(ids[0])-1],
		ids[0][:len(ids[0])-1] + "b", "run-" + ids[0][4:], "run_" + strings.Repeat("1", 26), "runx" + ids[0][4:]}
	for _, id := range texts {
		require.Equal(t, id, idRun.enc(id), "%q is stored as text", id)
		back, err := idRun.dec(id)
		require.NoError(t, err)
		require.Equal(t, id, back)
	}
	_, err := idRun.dec([]byte{1, 2, 3})
	require.Error(t, err)

	// In SQLite: a blob key finds its row, order by the column is the
	// strings' order, texts first.
	db, err := sql.Open(DriverName, "file:"+filepath.Join(t.TempDir(), "ids.db"))
	require.NoError(t, err)
	defer db.Close()
	ctx := context.Background()
	_, err = db.ExecContext(ctx, `CREATE TABLE t (id BLOB PRIMARY KEY) WITHOUT ROWID`)
	require.NoError(t, err)
	all := append(slices.Clone(ids), texts[1:]...)
	for _, id := range all {
		_, err := db.ExecContext(ctx, `INSERT INTO t (id) VALUES (?)`, idRun.enc(id))
		require.NoError(t, err, id)
	}
	var n int
	require.NoError(t, db.QueryRowContext(ctx, `SELECT COUNT(*) FROM t WHERE typeof(id) = 'blob' AND length(id) = 16`).Scan(&n))
	require.Equal(t, len(ids), n)
	var got string
	require.NoError(t, db.QueryRowContext(ctx, `SELECT id FROM t WHERE id = ?`, idRun.enc(ids[7])).Scan(idRun.into(&got)))
	require.Equal(t, ids[7], got)
	rows, err := db.QueryContext(ctx, `SELECT id FROM t ORDER BY id`)
	require.NoError(t, err)
	var order []string
	for rows.Next() {
		var id string
		require.NoError(t, rows.Scan(idRun.into(&id)))
		order = append(order, id)
	}
	require.NoError(t, rows.Err())
	want := slices.Clone(all)
	slices.SortFunc(want, idRun.idCompare)
	require.Equal(t, want, order)
	// Among the blobs, the order is the strings' order.
	blobs := order[len(texts)-1:]
	require.True(t, slices.IsSorted(blobs))
	require.Len(t, blobs, len(ids))
}
