package acceptance

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/go-jose/go-jose/v4"
	"github.com/stretchr/testify/require"

	"github.com/lubanhq/luban/api"
	"github.com/lubanhq/luban/approval"
	"github.com/lubanhq/luban/internal/testkit/lubantest"
	"github.com/lubanhq/luban/model"
	"github.com/lubanhq/luban/signing"
	"github.com/lubanhq/luban/tool"
)

// deployTool records the arguments it ran with and the approval receipt
// its context carried (tool.ApprovalReceipt).
type deployTool struct {
	mu      sync.Mutex
	args    []byte
	receipt string
	had     bool
}

func (d *deployTool) tool() tool.Tool {
	return tool.Func{
		ToolSpec: model.ToolSpec{Name: "deploy", Description: "Deploys a service.",
			Parameters: json.RawMessage(`{"type":"object","properties":{"service":{"type":"string"},"replicas":{"type":"integer"}},"required":["service"]}`)},
		Fn: func(ctx context.Context, args json.RawMessage) (api.ToolResult, error) {
			d.mu.Lock()
			defer d.mu.Unlock()
			d.args = append([]byte(nil), args...)
			d.receipt, d.had = tool.ApprovalReceipt(ctx)
			return api.ToolResult{Content: "deployed"}, nil
		},
	}
}

// fetchJWKS reads GET /.well-known/luban/keys over HTTP without a token and
// parses it with go-jose, the independent verifier.
func fetchJWKS(t *testing.T, base string) *jose.JSONWebKeySet {
	t.Helper()
	resp, err := http.Get(base + api.PathKeys)
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.Equal(t, "application/jwk-set+json", resp.Header.Get("Content-Type"))
	require.Contains(t, resp.Header.Get("Cache-Control"), "max-age")
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	var set jose.JSONWebKeySet
	require.NoError(t, json.Unmarshal(b, &set))
	require.NotEmpty(t, set.Keys)
	return &set
}

// joseClaims verifies jws with go-jose alone (not luban's signing package)
// and decodes its claims.
func joseClaims(t *testing.T, set *jose.JSONWebKeySet, jws string) api.ReceiptClaims {
	t.Helper()
	sig, err := jose.ParseSignedCompact(jws, []jose.SignatureAlgorithm{jose.EdDSA})
	require.NoError(t, err)
	h := sig.Signatures[0].Protected
	require.Equal(t, "EdDSA", h.Algorithm)
	require.Equal(t, api.ReceiptJWSType, h.ExtraHeaders["typ"])
	keys := set.Key(h.KeyID)
	require.Len(t, keys, 1, "the kid is in the JWKS")
	payload, err := sig.Verify(keys[0].Key)
	require.NoError(t, err)
	var c api.ReceiptClaims
	require.NoError(t, json.Unmarshal(payload, &c))
	return c
}

