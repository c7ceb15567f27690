package crashtest

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/lubanhq/luban/internal/fakeopenai"
	"github.com/lubanhq/luban/internal/lubantest"
)

// lubanBin is the luban binary TestMain built for every test of the package.
var lubanBin string

// Deadlines. They bound waits on signals; nothing here sleeps.
const (
	startTimeout = 30 * time.Second // process start: "luban serving on" and /readyz
	exitTimeout  = 30 * time.Second // process exit after a signal or a fault
	waitEvents   = 30 * time.Second // SSE events, recovery after a lease expiry included
	leaseFlag    = "1s"             // --lease: a crashed process's runs are taken over after 1s
)

func TestMain(m *testing.M) { os.Exit(buildAndRun(m)) }

// buildAndRun builds cmd/luban once; a failed build fails the package (it is
// never a skip: STYLE rule 8).
func buildAndRun(m *testing.M) int {
	dir, err := os.MkdirTemp("", "luban-crashtest-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "crashtest:", err)
		return 1
	}
	defer os.RemoveAll(dir)
	lubanBin = filepath.Join(dir, "luban")
	// go test puts $GOROOT/bin first in the PATH of the test binary.
	goBin, err := exec.LookPath("go")
	if err != nil {
		fmt.Fprintln(os.Stderr, "crashtest: no go command to build cmd/luban:", err)
		return 1
	}
	out, err := exec.Command(goBin, "build", "-o", lubanBin, "github.com/lubanhq/luban/cmd/luban").CombinedOutput()
	if err != nil {
		fmt.Fprintf(os.Stderr, "crashtest: go build ./cmd/luban failed; the process tests cannot run: %v\n%s", err, out)
		return 1
	}
	return m.Run()
}

// procOptions configures one `luban serve` process.
type procOptions struct {
	// Name labels the process in logs and artifacts (p1, p2, ...).
	Name string
	// DB is the SQLite path, or "memory".
	DB string
	// Fake is the model server (OPENAI_BASE_URL).
	Fake *fakeopenai.Server
	// Fault is LUBAN_FAULT: <point>[:<n>] makes the process SIGKILL itself.
	Fault string
	// Agent is LUBAN_AGENT (default agent name "default").
	Agent string
	// Workspace is --workspace; default a temporary directory.
	Workspace string
}

// proc is a running `luban serve`.
type proc struct {
	t    *testing.T
	name string
	cmd  *exec.Cmd
	// API talks to the process over loopback (lubantest helpers).
	API     *lubantest.Server
	URL     string
	logPath string
	done    chan struct{} // closed when the process has exited
}

// startProc starts luban serve on 127.0.0.1:0 and returns once /readyz
// answers 200. The process is killed when the test ends if still running.
func startProc(t *testing.T, o procOptions) *proc {
	t.Helper()
	if o.Workspace == "" {
		o.Workspace = t.TempDir()
	}
	tmp := t.TempDir()
	logPath := filepath.Join(tmp, o.Name+".log")
	logf, err := os.Create(logPath)
	require.NoError(t, err)
	t.Cleanup(func() { logf.Close() })

	args := []string{"serve", "--addr", "127.0.0.1:0", "--db", o.DB, "--model", "openai:fake",
		"--auth-token", "test-token,other-token", "--lease", leaseFlag, "--sse-heartbeat", "500ms",
		"--workspace", o.Workspace, "--interaction-ttl", "1h"}
	cmd := exec.Command(lubanBin, args...)
	env := []string{}
	for _, kv := range os.Environ() {
		if strings.HasPrefix(kv, "LUBAN_") || strings.HasPrefix(kv, "OPENAI_") || strings.HasPrefix(kv, "ANTHROPIC_") || strings.HasPrefix(kv, "TMPDIR=") {
			continue
		}
		env = append(env, kv)
	}
	// TMPDIR: a --db memory file left by a kill -9 stays inside the test's directory.
	env = append(env, "OPENAI_BASE_URL="+o.Fake.URL(), "OPENAI_API_KEY=sk-crashtest", "LUBAN_TEST_TOOLS=1", "TMPDIR="+tmp)
	if o.Fault != "" {
		env = append(env, "LUBAN_FAULT="+o.Fault)
	}
	if o.Agent != "" {
		env = append(env, "LUBAN_AGENT="+o.Agent)
	}
	cmd.Env = env
	aw := &addrWriter{w: logf, found: make(chan string, 1)}
	cmd.Stdout = aw
	cmd.Stderr = logf
	require.NoError(t, cmd.Start())
	p := &proc{t: t, name: o.Name, cmd: cmd, logPath: logPath, done: make(chan struct{})}
	go func() {
		_ = cmd.Wait()
		close(p.done)
	}()
	t.Cleanup(func() {
		select {
		case <-p.done:
		default:
			_ = cmd.Process.Kill()
			<-p.done
		}
		if t.Failed() {
			p.saveLog()
		}
	})
	select {
	case u := <-aw.found:
		p.URL = strings.TrimSuffix(u, "/")
	case <-p.done:
		t.Fatalf("%s exited before serving:\n%s", o.Name, p.log())
	case <-time.After(startTimeout):
		t.Fatalf("%s did not print its address within %s:\n%s", o.Name, startTimeout, p.log())
	}
	ctx, cancel := context.WithTimeout(context.Background(), startTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, p.URL+"/readyz", nil)
	require.NoError(t, err)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err, "%s /readyz", o.Name)
	resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode, "%s /readyz", o.Name)
	p.API = lubantest.Attach(t, p.URL, "test-token")
	return p
}

