package main

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/lubanhq/luban/api"
)

// A routed question says whom it waits for in luban chat as on the page
// (docs/design.md §16); one no route assigned says nothing more.
func TestChatShowsWaitingFor(t *testing.T) {
	t.Parallel()
	req := &api.InputRequest{Prompt: api.Prompt{Tool: api.ToolApproval, Mode: api.ModeApproval, ToolName: "write_file", Arguments: []byte(`{}`)},
		WaitingFor: &api.WaitingFor{Names: []string{"finance"}, Quorum: 2, Approvals: []api.Actor{{ID: "bob", Name: "Bob"}}}}
	var out bytes.Buffer
	(&chatSession{out: &out}).show(req, langEN)
	require.Contains(t, out.String(), "  waiting for finance (1 of 2 approved)\n")
	out.Reset()
	(&chatSession{out: &out}).show(req, langZH)
	require.Contains(t, out.String(), "  等待 finance（已批准 1/2）\n")
	out.Reset()
	req.WaitingFor = nil
	(&chatSession{out: &out}).show(req, langEN)
	require.NotContains(t, out.String(), "waiting for")
}
