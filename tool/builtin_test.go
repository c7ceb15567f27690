package tool_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/lubanhq/luban/api"
	"github.com/lubanhq/luban/tool"
)

// workspace is a real directory tree with links in and out of it:
//
//	root/src/main.go, root/notes.txt, root/blob.bin (binary),
//	root/good -> root/src, root/evil -> outside, root/evilfile -> outside/secret.txt,
//	root/dangling -> outside/new (does not exist yet)
type workspace struct {
	root, outside string
}

func setup(t *testing.T) workspace {
	t.Helper()
	w := workspace{root: t.TempDir(), outside: t.TempDir()}
	must := require.New(t)
	must.NoError(os.WriteFile(filepath.Join(w.outside, "secret.txt"), []byte("secret"), 0o600))
	must.NoError(os.Mkdir(filepath.Join(w.root, "src"), 0o755))
	must.NoError(os.WriteFile(filepath.Join(w.root, "src", "main.go"), []byte("package main\n"), 0o600))
	must.NoError(os.WriteFile(filepath.Join(w.root, "notes.txt"), []byte("第一行\nline two\n"), 0o640))
	must.NoError(os.WriteFile(filepath.Join(w.root, "blob.bin"), []byte{0x89, 'P', 'N', 'G', 0, 1}, 0o600))
	must.NoError(os.Symlink(w.outside, filepath.Join(w.root, "evil")))
	must.NoError(os.Symlink(filepath.Join(w.outside, "secret.txt"), filepath.Join(w.root, "evilfile")))
	must.NoError(os.Symlink(filepath.Join(w.outside, "new"), filepath.Join(w.root, "dangling")))
	must.NoError(os.Symlink(filepath.Join(w.root, "src"), filepath.Join(w.root, "good")))
	return w
}

func call(t *testing.T, tl tool.Tool, args any) api.ToolResult {
	t.Helper()
	b, err := json.Marshal(args)
	require.NoError(t, err)
	res, err := tl.Call(context.Background(), b)
	require.NoError(t, err)
	return res
}

// refusedPaths lead outside the workspace one way or another.
var refusedPaths = []string{"/etc", "/etc/passwd", "../", "..", "src/../../x", "evil", "evil/secret.txt", "evilfile", "dangling", "good/../../x"}

func TestListFilesStaysInsideTheWorkspace(t *testing.T) {
	t.Parallel()
	w := setup(t)
	lf := tool.ListFiles(w.root)
	require.Equal(t, api.ToolResult{Content: "blob.bin\ndangling\nevil\nevilfile\ngood\nnotes.txt\nsrc/"}, call(t, lf, map[string]string{"path": "."}))
	require.Equal(t, call(t, lf, map[string]string{"path": "."}), call(t, lf, map[string]string{}), "no path is the workspace")
	require.Equal(t, api.ToolResult{Content: "main.go"}, call(t, lf, map[string]string{"path": "src"}))
	require.Equal(t, api.ToolResult{Content: "main.go"}, call(t, lf, map[string]string{"path": "good"}), "a link that stays inside is followed")
	for _, p := range refusedPaths {
		res := call(t, lf, map[string]string{"path": p})
		require.True(t, res.IsError, "%s: %s", p, res.Content)
		require.Contains(t, res.Content, "outside the workspace", p)
	}
	res := call(t, lf, map[string]string{"path": "notes.txt"})
	require.True(t, res.IsError)
	require.Equal(t, `cannot list "notes.txt": not a directory`, res.Content)
	res = call(t, lf, map[string]any{"path": ".", "recursive": true})
	require.True(t, res.IsError)
	require.Contains(t, res.Content, `unknown field "recursive"`)
}

