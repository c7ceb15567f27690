package anthropic

import (
	"encoding/json"
	"strings"

	sdk "github.com/anthropics/anthropic-sdk-go/v2"

	"github.com/lubanhq/luban/model"
)

// thinkingBlock is one thinking or redacted_thinking block of a turn, as the
// Messages API sent it, kept to be sent back unchanged: the API checks a
// thinking block's signature against its text, and requires the thinking of
// a tool_use turn back in that assistant turn while the tool loop goes on.
type thinkingBlock struct {
	// Type is "thinking" or "redacted_thinking".
	Type      string `json:"type"`
	Thinking  string `json:"thinking,omitempty"`
	Signature string `json:"signature,omitempty"`
	// Data is a redacted_thinking block's encrypted content.
	Data string `json:"data,omitempty"`
	// ToolUsesBefore is how many tool_use blocks the turn had streamed
	// before this block (0: before any; interleaved thinking puts blocks
	// between tool calls), so that it goes back in the same place.
	ToolUsesBefore int `json:"toolUsesBefore"`
}

// reasoningData is model.Reasoning.Data for this provider.
type reasoningData struct {
	Blocks []thinkingBlock `json:"blocks"`
}

// reasoning is the model.Reasoning of a turn's thinking blocks: their text
// joined by a blank line (redacted blocks have none), and the blocks
// themselves. nil when the turn had none.
func reasoning(blocks []*thinkingBlock) *model.Reasoning {
	if len(blocks) == 0 {
		return nil
	}
	d := reasoningData{}
	var texts []string
	for _, b := range blocks {
		d.Blocks = append(d.Blocks, *b)
		if b.Thinking != "" {
			texts = append(texts, b.Thinking)
		}
	}
	data, _ := json.Marshal(d)
	return &model.Reasoning{Provider: model.ReasoningAnthropic, Text: strings.Join(texts, "\n\n"), Data: data}
}

// assistantBlocks is the content of an assistant message sent back: its
// thinking blocks (Anthropic reasoning only) where they came, the text, then
// the tool_use blocks, each followed by the thinking blocks that came after
// it.
func assistantBlocks(m model.Message) []sdk.ContentBlockParamUnion {
	var thinking []thinkingBlock
	if r := m.Reasoning; r != nil && r.Provider == model.ReasoningAnthropic {
		var d reasoningData
		if json.Unmarshal(r.Data, &d) == nil {
			thinking = d.Blocks
		}
	}
	var out []sdk.ContentBlockParamUnion
	addThinking := func(before int, last bool) {
		for _, t := range thinking {
			if t.ToolUsesBefore == before || (last && t.ToolUsesBefore > before) {
				out = append(out, thinkingParam(t))
			}
		}
	}
	addThinking(0, len(m.ToolCalls) == 0)
	if m.Content != "" {
		out = append(out, sdk.NewTextBlock(m.Content))
	}
	for i, tc := range m.ToolCalls {
		out = append(out, sdk.NewToolUseBlock(tc.ID, toolInput(tc.Arguments), tc.Name))
		addThinking(i+1, i == len(m.ToolCalls)-1)
	}
	return out
}

func thinkingParam(t thinkingBlock) sdk.ContentBlockParamUnion {
	if t.Type == "redacted_thinking" {
		return sdk.NewRedactedThinkingBlock(t.Data)
	}
	return sdk.NewThinkingBlock(t.Signature, t.Thinking)
}
