//go:build lubantest

package main

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/lubanhq/luban/agent"
	"github.com/lubanhq/luban/api"
	"github.com/lubanhq/luban/model"
	"github.com/lubanhq/luban/people"
	"github.com/lubanhq/luban/tool"
)

// testHooks applies the test hooks of a lubantest build: LUBAN_TEST_TOOLS=1
// registers record_note for every agent, LUBAN_FAULT=<point>[:<n>] kills the
// process with SIGKILL the n-th time (default 1) a run reaches that point
// (agent.InjectFault).
func testHooks(getenv func(string) string, opts *agent.Options, workspace string, log *slog.Logger) error {
	if getenv("LUBAN_TEST_TOOLS") == "1" {
		if err := opts.Tools.Register(recordNote(workspace), false); err != nil {
			return err
		}
		for _, a := range opts.Agents {
			a.Tools = append(a.Tools, "record_note")
		}
	}
	if v := getenv("LUBAN_FAULT"); v != "" {
		agent.InjectFault(opts, faultFromEnv(v, log))
	}
	return nil
}

// dispatcherHooks applies LUBAN_FAULT to the webhook dispatcher: the
// points "webhook_fanout" and "webhook_send" (people.InjectFault) kill the
// process like the run's points do.
func dispatcherHooks(getenv func(string) string, o *people.DispatcherOptions, log *slog.Logger) {
	if v := getenv("LUBAN_FAULT"); v != "" {
		people.InjectFault(o, faultFromEnv(v, log))
	}
}

// faultFromEnv returns the hook for LUBAN_FAULT=<point> (or <point>:<n>
// for the n-th time): the process kills itself with SIGKILL when a run
// reaches that point.
func faultFromEnv(v string, log *slog.Logger) func(string) {
	point, nth := v, 1
	if i := strings.LastIndex(v, ":"); i > 0 {
		if _, err := fmt.Sscanf(v[i+1:], "%d", &nth); err == nil {
			point = v[:i]
		}
	}
	seen := 0
	return func(p string) {
		if p != point {
			return
		}
		seen++
		if seen == nth {
			log.Warn("fault injection: killing the process", "point", p)
			_ = syscall.Kill(os.Getpid(), syscall.SIGKILL)
			select {}
		}
	}
}

// NotesFile is the file, inside the workspace, that the test-only
// record_note tool appends to (one line per call).
const NotesFile = "luban-notes.txt"

// recordNote is a test-only tool, registered only when LUBAN_TEST_TOOLS=1 in
// a lubantest build: it appends its "note" argument as one line to
// NotesFile in the workspace and answers "noted". It has a visible side
// effect and is registered as not idempotent, so the crash tests
// (internal/testkit/crashtest) can prove that a call interrupted by a crash is not
// run again: its ToolResult says it was interrupted and the file keeps zero
// lines for it.
func recordNote(workspace string) tool.Tool {
	return tool.Func{
		ToolSpec: model.ToolSpec{
			Name:        "record_note",
			Description: "Test-only: appends a note to " + NotesFile + " in the workspace. Not idempotent.",
			Parameters:  json.RawMessage(`{"type":"object","properties":{"note":{"type":"string"}},"required":["note"]}`),
		},
		Fn: func(ctx context.Context, args json.RawMessage) (api.ToolResult, error) {
			var a struct {
				Note string `json:"note"`
			}
			if err := json.Unmarshal(args, &a); err != nil {
				return api.ToolResult{Content: "arguments: not a JSON object: " + err.Error(), IsError: true}, nil
			}
			f, err := os.OpenFile(filepath.Join(workspace, NotesFile), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
			if err != nil {
				return api.ToolResult{}, err
			}
			defer f.Close()
			if _, err := fmt.Fprintln(f, a.Note); err != nil {
				return api.ToolResult{}, err
			}
			return api.ToolResult{Content: "noted"}, f.Sync()
		},
	}
}
