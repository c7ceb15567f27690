package mcpclient_test

import (
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"golang.org/x/oauth2"

	"github.com/lubanhq/luban/mcpclient"
)

// TestSecretFileSealsGrants: a grant survives a new SecretFile on the same
// directory (a restart); neither file lets the tokens be read in clear;
// both are 0600; a grant moved to another server's entry, a file sealed
// under another key, or an altered byte reads as no grant (a person
// authorizes again), and Save(nil) forgets a grant (docs/design.md §11).
func TestSecretFileSealsGrants(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	f := mcpclient.NewSecretFile(dir)
	g, err := f.Load("github")
	require.NoError(t, err)
	require.Nil(t, g, "no grant yet")
	_, err = os.Stat(f.KeyPath)
	require.True(t, os.IsNotExist(err), "reading creates no key")

	want := &mcpclient.Grant{ServerURL: "https://mcp.example/mcp", ClientID: "luban", ClientSecret: "client-secret-1", TokenURL: "https://as.example/token",
		Token: &oauth2.Token{AccessToken: "access-token-1", RefreshToken: "refresh-token-1", TokenType: "Bearer", Expiry: time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)}}
	require.NoError(t, f.Save("github", want))
	require.NoError(t, f.Save("other", &mcpclient.Grant{ClientID: "x", Token: &oauth2.Token{AccessToken: "a2"}}))

	for _, p := range []string{f.Path, f.KeyPath} {
		st, err := os.Stat(p)
		require.NoError(t, err)
		require.Equal(t, os.FileMode(0o600), st.Mode().Perm(), p)
	}
	raw, err := os.ReadFile(f.Path)
	require.NoError(t, err)
	for _, secret := range []string{"access-token-1", "refresh-token-1", "client-secret-1"} {
		require.NotContains(t, string(raw), secret)
	}

	got, err := mcpclient.NewSecretFile(dir).Load("github")
	require.NoError(t, err)
	require.Equal(t, want.Token.RefreshToken, got.Token.RefreshToken)
	require.True(t, want.Token.Expiry.Equal(got.Token.Expiry))
	require.Equal(t, want.ClientSecret, got.ClientSecret)

	// The other server's sealed grant under github's name does not open.
	swapped := strings.Replace(string(raw), `"github"`, `"tmp"`, 1)
	swapped = strings.Replace(swapped, `"other"`, `"github"`, 1)
	require.NoError(t, os.WriteFile(f.Path, []byte(swapped), 0o600))
	got, err = mcpclient.NewSecretFile(dir).Load("github")
	require.NoError(t, err)
	require.Nil(t, got)

	// Another key opens nothing.
	require.NoError(t, os.WriteFile(f.Path, raw, 0o600))
	other := &mcpclient.SecretFile{Path: f.Path, KeyPath: t.TempDir() + "/k"}
	got, err = other.Load("github")
	require.NoError(t, err)
	require.Nil(t, got)

	// A short key file is an error naming it.
	require.NoError(t, os.WriteFile(other.KeyPath, []byte("short"), 0o600))
	_, err = (&mcpclient.SecretFile{Path: f.Path, KeyPath: other.KeyPath}).Load("github")
	require.ErrorContains(t, err, other.KeyPath)

	f2 := mcpclient.NewSecretFile(dir)
	require.NoError(t, f2.Save("github", nil))
	got, err = f2.Load("github")
	require.NoError(t, err)
	require.Nil(t, got)
	got, err = f2.Load("other")
	require.NoError(t, err)
	require.Equal(t, "a2", got.Token.AccessToken)
}
