package askuser

import (
	"crypto/sha256"
	"encoding/hex"
	"unicode/utf8"

	"github.com/lubanhq/luban/api"
)

// AuditSummary is what the audit log may keep about an answer (docs/design.md §5,
// docs/design.md §A.6.2 审计: "不要在常规日志中记录敏感自由输入全文"): the mode, the
// chosen option ids, counts, and free text only as its length in characters
// and its SHA-256 — never the text itself.
type AuditSummary struct {
	// Mode is the prompt's mode (ModeQuestions for AskUser).
	Mode api.Mode `json:"mode"`
	// Selections are the chosen option ids; for AskUser the chosen labels of
	// all questions in question order (labels are written by the model, not
	// the person).
	Selections []string `json:"selections,omitempty"`
	// SelectionCount is len(Selections).
	SelectionCount int `json:"selectionCount"`
	// CustomInputLen is the length of the free text in runes: customInput,
	// or for AskUser the sum over every answer's other text.
	CustomInputLen int `json:"customInputLen"`
	// CustomInputSHA256 is the lower-case hex SHA-256 of the free text
	// (for AskUser of the other texts joined by NUL bytes); empty when there
	// is no free text.
	CustomInputSHA256 string `json:"customInputSha256,omitempty"`
	// AnswerCount is the number of AskUser answers; zero for ask_user.
	AnswerCount int `json:"answerCount,omitempty"`
	// Cancelled is true for a cancelled answer, which has nothing else.
	Cancelled bool `json:"cancelled,omitempty"`
}

// Summarize returns the audit summary of answer a to prompt p. a should be
// the normalized answer ValidateAnswer returned; a cancelled answer yields
// only the mode and Cancelled.
func Summarize(p *api.Prompt, a api.Answer) AuditSummary {
	s := AuditSummary{}
	if p != nil {
		s.Mode = p.Mode
	}
	if a.Cancelled {
		s.Cancelled = true
		return s
	}
	var text string
	if isBatch(p) {
		s.AnswerCount = len(a.Answers)
		var joined []byte
		hasText := false
		for i, qa := range a.Answers {
			s.Selections = append(s.Selections, qa.Selected...)
			s.CustomInputLen += utf8.RuneCountInString(qa.Other)
			if i > 0 {
				joined = append(joined, 0)
			}
			joined = append(joined, qa.Other...)
			hasText = hasText || qa.Other != ""
		}
		if hasText {
			text = string(joined)
		}
	} else {
		s.Selections = append(s.Selections, a.Selections...)
		s.CustomInputLen = utf8.RuneCountInString(a.CustomInput)
		text = a.CustomInput
	}
	s.SelectionCount = len(s.Selections)
	if text != "" {
		sum := sha256.Sum256([]byte(text))
		s.CustomInputSHA256 = hex.EncodeToString(sum[:])
	}
	return s
}
