//go:build linux

package opstest

import (
	"archive/zip"
	"bufio"
	"bytes"
	"context"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

const modulePath = "github.com/lubanhq/luban"

// repoRoot is the repository's top directory.
func repoRoot(t *testing.T) string {
	t.Helper()
	out, err := exec.Command("git", "rev-parse", "--show-toplevel").Output()
	require.NoError(t, err, "the install test needs the git work tree")
	return strings.TrimSpace(string(out))
}

// moduleProxy writes a GOPROXY directory (the file:// layout of the module
// proxy protocol) that serves this work tree as version version of the
// module: the files git tracks or would track, as a module zip.
func moduleProxy(t *testing.T, root, version string) string {
	t.Helper()
	proxy := t.TempDir()
	dir := filepath.Join(proxy, modulePath, "@v")
	require.NoError(t, os.MkdirAll(dir, 0o755))
	files, err := exec.Command("git", "-C", root, "ls-files", "--cached", "--others", "--exclude-standard").Output()
	require.NoError(t, err)
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, name := range strings.Split(strings.TrimSpace(string(files)), "\n") {
		b, err := os.ReadFile(filepath.Join(root, name))
		if os.IsNotExist(err) {
			continue // deleted in the work tree
		}
		require.NoError(t, err)
		w, err := zw.Create(modulePath + "@" + version + "/" + name)
		require.NoError(t, err)
		_, err = w.Write(b)
		require.NoError(t, err)
	}
	require.NoError(t, zw.Close())
	mod, err := os.ReadFile(filepath.Join(root, "go.mod"))
	require.NoError(t, err)
	for name, b := range map[string][]byte{
		"list":            []byte(version + "\n"),
		version + ".info": []byte(`{"Version":"` + version + `","Time":"2026-12-01T00:00:00Z"}`),
		version + ".mod":  mod,
		version + ".zip":  buf.Bytes(),
	} {
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), b, 0o644))
	}
	return proxy
}

// `go install github.com/lubanhq/luban/cmd/luban@latest` in a temporary
// GOPATH with a new, empty module cache gives a binary that serves the page
// (docs/design.md §14): the page is the committed web/dist, no Node involved. The
// module comes from a file proxy made of this work tree; the dependencies
// come from this machine's downloaded module zips (its cache/download) as a
// second file proxy, so the test needs no network, and are extracted into
// the empty module cache and verified against go.sum there.
//
// The compiled packages come from this machine's build cache: with
// -trimpath a package's build cache key does not hold the directory of its
// source, so the dependencies compiled by the Dockerfile's build
// (buildAsDockerfile: CGO_ENABLED=0 -trimpath, the same settings as here)
// are reused although their sources now lie in another module cache. The
// test requires that only luban's own packages are compiled; a dependency
// compiled again means the two builds drifted apart (and costs minutes).
func TestGoInstallServesThePage(t *testing.T) {
	t.Parallel()
	root := repoRoot(t)
	buildAsDockerfile(t) // the warm step: see above
	// The module cache is empty, so no earlier copy of this version can be
	// reused; a fixed version lets the build cache serve reruns.
	const version = "v0.0.1-installtest"
	proxy := moduleProxy(t, root, version)
	goBin, err := exec.LookPath("go")
	require.NoError(t, err)
	gopath := t.TempDir()
	modcache := filepath.Join(gopath, "pkg", "mod")
	_, err = os.Stat(modcache)
	require.True(t, os.IsNotExist(err), "the module cache starts empty")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, goBin, "install", "-x", modulePath+"/cmd/luban@latest")
	cmd.Dir = t.TempDir() // outside any module
	env := goFreeEnv()
	cmd.Env = append(env, "GOPATH="+gopath, "GOMODCACHE="+modcache,
		"GOPROXY=file://"+proxy+",file://"+filepath.Join(goEnv(t, "GOMODCACHE"), "cache", "download"),
		"GOSUMDB=off", "GOTOOLCHAIN=local", "GOCACHE="+goEnv(t, "GOCACHE"),
		"CGO_ENABLED=0", "GOFLAGS=-trimpath -modcacherw")
	dieWithTest(cmd)
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "go install:\n%s", out)
	bin := filepath.Join(gopath, "bin", "luban")
	t.Logf("go install from an empty module cache: %s user CPU (go build as the Dockerfile before it: %s)",
		cmd.ProcessState.UserTime(), imageBuild.userCPU)

	_, err = os.Stat(filepath.Join(modcache, "cache", "download", modulePath, "@v", version+".zip"))
	require.NoError(t, err, "the module came through the new module cache")
	var compiled []string
	for _, m := range regexp.MustCompile(`/compile -o .*? -p (\S+) `).FindAllStringSubmatch(string(out), -1) {
		compiled = append(compiled, m[1])
	}
	// A rerun on the same tree compiles nothing: the fixed version gives
	// luban's own packages the same build cache keys as the run before. The
	// link step always runs (the GOPATH is new), so it shows that -x printed
	// the commands this test reads.
	require.Regexp(t, `/link -o \S+ `, string(out), "go install -x shows its commands (the link at least)")
	for _, p := range compiled {
		require.True(t, p == "main" || strings.HasPrefix(p, modulePath+"/"),
			"only luban's packages are compiled, the dependencies come from the build cache; compiled: %v", compiled)
	}
	t.Logf("compiled %d packages (luban's), every dependency from the build cache", len(compiled))

	v, err := exec.Command(bin, "--version").Output()
	require.NoError(t, err)
	require.Equal(t, "luban "+version+"\n", string(v), "the module version from the build information")

	srv := exec.CommandContext(ctx, bin, "serve", "--addr", "127.0.0.1:0", "--db", "memory", "--auth-token", "install-token", "--model", "scripted")
	srv.Env = append(env, "HOME="+t.TempDir(), "XDG_DATA_HOME="+t.TempDir())
	stdout, err := srv.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, srv.Start())
	t.Cleanup(func() { _ = srv.Process.Kill(); _ = srv.Wait() })
	sc := bufio.NewScanner(stdout)
	var url string
	for sc.Scan() {
		if u, ok := strings.CutPrefix(sc.Text(), "luban serving on "); ok {
			url = u
			break
		}
	}
	require.NotEmpty(t, url, "the installed binary serves")
	go func() { _, _ = io.Copy(io.Discard, stdout) }()

	resp, err := http.Get(url)
	require.NoError(t, err)
	page, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.NotContains(t, string(page), "built without the web page", "the page, not the placeholder")
	require.Contains(t, string(page), `<div id="root">`)
	asset := regexp.MustCompile(`/assets/index-[A-Za-z0-9_-]+\.js`).FindString(string(page))
	require.NotEmpty(t, asset, "the page loads its script:\n%s", page)
	resp, err = http.Get(strings.TrimSuffix(url, "/") + asset)
	require.NoError(t, err)
	js, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.Greater(t, len(js), 10000)
}

// goEnv is `go env key` of this machine.
func goEnv(t *testing.T, key string) string {
	t.Helper()
	out, err := exec.Command("go", "env", key).Output()
	require.NoError(t, err)
	return strings.TrimSpace(string(out))
}
