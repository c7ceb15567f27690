package storetest

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/lubanhq/luban/store"
)

// oddTexts are strings a person, a model or a tool may produce that some
// databases refuse as text: NUL (U+0000), bytes that are not UTF-8, and the
// noncharacter U+FDD0 a driver may use to escape them. Every driver keeps each
// of them byte for byte (docs/design.md §3: bad input loses nothing).
var oddTexts = []string{
	"a\x00b",
	"\x00",
	"中\x00文\x00",
	"\xff\xfe bytes that are not UTF-8 \xc3",
	"\ufdd0",
	"\ufdd00 \ufdd0E \ufdd0x00 \ufdd0x",
	"\ufdd0\x00\xff",
}

func exerciseText(t *testing.T, newStore func(t *testing.T) store.Store) {
	t.Run("OddTextKeptByteForByte", func(t *testing.T) {
		t.Parallel()
		b := setup(t, newStore)
		for i, text := range oddTexts {
			s, err := b.st.SessionCreate(b.ctx, &store.SessionCreateParams{ID: b.id("sess"), Owner: "alice", Title: text, Now: T0})
			require.NoError(t, err, "title %q", text)
			got, err := b.st.SessionGet(b.ctx, s.ID)
			require.NoError(t, err)
			require.Equal(t, text, got.Title)

			r, err := b.st.RunInsert(b.ctx, &store.RunInsertParams{ID: b.id("run"), SessionID: s.ID, Agent: "default", LeaseOwner: "inst_a", LeaseUntil: T0.Add(time.Minute), Now: T0})
			require.NoError(t, err)
			callID := "call_" + text
			_, err = b.st.MessageInsert(b.ctx, &store.MessageInsertParams{ID: b.id("msg"), SessionID: s.ID, RunID: r.ID, Role: "user", Content: text, Now: T0})
			require.NoError(t, err, "content %q", text)
			_, err = b.st.MessageInsert(b.ctx, &store.MessageInsertParams{ID: b.id("msg"), SessionID: s.ID, RunID: r.ID, Role: "tool", Content: text,
				ToolCallID: callID, Name: text, Now: T0})
			require.NoError(t, err, "tool result %q", text)
			_, err = b.st.MessageInsert(b.ctx, &store.MessageInsertParams{ID: b.id("msg"), SessionID: s.ID, RunID: r.ID, Role: "tool", ToolCallID: callID, Now: T0})
			require.ErrorIs(t, err, store.ErrDuplicate, "the one-result rule holds for call id %q", callID)
			msgs, err := b.st.MessageList(b.ctx, s.ID)
			require.NoError(t, err)
			require.Len(t, msgs, 2)
			require.Equal(t, text, msgs[0].Content)
			require.Equal(t, text, msgs[1].Content)
			require.Equal(t, text, msgs[1].Name)
			require.Equal(t, callID, msgs[1].ToolCallID)

			// JSON columns hold JSON text; encoding/json writes NUL as \u0000,
			// the noncharacter as itself.
			js := json.RawMessage(fmt.Sprintf(`{"text":%q,"raw":"\ufdd0E","i":%d}`, text, i))
			it, err := b.st.InteractionInsert(b.ctx, &store.InteractionInsertParams{ID: b.id("ask"), SessionID: s.ID, RunID: r.ID, ToolCallID: callID,
				Tool: "ask_user", Request: js, Now: T0, ExpiresAt: T0.Add(time.Hour)})
			require.NoError(t, err)
			byCall, err := b.st.InteractionGetByToolCall(b.ctx, s.ID, callID)
			require.NoError(t, err, "found by call id %q", callID)
			require.Equal(t, it.ID, byCall.ID)
			require.Equal(t, string(js), string(byCall.Request))
			ok, err := b.st.InteractionResolve(b.ctx, &store.InteractionResolveParams{ID: it.ID, SessionID: s.ID, Status: "answered", Answer: js, Now: T0})
			require.NoError(t, err)
			require.True(t, ok)
			it2, err := b.st.InteractionGet(b.ctx, it.ID)
			require.NoError(t, err)
			require.Equal(t, string(js), string(it2.Answer))

			ok, err = b.st.RunFinish(b.ctx, &store.RunFinishParams{ID: r.ID, To: store.RunFailed, Error: text, Now: T0})
			require.NoError(t, err)
			require.True(t, ok)
			run, err := b.st.RunGet(b.ctx, r.ID)
			require.NoError(t, err)
			require.Equal(t, text, run.Error)

			ev, err := b.st.EventAppend(b.ctx, &store.EventAppendParams{SessionID: s.ID, Name: "message", Data: js, Now: T0})
			require.NoError(t, err)
			require.NoError(t, b.st.InTx(b.ctx, func(tx store.Tx) error {
				_, err := tx.EventAppend(b.ctx, &store.EventAppendParams{SessionID: s.ID, Name: "message", Data: js, Now: T0})
				return err
			}))
			evs, err := b.st.EventList(b.ctx, &store.EventListParams{SessionID: s.ID})
			require.NoError(t, err)
			require.Len(t, evs, 2)
			require.Equal(t, ev.Seq, evs[0].Seq)
			require.Equal(t, string(js), string(evs[0].Data))
			require.Equal(t, string(js), string(evs[1].Data))

			require.NoError(t, b.st.AuditInsert(b.ctx, &store.AuditInsertParams{SessionID: s.ID, RequestID: it.ID, ToolCallID: callID, Action: "rejected", Reason: text, Summary: js, Now: T0}))
			audit, err := b.st.AuditList(b.ctx, s.ID)
			require.NoError(t, err)
			require.Len(t, audit, 1)
			require.Equal(t, text, audit[0].Reason)
			require.Equal(t, callID, audit[0].ToolCallID)
			require.Equal(t, string(js), string(audit[0].Summary))

			require.NoError(t, b.st.TraceInsert(b.ctx, &store.TraceInsertParams{SessionID: s.ID, RunID: r.ID, Kind: "tool_result", Data: js, Now: T0}))
			trace, err := b.st.TraceList(b.ctx, s.ID)
			require.NoError(t, err)
			require.Len(t, trace, 1)
			require.Equal(t, string(js), string(trace[0].Data))
		}
	})
}
