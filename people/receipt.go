package people

import (
	"encoding/json"
	"time"

	"github.com/lubanhq/luban/api"
	"github.com/lubanhq/luban/approval"
	"github.com/lubanhq/luban/elicit"
	"github.com/lubanhq/luban/store"
)

// NewReceipt is the one receipt builder (docs/design.md §3): the Receipt of
// interaction it resolved with status at resolvedAt, as the 202 continue,
// the 409/410 answers, the inbox and the user_input_resolved event carry it.
// ans is the normalized answer: an api.Answer (ask tools; its selections,
// customInput and answers, whatever the status), an approval.Answer
// (docs/design.md §10; its decision, message, remember and, for edit, the
// arguments, only when answered, or expired by a timeout that decided), an
// elicit.Answer (docs/design.md §11; its decision and content, likewise),
// an AskTimeout (an ask's answer and the decision its timeout took,
// docs/design.md §16), or nil for a request closed without one. Selections is never nil. An elicitation's receipt names the
// model's call (elicit.ModelCallID), not the row's.
func NewReceipt(it *store.Interaction, status api.Status, ans any, resolvedAt time.Time) *api.Receipt {
	rc := &api.Receipt{RequestID: it.ID, ToolCallID: it.ToolCallID, Status: status, Selections: []string{}, ResolvedAt: resolvedAt}
	if it.Tool == api.ToolElicitation {
		rc.ToolCallID = elicit.ModelCallID(it.ToolCallID)
	}
	if len(it.DecidedBy) > 0 {
		// Who decided (docs/design.md §16), as the resolution stored it.
		var d struct {
			By        *api.Actor          `json:"by"`
			Decisions []api.ActorDecision `json:"decisions"`
		}
		if json.Unmarshal(it.DecidedBy, &d) == nil {
			rc.By, rc.Decisions = d.By, d.Decisions
		}
	}
	switch a := ans.(type) {
	case api.Answer:
		if a.Selections != nil {
			rc.Selections = a.Selections
		}
		rc.CustomInput, rc.Answers = a.CustomInput, a.Answers
	case AskTimeout:
		rc = NewReceipt(it, status, a.Answer, resolvedAt)
		rc.Decision = a.Decision
	case approval.Answer:
		if status == api.StatusAnswered || (status == api.StatusExpired && a.Decision != "") {
			rc.Decision, rc.Message, rc.Remember = a.Decision, a.Message, a.Remember
			if a.Decision == api.DecisionEdit {
				rc.Arguments = a.Arguments
			}
		}
	case elicit.Answer:
		if status == api.StatusAnswered || (status == api.StatusExpired && a.Decision != "") {
			rc.Decision, rc.Content = a.Decision, a.Content
		}
	}
	return rc
}

// AskTimeout is the stored answer of an ask question (ask_user, AskUser, a
// host's question) that its timeout resolved (docs/design.md §16
// "Deadlines"): the answer it got (its recommended options for
// api.DecisionDefault, none otherwise) and the action taken, which the
// receipt shows as its decision.
type AskTimeout struct {
	api.Answer
	Decision api.Decision `json:"decision,omitempty"`
}

// ReceiptOf is the Receipt of a resolved stored interaction (docs/design.md
// §3), read back from its stored status, answer and resolution time and
// built by NewReceipt, with the signature stored beside it (docs/design.md
// §17). An answer that does not decode counts as none.
func ReceiptOf(it *store.Interaction) *api.Receipt {
	var ans any
	switch it.Tool {
	case api.ToolApproval:
		var a approval.Answer
		_ = json.Unmarshal(it.Answer, &a)
		ans = a
	case api.ToolElicitation:
		var a elicit.Answer
		if json.Unmarshal(it.Answer, &a) == nil {
			ans = a
		}
	default:
		var a AskTimeout
		if len(it.Answer) > 0 && json.Unmarshal(it.Answer, &a) == nil {
			ans = a.Answer
			if a.Decision != "" {
				ans = a
			}
		}
	}
	rc := NewReceipt(it, api.Status(it.Status), ans, it.ResolvedAt)
	rc.Signature = it.ReceiptJWS
	return rc
}