func TestReadFile(t *testing.T) {
	t.Parallel()
	w := setup(t)
	rf := tool.ReadFile(w.root)
	require.Equal(t, api.ToolResult{Content: "第一行\nline two\n"}, call(t, rf, map[string]string{"path": "notes.txt"}))
	require.Equal(t, api.ToolResult{Content: "package main\n"}, call(t, rf, map[string]string{"path": "good/main.go"}))
	require.Equal(t, api.ToolResult{Content: "package main\n"}, call(t, rf, map[string]string{"path": "./src/../src/main.go"}))
	for _, p := range refusedPaths {
		res := call(t, rf, map[string]string{"path": p})
		require.True(t, res.IsError, "%s: %s", p, res.Content)
		require.Contains(t, res.Content, "outside the workspace", p)
		require.NotContains(t, res.Content, "secret\"", p)
	}
	errs := map[string]string{
		"blob.bin":    `cannot read "blob.bin": it is a binary file, not UTF-8 text`,
		"src":         `cannot read "src": it is a directory; use list_files`,
		"nope.txt":    `cannot read "nope.txt": no such file or directory`,
		"notes.txt/x": `cannot read "notes.txt/x": "notes.txt/x" goes through a file, not a directory`,
	}
	for p, want := range errs {
		require.Equal(t, api.ToolResult{Content: want, IsError: true}, call(t, rf, map[string]string{"path": p}), p)
	}
	require.Equal(t, api.ToolResult{Content: "read_file needs a path", IsError: true}, call(t, rf, map[string]string{}))

	big := filepath.Join(w.root, "big.txt")
	require.NoError(t, os.WriteFile(big, []byte(strings.Repeat("a", tool.MaxReadBytes)), 0o600))
	require.False(t, call(t, rf, map[string]string{"path": "big.txt"}).IsError, "exactly the limit is read")
	require.NoError(t, os.WriteFile(big, []byte(strings.Repeat("a", tool.MaxReadBytes+1)), 0o600))
	require.Equal(t, api.ToolResult{Content: `cannot read "big.txt": the file has 262145 bytes, more than the limit of 262144`, IsError: true},
		call(t, rf, map[string]string{"path": "big.txt"}))
	require.NoError(t, os.WriteFile(big, []byte{'a', 0xff, 'b'}, 0o600))
	require.Equal(t, api.ToolResult{Content: `cannot read "big.txt": it is a binary file, not UTF-8 text`, IsError: true},
		call(t, rf, map[string]string{"path": "big.txt"}))
}

func TestWriteFile(t *testing.T) {
	t.Parallel()
	w := setup(t)
	wf := tool.WriteFile(w.root)
	content := "# plan\n\nexact bytes \u00a0 kept\r\n"
	require.Equal(t, api.ToolResult{Content: "wrote 29 bytes to docs/new/plan.md"},
		call(t, wf, map[string]string{"path": "docs/new/plan.md", "content": content}))
	b, err := os.ReadFile(filepath.Join(w.root, "docs", "new", "plan.md"))
	require.NoError(t, err)
	require.Equal(t, content, string(b))
	fi, err := os.Stat(filepath.Join(w.root, "docs", "new", "plan.md"))
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o644), fi.Mode().Perm())

	// An existing file is replaced whole and keeps its mode; a link inside is followed.
	require.False(t, call(t, wf, map[string]string{"path": "notes.txt", "content": "new"}).IsError)
	b, _ = os.ReadFile(filepath.Join(w.root, "notes.txt"))
	require.Equal(t, "new", string(b))
	fi, _ = os.Stat(filepath.Join(w.root, "notes.txt"))
	require.Equal(t, os.FileMode(0o640), fi.Mode().Perm())
	require.False(t, call(t, wf, map[string]string{"path": "good/main.go", "content": ""}).IsError, "empty content is written")
	b, _ = os.ReadFile(filepath.Join(w.root, "src", "main.go"))
	require.Empty(t, b)

	for _, p := range refusedPaths {
		res := call(t, wf, map[string]string{"path": p, "content": "pwned"})
		require.True(t, res.IsError, "%s: %s", p, res.Content)
		require.Contains(t, res.Content, "outside the workspace", p)
	}
	b, _ = os.ReadFile(filepath.Join(w.outside, "secret.txt"))
	require.Equal(t, "secret", string(b), "nothing outside was written")
	_, err = os.Lstat(filepath.Join(w.outside, "new"))
	require.ErrorIs(t, err, os.ErrNotExist, "a dangling link out is not followed to create a file")

	require.Equal(t, api.ToolResult{Content: `cannot write "src": it is a directory`, IsError: true}, call(t, wf, map[string]string{"path": "src", "content": "x"}))
	require.Equal(t, api.ToolResult{Content: `cannot write "notes.txt/x": "notes.txt/x" goes through a file, not a directory`, IsError: true},
		call(t, wf, map[string]string{"path": "notes.txt/x", "content": "x"}))
	require.Equal(t, api.ToolResult{Content: "write_file needs a path and a content", IsError: true}, call(t, wf, map[string]string{"path": "a.txt"}))
	res := call(t, wf, map[string]string{"path": "big.txt", "content": strings.Repeat("a", tool.MaxWriteBytes+1)})
	require.Equal(t, api.ToolResult{Content: `cannot write "big.txt": the content has 1048577 bytes, more than the limit of 1048576`, IsError: true}, res)
	ents, err := os.ReadDir(w.root)
	require.NoError(t, err)
	for _, e := range ents {
		require.False(t, strings.HasPrefix(e.Name(), ".luban-write-"), "no temporary file is left behind")
	}
}

