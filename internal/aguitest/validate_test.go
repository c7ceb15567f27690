package aguitest

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// validate.mjs must reject what @ag-ui/core or @ag-ui/client reject, or
// Validate proves nothing.
func TestValidateRejects(t *testing.T) {
	t.Parallel()
	node := Node(t)
	for name, sse := range map[string]string{
		"no threadId":    `data: {"type":"RUN_STARTED","runId":"r"}` + "\n\n",
		"unknown type":   `data: {"type":"RUN_STARTED","threadId":"t","runId":"r"}` + "\n\n" + `data: {"type":"NOPE"}` + "\n\n",
		"null metadata":  `data: {"type":"RUN_STARTED","threadId":"t","runId":"r","metadata":null}` + "\n\n",
		"content first":  `data: {"type":"RUN_STARTED","threadId":"t","runId":"r"}` + "\n\n" + `data: {"type":"TEXT_MESSAGE_CONTENT","messageId":"m","delta":"x"}` + "\n\n",
		"open at finish": `data: {"type":"RUN_STARTED","threadId":"t","runId":"r"}` + "\n\n" + `data: {"type":"TEXT_MESSAGE_START","messageId":"m"}` + "\n\n" + `data: {"type":"RUN_FINISHED","threadId":"t","runId":"r"}` + "\n\n",
		"no interrupts":  `data: {"type":"RUN_STARTED","threadId":"t","runId":"r"}` + "\n\n" + `data: {"type":"RUN_FINISHED","threadId":"t","runId":"r","outcome":{"type":"interrupt","interrupts":[]}}` + "\n\n",
		"not json":       "data: {\n\n",
	} {
		f := filepath.Join(t.TempDir(), "bad.sse")
		require.NoError(t, os.WriteFile(f, []byte(sse), 0o644))
		cmd := exec.Command(node, filepath.Join(Dir(), "validate.mjs"), f)
		cmd.Dir = Dir()
		out, err := cmd.CombinedOutput()
		require.Error(t, err, "%s: accepted:\n%s", name, out)
	}
	good := `data: {"type":"RUN_STARTED","threadId":"t","runId":"r"}` + "\n\n" + `data: {"type":"RUN_FINISHED","threadId":"t","runId":"r","outcome":{"type":"success"}}` + "\n\n"
	Validate(t, map[string][]byte{"good": []byte(good)})
}
