package api

import "time"

// ReceiptClaims is what a decision receipt's signature covers
// (docs/design.md §17 "Signed decision receipts"): the payload of the
// compact JWS in Receipt.Signature, signed with Ed25519 (alg EdDSA, typ
// ReceiptJWSType, kid naming a key of the JWKS at GET
// /.well-known/luban/keys). It holds no free text: a webhook receiver may
// see it.
//
// Kind is "ask" (ask_user, AskUser, an MCP host's question), "approval" or
// "elicitation". Tool and ArgsSHA256 are set for an approval: the tool
// that runs and the lowercase hex SHA-256 of its arguments as the tool
// receives them, compacted (ArgsSHA256 of tool.ArgsSHA256; an edit's
// arguments when edited). Decision is the approval's (approve, edit,
// reject) or elicitation's (accept, decline) decision, else the status
// (answered, cancelled, expired, not_resumable). By is the principal that
// resolved it (a person's id; "timeout" or "system" when no person did).
// At is the resolution time (Receipt.resolvedAt). AnswerSHA256 is the
// lowercase hex SHA-256 of the receipt's answer (selections, customInput,
// answers, decision, arguments, message, remember, content) as
// signing.AnswerSHA256 encodes it, so that a receipt whose answer was
// edited no longer verifies; absent in receipts signed before it existed.
// Policy names what put
// the question to a person: "approval" for an approval rule, "ask" for a
// question the model or a host asked, "elicitation" for a server's form.
type ReceiptClaims struct {
	RequestID  string    `json:"requestId"`
	SessionID  string    `json:"sessionId"`
	Kind       string    `json:"kind"`
	Tool       string    `json:"tool,omitempty"`
	ArgsSHA256 string    `json:"argsSha256,omitempty"`
	Decision   string    `json:"decision"`
	By         string    `json:"by"`
	At         time.Time `json:"at"`
	Policy     string    `json:"policy"`
	// AnswerSHA256: see above.
	AnswerSHA256 string `json:"answerSha256,omitempty"`
}

// JWS header types (the "typ" parameter) of what luban signs: a receipt's
// signature and an action link's grant are never taken for one another.
const (
	ReceiptJWSType = "luban-receipt+jws"
	GrantJWSType   = "luban-grant+jws"
)

// PathKeys is where the public keys are served (no token, cacheable).
const PathKeys = "/.well-known/luban/keys"

// JWKS is GET /.well-known/luban/keys (RFC 7517): the public keys that
// verify receipts, the signing key first. Each key is
// {"kty":"OKP","crv":"Ed25519","kid","x","alg":"EdDSA","use":"sig"}.
type JWKS struct {
	Keys []JWK `json:"keys"`
}

// JWK is one public Ed25519 key of a JWKS (RFC 8037): X is the public key,
// base64url without padding.
type JWK struct {
	Kty string `json:"kty"`
	Crv string `json:"crv"`
	Kid string `json:"kid"`
	X   string `json:"x"`
	Alg string `json:"alg"`
	Use string `json:"use"`
}
