package tool

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/lubanhq/luban/api"
	"github.com/lubanhq/luban/askuser"
	"github.com/lubanhq/luban/model"
)

// Limits of the workspace tools.
const (
	// MaxReadBytes is the largest file read_file returns (256 KiB).
	MaxReadBytes = 256 << 10
	// MaxWriteBytes is the largest content write_file writes (1 MiB).
	MaxWriteBytes = 1 << 20
	// MaxListEntries is the most entries list_files returns.
	MaxListEntries = 1000
)

// Names of the built-in workspace tools (docs/design.md §9).
const (
	NameListFiles = "list_files"
	NameReadFile  = "read_file"
	NameWriteFile = "write_file"
)

// Schemas of the workspace tools' arguments (JSON Schema, draft 2020-12
// subset the models understand). Unknown properties are refused, so an
// edited approval is checked as strictly as the tool reads it.
var (
	listFilesSchema = json.RawMessage(`{"type":"object","properties":{"path":{"type":"string","description":"directory relative to the workspace; default ."}},"additionalProperties":false}`)
	readFileSchema  = json.RawMessage(`{"type":"object","properties":{"path":{"type":"string","minLength":1,"description":"file path relative to the workspace"}},"required":["path"],"additionalProperties":false}`)
	writeFileSchema = json.RawMessage(`{"type":"object","properties":{"path":{"type":"string","minLength":1,"description":"file path relative to the workspace; missing parent directories are created"},"content":{"type":"string","description":"the complete new content of the file, written exactly"}},"required":["path","content"],"additionalProperties":false}`)
)

// ListFiles is a built-in read-only tool, list_files {path} (docs/design.md §9):
// the entries of a directory inside root (the workspace), sorted, one a
// line, directories with a trailing "/", at most MaxListEntries. The path is
// confined like a directory answer (askuser.ResolveWorkspacePath): absolute
// paths, ".." and symbolic links that lead out are refused with an error
// result.
func ListFiles(root string) Tool {
	return Func{
		ToolSpec: model.ToolSpec{
			Name:        NameListFiles,
			Description: "Lists files in a directory of the workspace. 列出工作区目录中的文件。",
			Parameters:  listFilesSchema,
		},
		Check: func(args json.RawMessage) []api.FieldError {
			var a struct {
				Path string `json:"path"`
			}
			if decodeArgs(args, &a) != "" {
				return nil // the schema's problem, reported by the run
			}
			if a.Path == "" {
				a.Path = "."
			}
			return checkPath(root, "path", a.Path)
		},
		Fn: func(ctx context.Context, args json.RawMessage) (api.ToolResult, error) {
			var a struct {
				Path string `json:"path"`
			}
			if msg := decodeArgs(args, &a); msg != "" {
				return api.ToolResult{Content: msg, IsError: true}, nil
			}
			if a.Path == "" {
				a.Path = "."
			}
			dir, err := askuser.ResolveWorkspacePath(root, a.Path)
			if err != nil {
				return api.ToolResult{Content: fmt.Sprintf("cannot list %q: %v", a.Path, err), IsError: true}, nil
			}
			ents, err := os.ReadDir(dir)
			if err != nil {
				return api.ToolResult{Content: fmt.Sprintf("cannot list %q: %v", a.Path, unwrapPath(err)), IsError: true}, nil
			}
			names := make([]string, 0, len(ents))
			for _, e := range ents {
				n := e.Name()
				if e.IsDir() {
					n += "/"
				}
				names = append(names, n)
			}
			sort.Strings(names)
			if len(names) > MaxListEntries {
				more := len(names) - MaxListEntries
				names = append(names[:MaxListEntries], fmt.Sprintf("… and %d more", more))
			}
			return api.ToolResult{Content: strings.Join(names, "\n")}, nil
		},
	}
}

