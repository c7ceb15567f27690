package storetest

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/lubanhq/luban/store"
)

// exerciseReceiptSignature: the signature of a receipt is stored with the
// answer (InteractionResolve) or after a run's close (InteractionSign), and
// every read of the row returns it: get, list, the inbox.
func exerciseReceiptSignature(t *testing.T, newStore func(t *testing.T) store.Store) {
	t.Parallel()
	b := setup(t, newStore)
	r := b.ownedRun(t, "alice", "t", "default")
	answered := b.ask(t, r, T0.Add(time.Hour))
	require.Empty(t, answered.ReceiptJWS)
	won, err := b.st.InteractionResolve(b.ctx, &store.InteractionResolveParams{ID: answered.ID, SessionID: r.SessionID, Status: "answered",
		Answer: []byte(`{}`), Now: T0, ReceiptJWS: "h.p.s1"})
	require.NoError(t, err)
	require.True(t, won)
	got, err := b.st.InteractionGet(b.ctx, answered.ID)
	require.NoError(t, err)
	require.Equal(t, "h.p.s1", got.ReceiptJWS)

	closed := b.ask(t, r, T0.Add(time.Hour))
	var its []*store.Interaction
	err = b.st.InTx(b.ctx, func(tx store.Tx) error {
		var err error
		if its, err = tx.InteractionResolveRun(b.ctx, &store.InteractionResolveRunParams{SessionID: r.SessionID, RunID: r.ID, Status: "cancelled", Now: T0}); err != nil {
			return err
		}
		return tx.InteractionSign(b.ctx, &store.InteractionSignParams{ID: closed.ID, ReceiptJWS: "h.p.s2"})
	})
	require.NoError(t, err)
	require.Len(t, its, 1)
	require.Empty(t, its[0].ReceiptJWS, "closed unsigned, signed in the same transaction")

	list, err := b.st.InteractionList(b.ctx, r.SessionID)
	require.NoError(t, err)
	sigs := map[string]string{}
	for _, it := range list {
		sigs[it.ID] = it.ReceiptJWS
	}
	require.Equal(t, map[string]string{answered.ID: "h.p.s1", closed.ID: "h.p.s2"}, sigs)
	inbox, err := b.st.InboxList(b.ctx, &store.InboxListParams{Owner: "alice", Status: store.InboxResolved})
	require.NoError(t, err)
	require.Len(t, inbox, 2)
	for _, e := range inbox {
		require.Equal(t, sigs[e.ID], e.ReceiptJWS)
	}
}
