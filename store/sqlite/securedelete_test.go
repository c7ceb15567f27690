package sqlite_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/lubanhq/luban/store"
	"github.com/lubanhq/luban/store/sqlite"
)

// marker is a string found nowhere else: the test greps the database's raw
// bytes for it.
func marker(t *testing.T, what string) string {
	var b [8]byte
	_, err := rand.Read(b[:])
	require.NoError(t, err)
	return "MARK-" + what + "-" + hex.EncodeToString(b[:])
}

// fileHas reports whether the database file or its WAL holds s anywhere
// (live rows, free pages, unused space of a page).
func fileHas(t *testing.T, path, s string) bool {
	t.Helper()
	for _, f := range []string{path, path + "-wal"} {
		b, err := os.ReadFile(f)
		if os.IsNotExist(err) {
			continue
		}
		require.NoError(t, err)
		if bytes.Contains(b, []byte(s)) {
			return true
		}
	}
	return false
}

// TestDeletedContentLeavesTheFile: what DELETE /api/sessions/{id} and the
// --retain pruner delete is not left in the SQLite file's free pages or in a
// page's unused space (secure_delete on every connection): after the store
// is closed (its last checkpoint), the raw bytes of the file and its WAL no
// longer hold the deleted message, answer, event or trace text, while what
// was kept is still found (the grep works).
func TestDeletedContentLeavesTheFile(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	path := sqlite.MigratedPath(t)
	st, err := sqlite.Open(ctx, path, nil)
	require.NoError(t, err)
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

	type seeded struct{ sid, message, bigMessage, answer, event, trace string }
	seed := func(name string, at time.Time) seeded {
		s := seeded{sid: "sess_" + name, message: marker(t, name+"-message"), bigMessage: marker(t, name+"-overflow"),
			answer: marker(t, name+"-answer"), event: marker(t, name+"-event"), trace: marker(t, name+"-trace")}
		rid := "run_" + name
		_, err := st.SessionCreate(ctx, &store.SessionCreateParams{ID: s.sid, Owner: "owner", Title: "t", Now: at})
		require.NoError(t, err)
		_, err = st.RunInsert(ctx, &store.RunInsertParams{ID: rid, SessionID: s.sid, Agent: "a", LeaseOwner: "p", LeaseUntil: at.Add(time.Minute), Now: at})
		require.NoError(t, err)
		_, err = st.MessageInsert(ctx, &store.MessageInsertParams{ID: "msg_" + name, SessionID: s.sid, RunID: rid, Role: "user", Content: s.message, Now: at})
		require.NoError(t, err)
		// Large enough for overflow pages.
		_, err = st.MessageInsert(ctx, &store.MessageInsertParams{ID: "msg_big_" + name, SessionID: s.sid, RunID: rid, Role: "user",
			Content: strings.Repeat(s.bigMessage+" ", 2000), Now: at})
		require.NoError(t, err)
		_, err = st.InteractionInsert(ctx, &store.InteractionInsertParams{ID: "req_" + name, SessionID: s.sid, RunID: rid, ToolCallID: "call_" + name,
			Tool: "ask_user", Request: json.RawMessage(`{}`), Now: at, ExpiresAt: at.Add(time.Hour)})
		require.NoError(t, err)
		_, err = st.MessageInsert(ctx, &store.MessageInsertParams{ID: "msg_tool_" + name, SessionID: s.sid, RunID: rid, Role: "tool", ToolCallID: "call_" + name,
			Content: "User answered: " + s.answer, Now: at})
		require.NoError(t, err)
		_, err = st.EventAppend(ctx, &store.EventAppendParams{SessionID: s.sid, Name: "message",
			Data: json.RawMessage(`{"text":"` + s.event + `"}`), Now: at})
		require.NoError(t, err)
		require.NoError(t, st.TraceInsert(ctx, &store.TraceInsertParams{SessionID: s.sid, RunID: rid, Kind: "model_call",
			Data: json.RawMessage(`{"request":"` + s.trace + `"}`), Now: at}))
		won, err := st.RunFinish(ctx, &store.RunFinishParams{ID: rid, To: store.RunCompleted, Now: at})
		require.NoError(t, err)
		require.True(t, won)
		return s
	}
	// "kept" was active after the --retain cutoff below, the others before.
	deleted, pruned, kept := seed("deleted", at), seed("pruned", at), seed("kept", at.Add(2*time.Hour))
	require.NoError(t, st.SessionDelete(ctx, deleted.sid))
	res, err := st.Prune(ctx, &store.PruneParams{EventsBefore: at.Add(time.Hour)})
	require.NoError(t, err)
	require.EqualValues(t, 1, res.Events)
	require.EqualValues(t, 1, res.Trace)
	require.NoError(t, st.Close())

	for what, s := range map[string]string{"message": deleted.message, "overflowing message": deleted.bigMessage, "free-text answer": deleted.answer,
		"event": deleted.event, "trace": deleted.trace} {
		require.False(t, fileHas(t, path, s), "the deleted session's %s is still in the file's bytes", what)
	}
	require.False(t, fileHas(t, path, pruned.event), "a pruned event is still in the file's bytes")
	require.False(t, fileHas(t, path, pruned.trace), "a pruned trace entry is still in the file's bytes")
	// What retention keeps, and the untouched session, are found: the grep sees live rows.
	for _, s := range []string{pruned.message, pruned.bigMessage, pruned.answer, kept.message, kept.answer, kept.event, kept.trace} {
		require.True(t, fileHas(t, path, s), "%s must still be in the file", s)
	}
}
