package opstest

import (
	"archive/zip"
	"bufio"
	"bytes"
	"context"
	"fmt"
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
// GOPATH gives a binary that serves the page (DESIGN §14): the page is the
// committed web/dist, no Node involved. The module comes from a file proxy
// made of this work tree under a version of its own (a fresh pre-release
// per run, so no cached copy is reused); the dependencies come from this
// machine's module cache as a second file proxy, so the test needs no
// network. By default the dependencies' extracted sources and compiled
// packages are shared with this machine (a minute or two); with
// LUBAN_TEST_INSTALL_CLEAN=1 the module cache is a new empty one too, which
// recompiles every dependency (-trimpath; ten minutes and more on two
// cores).
func TestGoInstallServesThePage(t *testing.T) {
	t.Parallel()
	root := repoRoot(t)
	version := fmt.Sprintf("v0.0.1-test.%d", time.Now().UnixNano())
	proxy := moduleProxy(t, root, version)
	goBin, err := exec.LookPath("go")
	require.NoError(t, err)
	modcache, err := exec.Command(goBin, "env", "GOMODCACHE").Output()
	require.NoError(t, err)
	gopath := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 18*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, goBin, "install", modulePath+"/cmd/luban@latest")
	cmd.Dir = t.TempDir() // outside any module
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "GO") {
			env = append(env, kv)
		}
	}
	cmd.Env = append(env, "GOPATH="+gopath, "GOPROXY=file://"+proxy+",file://"+filepath.Join(strings.TrimSpace(string(modcache)), "cache", "download"),
		"GOSUMDB=off", "GOTOOLCHAIN=local", "GOCACHE="+goEnv(t, goBin, "GOCACHE"))
	if os.Getenv("LUBAN_TEST_INSTALL_CLEAN") == "1" {
		cmd.Env = append(cmd.Env, "GOMODCACHE="+filepath.Join(gopath, "pkg", "mod"), "GOFLAGS=-trimpath -modcacherw")
	} else {
		cmd.Env = append(cmd.Env, "GOMODCACHE="+strings.TrimSpace(string(modcache)), "GOFLAGS=")
	}
	dieWithTest(cmd)
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "go install:\n%s", out)
	bin := filepath.Join(gopath, "bin", "luban")

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

func goEnv(t *testing.T, goBin, key string) string {
	t.Helper()
	out, err := exec.Command(goBin, "env", key).Output()
	require.NoError(t, err)
	return strings.TrimSpace(string(out))
}
