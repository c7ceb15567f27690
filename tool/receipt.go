package tool

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
)

type receiptKey struct{}

// WithApprovalReceipt returns ctx carrying jws, the signed receipt of the
// approval the call about to run got (docs/design.md §17).
func WithApprovalReceipt(ctx context.Context, jws string) context.Context {
	return context.WithValue(ctx, receiptKey{}, jws)
}

// ApprovalReceipt returns the signed receipt of the person's approval of the
// call ctx runs (docs/design.md §17): a compact JWS (EdDSA) over
// api.ReceiptClaims, verifiable against the JWKS at GET
// /.well-known/luban/keys. Its argsSha256 is ArgsSHA256 of the arguments
// the tool was approved with, so a tool (or the CI job it starts) can prove
// that a person approved exactly these arguments. ok is false when the call
// runs without one: its tool needs no approval, an earlier remember:
// "session" approved it, or the server signs nothing.
func ApprovalReceipt(ctx context.Context) (jws string, ok bool) {
	jws, ok = ctx.Value(receiptKey{}).(string)
	return jws, ok && jws != ""
}

// ArgsSHA256 is the lowercase hex SHA-256 of a call's JSON arguments
// compacted (json.Compact: whitespace outside strings removed, key order
// and numbers kept; empty arguments are {}): the argsSha256 of an approval
// receipt. Arguments that are not JSON are hashed as they are.
func ArgsSHA256(args json.RawMessage) string {
	raw := bytes.TrimSpace(args)
	if len(raw) == 0 {
		raw = []byte("{}")
	}
	var buf bytes.Buffer
	if json.Compact(&buf, raw) == nil {
		raw = buf.Bytes()
	}
	sum := sha256.Sum256(raw)
	return hex.EncodeToString(sum[:])
}
