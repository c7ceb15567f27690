//go:build linux

package opstest

import (
	"bufio"
	"debug/elf"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// instruction is one Dockerfile instruction: its keyword (upper case), its
// arguments as written (continuation lines joined) and its build stage.
type instruction struct {
	cmd, args string
	stage     int
}

// parseDockerfile reads the instructions of a Dockerfile: comment lines
// dropped, lines ending in a backslash joined with the next, the stage
// counted from 0 at each FROM.
func parseDockerfile(t *testing.T, path string) []instruction {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	var out []instruction
	stage := -1
	var cur strings.Builder
	for _, line := range strings.Split(string(b), "\n") {
		trimmed := strings.TrimSpace(line)
		if strings.HasPrefix(trimmed, "#") || (trimmed == "" && cur.Len() == 0) {
			continue
		}
		if s, ok := strings.CutSuffix(trimmed, `\`); ok {
			cur.WriteString(s + " ")
			continue
		}
		cur.WriteString(trimmed)
		text := strings.TrimSpace(cur.String())
		cur.Reset()
		if text == "" {
			continue
		}
		cmd, args, _ := strings.Cut(text, " ")
		cmd = strings.ToUpper(cmd)
		if cmd == "FROM" {
			stage++
		}
		out = append(out, instruction{cmd: cmd, args: strings.TrimSpace(args), stage: stage})
	}
	require.GreaterOrEqual(t, stage, 0, "%s has no FROM", path)
	return out
}

// envOf returns the KEY=VALUE pairs of the ENV instructions of stage (the
// KEY=VALUE form; values may be double-quoted).
func envOf(t *testing.T, ins []instruction, stage int) map[string]string {
	t.Helper()
	env := map[string]string{}
	pair := regexp.MustCompile(`([A-Za-z_][A-Za-z0-9_]*)=("(?:[^"\\]|\\.)*"|\S*)`)
	for _, in := range ins {
		if in.cmd != "ENV" || in.stage != stage {
			continue
		}
		ms := pair.FindAllStringSubmatch(in.args, -1)
		require.NotEmpty(t, ms, "ENV %s: only the KEY=VALUE form is read", in.args)
		for _, m := range ms {
			v := m[2]
			if strings.HasPrefix(v, `"`) {
				u, err := strconv.Unquote(v)
				require.NoError(t, err, "ENV %s", in.args)
				v = u
			}
			env[m[1]] = v
		}
	}
	return env
}

// last returns the arguments of the last instruction cmd of stage.
func last(t *testing.T, ins []instruction, stage int, cmd string) string {
	t.Helper()
	for i := len(ins) - 1; i >= 0; i-- {
		if ins[i].cmd == cmd && ins[i].stage == stage {
			return ins[i].args
		}
	}
	t.Fatalf("the Dockerfile's stage %d has no %s", stage, cmd)
	return ""
}

// execForm decodes an exec-form argument list (a JSON array of strings).
func execForm(t *testing.T, s string) []string {
	t.Helper()
	var args []string
	require.NoError(t, json.Unmarshal([]byte(s), &args), "exec form %s", s)
	return args
}

// imageBuild is the binary the Dockerfile's build stage makes, built once
// per test binary: TestGoInstallServesThePage uses it as its warm step.
var imageBuild struct {
	once          sync.Once
	dir           string
	bin, version  string
	userCPU       time.Duration
	output, fault string
}

// removeImageBuild removes what buildAsDockerfile built (TestMain).
func removeImageBuild() {
	if imageBuild.dir != "" {
		_ = os.RemoveAll(imageBuild.dir)
	}
}

// buildAsDockerfile runs the `go build` of the Dockerfile's build stage on
// this work tree: the same command line (CGO_ENABLED=0, -trimpath, the
// -ldflags with ${VERSION} set as `docker build --build-arg VERSION=…`
// would), with the -o path moved into a temporary directory, in an
// environment as the golang image has it (no GOFLAGS; -buildvcs=false as
// the image has no .git, see .dockerignore). The module and build caches
// are this machine's.
func buildAsDockerfile(t *testing.T) (bin, version string) {
	t.Helper()
	imageBuild.once.Do(func() {
		root := repoRoot(t)
		ins := parseDockerfile(t, filepath.Join(root, "Dockerfile"))
		var run string
		for _, in := range ins {
			if in.cmd == "RUN" && in.stage == 0 && strings.Contains(in.args, "go build") {
				run = in.args
			}
		}
		if run == "" {
			imageBuild.fault = "the Dockerfile's first stage has no RUN … go build"
			return
		}
		var build string
		for _, part := range strings.Split(run, "&&") {
			if strings.Contains(part, "go build") {
				build = strings.TrimSpace(part)
			}
		}
		out := regexp.MustCompile(`-o\s+(\S+)`).FindStringSubmatch(build)
		if out == nil {
			imageBuild.fault = "the Dockerfile's go build has no -o: " + build
			return
		}
		dir, err := os.MkdirTemp("", "luban-opstest-image-")
		if err != nil {
			imageBuild.fault = err.Error()
			return
		}
		// TestMain removes it: both tests of the package use the binary.
		imageBuild.dir = dir
		imageBuild.bin = filepath.Join(dir, "luban")
		imageBuild.version = "v0.0.0-image-test"
		build = strings.Replace(build, out[0], "-o "+imageBuild.bin, 1)
		cmd := exec.Command("sh", "-c", build)
		cmd.Dir = root
		cmd.Env = append(goFreeEnv(), "VERSION="+imageBuild.version, "GOFLAGS=-buildvcs=false", "GOTOOLCHAIN=local",
			"GOCACHE="+goEnv(t, "GOCACHE"), "GOMODCACHE="+goEnv(t, "GOMODCACHE"), "GOPROXY=off")
		dieWithTest(cmd)
		b, err := cmd.CombinedOutput()
		imageBuild.output = build + "\n" + string(b)
		if err != nil {
			imageBuild.fault = fmt.Sprintf("%v\n%s", err, imageBuild.output)
			return
		}
		imageBuild.userCPU = cmd.ProcessState.UserTime()
	})
	require.Empty(t, imageBuild.fault, "building as the Dockerfile does")
	return imageBuild.bin, imageBuild.version
}

// goFreeEnv is this process's environment without GO* variables (so that
// the caller's GOFLAGS, GOPROXY and so on do not leak into a build) and
// without luban's own.
func goFreeEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		if strings.HasPrefix(kv, "GO") || strings.HasPrefix(kv, "CGO_") || strings.HasPrefix(kv, "LUBAN_") || strings.HasPrefix(kv, "OPENAI_") ||
			strings.HasPrefix(kv, "ANTHROPIC_") || strings.HasPrefix(kv, "OTEL_") {
			continue
		}
		env = append(env, kv)
	}
	return env
}

