package agent

import (
	"sync"

	"github.com/lubanhq/luban/askuser"
)

// maxParsedPrompts bounds parsedPrompts: a turn's prompts are taken by the
// next step of the same run, so the cache only holds the calls of turns in
// flight; past the bound it starts over (a miss only costs a parse).
const maxParsedPrompts = 1024

// parsedKey names one tool call of one stored assistant message. Message ids
// are unique (NewID), unlike tool call ids, which the model may repeat across
// sessions.
type parsedKey struct {
	messageID string
	index     int
}

type parsedPrompt struct {
	arguments string
	prompt    *askuser.Prompt
}

// parsedPrompts keeps the ask prompts that modelTurn parsed for the
// invalid-streak check, so that toolCalls, the next step of the same run in
// the same process, does not parse the same arguments again (issue 8: a
// parse costs 50–100 µs). After a restart, or in another process, the cache
// misses and toolCalls parses the stored arguments as before.
type parsedPrompts struct {
	mu sync.Mutex
	m  map[parsedKey]parsedPrompt
}

// put remembers the prompt parsed from arguments for call index of message messageID.
func (c *parsedPrompts) put(messageID string, index int, arguments string, p *askuser.Prompt) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil || len(c.m) >= maxParsedPrompts {
		c.m = map[parsedKey]parsedPrompt{}
	}
	c.m[parsedKey{messageID, index}] = parsedPrompt{arguments: arguments, prompt: p}
}

// drop forgets every prompt of message messageID among its first n calls
// (its turn was not committed).
func (c *parsedPrompts) drop(messageID string, n int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for i := range n {
		delete(c.m, parsedKey{messageID, i})
	}
}

// parse returns the prompt for call index of message messageID: the one put
// there, taken out of the cache, when it was parsed from the same arguments;
// otherwise askuser.ParseArgs(name, arguments).
func (c *parsedPrompts) parse(messageID string, index int, name, arguments string) (*askuser.Prompt, error) {
	k := parsedKey{messageID, index}
	c.mu.Lock()
	e, ok := c.m[k]
	delete(c.m, k)
	c.mu.Unlock()
	if ok && e.arguments == arguments {
		return e.prompt, nil
	}
	return askuser.ParseArgs(name, arguments)
}
