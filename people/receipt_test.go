package people_test

import (
	"encoding/json"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/lubanhq/luban/api"
	"github.com/lubanhq/luban/approval"
	"github.com/lubanhq/luban/elicit"
	"github.com/lubanhq/luban/people"
	"github.com/lubanhq/luban/store"
)

// An approval's receipts, built by NewReceipt while it resolves and by
// ReceiptOf from the stored row, are the golden ones byte for byte: the
// decision, message and remember only when answered, the arguments only for
// edit.
func TestNewReceiptApprovalGolden(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 12, 1, 9, 30, 0, 0, time.UTC)
	edited := json.RawMessage(`{"path":"notes/plan.md","content":"# Plan v2\n"}`)
	it := &store.Interaction{ID: "ask_1", ToolCallID: "call_1", Tool: api.ToolApproval}
	cases := map[string]struct {
		status api.Status
		a      approval.Answer
	}{
		"approve":   {api.StatusAnswered, approval.Answer{Decision: api.DecisionApprove, Remember: api.RememberSession}},
		"edit":      {api.StatusAnswered, approval.Answer{Decision: api.DecisionEdit, Arguments: edited}},
		"reject":    {api.StatusAnswered, approval.Answer{Decision: api.DecisionReject, Message: "no"}},
		"cancelled": {api.StatusCancelled, approval.Answer{Decision: api.DecisionApprove}},
		"expired":   {api.StatusExpired, approval.Answer{}},
	}
	built, read := map[string]*api.Receipt{}, map[string]*api.Receipt{}
	for name, c := range cases {
		built[name] = people.NewReceipt(it, c.status, c.a, at)
		row := *it
		row.Status, row.ResolvedAt = string(c.status), at
		row.Answer, _ = json.Marshal(c.a)
		read[name] = people.ReceiptOf(&row)
	}
	want, err := os.ReadFile("testdata/golden/receipts_approval.json")
	require.NoError(t, err)
	for _, m := range []map[string]*api.Receipt{built, read} {
		got, err := json.MarshalIndent(m, "", "  ")
		require.NoError(t, err)
		require.Equal(t, string(want), string(got)+"\n")
	}
}

// An ask tool's receipt carries the answer whatever the status, never null
// selections; an elicitation's names the model's call and carries the
// decision and content only when answered; a request closed without an
// answer has empty selections.
func TestNewReceiptKinds(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 12, 1, 9, 30, 0, 0, time.UTC)
	ask := &store.Interaction{ID: "ask_1", ToolCallID: "call_1", Tool: api.ToolAskUser}
	rc := people.NewReceipt(ask, api.StatusAnswered, api.Answer{Selections: []string{"a"}, CustomInput: "x"}, at)
	require.Equal(t, &api.Receipt{RequestID: "ask_1", ToolCallID: "call_1", Status: api.StatusAnswered, Selections: []string{"a"}, CustomInput: "x", ResolvedAt: at}, rc)
	b, _ := json.Marshal(people.NewReceipt(ask, api.StatusCancelled, api.Answer{Cancelled: true}, at))
	require.JSONEq(t, `{"requestId":"ask_1","toolCallId":"call_1","status":"cancelled","selections":[],"customInput":"","resolvedAt":"2026-12-01T09:30:00Z"}`, string(b))

	el := &store.Interaction{ID: "ask_2", ToolCallID: "call_2" + elicit.CallSuffix + "3", Tool: api.ToolElicitation}
	content := json.RawMessage(`{"email":"a@example.com"}`)
	rc = people.NewReceipt(el, api.StatusAnswered, elicit.Answer{Decision: api.DecisionAccept, Content: content}, at)
	require.Equal(t, "call_2", rc.ToolCallID)
	require.Equal(t, api.DecisionAccept, rc.Decision)
	require.JSONEq(t, string(content), string(rc.Content))
	row := *el
	row.Status, row.ResolvedAt, row.Answer = string(api.StatusAnswered), at, json.RawMessage(`{"decision":"accept","content":{"email":"a@example.com"}}`)
	require.Equal(t, rc, people.ReceiptOf(&row))
	rc = people.NewReceipt(el, api.StatusNotResumable, nil, at)
	require.Equal(t, &api.Receipt{RequestID: "ask_2", ToolCallID: "call_2", Status: api.StatusNotResumable, Selections: []string{}, ResolvedAt: at}, rc)
}
