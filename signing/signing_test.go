package signing_test

import (
	"context"
	"errors"
	"net/url"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/lubanhq/luban/signing"
)

// The key file is made once (mode 0600), read back as the same key by every
// process that starts at the same time, and never replaced when it does not
// parse.
func TestLoadOrCreate(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "keys", "luban.keys.json")
	var wg sync.WaitGroup
	kids := make([]string, 8)
	made := make([]bool, 8)
	for i := range kids {
		wg.Add(1)
		go func() {
			defer wg.Done()
			k, created, err := signing.LoadOrCreate(path)
			if err == nil {
				kids[i], made[i] = k.KID(), created
			}
		}()
	}
	wg.Wait()
	n := 0
	for i := range kids {
		require.Equal(t, kids[0], kids[i], "one key for every process")
		if made[i] {
			n++
		}
	}
	require.Equal(t, 1, n, "made once")
	fi, err := os.Stat(path)
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o600), fi.Mode().Perm())
	dir, err := os.Stat(filepath.Dir(path))
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o700), dir.Mode().Perm())

	require.NoError(t, os.WriteFile(path, []byte(`{"keys":[{"kty":"RSA"}]}`), 0o600))
	_, _, err = signing.LoadOrCreate(path)
	require.ErrorContains(t, err, "keys[0]: not an Ed25519 key")
	b, _ := os.ReadFile(path)
	require.Equal(t, `{"keys":[{"kty":"RSA"}]}`, string(b), "a bad file is left as it is")
}

// A rotated set signs with the new key and still verifies what the old
// one signed; the JWKS holds both, public halves only.
func TestRotation(t *testing.T) {
	t.Parallel()
	old, err := signing.Generate()
	require.NoError(t, err)
	g := signing.Grant{RequestID: "ask_1", Person: "alice"}
	before, err := old.SignGrant(g)
	require.NoError(t, err)
	parsed, err := signing.Parse(old.Marshal())
	require.NoError(t, err)
	require.Equal(t, old.KID(), parsed.KID())
	rotated, err := parsed.Rotated()
	require.NoError(t, err)
	require.NotEqual(t, old.KID(), rotated.KID())
	require.Len(t, rotated.JWKS().Keys, 2)
	for _, k := range rotated.JWKS().Keys {
		require.Equal(t, "OKP", k.Kty)
	}
	_, err = rotated.VerifyGrant(before, "ask_1", time.Now())
	require.NoError(t, err, "the old key still verifies")
	_, err = old.VerifyGrant(mustGrant(t, rotated, g), "ask_1", time.Now())
	var ve *signing.VerifyError
	require.ErrorAs(t, err, &ve, "the old set does not know the new key")
}

func mustGrant(t *testing.T, k *signing.Keys, g signing.Grant) string {
	t.Helper()
	s, err := k.SignGrant(g)
	require.NoError(t, err)
	return s
}

// An action link is absolute on Base, names the question in its path and
// carries a grant that expires with the question.
func TestActionLink(t *testing.T) {
	t.Parallel()
	k, err := signing.Generate()
	require.NoError(t, err)
	exp := time.Now().Add(time.Hour).Truncate(time.Second)
	l := &signing.Links{Keys: k, Base: "https://luban.example.com/", ExpiresAt: func(_ context.Context, id string) (time.Time, error) {
		if id != "ask_1" {
			return time.Time{}, errors.New("unknown")
		}
		return exp, nil
	}}
	link, err := l.ActionLink("ask_1", "alice", "approve")
	require.NoError(t, err)
	u, err := url.Parse(link)
	require.NoError(t, err)
	require.Equal(t, "https", u.Scheme)
	require.Equal(t, "luban.example.com", u.Host)
	require.Equal(t, "/q/ask_1", u.Path)
	require.Equal(t, "approve", u.Query().Get("answer"))
	g, err := k.VerifyGrant(u.Query().Get("grant"), "ask_1", time.Now())
	require.NoError(t, err)
	require.Equal(t, signing.Grant{RequestID: "ask_1", Person: "alice", Expires: exp.Unix()}, *g)
	_, err = k.VerifyGrant(u.Query().Get("grant"), "ask_1", exp)
	require.ErrorContains(t, err, "expired")
	_, err = l.ActionLink("ask_2", "alice", "")
	require.Error(t, err)
	_, err = l.ActionLink("ask_1", "", "")
	require.Error(t, err)
}