func TestCallIdentity(t *testing.T) {
	t.Parallel()
	_, ok := tool.CallFrom(context.Background())
	require.False(t, ok)
	c := tool.Call{SessionID: "sess_1", RunID: "run_1", ToolCallID: "call_1", Principal: "alice", Agent: "writer"}
	got, ok := tool.CallFrom(tool.WithCall(context.Background(), c))
	require.True(t, ok)
	require.Equal(t, c, got)
	require.Equal(t, "sess_1/call_1", got.IdempotencyKey())
}

// The workspace tools' own argument rules (tool.ArgsChecker), asked before
// an approval: the same confinement as when they run, as field errors.
func TestWorkspaceToolsCheckArgs(t *testing.T) {
	t.Parallel()
	ws := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(ws, "dir"), 0o755))
	require.NoError(t, os.Symlink(t.TempDir(), filepath.Join(ws, "out")))
	reg := tool.NewRegistry()
	for _, tl := range []tool.Tool{tool.ListFiles(ws), tool.ReadFile(ws), tool.WriteFile(ws), tool.CurrentTime(nil)} {
		require.NoError(t, reg.Register(tl, true))
	}
	check := func(name, args string) []string {
		var out []string
		for _, d := range reg.CheckArgs(name, json.RawMessage(args)) {
			out = append(out, d.Field+": "+d.Message)
		}
		return out
	}
	require.Empty(t, check("list_files", `{}`))
	require.Empty(t, check("read_file", `{"path":"dir/new.txt"}`), "a missing file is the tool's result, not an argument problem")
	require.Empty(t, check("write_file", `{"path":"dir/new/x.md","content":"x"}`))
	require.Empty(t, check("current_time", `{}`), "a tool without rules has no problems")
	require.Empty(t, check("nope", `{}`), "an unregistered tool has no rules")
	require.Equal(t, []string{`path: ".." leads outside the workspace`}, check("list_files", `{"path":".."}`))
	require.Equal(t, []string{`path: "/etc/passwd" is absolute, outside the workspace; give a path relative to it`}, check("read_file", `{"path":"/etc/passwd"}`))
	require.Equal(t, []string{`path: "out/x" resolves outside the workspace through a symbolic link`}, check("write_file", `{"path":"out/x","content":""}`))
	require.Equal(t, []string{`path: "dir" is a directory; write_file writes files`}, check("write_file", `{"path":"dir","content":""}`))
	big, _ := json.Marshal(map[string]string{"path": "a", "content": strings.Repeat("x", tool.MaxWriteBytes+1)})
	require.Equal(t, []string{"content: 1048577 bytes, more than the limit of 1048576"}, check("write_file", string(big)))
}
