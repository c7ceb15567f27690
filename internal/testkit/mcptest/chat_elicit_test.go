package mcptest_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/lubanhq/luban/internal/testkit/fakeopenai"
	"github.com/lubanhq/luban/internal/testkit/lubantest"
)

// everything is the entry point of the official reference MCP server
// (@modelcontextprotocol/server-everything), which scripts/test.sh installs
// in mcpclient/testdata/everything.
func everything(t *testing.T) string {
	t.Helper()
	p, err := filepath.Abs("../../../mcpclient/testdata/everything/node_modules/@modelcontextprotocol/server-everything/dist/index.js")
	require.NoError(t, err)
	_, err = os.Stat(p)
	require.NoError(t, err, "server-everything is not installed: (cd mcpclient/testdata/everything && npm ci), as scripts/test.sh does")
	_, err = exec.LookPath("node")
	require.NoError(t, err, "server-everything needs node")
	return p
}

func toolCall(id, name, args string) fakeopenai.Turn {
	return fakeopenai.Turn{ToolCalls: []fakeopenai.ToolCall{{ID: id, Name: name, Arguments: args}}}
}

// chatBinary runs the real `luban chat` against base with stdin and
// returns what it printed.
func chatBinary(t *testing.T, base, stdin string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*wait)
	defer cancel()
	cmd := exec.CommandContext(ctx, lubanBin, append([]string{"chat", "--url", base, "--token", "test-token"}, args...)...)
	cmd.Stdin = strings.NewReader(stdin)
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "luban chat:\n%s", out)
	return string(out)
}

// The terminal cards of server-everything's elicitations in the real
// `luban chat`: the form lists every field, a wrong value is refused as
// typed and asked again, the values go out as accept and the receipt
// shows them; the URL card shows the URL and its host, never opens it,
// and "d" accepts; a second form is declined with /decline.
func TestChatBinaryElicitationCards(t *testing.T) {
	t.Parallel()
	entry := everything(t)
	cfg := filepath.Join(t.TempDir(), "luban.yaml")
	require.NoError(t, os.WriteFile(cfg, []byte(fmt.Sprintf(`
mcp:
  servers:
    - name: everything
      command: node
      args: [%q, stdio, %q]
      timeout: 60s
agents:
  - name: mcp
    tools: ["everything__*"]
`, entry, fmt.Sprintf("--luban-chat-%d", time.Now().UnixNano()))), 0o600))
	fake := fakeopenai.New(t)
	fake.Push(
		toolCall("c_form", "everything__trigger-elicitation-request", `{}`),
		toolCall("c_url", "everything__trigger-url-elicitation", `{"url":"https://auth.example.com:8443/authorize?client=luban","message":"Sign in to continue"}`),
		toolCall("c_form2", "everything__trigger-elicitation-request", `{}`),
		fakeopenai.Turn{Text: "All done."},
	)
	p := lubantest.StartProc(t, lubantest.ProcOptions{Bin: lubanBin, Name: "serve", DB: filepath.Join(t.TempDir(), "luban.db"), ModelURL: fake.URL(),
		Env: []string{"LUBAN_CONFIG=" + cfg}})
	answers := []string{"try the elicitations",
		"", "Ada Lovelace", // required: asked again
		"1815-13", "1815-12-10", // not a date: asked again
		"y", "ada@example.com", "", "",
		"500", "7", // above the maximum: asked again
		"", "", "1,2", "2", "", "",
		"x", "d", // the url card
		"/decline", // the second form
		"/quit"}
	out := chatBinary(t, p.URL, strings.Join(answers, "\n")+"\n")
	for _, want := range []string{
		"? Please provide inputs for the following fields:\n  from MCP server everything\n",
		"  1. String * (text)\n     Your full, legal name\n",
		"  3. Boolean (yes/no)\n",
		"  4. String with email format (text, email)\n",
		"  5. String with default (text, default: \"It was a dark and stormy night.\")\n",
		"  7. Integer (integer, 1–100, default: 42)\n",
		"  10. Titled Multiple Select Enum (several of, choose 1–3, default: [\"fish-1\"])\n",
		"String *: \n  ! this field is required\nString *: Ada Lovelace\n",
		"String with date format [YYYY-MM-DD]: 1815-13\n  ! enter a date as YYYY-MM-DD\n",
		"Integer: 500\n  ! at most 100\nInteger: 7\n",
		"Titled Single Select Enum [1) Superman 2) Green Lantern 3) Wonder Woman]: 2\n",
		"✓ submitted:\n  String: \"Ada Lovelace\"\n",
		"  Titled Multiple Select Enum: [\"fish-1\",\"fish-2\"]\n",
		"  Titled Single Select Enum: \"hero-2\"\n",
		"  String with default: \"It was a dark and stormy night.\"\n",
		"User provided the requested information",
		"? Sign in to continue\n  from MCP server everything\n  URL: https://auth.example.com:8443/authorize?client=luban\n  host: >>> auth.example.com:8443 <<<\n",
		"done? [d done / n decline]: x\n  ! type d or n\ndone? [d done / n decline]: d\n✓ done at the address\n",
		"User completed the URL elicitation flow",
		"String *: /decline\n✗ declined\n",
		"User declined to provide the requested information",
		"All done.",
	} {
		require.Contains(t, out, want)
	}
}
