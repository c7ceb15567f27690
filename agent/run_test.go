package agent_test

import (
	"context"
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