// ReadFile is a built-in read-only tool, read_file {path} (docs/design.md §9): the
// text of a regular file inside root, at most MaxReadBytes, valid UTF-8 with
// no NUL byte. A directory, a binary file, a file too large or a path that
// leads outside the workspace is an error result saying which.
func ReadFile(root string) Tool {
	return Func{
		ToolSpec: model.ToolSpec{
			Name:        NameReadFile,
			Description: fmt.Sprintf("Reads a text file of the workspace (at most %d KiB, UTF-8). 读取工作区中的文本文件。", MaxReadBytes>>10),
			Parameters:  readFileSchema,
		},
		Check: func(args json.RawMessage) []api.FieldError {
			var a struct {
				Path string `json:"path"`
			}
			if decodeArgs(args, &a) != "" || a.Path == "" {
				return nil
			}
			return checkPath(root, "path", a.Path)
		},
		Fn: func(ctx context.Context, args json.RawMessage) (api.ToolResult, error) {
			var a struct {
				Path string `json:"path"`
			}
			if msg := decodeArgs(args, &a); msg != "" {
				return api.ToolResult{Content: msg, IsError: true}, nil
			}
			if a.Path == "" {
				return api.ToolResult{Content: "read_file needs a path", IsError: true}, nil
			}
			fail := func(format string, args ...any) (api.ToolResult, error) {
				return api.ToolResult{Content: fmt.Sprintf("cannot read %q: ", a.Path) + fmt.Sprintf(format, args...), IsError: true}, nil
			}
			p, err := askuser.ResolveWorkspacePath(root, a.Path)
			if err != nil {
				return fail("%v", err)
			}
			f, err := os.Open(p)
			if err != nil {
				return fail("%v", unwrapPath(err))
			}
			defer f.Close()
			fi, err := f.Stat()
			if err != nil {
				return fail("%v", unwrapPath(err))
			}
			if fi.IsDir() {
				return fail("it is a directory; use list_files")
			}
			if !fi.Mode().IsRegular() {
				return fail("it is not a regular file")
			}
			if fi.Size() > MaxReadBytes {
				return fail("the file has %d bytes, more than the limit of %d", fi.Size(), MaxReadBytes)
			}
			b, err := io.ReadAll(io.LimitReader(f, MaxReadBytes+1))
			if err != nil {
				return fail("%v", unwrapPath(err))
			}
			if len(b) > MaxReadBytes {
				return fail("the file has more than %d bytes", MaxReadBytes)
			}
			if bytes.IndexByte(b, 0) >= 0 || !utf8.Valid(b) {
				return fail("it is a binary file, not UTF-8 text")
			}
			return api.ToolResult{Content: string(b)}, nil
		},
	}
}

