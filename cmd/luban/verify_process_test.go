package main

import (
	"bufio"
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/lubanhq/luban/api"
	"github.com/lubanhq/luban/signing"
)

// signByHand makes a compact EdDSA JWS with crypto/ed25519 alone, as any
// other implementation would: the verifier under test is not the signer.
func signByHand(t *testing.T, priv ed25519.PrivateKey, kid, typ string, payload any) string {
	t.Helper()
	enc := base64.RawURLEncoding
	h, err := json.Marshal(map[string]string{"alg": "EdDSA", "kid": kid, "typ": typ})
	require.NoError(t, err)
	p, err := json.Marshal(payload)
	require.NoError(t, err)
	in := enc.EncodeToString(h) + "." + enc.EncodeToString(p)
	return in + "." + enc.EncodeToString(ed25519.Sign(priv, []byte(in)))
}

// lubanStdin is luban with stdin.
func lubanStdin(t *testing.T, stdin string, args ...string) result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0], args...)
	cmd.Env = append(cleanEnv(t), "LUBAN_CLI_TEST_MAIN=1")
	cmd.Stdin = strings.NewReader(stdin)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else {
		require.NoError(t, err)
	}
	return result{code, out.String(), errb.String()}
}

// docs/design.md §17, docs/operations.md: `luban serve` makes its signing
// key beside the database once (mode 0600) and serves the public half at
// /.well-known/luban/keys; `luban verify` checks a receipt offline against
// that JWKS or the key file and exits 0, or 1 with the reason; after
// `luban keys rotate` what the old key signed still verifies.
func TestVerifyProcess(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	db := filepath.Join(dir, "luban.db")
	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, os.Args[0], "serve", "--db", db, "--addr", "127.0.0.1:0", "--workspace", dir, "--auth-token", "verify-token")
	cmd.Env = append(cleanEnv(t), "LUBAN_CLI_TEST_MAIN=1")
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) }
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	stopped := false
	stop := func() {
		if !stopped {
			stopped = true
			cancel()
			_ = cmd.Wait()
		}
	}
	t.Cleanup(stop)
	sc := bufio.NewScanner(stdout)
	require.True(t, sc.Scan())
	url, ok := strings.CutPrefix(sc.Text(), "luban serving on ")
	require.True(t, ok, sc.Text())
	go func() { _, _ = io.Copy(io.Discard, stdout) }()

	keyFile := filepath.Join(dir, "luban.keys.json")
	fi, err := os.Stat(keyFile)
	require.NoError(t, err, "the key is kept beside the database")
	require.Equal(t, os.FileMode(0o600), fi.Mode().Perm())
	var kf struct {
		Keys []struct{ Kid, X, D string } `json:"keys"`
	}
	raw, err := os.ReadFile(keyFile)
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(raw, &kf))
	require.Len(t, kf.Keys, 1)
	seed, err := base64.RawURLEncoding.DecodeString(kf.Keys[0].D)
	require.NoError(t, err)
	priv := ed25519.NewKeyFromSeed(seed)

	resp, err := http.Get(strings.TrimSuffix(url, "/") + "/.well-known/luban/keys")
	require.NoError(t, err)
	jwks, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, resp.StatusCode, "no token needed")
	require.NotContains(t, string(jwks), kf.Keys[0].D, "the JWKS holds no private key")
	require.Contains(t, string(jwks), kf.Keys[0].X)
	jwksFile := filepath.Join(dir, "jwks.json")
	require.NoError(t, os.WriteFile(jwksFile, jwks, 0o600))
	stop()

	at := time.Date(2026, 12, 4, 12, 0, 0, 0, time.UTC)
	claims := map[string]any{"requestId": "ask_1", "sessionId": "sess_1", "kind": "approval", "tool": "deploy",
		"argsSha256": strings.Repeat("ab", 32), "decision": "approve", "by": "alice", "at": at, "policy": "approval"}
	jws := signByHand(t, priv, kf.Keys[0].Kid, "luban-receipt+jws", claims)
	file := func(name, content string) string {
		p := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(p, []byte(content), 0o600))
		return p
	}
	good := file("receipt.jws", jws+"\n")

	r := luban(t, nil, "verify", "--keys", jwksFile, good)
	require.Equal(t, 0, r.code, r.stderr)
	require.Contains(t, r.stdout, "verified: approval approve deploy by alice at 2026-12-04T12:00:00Z (request ask_1, session sess_1)")
	r = luban(t, nil, "verify", "--db", db, good)
	require.Equal(t, 0, r.code, "the key file beside the database: %s", r.stderr)

	parts := strings.Split(jws, ".")
	claims["decision"] = "reject"
	edited, _ := json.Marshal(claims)
	r = luban(t, nil, "verify", "--keys", jwksFile, file("edited.jws", parts[0]+"."+base64.RawURLEncoding.EncodeToString(edited)+"."+parts[2]))
	require.Equal(t, 1, r.code)
	require.Contains(t, r.stderr, "does not match the content")

	_, stranger, _ := ed25519.GenerateKey(rand.Reader)
	claims["decision"] = "approve"
	r = luban(t, nil, "verify", "--keys", jwksFile, file("stranger.jws", signByHand(t, stranger, "someone-else", "luban-receipt+jws", claims)))
	require.Equal(t, 1, r.code)
	require.Contains(t, r.stderr, `key "someone-else" is not in the JWKS`)

	r = luban(t, nil, "verify", "--keys", jwksFile, file("grant.jws", signByHand(t, priv, kf.Keys[0].Kid, "luban-grant+jws", claims)))
	require.Equal(t, 1, r.code, "a grant is not a receipt")
	require.Contains(t, r.stderr, "typ")

	rc, _ := json.Marshal(map[string]any{"requestId": "ask_2", "status": "answered", "decision": "approve", "resolvedAt": at, "signature": jws})
	r = luban(t, nil, "verify", "--keys", jwksFile, file("other.json", string(rc)))
	require.Equal(t, 1, r.code, "a receipt whose signature is another request's")
	require.Contains(t, r.stderr, "is for request ask_2 but its signature for ask_1")

	hook, _ := json.Marshal(map[string]any{"type": "interaction.resolved", "data": map[string]any{"sessionId": "sess_1",
		"receipt": map[string]any{"requestId": "ask_1", "status": "answered", "resolvedAt": at, "signature": jws}}})
	r = lubanStdin(t, string(hook), "verify", "--keys", jwksFile, "-")
	require.Equal(t, 0, r.code, "a webhook message on stdin: %s", r.stderr)

	answered := api.Receipt{RequestID: "ask_3", Status: api.StatusAnswered, Selections: []string{"dev"}, CustomInput: "svc",
		ResolvedAt: at, By: &api.Actor{ID: "alice", Name: "Alice"}}
	askClaims := map[string]any{"requestId": "ask_3", "sessionId": "sess_1", "kind": "ask", "decision": "answered", "by": "alice",
		"at": at, "policy": "ask", "answerSha256": signing.AnswerSHA256(&answered)}
	answered.Signature = signByHand(t, priv, kf.Keys[0].Kid, "luban-receipt+jws", askClaims)
	okReceipt, _ := json.Marshal(answered)
	r = luban(t, nil, "verify", "--keys", jwksFile, file("answered.json", string(okReceipt)))
	require.Equal(t, 0, r.code, r.stderr)
	require.Contains(t, r.stdout, "the receipt's answer is the one signed")
	for name, edit := range map[string]func(rc *api.Receipt){
		"selections":  func(rc *api.Receipt) { rc.Selections = []string{"prod"} },
		"customInput": func(rc *api.Receipt) { rc.CustomInput = "evil-svc" },
		"status":      func(rc *api.Receipt) { rc.Status = api.StatusCancelled },
		"by":          func(rc *api.Receipt) { rc.By = &api.Actor{ID: "mallory"} },
	} {
		rc := answered
		edit(&rc)
		b, _ := json.Marshal(rc)
		r = luban(t, nil, "verify", "--keys", jwksFile, file("edited-"+name+".json", string(b)))
		require.Equal(t, 1, r.code, "a receipt with its %s edited: %s", name, r.stdout)
		require.Contains(t, r.stderr, "not verified", name)
	}

	r = luban(t, nil, "verify", "--keys", jwksFile, file("empty.json", `{"requestId":"ask_1"}`))
	require.Equal(t, 1, r.code)
	require.Contains(t, r.stderr, "carries no signature")

	r = luban(t, nil, "keys", "rotate", "--db", db)
	require.Equal(t, 0, r.code, r.stderr)
	raw, err = os.ReadFile(keyFile)
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(raw, &kf))
	require.Len(t, kf.Keys, 2)
	require.NotEqual(t, kf.Keys[0].Kid, kf.Keys[1].Kid)
	fi, err = os.Stat(keyFile)
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o600), fi.Mode().Perm())
	r = luban(t, nil, "verify", "--db", db, good)
	require.Equal(t, 0, r.code, "the old key still verifies after a rotation: %s", r.stderr)

	r = luban(t, nil, "verify", "--keys", jwksFile)
	require.Equal(t, 2, r.code, "no receipt named is a usage error")
}