// The container image without a container engine (CI has none; the base
// images' registries may be out of reach): the binary the Dockerfile's
// build stage makes is static, and run as the final stage runs it (its
// USER, WORKDIR and ENV lines, its ENTRYPOINT and CMD) it serves from the
// data directory, and the HEALTHCHECK command says ready while it serves
// and not ready once it is gone.
func TestDockerfileBinaryRunsAsTheImageDoes(t *testing.T) {
	t.Parallel()
	root := repoRoot(t)
	bin, version := buildAsDockerfile(t)
	t.Logf("go build as the Dockerfile: %s user CPU", imageBuild.userCPU)

	f, err := elf.Open(bin)
	require.NoError(t, err)
	for _, p := range f.Progs {
		require.NotEqual(t, elf.PT_INTERP, p.Type, "a static binary has no interpreter (distroless/static has no libc)")
		require.NotEqual(t, elf.PT_DYNAMIC, p.Type, "a static binary has no dynamic section")
	}
	require.Nil(t, f.Section(".dynamic"))
	require.Nil(t, f.Section(".symtab"), "-s strips the symbol table")
	f.Close()
	if ldd, err := exec.LookPath("ldd"); err == nil {
		out, _ := exec.Command(ldd, bin).CombinedOutput()
		require.Contains(t, string(out), "not a dynamic executable")
	}
	v, err := exec.Command(bin, "--version").Output()
	require.NoError(t, err)
	require.True(t, strings.HasPrefix(string(v), "luban "+version), "-X main.version: %s", v)

	ins := parseDockerfile(t, filepath.Join(root, "Dockerfile"))
	final := ins[len(ins)-1].stage
	uid, gid := parseUser(t, last(t, ins, final, "USER"))
	require.NotZero(t, uid, "the image runs as a non-root user")
	// Only root may switch to the image's user; anyone else runs it as
	// themselves, which is non-root as well.
	asRoot := os.Getuid() == 0
	if !asRoot {
		uid, gid = os.Getuid(), os.Getgid()
	}
	env := envOf(t, ins, final)
	workdir := last(t, ins, final, "WORKDIR")
	require.Contains(t, env, "LUBAN_DB")
	require.Contains(t, env, "LUBAN_ADDR")
	var volume []string
	if v := last(t, ins, final, "VOLUME"); strings.HasPrefix(v, "[") {
		volume = execForm(t, v)
	} else {
		volume = strings.Fields(v)
	}
	require.Len(t, volume, 1)
	health := last(t, ins, final, "HEALTHCHECK")
	_, hcmd, ok := strings.Cut(health, "CMD ")
	require.True(t, ok, "HEALTHCHECK … CMD [...]: %s", health)
	healthArgs := execForm(t, strings.TrimSpace(hcmd))
	entry := execForm(t, last(t, ins, final, "ENTRYPOINT"))
	serveArgs := execForm(t, last(t, ins, final, "CMD"))
	require.Equal(t, entry[0], healthArgs[0], "the healthcheck runs the image's own binary")

	// The image's paths, inside a directory the image's user may enter: the
	// volume (owned by the user, as the build stage's COPY --chown makes it).
	top := t.TempDir()
	require.NoError(t, os.Chmod(top, 0o755))
	require.NoError(t, os.Chmod(filepath.Dir(top), 0o755))
	rootfs := func(p string) string { return filepath.Join(top, p) }
	data := rootfs(volume[0])
	require.NoError(t, os.MkdirAll(data, 0o755))
	if asRoot {
		require.NoError(t, os.Chown(data, uid, gid))
	}
	image := rootfs(entry[0])
	require.NoError(t, os.MkdirAll(filepath.Dir(image), 0o755))
	b, err := os.ReadFile(bin)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(image, b, 0o755))

	// Paths of the ENV lines that lie in the image are moved under top; the
	// listen port is a free one (the host part stays as written).
	host, _, err := net.SplitHostPort(env["LUBAN_ADDR"])
	require.NoError(t, err)
	var procEnv []string
	for k, v := range env {
		switch {
		case k == "LUBAN_ADDR":
			v = net.JoinHostPort(host, strconv.Itoa(freePort(t)))
		case strings.HasPrefix(v, "/"):
			v = rootfs(v)
		}
		env[k] = v
		procEnv = append(procEnv, k+"="+v)
	}
	// What `docker run -e …` adds: a token and a model (the scripted one
	// needs no network).
	procEnv = append(procEnv, "LUBAN_AUTH_TOKEN=image-token", "LUBAN_MODEL=scripted", "HOME="+data, "PATH=/usr/bin:/bin")
	asImage := func(args ...string) *exec.Cmd {
		cmd := exec.Command(image, args...)
		cmd.Dir = rootfs(workdir)
		cmd.Env = procEnv
		cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
		if asRoot {
			cmd.SysProcAttr.Credential = &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}
		}
		return cmd
	}

	srv := asImage(append(entry[1:], serveArgs...)...)
	stdout, err := srv.StdoutPipe()
	require.NoError(t, err)
	var stderr strings.Builder
	srv.Stderr = &stderr
	require.NoError(t, srv.Start())
	exited := make(chan struct{})
	t.Cleanup(func() {
		_ = srv.Process.Kill()
		<-exited
	})
	sc := bufio.NewScanner(stdout)
	var url string
	for sc.Scan() {
		if u, ok := strings.CutPrefix(sc.Text(), "luban serving on "); ok {
			url = u
			break
		}
	}
	go func() {
		for sc.Scan() {
		}
		_ = srv.Wait()
		close(exited)
	}()
	require.NotEmpty(t, url, "the image's command serves:\n%s", stderr.String())

	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", srv.Process.Pid))
	require.NoError(t, err)
	require.Regexp(t, fmt.Sprintf(`(?m)^Uid:\s+%d\s+%d`, uid, uid), string(status), "the server runs as the image's user")
	_, err = os.Stat(env["LUBAN_DB"])
	require.NoError(t, err, "the database is where LUBAN_DB puts it, on the volume")

	ok1, err := asImage(healthArgs[1:]...).CombinedOutput()
	require.NoError(t, err, "HEALTHCHECK while serving: %s", ok1)
	require.Contains(t, string(ok1), `"status":"ok"`)

	require.NoError(t, srv.Process.Kill())
	<-exited
	bad, err := asImage(healthArgs[1:]...).CombinedOutput()
	require.Error(t, err, "HEALTHCHECK once the server is gone: %s", bad)
	require.Equal(t, 1, err.(*exec.ExitError).ExitCode(), "%s", bad)
	require.Contains(t, string(bad), "not ready")
}

// parseUser reads USER uid[:gid] (numbers: distroless has no user names
// a test could resolve).
func parseUser(t *testing.T, s string) (uid, gid int) {
	t.Helper()
	u, g, hasGroup := strings.Cut(s, ":")
	uid, err := strconv.Atoi(u)
	require.NoError(t, err, "USER %s: a numeric uid", s)
	gid = uid
	if hasGroup {
		gid, err = strconv.Atoi(g)
		require.NoError(t, err, "USER %s: a numeric gid", s)
	}
	return uid, gid
}

func freePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}
