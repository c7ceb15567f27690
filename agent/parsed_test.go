package agent

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/lubanhq/luban/askuser"
)

func setupParsed(t *testing.T) (*parsedPrompts, string, *askuser.Prompt) {
	t.Helper()
	args := `{"title":"哪个环境？","mode":"single","options":[{"id":"dev","label":"开发"},{"id":"prod","label":"生产"}]}`
	p, err := askuser.ParseArgs(askuser.ToolAskUser, args)
	require.NoError(t, err)
	return &parsedPrompts{}, args, p
}

// A prompt parsed in modelTurn is handed to toolCalls once, and only for the
// same message, call index and arguments; anything else is parsed again.
func TestParsedPromptsOncePerTurn(t *testing.T) {
	t.Parallel()
	c, args, p := setupParsed(t)
	c.put("msg_a", 1, args, p)

	got, err := c.parse("msg_a", 1, askuser.ToolAskUser, args)
	require.NoError(t, err)
	require.Same(t, p, got, "the turn's own parse is reused")

	again, err := c.parse("msg_a", 1, askuser.ToolAskUser, args)
	require.NoError(t, err)
	require.NotSame(t, p, again, "taken once: a second step parses again")
	require.Equal(t, *p, *again)

	c.put("msg_a", 0, args, p)
	other, err := c.parse("msg_b", 0, askuser.ToolAskUser, args)
	require.NoError(t, err)
	require.NotSame(t, p, other, "another message misses")

	_, err = c.parse("msg_a", 0, askuser.ToolAskUser, `{"title":"","mode":"single"}`)
	require.Error(t, err, "different arguments are parsed, not served from the cache")

	c.put("msg_c", 0, args, p)
	c.drop("msg_c", 1)
	dropped, err := c.parse("msg_c", 0, askuser.ToolAskUser, args)
	require.NoError(t, err)
	require.NotSame(t, p, dropped, "an uncommitted turn's prompts are dropped")
}

// The cache never holds more than maxParsedPrompts entries.
func TestParsedPromptsBounded(t *testing.T) {
	t.Parallel()
	c, args, p := setupParsed(t)
	for i := range 3 * maxParsedPrompts {
		c.put("msg_x", i, args, p)
		require.LessOrEqual(t, len(c.m), maxParsedPrompts)
	}
}
