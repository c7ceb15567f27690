package aguitest

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// validate.mjs must reject what @ag-ui/core or @ag-ui/client reject, or
// Validate proves nothing.
func TestValidateRejects(t *testing.T) {
	t.Parallel()
	node := Node(t)
	dir := t.TempDir()
	var files []string
	for name, sse := range map[string]string{
		"no threadId":    `data: {"type":"RUN_STARTED","runId":"r"}` + "\n\n",
		"unknown type":   `data: {"type":"RUN_STARTED","threadId":"t","runId":"r"}` + "\n\n" + `data: {"type":"NOPE"}` + "\n\n",
		"null metadata":  `data: {"type":"RUN_STARTED","threadId":"t","runId":"r","metadata":null}` + "\n\n",
		"content first":  `data: {"type":"RUN_STARTED","threadId":"t","runId":"r"}` + "\n\n" + `data: {"type":"TEXT_MESSAGE_CONTENT","messageId":"m","delta":"x"}` + "\n\n",
		"open at finish": `data: {"type":"RUN_STARTED","threadId":"t","runId":"r"}` + "\n\n" + `data: {"type":"TEXT_MESSAGE_START","messageId":"m"}` + "\n\n" + `data: {"type":"RUN_FINISHED","threadId":"t","runId":"r"}` + "\n\n",
		"no interrupts":  `data: {"type":"RUN_STARTED","threadId":"t","runId":"r"}` + "\n\n" + `data: {"type":"RUN_FINISHED","threadId":"t","runId":"r","outcome":{"type":"interrupt","interrupts":[]}}` + "\n\n",
		"not json":       "data: {\n\n",
	} {
		f := filepath.Join(dir, strings.ReplaceAll(name, " ", "_")+".sse")
		require.NoError(t, os.WriteFile(f, []byte(sse), 0o644))
		files = append(files, f)
	}
	cmd := exec.Command(node, append([]string{filepath.Join(Dir(), "validate.mjs")}, files...)...)
	cmd.Dir = Dir()
	var stdout strings.Builder
	cmd.Stdout = &stdout
	require.Error(t, cmd.Run(), "validate.mjs exits 1 when a file fails")
	verdicts := map[string]bool{}
	for _, l := range strings.Split(strings.TrimSpace(stdout.String()), "\n") {
		var v struct {
			File string
			OK   bool
		}
		require.NoError(t, json.Unmarshal([]byte(l), &v), "%s", l)
		verdicts[v.File] = v.OK
	}
	require.Len(t, verdicts, len(files))
	for _, f := range files {
		require.False(t, verdicts[f], "%s was accepted", filepath.Base(f))
	}
	good := `data: {"type":"RUN_STARTED","threadId":"t","runId":"r"}` + "\n\n" + `data: {"type":"RUN_FINISHED","threadId":"t","runId":"r","outcome":{"type":"success"}}` + "\n\n"
	Validate(t, map[string][]byte{"good": []byte(good)})
}
