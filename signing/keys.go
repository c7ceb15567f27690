// Package signing holds luban's Ed25519 signing keys and what they sign
// (docs/design.md §17): decision receipts (a compact JWS over
// api.ReceiptClaims) and action-link grants (a compact JWS naming one
// interaction and one person). The keys live in one file, a private JWKS
// kept beside the database (mode 0600, made once); the first key signs,
// every key verifies, so a rotation puts a new key first and keeps the old
// public keys in the JWKS until they are removed. It imports api only.
package signing

import (
	"crypto/ed25519"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"

	"github.com/go-jose/go-jose/v4"

	"github.com/lubanhq/luban/api"
)

var b64 = base64.RawURLEncoding

// Keys is a set of Ed25519 private keys, the signing key first. It is safe
// for concurrent use once built (it is never changed in place).
type Keys struct {
	keys []key

	pubOnce sync.Once
	pub     *jose.JSONWebKeySet
}

type key struct {
	kid  string
	priv ed25519.PrivateKey
}

// privateJWK is one key of the key file: an RFC 8037 OKP key with its
// private part d (the 32-byte seed).
type privateJWK struct {
	Kty string `json:"kty"`
	Crv string `json:"crv"`
	Kid string `json:"kid"`
	X   string `json:"x"`
	D   string `json:"d"`
}

type privateJWKS struct {
	Keys []privateJWK `json:"keys"`
}

// newKey makes a fresh key; its kid is the RFC 7638 thumbprint (base64url
// SHA-256 of {"crv","kty","x"}), so the same key always has the same kid.
func newKey() (key, error) {
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return key{}, err
	}
	return keyOf(priv), nil
}

func keyOf(priv ed25519.PrivateKey) key {
	x := b64.EncodeToString(priv.Public().(ed25519.PublicKey))
	sum := sha256.Sum256([]byte(`{"crv":"Ed25519","kty":"OKP","x":"` + x + `"}`))
	return key{kid: b64.EncodeToString(sum[:]), priv: priv}
}

// Generate returns a set of one fresh key.
func Generate() (*Keys, error) {
	k, err := newKey()
	if err != nil {
		return nil, err
	}
	return &Keys{keys: []key{k}}, nil
}

// Parse reads a key file (a private JWKS: {"keys":[{"kty":"OKP",
// "crv":"Ed25519","kid","x","d"}, …]}, the signing key first). A key that
// is not an Ed25519 private key, or whose x does not match its d, is an
// error naming its index.
func Parse(b []byte) (*Keys, error) {
	var f privateJWKS
	if err := json.Unmarshal(b, &f); err != nil {
		return nil, fmt.Errorf("signing keys: %w", err)
	}
	if len(f.Keys) == 0 {
		return nil, errors.New("signing keys: the file holds no key")
	}
	out := &Keys{}
	for i, j := range f.Keys {
		if j.Kty != "OKP" || j.Crv != "Ed25519" {
			return nil, fmt.Errorf("signing keys: keys[%d]: not an Ed25519 key (kty %q, crv %q)", i, j.Kty, j.Crv)
		}
		seed, err := b64.DecodeString(j.D)
		if err != nil || len(seed) != ed25519.SeedSize {
			return nil, fmt.Errorf("signing keys: keys[%d]: d is not a 32-byte base64url seed", i)
		}
		k := keyOf(ed25519.NewKeyFromSeed(seed))
		if j.X != "" && j.X != b64.EncodeToString(k.priv.Public().(ed25519.PublicKey)) {
			return nil, fmt.Errorf("signing keys: keys[%d]: x does not match d", i)
		}
		if j.Kid != "" {
			k.kid = j.Kid
		}
		out.keys = append(out.keys, k)
	}
	return out, nil
}

// Marshal returns the key file's bytes (the private JWKS Parse reads).
func (k *Keys) Marshal() []byte {
	f := privateJWKS{Keys: []privateJWK{}}
	for _, x := range k.keys {
		f.Keys = append(f.Keys, privateJWK{Kty: "OKP", Crv: "Ed25519", Kid: x.kid,
			X: b64.EncodeToString(x.priv.Public().(ed25519.PublicKey)), D: b64.EncodeToString(x.priv.Seed())})
	}
	b, _ := json.MarshalIndent(f, "", "  ")
	return append(b, '\n')
}

// Rotated returns k with a fresh key first (the new signing key); the
// others stay, to verify what they signed.
func (k *Keys) Rotated() (*Keys, error) {
	n, err := newKey()
	if err != nil {
		return nil, err
	}
	return &Keys{keys: append([]key{n}, k.keys...)}, nil
}

// KID is the key id of the signing key.
func (k *Keys) KID() string { return k.keys[0].kid }

// JWKS is the public half of k (GET /.well-known/luban/keys), the signing
// key first.
func (k *Keys) JWKS() api.JWKS {
	out := api.JWKS{Keys: []api.JWK{}}
	for _, x := range k.keys {
		out.Keys = append(out.Keys, api.JWK{Kty: "OKP", Crv: "Ed25519", Kid: x.kid,
			X: b64.EncodeToString(x.priv.Public().(ed25519.PublicKey)), Alg: "EdDSA", Use: "sig"})
	}
	return out
}

// LoadOrCreate reads the key file at path, or, when there is none, makes
// one key and writes it there (mode 0600, its directory 0700 when
// created). created reports the latter. A file that exists but does not
// parse is an error naming it: keys are never replaced silently, since
// what they signed would no longer verify.
func LoadOrCreate(path string) (k *Keys, created bool, err error) {
	b, err := os.ReadFile(path)
	if err == nil {
		k, err := Parse(b)
		if err != nil {
			return nil, false, fmt.Errorf("%s: %w", path, err)
		}
		return k, false, nil
	}
	if !errors.Is(err, os.ErrNotExist) {
		return nil, false, err
	}
	if k, err = Generate(); err != nil {
		return nil, false, err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, false, fmt.Errorf("keep the signing key: %w", err)
	}
	// Linked into place: of two processes the first link wins.
	err = k.write(path, os.Link)
	if errors.Is(err, os.ErrExist) {
		return LoadOrCreate(path)
	}
	if err != nil {
		return nil, false, fmt.Errorf("keep the signing key: %w", err)
	}
	return k, true, nil
}

// Save writes k to the key file at path (mode 0600), replacing it whole:
// written beside it, then renamed into place, so that a concurrent reader
// sees the old file or the new one, never a part.
func (k *Keys) Save(path string) error { return k.write(path, os.Rename) }

// write writes k beside path and moves it into place with place (os.Link:
// only when path does not exist yet; os.Rename: replacing it).
func (k *Keys) write(path string, place func(from, to string) error) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), ".luban-keys-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	_, err = tmp.Write(k.Marshal())
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(tmp.Name(), 0o600)
	}
	if err == nil {
		err = place(tmp.Name(), path)
	}
	return err
}