// WriteFile is a built-in tool with a side effect, write_file {path,
// content} (docs/design.md §9): it writes content exactly (at most MaxWriteBytes) to
// the file at path inside root, creating missing parent directories inside
// the workspace. The file is replaced whole (written beside it, then
// renamed), so a reader never sees half of it; an existing file keeps its
// permission bits, a new one gets 0644. A path that leads outside the
// workspace or names a directory is an error result. Its approval policy is
// "always" by default (approval.DefaultRules). Writing the same content
// twice leaves the same file, so the tool is registered as idempotent.
func WriteFile(root string) Tool {
	return Func{
		ToolSpec: model.ToolSpec{
			Name:        NameWriteFile,
			Description: "Writes a text file in the workspace (replacing it whole; missing directories are created). 在工作区中写入文本文件。",
			Parameters:  writeFileSchema,
		},
		Check: func(args json.RawMessage) []api.FieldError {
			var a struct {
				Path    string `json:"path"`
				Content string `json:"content"`
			}
			if decodeArgs(args, &a) != "" || a.Path == "" {
				return nil
			}
			out := checkPath(root, "path", a.Path)
			if len(out) == 0 {
				if p, err := askuser.ResolveWorkspacePath(root, a.Path); err == nil {
					if fi, err := os.Stat(p); err == nil && fi.IsDir() {
						out = append(out, api.FieldError{Field: "path", Code: api.DetailIsDirectory, Params: map[string]any{"path": clip(a.Path)},
							Message: fmt.Sprintf("%q is a directory; write_file writes files", clip(a.Path))})
					}
				}
			}
			if len(a.Content) > MaxWriteBytes {
				out = append(out, api.FieldError{Field: "content", Code: api.DetailTooLong, Params: map[string]any{"max": MaxWriteBytes, "got": len(a.Content), "unit": "bytes"},
					Message: fmt.Sprintf("%d bytes, more than the limit of %d", len(a.Content), MaxWriteBytes)})
			}
			return out
		},
		Fn: func(ctx context.Context, args json.RawMessage) (api.ToolResult, error) {
			var a struct {
				Path    *string `json:"path"`
				Content *string `json:"content"`
			}
			if msg := decodeArgs(args, &a); msg != "" {
				return api.ToolResult{Content: msg, IsError: true}, nil
			}
			if a.Path == nil || *a.Path == "" || a.Content == nil {
				return api.ToolResult{Content: "write_file needs a path and a content", IsError: true}, nil
			}
			path, content := *a.Path, *a.Content
			fail := func(format string, args ...any) (api.ToolResult, error) {
				return api.ToolResult{Content: fmt.Sprintf("cannot write %q: ", path) + fmt.Sprintf(format, args...), IsError: true}, nil
			}
			if len(content) > MaxWriteBytes {
				return fail("the content has %d bytes, more than the limit of %d", len(content), MaxWriteBytes)
			}
			p, err := askuser.ResolveWorkspacePath(root, path)
			if err != nil {
				return fail("%v", err)
			}
			mode := fs.FileMode(0o644)
			switch fi, err := os.Stat(p); {
			case err == nil && fi.IsDir():
				return fail("it is a directory")
			case err == nil && !fi.Mode().IsRegular():
				return fail("it is not a regular file")
			case err == nil:
				mode = fi.Mode().Perm()
			case !errors.Is(err, fs.ErrNotExist):
				return fail("%v", unwrapPath(err))
			}
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				return fail("%v", unwrapPath(err))
			}
			if err := writeWhole(p, []byte(content), mode); err != nil {
				return fail("%v", unwrapPath(err))
			}
			return api.ToolResult{Content: fmt.Sprintf("wrote %d bytes to %s", len(content), filepath.ToSlash(filepath.Clean(path)))}, nil
		},
	}
}

// checkPath is the workspace rule of a path argument (the same as the tool
// applies when it runs: askuser.ResolveWorkspacePath) as a FieldError.
func checkPath(root, field, p string) []api.FieldError {
	if _, err := askuser.ResolveWorkspacePath(root, p); err != nil {
		var params map[string]any
		if code := askuser.PathErrorCode(err); code != api.DetailNoWorkspace {
			params = map[string]any{"path": clip(p)}
		}
		return []api.FieldError{{Field: field, Code: askuser.PathErrorCode(err), Params: params, Message: err.Error()}}
	}
	return nil
}

// clip bounds a path quoted in a message.
func clip(s string) string {
	if r := []rune(s); len(r) > 60 {
		return string(r[:60]) + "…"
	}
	return s
}

// writeWhole writes b to a temporary file beside p, syncs it and renames it
// over p.
func writeWhole(p string, b []byte, mode fs.FileMode) error {
	f, err := os.CreateTemp(filepath.Dir(p), ".luban-write-*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	defer os.Remove(tmp)
	if _, err := f.Write(b); err != nil {
		f.Close()
		return err
	}
	if err := f.Chmod(mode); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(tmp, p)
}

// decodeArgs decodes a tool's JSON object arguments; empty means {}. It
// returns a message for the model when they are not an object of the
// expected shape.
func decodeArgs(args json.RawMessage, v any) string {
	if len(bytes.TrimSpace(args)) == 0 {
		return ""
	}
	dec := json.NewDecoder(bytes.NewReader(args))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return "arguments: not a JSON object of the tool's schema: " + err.Error()
	}
	return ""
}

func unwrapPath(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}
