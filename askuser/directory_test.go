package askuser_test

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/lubanhq/luban/api"
	"github.com/lubanhq/luban/askuser"
	"github.com/stretchr/testify/require"
)

type dirBundle struct {
	prompt  *api.Prompt
	base    string // holds ws/, ws-evil/, outside/ and wslink -> ws
	ws      string // the workspace root
	outside string
}

// setupDirs builds a real tree with real symbolic links:
//
//	base/ws/src/pkg/          base/ws-evil/   base/outside/
//	base/ws/file.txt          base/wslink -> ws
//	base/ws/link-in -> src                    base/ws/link-file -> file.txt
//	base/ws/link-out -> ../outside            base/ws/link-abs-out -> <abs>/outside
//	base/ws/evil -> ../ws-evil                base/ws/up -> ..
//	base/ws/dangling-out -> ../gone/x         base/ws/dangling-in -> src/future
//	base/ws/dangling-abs-out -> /nonexistent-luban-root/x
//	base/ws/loop -> loop                      base/ws/src/back -> ../link-out
func setupDirs(t *testing.T) dirBundle {
	t.Helper()
	base := t.TempDir()
	b := dirBundle{base: base, ws: filepath.Join(base, "ws"), outside: filepath.Join(base, "outside")}
	for _, d := range []string{"ws/src/pkg", "ws-evil", "outside"} {
		require.NoError(t, os.MkdirAll(filepath.Join(base, d), 0o755))
	}
	require.NoError(t, os.WriteFile(filepath.Join(b.ws, "file.txt"), []byte("x"), 0o644))
	links := map[string]string{
		"wslink":              "ws",
		"ws/link-in":          "src",
		"ws/link-file":        "file.txt",
		"ws/link-out":         "../outside",
		"ws/link-abs-out":     b.outside,
		"ws/evil":             "../ws-evil",
		"ws/up":               "..",
		"ws/dangling-out":     "../gone/x",
		"ws/dangling-in":      "src/future",
		"ws/dangling-abs-out": "/nonexistent-luban-root/x",
		"ws/loop":             "loop",
		"ws/src/back":         "../link-out",
	}
	for name, target := range links {
		require.NoError(t, os.Symlink(target, filepath.Join(base, name)))
	}
	p, err := askuser.ParseArgs(api.ToolAskUser, `{"title":"输出目录","mode":"directory"}`)
	require.NoError(t, err)
	b.prompt = p
	return b
}

