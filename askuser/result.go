package askuser

import (
	"fmt"
	"strings"

	"github.com/lubanhq/luban/api"
)

// askUserContent is the content of an ask_user ToolResult (docs/design.md §A.6.2
// "工具结果回灌: { selections, customInput, cancelled }"). Labels is luban's
// addition beside the ids (docs/design.md §3: ids are the stable contract).
type askUserContent struct {
	Selections  []string `json:"selections"`
	CustomInput string   `json:"customInput"`
	Cancelled   bool     `json:"cancelled"`
	Expired     bool     `json:"expired,omitempty"`
	Labels      []string `json:"labels,omitempty"`
}

// batchMetadata is the metadata of an AskUser ToolResult, shaped like
// AgentScope's AskUserMetadata plus the cancel and expiry flags.
type batchMetadata struct {
	Answers   []api.QuestionAnswer `json:"answers"`
	Cancelled bool                 `json:"cancelled,omitempty"`
	Expired   bool                 `json:"expired,omitempty"`
}

// AnsweredResult is the ToolResult of an answered request (docs/design.md §3 "What
// the model gets back"). a must be the answer ValidateAnswer returned.
//
// For ask_user the content is JSON
// {"selections": [...ids], "customInput": "...", "cancelled": false,
// "labels": [...]} with selections and customInput verbatim (docs/design.md §A.6.4:
// "selections[] 与 customInput 原样进入工具结果"), neither ever dropping the
// other; labels lists the chosen options' labels in the same order and is
// omitted when nothing was selected. The JSON is not HTML-escaped.
//
// For AskUser the content is a readable text for the model, one line per
// question with the chosen labels and any "Other" text, and Metadata is
// {"answers": [{question, selected, other}]} (AgentScope AskUser output and
// AskUserMetadata).
func AnsweredResult(p *api.Prompt, a api.Answer) api.ToolResult {
	if isBatch(p) {
		answers := make([]api.QuestionAnswer, len(a.Answers))
		for i, qa := range a.Answers {
			answers[i] = api.QuestionAnswer{Question: qa.Question, Selected: nonNil(qa.Selected), Other: qa.Other}
		}
		return api.ToolResult{Content: batchOutput(answers), Metadata: mustJSON(batchMetadata{Answers: answers})}
	}
	selections := nonNil(a.Selections)
	c := askUserContent{Selections: selections, CustomInput: a.CustomInput}
	if len(selections) > 0 {
		labels := make(map[string]string, len(p.Options))
		for _, o := range p.Options {
			labels[o.ID] = o.Label
		}
		c.Labels = make([]string, len(selections))
		for i, id := range selections {
			c.Labels[i] = labels[id]
		}
	}
	return api.ToolResult{Content: string(mustJSON(c))}
}

// CancelledResult is the ToolResult of a cancelled request (docs/design.md §3): for
// ask_user the content is {"selections": [], "customInput": "", "cancelled": true};
// for AskUser a text telling the model the user declined, with Metadata
// {"answers": [], "cancelled": true}. The run stops after it, so the model is
// never asked to try again.
func CancelledResult(p *api.Prompt) api.ToolResult {
	if isBatch(p) {
		return api.ToolResult{
			Content:  "The user cancelled these questions without answering. Do not ask them again; the task stops here.",
			Metadata: mustJSON(batchMetadata{Answers: []api.QuestionAnswer{}, Cancelled: true}),
		}
	}
	return api.ToolResult{Content: string(mustJSON(askUserContent{Selections: []string{}, Cancelled: true}))}
}

// ExpiredResult is the ToolResult of a request that passed its expiresAt
// without an answer (docs/design.md §3): the cancelled shape plus "expired": true,
// for ask_user {"selections": [], "customInput": "", "cancelled": true,
// "expired": true}; for AskUser a text saying the questions expired, with
// Metadata {"answers": [], "cancelled": true, "expired": true}.
func ExpiredResult(p *api.Prompt) api.ToolResult {
	if isBatch(p) {
		return api.ToolResult{
			Content:  "The user did not answer these questions before they expired. Do not ask them again; the task stops here.",
			Metadata: mustJSON(batchMetadata{Answers: []api.QuestionAnswer{}, Cancelled: true, Expired: true}),
		}
	}
	return api.ToolResult{Content: string(mustJSON(askUserContent{Selections: []string{}, Cancelled: true, Expired: true}))}
}

// FallbackText is the content of FallbackResult: docs/design.md §A.1's
// ask_user_fallback sentence followed by an English one.
const FallbackText = "ask_user 需要在 Web 交互界面中完成。 " +
	"ask_user needs an interactive front end (the luban web page or `luban chat`); " +
	"this runtime has none, so no question was asked. Continue without the user's input or stop and explain what you need."

// FallbackResult is the error ToolResult for runtimes without an interactive
// front end (docs/design.md §A.1 ask_user_fallback: is_error true, "ask_user 需要在
// Web 交互界面中完成。"). It serves both ask tools.
func FallbackResult() api.ToolResult {
	return api.ToolResult{Content: FallbackText, IsError: true}
}

// BatchResultHead and BatchResultTail frame the text of an AskUser
// ToolResult for the model: the head, then one numbered entry per question
// with what was selected or typed, then the tail.
const (
	BatchResultHead = "The user answered your questions:\n"
	BatchResultTail = "Continue the task with these answers."
)

// batchOutput writes the AskUser answers for the model to read.
func batchOutput(answers []api.QuestionAnswer) string {
	var b strings.Builder
	b.WriteString(BatchResultHead)
	for i, qa := range answers {
		fmt.Fprintf(&b, "%d. %s\n", i+1, qa.Question)
		switch {
		case len(qa.Selected) > 0:
			quoted := make([]string, len(qa.Selected))
			for k, l := range qa.Selected {
				quoted[k] = fmt.Sprintf("%q", l)
			}
			fmt.Fprintf(&b, "   Selected: %s\n", strings.Join(quoted, ", "))
		case qa.Other == "":
			b.WriteString("   Selected: nothing\n")
		}
		if qa.Other != "" {
			fmt.Fprintf(&b, "   Other (in the user's words): %s\n", indentLines(qa.Other, "   "))
		}
	}
	b.WriteString(BatchResultTail)
	return b.String()
}

// indentLines indents every line after the first so multi-line answers stay
// under their question.
func indentLines(s, indent string) string {
	return strings.ReplaceAll(s, "\n", "\n"+indent)
}

func isBatch(p *api.Prompt) bool {
	return p != nil && (p.Tool == api.ToolAskUserBatch || p.Mode == api.ModeQuestions)
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

func mustJSON(v any) []byte {
	b, err := marshalNoEscape(v)
	if err != nil {
		panic(fmt.Sprintf("askuser: marshal %T: %v", v, err))
	}
	return b
}
