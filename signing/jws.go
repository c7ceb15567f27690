package signing

import (
	"crypto/ed25519"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/go-jose/go-jose/v4"

	"github.com/lubanhq/luban/api"
)

type header struct {
	Alg string `json:"alg"`
	Kid string `json:"kid"`
	Typ string `json:"typ"`
}

// sign returns the compact JWS (RFC 7515) of payload's JSON, typed typ,
// signed with the signing key (alg EdDSA, RFC 8037). Ed25519 is
// deterministic: the same key and payload give the same JWS.
func (k *Keys) sign(typ string, payload any) (string, error) {
	h, err := json.Marshal(header{Alg: "EdDSA", Kid: k.keys[0].kid, Typ: typ})
	if err != nil {
		return "", err
	}
	p, err := json.Marshal(payload)
	if err != nil {
		return "", err
	}
	in := b64.EncodeToString(h) + "." + b64.EncodeToString(p)
	return in + "." + b64.EncodeToString(ed25519.Sign(k.keys[0].priv, []byte(in))), nil
}

// SignReceipt returns the compact JWS of c (typ api.ReceiptJWSType): the
// signature of a decision receipt (docs/design.md §17).
func (k *Keys) SignReceipt(c api.ReceiptClaims) (string, error) {
	c.At = c.At.UTC()
	return k.sign(api.ReceiptJWSType, c)
}

// VerifyError says why a JWS does not verify; Error is a sentence a person
// can act on (`luban verify` prints it).
type VerifyError struct{ Reason string }

func (e *VerifyError) Error() string { return e.Reason }

// ParseJWKS reads a JWKS document (RFC 7517), as GET
// /.well-known/luban/keys serves it.
func ParseJWKS(b []byte) (*jose.JSONWebKeySet, error) {
	var set jose.JSONWebKeySet
	if err := json.Unmarshal(b, &set); err != nil {
		return nil, fmt.Errorf("keys: not a JWKS: %w", err)
	}
	if len(set.Keys) == 0 {
		return nil, errors.New("keys: the JWKS holds no key")
	}
	return &set, nil
}

// PublicJWKS is the JWKS of k as go-jose reads it (what ParseJWKS returns
// for the document of GET /.well-known/luban/keys).
func (k *Keys) PublicJWKS() *jose.JSONWebKeySet {
	k.pubOnce.Do(func() {
		b, _ := json.Marshal(k.JWKS())
		k.pub, _ = ParseJWKS(b)
	})
	return k.pub
}

// Verify checks the compact JWS s against the public keys of set with
// go-jose: alg EdDSA, a kid found in set, the header typ equal to typ and
// a valid signature; then it decodes the payload into v. Every failure is
// a *VerifyError saying which check failed.
func Verify(s string, set *jose.JSONWebKeySet, typ string, v any) error {
	s = strings.TrimSpace(s)
	if strings.Count(s, ".") != 2 {
		return &VerifyError{"not a compact JWS (header.payload.signature)"}
	}
	sig, err := jose.ParseSignedCompact(s, []jose.SignatureAlgorithm{jose.EdDSA})
	if err != nil {
		return &VerifyError{"not a luban signature: " + err.Error()}
	}
	h := sig.Signatures[0].Protected
	if t, _ := h.ExtraHeaders["typ"].(string); t != typ {
		return &VerifyError{fmt.Sprintf("typ is %q, want %q", t, typ)}
	}
	keys := set.Key(h.KeyID)
	if len(keys) == 0 {
		return &VerifyError{fmt.Sprintf("key %q is not in the JWKS (removed, or signed by another server)", h.KeyID)}
	}
	payload, err := sig.Verify(keys[0].Key)
	if err != nil {
		return &VerifyError{"the signature does not match the content (edited, or signed with another key): " + err.Error()}
	}
	if err := json.Unmarshal(payload, v); err != nil {
		return &VerifyError{"the signed content does not decode: " + err.Error()}
	}
	return nil
}

// VerifyReceipt checks a receipt's JWS against set and returns its claims.
func VerifyReceipt(s string, set *jose.JSONWebKeySet) (*api.ReceiptClaims, error) {
	var c api.ReceiptClaims
	if err := Verify(s, set, api.ReceiptJWSType, &c); err != nil {
		return nil, err
	}
	if c.RequestID == "" || c.Decision == "" {
		return nil, &VerifyError{"the signed content is not a receipt (no requestId or decision)"}
	}
	return &c, nil
}

// Grant is what an action link's grant names (docs/design.md §17): one
// interaction (RequestID), one person (Person, who answers through it) and
// when it stops working (Expires, unix seconds; 0: when the interaction
// is resolved).
type Grant struct {
	RequestID string `json:"rid"`
	Person    string `json:"sub"`
	Expires   int64  `json:"exp,omitempty"`
}

// SignGrant returns g as a compact JWS (typ api.GrantJWSType) signed with
// the signing key.
func (k *Keys) SignGrant(g Grant) (string, error) { return k.sign(api.GrantJWSType, g) }

// VerifyGrant checks grant s for interaction requestID at now: signed by a
// key of k, typed as a grant, naming requestID and not expired. Any
// failure is a *VerifyError.
func (k *Keys) VerifyGrant(s, requestID string, now time.Time) (*Grant, error) {
	var g Grant
	if err := Verify(s, k.PublicJWKS(), api.GrantJWSType, &g); err != nil {
		return nil, err
	}
	if g.RequestID != requestID {
		return nil, &VerifyError{"the grant is for another question"}
	}
	if g.Person == "" {
		return nil, &VerifyError{"the grant names nobody"}
	}
	if g.Expires != 0 && !now.Before(time.Unix(g.Expires, 0)) {
		return nil, &VerifyError{"the grant has expired"}
	}
	return &g, nil
}
