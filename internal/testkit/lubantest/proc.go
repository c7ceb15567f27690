package lubantest

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// Process deadlines. They bound waits on signals; nothing here sleeps.
const (
	// ProcStartTimeout bounds a process start: the "luban serving on" line
	// and the first 200 of /readyz.
	ProcStartTimeout = 30 * time.Second
	// ProcExitTimeout bounds a process exit after a signal or a fault.
	ProcExitTimeout = 30 * time.Second
)

// RunWithLuban is the body of a TestMain whose tests start `luban serve`
// processes: it builds cmd/luban once, with the lubantest tag (test tools
// and fault injection), into a temporary directory, stores
// the binary's path in *bin, runs m and removes the directory. It returns
// the exit code for os.Exit. A failed build returns 1 and fails the
// package; it is never a skip: a process test without its binary
// has tested nothing. label prefixes messages and
// the temporary directory (e.g. "crashtest").
func RunWithLuban(m *testing.M, label string, bin *string) int {
	dir, err := os.MkdirTemp("", "luban-"+label+"-")
	if err != nil {
		fmt.Fprintln(os.Stderr, label+":", err)
		return 1
	}
	defer os.RemoveAll(dir)
	*bin = filepath.Join(dir, "luban")
	// go test puts $GOROOT/bin first in the PATH of the test binary.
	goBin, err := exec.LookPath("go")
	if err != nil {
		fmt.Fprintf(os.Stderr, "%s: no go command to build cmd/luban: %v\n", label, err)
		return 1
	}
	// The test hooks (LUBAN_TEST_TOOLS, LUBAN_FAULT) exist only in a
	// build with the lubantest tag.
	out, err := exec.Command(goBin, "build", "-tags", "lubantest", "-o", *bin, "github.com/lubanhq/luban/cmd/luban").CombinedOutput()
	if err != nil {
		fmt.Fprintf(os.Stderr, "%s: go build ./cmd/luban failed; the process tests cannot run: %v\n%s", label, err, out)
		return 1
	}
	return m.Run()
}

// ProcOptions configures one `luban serve` process started by StartProc.
// The process listens on 127.0.0.1:0 with the tokens "test-token" and
// "other-token" (two principals) and the model "openai:fake".
type ProcOptions struct {
	// Bin is the luban binary (RunWithLuban). Required.
	Bin string
	// Name labels the process in messages; its log is kept as the
	// artifact <Name>.log of a failed test.
	Name string
	// DB is --db: a SQLite path, "memory" or a postgres:// URL.
	DB string
	// ModelURL is OPENAI_BASE_URL (a fake model server). Required.
	ModelURL string
	// APIKey is OPENAI_API_KEY; default "sk-proctest".
	APIKey string
	// Lease is --lease; default "1s" (a crashed process's runs are taken
	// over after 1s).
	Lease string
	// Heartbeat is --sse-heartbeat; default "500ms".
	Heartbeat string
	// TTL is --interaction-ttl; default "1h".
	TTL string
	// Workspace is --workspace; default a temporary directory.
	Workspace string
	// Env holds more KEY=VALUE entries (LUBAN_FAULT, LUBAN_AGENT, ...).
	// The caller's LUBAN_*, OPENAI_*, ANTHROPIC_* and TMPDIR are never
	// inherited; TMPDIR is a directory of the test, so a --db memory file
	// left by a kill -9 stays inside it.
	Env []string
	// TermOnCleanup makes the end of the test send SIGTERM (then SIGKILL
	// after ProcExitTimeout) to a process still running; default SIGKILL.
	TermOnCleanup bool
}

// Proc is a running `luban serve` started by StartProc.
type Proc struct {
	// Name is ProcOptions.Name.
	Name string
	// URL is the base URL the process printed ("luban serving on URL"),
	// without a trailing slash.
	URL string
	// API talks to the process over loopback with token "test-token"
	// (Attach): the same helpers and SSE evidence as Start.
	API *Server
	// Cmd is the process; Cmd.ProcessState is set once it has exited.
	Cmd *exec.Cmd

	t       *testing.T
	logPath string
	done    chan struct{} // closed when the process has exited
}

