// Command fakeopenai-serve runs internal/testkit/fakeopenai as a process, for tests
// that cannot call it in-process: the page's end-to-end tests (web/e2e, issue
// 4) start it beside `luban serve --model openai:<name>` with
// OPENAI_BASE_URL set to the URL it prints. It is test-only and never part of
// a release.
//
// Usage:
//
//	fakeopenai-serve -turns turns.json -requests requests.json [-reasoning]
//
// turns.json is a JSON array of fakeopenai.Turn objects (Go field names,
// matched case-insensitively: {"text": "...", "toolCalls": [{"id": "call_1",
// "name": "ask_user", "arguments": "{...}"}], "reasoning": "..."}), played one
// per model request in order (-reasoning turns on the fake's reasoning mode,
// fakeopenai.Server.EnforceReasoning); a request past the last turn answers 500, as fakeopenai does.
// After every request the whole list of request bodies received so far is
// written to the -requests file as a JSON array (each element the body as
// sent), replaced atomically (write to a temporary file, then rename), so a
// reader never sees half a file.
//
// The first line on stdout is "url <base URL ending in /v1>". The process runs
// until SIGTERM or SIGINT, or until its stdin is closed when -stdin-exit is
// set (so it dies with the test runner that piped it).
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/lubanhq/luban/internal/testkit/fakeopenai"
)

func main() {
	if err := run(os.Args[1:], os.Stdin, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "fakeopenai-serve:", err)
		os.Exit(1)
	}
}

// tb satisfies testing.TB for fakeopenai.New outside a test: Helper does
// nothing and Cleanup collects the functions that close the server. Any
// other method would panic on the nil embedded TB, and fakeopenai calls none.
type tb struct {
	testing.TB
	cleanups []func()
}

func (t *tb) Helper()          {}
func (t *tb) Cleanup(f func()) { t.cleanups = append(t.cleanups, f) }

func (t *tb) close() {
	for i := len(t.cleanups) - 1; i >= 0; i-- {
		t.cleanups[i]()
	}
}

func run(args []string, stdin io.Reader, stdout io.Writer) error {
	fs := flag.NewFlagSet("fakeopenai-serve", flag.ContinueOnError)
	turnsPath := fs.String("turns", "", "JSON file: an array of fakeopenai.Turn played in order (required)")
	reqPath := fs.String("requests", "", "JSON file rewritten after every request with all request bodies so far (required)")
	stdinExit := fs.Bool("stdin-exit", false, "exit when stdin is closed")
	reasoning := fs.Bool("reasoning", false, "reasoning mode (fakeopenai.Server.EnforceReasoning): 400 when a tool-call turn comes back without its reasoning_content")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *turnsPath == "" || *reqPath == "" {
		return errors.New("-turns and -requests are required")
	}
	raw, err := os.ReadFile(*turnsPath)
	if err != nil {
		return err
	}
	var turns []fakeopenai.Turn
	if err := json.Unmarshal(raw, &turns); err != nil {
		return fmt.Errorf("%s: %w", *turnsPath, err)
	}
	if err := writeRequests(*reqPath, nil); err != nil {
		return err
	}

	t := &tb{}
	defer t.close()
	fake := fakeopenai.New(t)
	if *reasoning {
		fake.EnforceReasoning()
	}
	fake.Push(turns...)

	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	if *stdinExit {
		var cancel context.CancelFunc
		ctx, cancel = context.WithCancel(ctx)
		defer cancel()
		go func() {
			_, _ = io.Copy(io.Discard, stdin)
			cancel()
		}()
	}

	fmt.Fprintf(stdout, "url %s\n", fake.URL())
	for n := 1; ; n++ {
		reqs, err := fake.WaitRequests(ctx, n)
		if err != nil {
			return nil // ctx done: a clean stop
		}
		if err := writeRequests(*reqPath, reqs); err != nil {
			return err
		}
	}
}

// writeRequests replaces path with a JSON array of the request bodies.
func writeRequests(path string, reqs []*fakeopenai.Request) error {
	bodies := make([]json.RawMessage, 0, len(reqs))
	for _, r := range reqs {
		if json.Valid(r.Raw) {
			bodies = append(bodies, r.Raw)
		} else {
			b, _ := json.Marshal(string(r.Raw))
			bodies = append(bodies, b)
		}
	}
	b, err := json.MarshalIndent(bodies, "", " ")
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".requests-*")
	if err != nil {
		return err
	}
	if _, err := tmp.Write(b); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}
