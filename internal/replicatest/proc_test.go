package replicatest

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/lubanhq/luban/internal/fakeopenai"
	"github.com/lubanhq/luban/internal/lubantest"
	"github.com/lubanhq/luban/store/postgres/pgtest"
)

// lubanBin is the binary TestMain built.
var lubanBin string

// Deadlines: they bound waits on signals and SSE events; nothing sleeps.
const (
	startTimeout = 30 * time.Second
	exitTimeout  = 30 * time.Second
	waitEvents   = 30 * time.Second
)

func TestMain(m *testing.M) { os.Exit(buildAndRun(m)) }

// buildAndRun builds cmd/luban once when LUBAN_TEST_POSTGRES is set (without
// it every test skips). A failed build fails the package (STYLE rule 8).
func buildAndRun(m *testing.M) int {
	if !pgtest.Enabled() {
		return m.Run()
	}
	dir, err := os.MkdirTemp("", "luban-replicatest-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "replicatest:", err)
		return 1
	}
	defer os.RemoveAll(dir)
	lubanBin = filepath.Join(dir, "luban")
	goBin, err := exec.LookPath("go")
	if err != nil {
		goBin = filepath.Join(runtime.GOROOT(), "bin", "go")
	}
	out, err := exec.Command(goBin, "build", "-o", lubanBin, "github.com/lubanhq/luban/cmd/luban").CombinedOutput()
	if err != nil {
		fmt.Fprintf(os.Stderr, "replicatest: go build ./cmd/luban failed; the replica tests cannot run: %v\n%s", err, out)
		return 1
	}
	return m.Run()
}

// replicaOptions configures one `luban serve`.
type replicaOptions struct {
	Name  string             // A, B: labels logs and artifacts
	DB    string             // postgres://… with the test's search_path
	Fake  *fakeopenai.Server // the model (OPENAI_BASE_URL)
	Fault string             // LUBAN_FAULT: <point>[:<n>] makes the process SIGKILL itself
	TTL   string             // --interaction-ttl; default 1h
}

// replica is a running `luban serve` process.
type replica struct {
	t       *testing.T
	name    string
	cmd     *exec.Cmd
	API     *lubantest.Server // loopback client with SSE evidence
	URL     string
	logPath string
	done    chan struct{}
}

// startReplica starts luban serve on 127.0.0.1:0 with a 1s lease and an SSE
// heartbeat of an hour (so live events can only come from LISTEN/NOTIFY, not
// from a heartbeat's re-read), and returns once /readyz answers 200.
func startReplica(t *testing.T, o replicaOptions) *replica {
	t.Helper()
	if o.TTL == "" {
		o.TTL = "1h"
	}
	tmp := t.TempDir()
	logPath := filepath.Join(tmp, o.Name+".log")
	logf, err := os.Create(logPath)
	require.NoError(t, err)
	t.Cleanup(func() { logf.Close() })
	cmd := exec.Command(lubanBin, "serve", "--addr", "127.0.0.1:0", "--db", o.DB, "--model", "openai:fake",
		"--auth-token", "test-token,other-token", "--lease", "1s", "--sse-heartbeat", "1h",
		"--workspace", tmp, "--interaction-ttl", o.TTL)
	var env []string
	for _, kv := range os.Environ() {
		if strings.HasPrefix(kv, "LUBAN_") || strings.HasPrefix(kv, "OPENAI_") || strings.HasPrefix(kv, "ANTHROPIC_") {
			continue
		}
		env = append(env, kv)
	}
	env = append(env, "OPENAI_BASE_URL="+o.Fake.URL(), "OPENAI_API_KEY=sk-replicatest")
	if o.Fault != "" {
		env = append(env, "LUBAN_FAULT="+o.Fault)
	}
	cmd.Env = env
	aw := &addrWriter{w: logf, found: make(chan string, 1)}
	cmd.Stdout = aw
	cmd.Stderr = logf
	require.NoError(t, cmd.Start())
	r := &replica{t: t, name: o.Name, cmd: cmd, logPath: logPath, done: make(chan struct{})}
	go func() {
		_ = cmd.Wait()
		close(r.done)
	}()
	t.Cleanup(func() {
		select {
		case <-r.done:
		default:
			_ = cmd.Process.Signal(syscall.SIGTERM)
			select {
			case <-r.done:
			case <-time.After(exitTimeout):
				_ = cmd.Process.Kill()
				<-r.done
			}
		}
		if t.Failed() {
			r.saveLog()
		}
	})
	select {
	case u := <-aw.found:
		r.URL = strings.TrimSuffix(u, "/")
	case <-r.done:
		t.Fatalf("%s exited before serving:\n%s", o.Name, r.log())
	case <-time.After(startTimeout):
		t.Fatalf("%s did not print its address within %s:\n%s", o.Name, startTimeout, r.log())
	}
	ctx, cancel := context.WithTimeout(context.Background(), startTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, r.URL+"/readyz", nil)
	require.NoError(t, err)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err, "%s /readyz", o.Name)
	resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode, "%s /readyz", o.Name)
	r.API = lubantest.Attach(t, r.URL, "test-token")
	return r
}

func (r *replica) log() string {
	b, _ := os.ReadFile(r.logPath)
	return string(b)
}

// saveLog keeps the process log beside the SSE artifacts of a failed test.
func (r *replica) saveLog() {
	dir := os.Getenv("LUBAN_ARTIFACTS")
	if dir == "" {
		_, file, _, _ := runtime.Caller(0)
		dir = filepath.Join(filepath.Dir(file), "..", "..", "artifacts")
	}
	dir = filepath.Join(dir, strings.NewReplacer("/", "_", " ", "_").Replace(r.t.Name()))
	if os.MkdirAll(dir, 0o755) == nil {
		_ = os.WriteFile(filepath.Join(dir, "replica-"+r.name+".log"), []byte(r.log()), 0o644)
	}
	r.t.Logf("log of replica %s:\n%s", r.name, r.log())
}

// waitKilled waits for the process to end and requires SIGKILL as the cause.
func (r *replica) waitKilled() {
	r.t.Helper()
	select {
	case <-r.done:
	case <-time.After(exitTimeout):
		r.t.Fatalf("%s did not exit within %s", r.name, exitTimeout)
	}
	ws, ok := r.cmd.ProcessState.Sys().(syscall.WaitStatus)
	require.True(r.t, ok && ws.Signaled() && ws.Signal() == syscall.SIGKILL, "%s: not killed by SIGKILL: %v", r.name, r.cmd.ProcessState)
}

var servingRE = regexp.MustCompile(`luban serving on (http://\S+)`)

// addrWriter copies stdout to the log and reports the serving URL once.
type addrWriter struct {
	w     io.Writer
	mu    sync.Mutex
	buf   []byte
	sent  bool
	found chan string
}

func (a *addrWriter) Write(p []byte) (int, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if !a.sent {
		a.buf = append(a.buf, p...)
		if m := servingRE.FindSubmatch(a.buf); m != nil {
			a.found <- string(m[1])
			a.sent = true
			a.buf = nil
		}
	}
	return a.w.Write(p)
}
