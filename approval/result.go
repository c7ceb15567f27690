package approval

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/lubanhq/luban/api"
)

// EditedResult is the ToolResult of a call that ran with the arguments a
// person edited (docs/design.md §10): the model is told that the user changed the
// arguments and to what, then reads the tool's own result (content and
// IsError kept).
func EditedResult(p *api.Prompt, edited json.RawMessage, res api.ToolResult) api.ToolResult {
	return api.ToolResult{
		Content: fmt.Sprintf("The user changed the arguments of this %s call before approving it. It ran with these arguments instead of yours:\n%s\n\nResult:\n%s",
			p.ToolName, edited, res.Content),
		IsError:  res.IsError,
		Metadata: res.Metadata,
	}
}

// RejectedResult is the ToolResult of a call a person declined (docs/design.md §10):
// an error result saying the tool did not run, with the person's message
// when they gave one. The run continues with the model's next turn.
func RejectedResult(p *api.Prompt, message string) api.ToolResult {
	text := fmt.Sprintf("The user declined this %s call; it did not run.", p.ToolName)
	if message != "" {
		var b strings.Builder
		enc := json.NewEncoder(&b)
		enc.SetEscapeHTML(false)
		_ = enc.Encode(message)
		text += " Their message: " + strings.TrimSuffix(b.String(), "\n")
	} else {
		text += " They gave no reason."
	}
	return api.ToolResult{Content: text + " Do not repeat the same call unless the user asks for it.", IsError: true}
}

// CancelledResult is the ToolResult of an approval a person cancelled
// (docs/design.md §3, §10): the tool did not run and the run stops after it.
func CancelledResult(p *api.Prompt) api.ToolResult {
	return api.ToolResult{Content: fmt.Sprintf("The user cancelled instead of approving this %s call; it did not run, and the task stops here.", p.ToolName), IsError: true}
}

// ExpiredResult is the ToolResult of an approval nobody answered before its
// expiresAt (docs/design.md §3): the tool did not run and the run stops.
func ExpiredResult(p *api.Prompt) api.ToolResult {
	return api.ToolResult{Content: fmt.Sprintf("Nobody approved this %s call before the request expired; it did not run, and the task stops here.", p.ToolName), IsError: true}
}

// InterruptedResult is the ToolResult of an approved call of a tool that is
// not idempotent when the server stopped while it ran (docs/design.md §10): it is
// not run a second time, and it may or may not have taken effect.
func InterruptedResult(toolName string) api.ToolResult {
	return api.ToolResult{Content: fmt.Sprintf("interrupted: the server stopped while %s was running after approval; it may or may not have taken effect, and it was not run again because it is not idempotent", toolName), IsError: true}
}

// AuditSummary is what the audit log keeps about an approval's resolution
// (docs/design.md §10): the decision, the tool, the SHA-256 of the arguments the
// tool runs with (the edited ones for edit) and, for edit, of the model's
// original ones; the answering principal; the message only as its length in
// characters and its SHA-256. Arguments and messages themselves are never
// logged.
type AuditSummary struct {
	Mode                    api.Mode     `json:"mode"`
	Tool                    string       `json:"tool"`
	Decision                api.Decision `json:"decision,omitempty"`
	Cancelled               bool         `json:"cancelled,omitempty"`
	ArgumentsSHA256         string       `json:"argumentsSha256"`
	OriginalArgumentsSHA256 string       `json:"originalArgumentsSha256,omitempty"`
	MessageLen              int          `json:"messageLen,omitempty"`
	MessageSHA256           string       `json:"messageSha256,omitempty"`
	Remember                string       `json:"remember,omitempty"`
	Principal               string       `json:"principal,omitempty"`
}

// Summarize returns the audit summary of answer a (normalized) to p, given
// by principal (empty for an expiry, which nobody gave).
func Summarize(p *api.Prompt, a Answer, principal string) AuditSummary {
	s := AuditSummary{Mode: api.ModeApproval, Tool: p.ToolName, Decision: a.Decision, Cancelled: a.Cancelled, Remember: a.Remember,
		Principal: principal, ArgumentsSHA256: sha(p.Arguments)}
	if a.Cancelled {
		s.Decision, s.Remember = "", ""
	}
	if a.Decision == api.DecisionEdit && !a.Cancelled {
		s.OriginalArgumentsSHA256 = s.ArgumentsSHA256
		s.ArgumentsSHA256 = sha(a.Arguments)
	}
	if a.Message != "" {
		s.MessageLen = utf8.RuneCountInString(a.Message)
		s.MessageSHA256 = sha([]byte(a.Message))
	}
	return s
}

func sha(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}