// docs/design.md §17: an approval's receipt is signed; the 202 body, the
// event, the inbox, the audit and the tool that runs all carry the same
// JWS; go-jose verifies it against the JWKS fetched over HTTP, and its
// argsSha256 is the SHA-256 of exactly the arguments the tool received.
func TestSignedApprovalReceipt(t *testing.T) {
	t.Parallel()
	for _, edit := range []bool{false, true} {
		name := "approve"
		if edit {
			name = "edit"
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			keys, err := signing.Generate()
			require.NoError(t, err)
			d := &deployTool{}
			e := setup(t, func(o *lubantest.Options) {
				o.Keys = keys
				o.Tools = []tool.Tool{d.tool()}
				o.Approval = approval.Policy{Rules: []approval.Rule{{Pattern: "deploy", Decision: approval.Always}}}
			})
			args := `{ "service": "api",  "replicas": 3 }`
			e.model.push(turn{calls: []call{{id: "call_d", name: "deploy", args: args}}}, turn{text: "done"})
			p := e.ask("", "deploy the api")
			require.Equal(t, api.ToolApproval, p.req.Tool)

			b := decisionBody(p.sessionID, p.req.ID, api.DecisionApprove, nil)
			if edit {
				b = decisionBody(p.sessionID, p.req.ID, api.DecisionEdit, map[string]any{"arguments": map[string]any{"service": "api", "replicas": 1}})
			}
			evs := e.answer(b)
			rc := decode[api.Receipt](t, evs[0])
			require.NotEmpty(t, rc.Signature, "the user_input_resolved event carries the signature")

			set := fetchJWKS(t, e.srv.URL)
			c := joseClaims(t, set, rc.Signature)
			want := api.ReceiptClaims{RequestID: p.req.ID, SessionID: p.sessionID, Kind: "approval", Tool: "deploy", Decision: name,
				At: rc.ResolvedAt, Policy: "approval"}
			d.mu.Lock()
			ran, receipt, had := d.args, d.receipt, d.had
			d.mu.Unlock()
			require.True(t, had, "the tool got the approval receipt")
			require.Equal(t, rc.Signature, receipt)
			compact := strings.NewReplacer(" ", "").Replace(string(ran))
			sum := sha256.Sum256([]byte(compact))
			want.ArgsSHA256 = hex.EncodeToString(sum[:])
			require.Equal(t, want.ArgsSHA256, tool.ArgsSHA256(ran), "tool.ArgsSHA256 of what the tool received")
			if edit {
				require.JSONEq(t, `{"service":"api","replicas":1}`, string(ran))
			} else {
				require.JSONEq(t, args, string(ran))
			}
			require.NotEmpty(t, c.By)
			require.NotContains(t, c.By, "test-token", "a principal, not its token")
			want.By = c.By
			want.AnswerSHA256 = signing.AnswerSHA256(&rc)
			require.True(t, c.At.Equal(want.At))
			c.At = want.At
			require.Equal(t, want, c)

			// The stored receipt: the inbox and a duplicate's 409 carry it.
			var inbox api.InteractionList
			e.get("/api/interactions?status=resolved", &inbox)
			require.Len(t, inbox.Interactions, 1)
			require.Equal(t, rc.Signature, inbox.Interactions[0].Receipt.Signature)
			ae := e.reject(decisionBody(p.sessionID, p.req.ID, api.DecisionApprove, nil), http.StatusConflict, "already_resolved")
			require.NotNil(t, ae.Error.Receipt)
			require.Equal(t, rc.Signature, ae.Error.Receipt.Signature)

			// The audit entry of the decision carries it, beside the
			// arguments' hash it already had.
			var sum2 struct {
				Receipt         string `json:"receipt"`
				ArgumentsSHA256 string `json:"argumentsSha256"`
			}
			for _, a := range e.trace(p.sessionID).Audit {
				if a.RequestID == p.req.ID && a.Action == "answered" {
					require.NoError(t, json.Unmarshal(a.Summary, &sum2))
				}
			}
			require.Equal(t, rc.Signature, sum2.Receipt)
			require.Equal(t, c.ArgsSHA256, sum2.ArgumentsSHA256)

			// luban's own verifier agrees; an edited claim does not verify.
			got, err := signing.VerifyReceipt(rc.Signature, set)
			require.NoError(t, err)
			require.Equal(t, p.req.ID, got.RequestID)
			parts := strings.Split(rc.Signature, ".")
			forged, _ := json.Marshal(api.ReceiptClaims{RequestID: p.req.ID, SessionID: p.sessionID, Kind: "approval", Tool: "deploy",
				ArgsSHA256: strings.Repeat("0", 64), Decision: name, By: c.By, At: c.At, Policy: "approval"})
			tampered := parts[0] + "." + base64.RawURLEncoding.EncodeToString(forged) + "." + parts[2]
			_, err = signing.VerifyReceipt(tampered, set)
			require.ErrorContains(t, err, "does not match")
		})
	}
}

// docs/design.md §17: every resolution is signed, not only approvals: an
// answered question and a cancelled one, whose "by" is who cancelled.
func TestSignedQuestionReceipts(t *testing.T) {
	t.Parallel()
	keys, err := signing.Generate()
	require.NoError(t, err)
	e := setup(t, func(o *lubantest.Options) { o.Keys = keys })
	e.model.push(turn{calls: []call{{id: "call_q", name: "ask_user", args: singleArgs}}}, turn{calls: []call{{id: "call_q2", name: "ask_user", args: singleArgs}}})
	p := e.ask("", "ask me")
	evs := e.answer(body(p.sessionID, p.req.ID, []string{p.req.Options[0].ID}, ""))
	rc := decode[api.Receipt](t, evs[0])
	set := fetchJWKS(t, e.srv.URL)
	c := joseClaims(t, set, rc.Signature)
	require.Equal(t, "ask", c.Kind)
	require.Equal(t, "answered", c.Decision)
	require.Empty(t, c.Tool)
	require.Empty(t, c.ArgsSHA256)
	require.Equal(t, p.sessionID, c.SessionID)
	require.Equal(t, signing.AnswerSHA256(&rc), c.AnswerSHA256, "the answer is signed")

	second := e.pausedAt(p.sessionID, p.runID, evs)
	require.Equal(t, http.StatusOK, e.srv.JSON("POST", "/api/sessions/"+p.sessionID+"/cancel", nil, nil))
	var inbox api.InteractionList
	e.get("/api/interactions?status=resolved", &inbox)
	var cancelled, answered *api.Receipt
	for _, it := range inbox.Interactions {
		switch it.ID {
		case second.req.ID:
			cancelled = it.Receipt
		case p.req.ID:
			answered = it.Receipt
		}
	}
	require.NotNil(t, answered)
	require.Equal(t, c.AnswerSHA256, signing.AnswerSHA256(answered), "the answer read back from the store hashes as signed")
	require.NotNil(t, cancelled)
	cc := joseClaims(t, set, cancelled.Signature)
	require.Equal(t, "cancelled", cc.Decision)
	require.Equal(t, c.By, cc.By, "the owner answered the first and cancelled the second")
}
