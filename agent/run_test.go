package agent_test

import (
	"context"
	"encoding/base32"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/lubanhq/luban/agent"
)

// Run yields Start's error once, with no event, and stops.
func TestRunYieldsStartsErrorOnce(t *testing.T) {
	t.Parallel()
	bb := setupBench(t)
	n := 0
	for ev, err := range bb.runner.Run(context.Background(), agent.StartParams{Owner: "me", Message: "  "}) {
		n++
		require.Nil(t, ev)
		require.ErrorIs(t, err, agent.ErrInvalidRequest)
	}
	require.Equal(t, 1, n)
}

// NewID is prefix_ and 16 random bytes in lower-case base32 without
// padding (RFC 4648's alphabet): 26 characters that decode back to 16 bytes.
func TestNewIDForm(t *testing.T) {
	t.Parallel()
	seen := map[string]bool{}
	for range 100 {
		id := agent.NewID("ask")
		suffix, ok := strings.CutPrefix(id, "ask_")
		require.True(t, ok, id)
		require.Len(t, suffix, 26)
		require.Equal(t, strings.ToLower(suffix), suffix)
		b, err := base32.StdEncoding.WithPadding(base32.NoPadding).DecodeString(strings.ToUpper(suffix))
		require.NoError(t, err, id)
		require.Len(t, b, 16)
		require.Equal(t, suffix, strings.ToLower(base32.StdEncoding.WithPadding(base32.NoPadding).EncodeToString(b)))
		require.False(t, seen[id])
		seen[id] = true
	}
}