func TestDirectoryAnswers(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, input string
		want        string // cleaned path on success
		wantErr     string // customInput message on failure
	}{
		{name: "root", input: ".", want: "."},
		{name: "root with slash", input: "./", want: "."},
		{name: "existing", input: "src", want: "src"},
		{name: "nested with noise", input: "./src//pkg/.", want: "src/pkg"},
		{name: "trailing slash", input: "src/pkg/", want: "src/pkg"},
		{name: "inner dot-dot that stays inside", input: "src/../src/pkg", want: "src/pkg"},
		{name: "not existing yet", input: "src/new/deeper", want: "src/new/deeper"},
		{name: "unicode name", input: "输出/报告 🙂", want: "输出/报告 🙂"},
		{name: "symlink inside", input: "link-in/pkg", want: "link-in/pkg"},
		{name: "dangling symlink inside", input: "dangling-in", want: "dangling-in"},
		{name: "below a dangling symlink inside", input: "dangling-in/x", want: "dangling-in/x"},
		{name: "out and back in through ..", input: "up/ws/src", want: "up/ws/src"},

		{name: "empty", input: "", wantErr: `enter a directory path relative to the workspace ("." for the workspace itself)`},
		{name: "blank", input: "  ", wantErr: `enter a directory path relative to the workspace ("." for the workspace itself)`},
		{name: "NUL byte", input: "src\x00/etc", wantErr: "the path must not contain NUL bytes"},
		{name: "absolute", input: "/etc", wantErr: `"/etc" is absolute; enter a path relative to the workspace`},
		{name: "backslash absolute", input: `\etc`, wantErr: `"\\etc" is absolute; enter a path relative to the workspace`},
		{name: "parent", input: "..", wantErr: `".." leads outside the workspace`},
		{name: "dot-dot escape", input: "src/../../outside", wantErr: `"src/../../outside" leads outside the workspace`},
		{name: "sibling prefix", input: "../ws-evil", wantErr: `"../ws-evil" leads outside the workspace`},
		{name: "symlink to sibling prefix", input: "evil", wantErr: `"evil" resolves outside the workspace through a symbolic link`},
		{name: "symlink out", input: "link-out", wantErr: `"link-out" resolves outside the workspace through a symbolic link`},
		{name: "below a symlink out, not existing", input: "link-out/new", wantErr: `"link-out/new" resolves outside the workspace through a symbolic link`},
		{name: "absolute symlink out", input: "link-abs-out", wantErr: `"link-abs-out" resolves outside the workspace through a symbolic link`},
		{name: "symlink to parent", input: "up", wantErr: `"up" resolves outside the workspace through a symbolic link`},
		{name: "through parent to sibling", input: "up/ws-evil", wantErr: `"up/ws-evil" resolves outside the workspace through a symbolic link`},
		{name: "chained symlink out", input: "src/back", wantErr: `"src/back" resolves outside the workspace through a symbolic link`},
		{name: "dangling symlink out", input: "dangling-out", wantErr: `"dangling-out" resolves outside the workspace through a symbolic link`},
		{name: "dangling absolute symlink out", input: "dangling-abs-out", wantErr: `"dangling-abs-out" resolves outside the workspace through a symbolic link`},
		{name: "file", input: "file.txt", wantErr: `"file.txt" is a file, not a directory`},
		{name: "symlink to file", input: "link-file", wantErr: `"link-file" is a file, not a directory`},
		{name: "below a file", input: "file.txt/x", wantErr: `"file.txt/x" goes through a file, not a directory`},
		{name: "symlink loop", input: "loop", wantErr: `"loop" has too many levels of symbolic links`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			b := setupDirs(t)
			got, err := askuser.ValidateAnswer(b.prompt, api.Answer{CustomInput: tt.input}, askuser.AnswerOptions{Workspace: b.ws})
			if tt.wantErr != "" {
				var ae *askuser.AnswerError
				require.True(t, errors.As(err, &ae), "want *AnswerError, got %v", err)
				require.Len(t, ae.Details, 1)
				require.Equal(t, "customInput", ae.Details[0].Field)
				require.Equal(t, tt.wantErr, ae.Details[0].Message)
				return
			}
			require.NoError(t, err)
			require.Equal(t, api.Answer{Selections: []string{}, CustomInput: tt.want}, got)
		})
	}
}

func TestDirectoryWorkspace(t *testing.T) {
	t.Parallel()
	b := setupDirs(t)
	validate := func(ws, input string) error {
		_, err := askuser.ValidateAnswer(b.prompt, api.Answer{CustomInput: input}, askuser.AnswerOptions{Workspace: ws})
		return err
	}

	// The workspace itself may be reached through a symlink; the rules hold.
	link := filepath.Join(b.base, "wslink")
	require.NoError(t, validate(link, "src/pkg"))
	require.EqualError(t, validate(link, "link-out"), `invalid answer: customInput: "link-out" resolves outside the workspace through a symbolic link`)
	require.EqualError(t, validate(link, "up/ws-evil"), `invalid answer: customInput: "up/ws-evil" resolves outside the workspace through a symbolic link`)

	// An absolute path that names the workspace itself is still absolute.
	// (Long inputs are clipped to 40 characters in the message.)
	require.ErrorContains(t, validate(b.ws, filepath.Join(b.ws, "src")), `…" is absolute; enter a path relative to the workspace`)

	require.EqualError(t, validate("", "src"), "invalid answer: customInput: directory answers are disabled: the server has no workspace root configured (--workspace)")
	require.EqualError(t, validate("relative/ws", "src"), "invalid answer: customInput: the server's workspace root is not an absolute path")
	require.EqualError(t, validate(filepath.Join(b.base, "missing"), "src"), "invalid answer: customInput: the server's workspace root cannot be read")

	_, err := askuser.ValidateAnswer(b.prompt, api.Answer{Selections: []string{"src"}, CustomInput: "src"}, askuser.AnswerOptions{Workspace: b.ws})
	require.EqualError(t, err, "invalid answer: selections: mode directory takes no selections, got 1")
}