// StartProc starts `luban serve` and returns once /readyz answers 200.
// A process still running when the test ends is stopped (ProcOptions.
// TermOnCleanup); the log of a failed test is kept as an artifact and
// printed with t.Logf.
func StartProc(t *testing.T, o ProcOptions) *Proc {
	t.Helper()
	require.NotEmpty(t, o.Bin, "ProcOptions.Bin: build luban with RunWithLuban")
	if o.APIKey == "" {
		o.APIKey = "sk-proctest"
	}
	if o.Lease == "" {
		o.Lease = "1s"
	}
	if o.Heartbeat == "" {
		o.Heartbeat = "500ms"
	}
	if o.TTL == "" {
		o.TTL = "1h"
	}
	if o.Workspace == "" {
		o.Workspace = t.TempDir()
	}
	tmp := t.TempDir()
	logPath := filepath.Join(tmp, o.Name+".log")
	logf, err := os.Create(logPath)
	require.NoError(t, err)
	t.Cleanup(func() { logf.Close() })

	cmd := exec.Command(o.Bin, "serve", "--addr", "127.0.0.1:0", "--db", o.DB, "--model", "openai:fake",
		"--auth-token", "test-token,other-token", "--lease", o.Lease, "--sse-heartbeat", o.Heartbeat,
		"--workspace", o.Workspace, "--interaction-ttl", o.TTL)
	var env []string
	for _, kv := range os.Environ() {
		if strings.HasPrefix(kv, "LUBAN_") || strings.HasPrefix(kv, "OPENAI_") || strings.HasPrefix(kv, "ANTHROPIC_") || strings.HasPrefix(kv, "TMPDIR=") {
			continue
		}
		env = append(env, kv)
	}
	env = append(env, "OPENAI_BASE_URL="+o.ModelURL, "OPENAI_API_KEY="+o.APIKey, "TMPDIR="+tmp)
	cmd.Env = append(env, o.Env...)
	aw := &addrWriter{w: logf, found: make(chan string, 1)}
	cmd.Stdout = aw
	cmd.Stderr = logf
	require.NoError(t, cmd.Start())
	p := &Proc{Name: o.Name, Cmd: cmd, t: t, logPath: logPath, done: make(chan struct{})}
	go func() {
		_ = cmd.Wait()
		close(p.done)
	}()
	t.Cleanup(func() {
		p.stop(o.TermOnCleanup)
		if t.Failed() {
			p.saveLog()
		}
	})
	select {
	case u := <-aw.found:
		p.URL = strings.TrimSuffix(u, "/")
	case <-p.done:
		t.Fatalf("%s exited before serving:\n%s", o.Name, p.Log())
	case <-time.After(ProcStartTimeout):
		t.Fatalf("%s did not print its address within %s:\n%s", o.Name, ProcStartTimeout, p.Log())
	}
	ctx, cancel := context.WithTimeout(context.Background(), ProcStartTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, p.URL+"/readyz", nil)
	require.NoError(t, err)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err, "%s /readyz", o.Name)
	resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode, "%s /readyz", o.Name)
	p.API = Attach(t, p.URL, "test-token")
	return p
}

// stop ends a process still running at the end of the test: SIGKILL, or
// SIGTERM first when term is set.
func (p *Proc) stop(term bool) {
	select {
	case <-p.done:
		return
	default:
	}
	if term {
		_ = p.Cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-p.done:
			return
		case <-time.After(ProcExitTimeout):
		}
	}
	_ = p.Cmd.Process.Kill()
	<-p.done
}

// Log returns what the process has written to stdout and stderr so far.
func (p *Proc) Log() string {
	b, _ := os.ReadFile(p.logPath)
	return string(b)
}

