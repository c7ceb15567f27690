package tool

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/lubanhq/luban/model"
)

// CurrentTime is a built-in read-only tool that returns the server's time in
// RFC 3339. Now defaults to time.Now.
func CurrentTime(now func() time.Time) Tool {
	if now == nil {
		now = time.Now
	}
	return Func{
		ToolSpec: model.ToolSpec{
			Name:        "current_time",
			Description: "Returns the current date and time of the server (RFC 3339). 返回服务器当前时间。",
			Parameters:  json.RawMessage(`{"type":"object","properties":{}}`),
		},
		Fn: func(ctx context.Context, _ json.RawMessage) (Result, error) {
			return Result{Content: now().Format(time.RFC3339)}, nil
		},
	}
}

// ListFiles is a built-in read-only tool that lists the entries of a
// directory inside root (the workspace). Paths outside root are refused.
func ListFiles(root string) Tool {
	return Func{
		ToolSpec: model.ToolSpec{
			Name:        "list_files",
			Description: "Lists files in a directory of the workspace. 列出工作区目录中的文件。",
			Parameters:  json.RawMessage(`{"type":"object","properties":{"path":{"type":"string","description":"relative directory, default ."}}}`),
		},
		Fn: func(ctx context.Context, args json.RawMessage) (Result, error) {
			var a struct {
				Path string `json:"path"`
			}
			if len(args) > 0 {
				if err := json.Unmarshal(args, &a); err != nil {
					return Result{Content: "arguments: not a JSON object: " + err.Error(), IsError: true}, nil
				}
			}
			if root == "" {
				return Result{Content: "no workspace is configured", IsError: true}, nil
			}
			dir, err := insideRoot(root, a.Path)
			if err != nil {
				return Result{Content: fmt.Sprintf("cannot list %q: %v", a.Path, err), IsError: true}, nil
			}
			ents, err := os.ReadDir(dir)
			if err != nil {
				return Result{Content: fmt.Sprintf("cannot list %q: %v", a.Path, err), IsError: true}, nil
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
			return Result{Content: strings.Join(names, "\n")}, nil
		},
	}
}

// insideRoot resolves rel against root and fails unless the result, with
// every symbolic link followed, is root or below it.
func insideRoot(root, rel string) (string, error) {
	realRoot, err := filepath.EvalSymlinks(root)
	if err != nil {
		return "", fmt.Errorf("workspace: %w", err)
	}
	p, err := filepath.EvalSymlinks(filepath.Join(realRoot, filepath.Clean("/"+rel)))
	if err != nil {
		return "", err
	}
	if r, err := filepath.Rel(realRoot, p); err != nil || r == ".." || strings.HasPrefix(r, "../") {
		return "", fmt.Errorf("outside the workspace")
	}
	return p, nil
}
