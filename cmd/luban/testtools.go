package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	"github.com/lubanhq/luban/model"
	"github.com/lubanhq/luban/tool"
)

// NotesFile is the file, inside the workspace, that the test-only
// record_note tool appends to (one line per call).
const NotesFile = "luban-notes.txt"

// recordNote is a TEST-ONLY tool, registered only when LUBAN_TEST_TOOLS=1
// (never in production): it appends its "note" argument as one line to
// NotesFile in the workspace and answers "noted". It has a visible side
// effect and is registered as NOT idempotent, so the crash tests
// (internal/crashtest, issue 5) can prove that a call interrupted by a crash
// is not silently run again: its ToolResult says it was interrupted and the
// file keeps zero lines for it.
func recordNote(workspace string) tool.Tool {
	return tool.Func{
		ToolSpec: model.ToolSpec{
			Name:        "record_note",
			Description: "Test-only: appends a note to " + NotesFile + " in the workspace. Not idempotent.",
			Parameters:  json.RawMessage(`{"type":"object","properties":{"note":{"type":"string"}},"required":["note"]}`),
		},
		Fn: func(ctx context.Context, args json.RawMessage) (tool.Result, error) {
			var a struct {
				Note string `json:"note"`
			}
			if err := json.Unmarshal(args, &a); err != nil {
				return tool.Result{Content: "arguments: not a JSON object: " + err.Error(), IsError: true}, nil
			}
			f, err := os.OpenFile(filepath.Join(workspace, NotesFile), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
			if err != nil {
				return tool.Result{}, err
			}
			defer f.Close()
			if _, err := fmt.Fprintln(f, a.Note); err != nil {
				return tool.Result{}, err
			}
			return tool.Result{Content: "noted"}, f.Sync()
		},
	}
}