// saveLog keeps the process log beside the SSE artifacts of a failed test.
func (p *Proc) saveLog() {
	dir := artifactDir(p.t)
	if os.MkdirAll(dir, 0o755) == nil {
		_ = os.WriteFile(filepath.Join(dir, p.Name+".log"), []byte(p.Log()), 0o644)
	}
	p.t.Logf("log of %s:\n%s", p.Name, p.Log())
}

// WaitExit waits up to ProcExitTimeout for the process to exit and returns
// its state; it fails the test if the process is still running.
func (p *Proc) WaitExit() *os.ProcessState {
	p.t.Helper()
	select {
	case <-p.done:
		return p.Cmd.ProcessState
	case <-time.After(ProcExitTimeout):
		p.t.Fatalf("%s did not exit within %s", p.Name, ProcExitTimeout)
		return nil
	}
}

// KilledBySIGKILL reports whether ps is the state of a process that died
// of SIGKILL.
func KilledBySIGKILL(ps *os.ProcessState) bool {
	ws, ok := ps.Sys().(syscall.WaitStatus)
	return ok && ws.Signaled() && ws.Signal() == syscall.SIGKILL
}

// Kill9 is `kill -9` sent by the test; it waits for the exit and requires
// SIGKILL as its cause.
func (p *Proc) Kill9() {
	p.t.Helper()
	require.NoError(p.t, p.Cmd.Process.Signal(syscall.SIGKILL))
	require.True(p.t, KilledBySIGKILL(p.WaitExit()), "%s: not killed by SIGKILL", p.Name)
}

// WaitKilled waits for the process to end and requires SIGKILL as the
// cause (e.g. its own LUBAN_FAULT).
func (p *Proc) WaitKilled() {
	p.t.Helper()
	ps := p.WaitExit()
	require.True(p.t, KilledBySIGKILL(ps), "%s: not killed by SIGKILL: %v", p.Name, ps)
}

// WaitFault waits for the process to SIGKILL itself at its LUBAN_FAULT
// point (cmd/luban logs "fault injection: killing the process" first).
func (p *Proc) WaitFault() {
	p.t.Helper()
	ps := p.WaitExit()
	require.True(p.t, KilledBySIGKILL(ps), "%s: expected to die by SIGKILL at its fault point, got %v:\n%s", p.Name, ps, p.Log())
	require.Contains(p.t, p.Log(), "fault injection: killing the process")
}

// Term sends SIGTERM and requires a clean exit (status 0).
func (p *Proc) Term() {
	p.t.Helper()
	require.NoError(p.t, p.Cmd.Process.Signal(syscall.SIGTERM))
	ps := p.WaitExit()
	require.True(p.t, ps.Success(), "%s: SIGTERM exit %v:\n%s", p.Name, ps, p.Log())
}

// Post sends a JSON POST with token "test-token" and, unlike Server.Request,
// returns a transport error instead of failing the test (a process dying
// in the middle of the request).
func (p *Proc) Post(path string, body string) (*http.Response, error) {
	req, err := http.NewRequest(http.MethodPost, p.URL+path, strings.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Authorization", "Bearer test-token")
	req.Header.Set("Content-Type", "application/json")
	return http.DefaultClient.Do(req)
}

// addrWriter copies the process's stdout to w and reports the URL of the
// "luban serving on URL" line once.
type addrWriter struct {
	mu    sync.Mutex
	w     io.Writer
	buf   []byte
	sent  bool
	found chan string
}

func (a *addrWriter) Write(b []byte) (int, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	_, _ = a.w.Write(b)
	if a.sent {
		return len(b), nil
	}
	a.buf = append(a.buf, b...)
	for {
		i := bytes.IndexByte(a.buf, '\n')
		if i < 0 {
			break
		}
		line := string(a.buf[:i])
		a.buf = a.buf[i+1:]
		if u, ok := strings.CutPrefix(line, "luban serving on "); ok {
			a.sent = true
			a.buf = nil
			a.found <- strings.TrimSpace(u)
			break
		}
	}
	return len(b), nil
}
