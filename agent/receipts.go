package agent

import (
	"context"
	"encoding/json"
	"time"

	"github.com/lubanhq/luban/api"
	"github.com/lubanhq/luban/people"
	"github.com/lubanhq/luban/signing"
	"github.com/lubanhq/luban/store"
	"github.com/lubanhq/luban/tool"
)

// ReceiptSigner signs the claims of a decision receipt (docs/design.md §17)
// and returns the compact JWS; signing.Keys implements it.
type ReceiptSigner interface {
	SignReceipt(c api.ReceiptClaims) (string, error)
}

type actorKey struct{}

// withActor returns ctx naming by as who resolves what is resolved under
// it (a receipt's "by").
func withActor(ctx context.Context, by string) context.Context {
	return context.WithValue(ctx, actorKey{}, by)
}

// endedBy is ctx naming who resolved as res as who closes what its end of
// the run closes: a person's cancel of one question ends the run, and the
// run's other questions are cancelled by that person too (docs/design.md
// §17: "the cancelling principal for a cancel"). ctx unchanged when res
// names nobody.
func endedBy(ctx context.Context, res resolution) context.Context {
	if res.by == "" {
		return ctx
	}
	return withActor(ctx, res.by)
}

// actorOf is who resolved under ctx as res: res.by (the principal that
// answered; "timeout" for a deadline's action), else the principal that
// cancelled under ctx (withActor), else "timeout" for an expiry and
// "system" for the rest (a run's end, a restart).
func actorOf(ctx context.Context, res resolution) string {
	if res.by != "" {
		return res.by
	}
	if by, _ := ctx.Value(actorKey{}).(string); by != "" && res.status != api.StatusExpired {
		return by
	}
	if res.status == api.StatusExpired {
		return "timeout"
	}
	return "system"
}

// receiptClaims is what the signature of rc, the receipt of it (whose
// request is req, nil when it does not decode), covers (api.ReceiptClaims).
func receiptClaims(it *store.Interaction, req *api.InputRequest, rc *api.Receipt, by string) api.ReceiptClaims {
	c := api.ReceiptClaims{RequestID: it.ID, SessionID: it.SessionID, Kind: "ask", Decision: string(rc.Decision), By: by, At: rc.ResolvedAt, Policy: "ask"}
	if c.Decision == "" {
		c.Decision = string(rc.Status)
	}
	c.AnswerSHA256 = signing.AnswerSHA256(rc)
	switch {
	case it.Tool == api.ToolApproval:
		c.Kind, c.Policy = "approval", "approval"
		if req != nil {
			c.Tool = req.ToolName
			args := req.Prompt.Arguments
			if rc.Decision == api.DecisionEdit {
				args = rc.Arguments
			}
			c.ArgsSHA256 = tool.ArgsSHA256(json.RawMessage(args))
		}
	case it.Tool == api.ToolElicitation:
		c.Kind, c.Policy = "elicitation", "elicitation"
	}
	return c
}

// receipt builds the receipt of in resolved as res at at
// (people.NewReceipt, the one builder) and signs it (docs/design.md §17):
// Signature is set when a signer is configured. A signature that cannot be
// made is logged and the receipt stays unsigned (the decision itself is
// not lost).
func (r *Runner) receipt(ctx context.Context, in *answering, res resolution, out outcome, at time.Time) *api.Receipt {
	in.it.DecidedBy = r.decidedBy(ctx, in.it, actorOf(ctx, res))
	rc := people.NewReceipt(in.it, res.status, out.receipt, at)
	if r.opts.Signer == nil {
		return rc
	}
	jws, err := r.opts.Signer.SignReceipt(receiptClaims(in.it, in.req, rc, actorOf(ctx, res)))
	if err != nil {
		r.log.Error("sign receipt", "requestId", in.it.ID, "err", err)
		return rc
	}
	rc.Signature = jws
	return rc
}

// withReceipt is an audit summary carrying the signature of the receipt
// of the resolution it sums up (docs/design.md §17): summary's JSON object
// with "receipt" added. Unchanged when jws is empty or summary is not an
// object.
func withReceipt(summary any, jws string) any {
	if jws == "" {
		return summary
	}
	m := map[string]json.RawMessage{}
	if summary != nil {
		b, err := json.Marshal(summary)
		if err != nil || json.Unmarshal(b, &m) != nil {
			return summary
		}
	}
	m["receipt"], _ = json.Marshal(jws)
	return m
}