func (p *proc) log() string {
	b, _ := os.ReadFile(p.logPath)
	return string(b)
}

// saveLog keeps the process log beside the SSE artifacts of a failed test.
func (p *proc) saveLog() {
	dir := os.Getenv("LUBAN_ARTIFACTS")
	if dir == "" {
		_, file, _, _ := runtime.Caller(0)
		dir = filepath.Join(filepath.Dir(file), "..", "..", "artifacts")
	}
	dir = filepath.Join(dir, strings.NewReplacer("/", "_", " ", "_").Replace(p.t.Name()))
	if os.MkdirAll(dir, 0o755) == nil {
		_ = os.WriteFile(filepath.Join(dir, p.name+".log"), []byte(p.log()), 0o644)
	}
	p.t.Logf("log of %s:\n%s", p.name, p.log())
}

func (p *proc) waitExit() *os.ProcessState {
	p.t.Helper()
	select {
	case <-p.done:
		return p.cmd.ProcessState
	case <-time.After(exitTimeout):
		p.t.Fatalf("%s did not exit within %s", p.name, exitTimeout)
		return nil
	}
}

func killedBySIGKILL(ps *os.ProcessState) bool {
	ws, ok := ps.Sys().(syscall.WaitStatus)
	return ok && ws.Signaled() && ws.Signal() == syscall.SIGKILL
}

// kill9 is `kill -9` sent by the test.
func (p *proc) kill9() {
	p.t.Helper()
	require.NoError(p.t, p.cmd.Process.Signal(syscall.SIGKILL))
	require.True(p.t, killedBySIGKILL(p.waitExit()), "%s: not killed by SIGKILL", p.name)
}

// waitFault waits for the process to SIGKILL itself at its LUBAN_FAULT point.
func (p *proc) waitFault() {
	p.t.Helper()
	ps := p.waitExit()
	require.True(p.t, killedBySIGKILL(ps), "%s: expected to die by SIGKILL at its fault point, got %v:\n%s", p.name, ps, p.log())
	require.Contains(p.t, p.log(), "fault injection: killing the process")
}

// term sends SIGTERM and requires a clean exit (status 0).
func (p *proc) term() {
	p.t.Helper()
	require.NoError(p.t, p.cmd.Process.Signal(syscall.SIGTERM))
	ps := p.waitExit()
	require.True(p.t, ps.Success(), "%s: SIGTERM exit %v:\n%s", p.name, ps, p.log())
}

// post sends an authenticated JSON POST and tolerates a transport error (a
// process dying in the middle of the request).
func (p *proc) post(path string, body string) (*http.Response, error) {
	req, err := http.NewRequest(http.MethodPost, p.URL+path, strings.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Authorization", "Bearer test-token")
	req.Header.Set("Content-Type", "application/json")
	return http.DefaultClient.Do(req)
}

// addrWriter copies the process's stdout to w and reports the URL of the
// "luban serving on http://ADDR/" line once.
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
	a.buf = append(a.buf, b...)
	for {
		i := bytes.IndexByte(a.buf, '\n')
		if i < 0 {
			break
		}
		line := string(a.buf[:i])
		a.buf = a.buf[i+1:]
		if u, ok := strings.CutPrefix(line, "luban serving on "); ok && !a.sent {
			a.sent = true
			a.found <- strings.TrimSpace(u)
		}
	}
	return len(b), nil
}
