package mcp

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"time"
)

// Errors of a requestState a client echoed back (docs/design.md §11): nothing is
// read or resolved for it.
var (
	// ErrStateInvalid: the requestState is not one luban signed for this
	// caller (forged, altered, or another principal's).
	ErrStateInvalid = errors.New("invalid requestState: not issued to this caller")
	// ErrStateExpired: the requestState is past its question's expiresAt.
	ErrStateExpired = errors.New("expired requestState: the question's time to answer is over")
)

// stateBody is the signed part of a requestState: the request id and the
// expiry in Unix seconds. The principal is not in it: it is in the MAC, so a
// state works only for the principal it was issued to.
type stateBody struct {
	R string `json:"r"`
	E int64  `json:"e"`
}

// sealState returns the requestState for question id of owner, valid until
// exp: base64url(JSON body) "." base64url(HMAC-SHA256(Secret, owner, body)).
func (h *handler) sealState(owner, id string, exp time.Time) string {
	b, _ := json.Marshal(stateBody{R: id, E: exp.Unix()})
	body := base64.RawURLEncoding.EncodeToString(b)
	return body + "." + base64.RawURLEncoding.EncodeToString(h.stateMAC(owner, body))
}

// openState checks a requestState for owner and returns its request id.
// Errors: ErrStateInvalid, ErrStateExpired.
func (h *handler) openState(owner, state string) (string, error) {
	body, sig, ok := strings.Cut(state, ".")
	if !ok || len(state) > 1024 {
		return "", ErrStateInvalid
	}
	// Strict: a signature is accepted in its one canonical spelling only.
	got, err := base64.RawURLEncoding.Strict().DecodeString(sig)
	if err != nil || !hmac.Equal(got, h.stateMAC(owner, body)) {
		return "", ErrStateInvalid
	}
	raw, err := base64.RawURLEncoding.DecodeString(body)
	var sb stateBody
	if err != nil || json.Unmarshal(raw, &sb) != nil || sb.R == "" {
		return "", ErrStateInvalid
	}
	if !h.o.Now().Before(time.Unix(sb.E, 0)) {
		return "", ErrStateExpired
	}
	return sb.R, nil
}

func (h *handler) stateMAC(owner, body string) []byte {
	m := hmac.New(sha256.New, h.o.Secret)
	m.Write([]byte("luban mcp requestState\x00" + strconv.Itoa(len(owner)) + ":" + owner + "\x00" + body))
	return m.Sum(nil)
}
