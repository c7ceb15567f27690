package agui

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/lubanhq/luban/agent"
	"github.com/lubanhq/luban/api"
)

// A message whose deltas streamed only its beginning (the rest was never
// stored as a delta) still reaches the AG-UI client whole: the rest comes
// with the message, as one more content event before the end.
func TestTranslatePartlyStreamedMessage(t *testing.T) {
	ev := func(name string, v any) agent.Event {
		b, err := json.Marshal(v)
		require.NoError(t, err)
		return agent.Event{Name: name, Data: b}
	}
	var tr translator
	var out []Event
	for _, e := range []agent.Event{
		ev(api.EventReasoningDelta, api.ReasoningDeltaEvent{MessageID: "m1", Delta: "想一想"}),
		ev(api.EventMessageDelta, api.MessageDeltaEvent{MessageID: "m1", Delta: "从前"}),
		ev(api.EventMessage, api.MessageEvent{MessageID: "m1", Role: "assistant", Content: "从前有座山", Reasoning: "想一想，再想"}),
		ev(api.EventMessage, api.MessageEvent{MessageID: "m2", Role: "assistant", Content: "整段"}),
	} {
		o, _ := tr.next(e)
		out = append(out, o...)
	}
	var text, reasoning, kinds []string
	for _, e := range out {
		kinds = append(kinds, string(e.Type))
		switch e.Type {
		case EventTextMessageContent:
			text = append(text, e.MessageID+":"+e.Delta)
		case EventReasoningMessageContent:
			reasoning = append(reasoning, e.Delta)
		}
	}
	require.Equal(t, []string{"m1:从前", "m1:有座山", "m2:整段"}, text)
	require.Equal(t, []string{"想一想", "，再想"}, reasoning)
	require.Equal(t, string(EventTextMessageEnd), kinds[len(kinds)-1])
}
