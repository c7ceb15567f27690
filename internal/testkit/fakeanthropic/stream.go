package fakeanthropic

import (
	"fmt"
	"net/http"
	"strings"

	"github.com/lubanhq/luban/internal/testkit/fakemodel"
)

// streamTurn writes turn as a Messages event stream: message_start, ping,
// one content block per thinking (then redacted_thinking), text and
// tool_use (each preceded by its ThinkingBefore), message_delta with the
// stop_reason and usage, message_stop. The usage is inputTokens in
// message_start and OutputTokens(turn) in message_delta.
func streamTurn(w http.ResponseWriter, id, model string, turn Turn, inputTokens int64) {
	n := turn.ChunkBytes
	if n <= 0 {
		n = 4
	}
	stop := turn.StopReason
	if stop == "" {
		stop = "end_turn"
		if len(turn.ToolUses) > 0 {
			stop = "tool_use"
		}
	}

	var events []string
	add := func(name, data string) {
		events = append(events, "event: "+name+"\ndata: "+data+"\n\n")
	}
	add("message_start", fmt.Sprintf(`{"type":"message_start","message":{"id":%s,"type":"message","role":"assistant","model":%s,"content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":%d,"cache_creation_input_tokens":0,"cache_read_input_tokens":0,"output_tokens":1}}}`,
		fakemodel.Quote(id), fakemodel.Quote(model), inputTokens))
	add("ping", `{"type": "ping"}`)
	idx := 0
	block := func(start string, deltas []string) {
		add("content_block_start", fmt.Sprintf(`{"type":"content_block_start","index":%d,"content_block":%s}`, idx, start))
		for _, d := range deltas {
			add("content_block_delta", fmt.Sprintf(`{"type":"content_block_delta","index":%d,"delta":%s}`, idx, d))
		}
		add("content_block_stop", fmt.Sprintf(`{"type":"content_block_stop","index":%d}`, idx))
		idx++
	}
	thinking := func(text string) {
		var ds []string
		for _, p := range fakemodel.Split(text, n) {
			ds = append(ds, `{"type":"thinking_delta","thinking":`+fakemodel.Quote(p)+`}`)
		}
		ds = append(ds, `{"type":"signature_delta","signature":`+fakemodel.Quote(Signature(text))+`}`)
		block(`{"type":"thinking","thinking":"","signature":""}`, ds)
	}
	if turn.Thinking != "" {
		thinking(turn.Thinking)
	}
	if turn.RedactedThinking != "" {
		block(`{"type":"redacted_thinking","data":`+fakemodel.Quote(turn.RedactedThinking)+`}`, nil)
	}
	if turn.Text != "" {
		var ds []string
		for _, p := range fakemodel.Split(turn.Text, n) {
			ds = append(ds, `{"type":"text_delta","text":`+fakemodel.Quote(p)+`}`)
		}
		block(`{"type":"text","text":""}`, ds)
	}
	for _, tu := range turn.ToolUses {
		if tu.ThinkingBefore != "" {
			thinking(tu.ThinkingBefore)
		}
		var ds []string
		for _, p := range fakemodel.Split(tu.Input, n) {
			ds = append(ds, `{"type":"input_json_delta","partial_json":`+fakemodel.Quote(p)+`}`)
		}
		block(fmt.Sprintf(`{"type":"tool_use","id":%s,"name":%s,"input":{}}`, fakemodel.Quote(tu.ID), fakemodel.Quote(tu.Name)), ds)
	}
	switch {
	case turn.ErrorEvent != "":
		add("error", fmt.Sprintf(`{"type":"error","error":{"type":%s,"message":"fakeanthropic: %s mid-stream"}}`, fakemodel.Quote(turn.ErrorEvent), turn.ErrorEvent))
	case turn.NoStop:
	default:
		add("message_delta", fmt.Sprintf(`{"type":"message_delta","delta":{"stop_reason":%s,"stop_sequence":null},"usage":{"output_tokens":%d}}`, fakemodel.Quote(stop), OutputTokens(turn)))
		if !turn.NoMessageStop {
			add("message_stop", `{"type":"message_stop"}`)
		}
	}

	cut := turn.CutAfterEvents > 0 && turn.CutAfterEvents < len(events)
	if cut {
		events = events[:turn.CutAfterEvents]
	}
	pieces := events
	if turn.WriteBytes > 0 {
		pieces = fakemodel.Split(strings.Join(events, ""), turn.WriteBytes)
	}

	h := w.Header()
	h.Set("Content-Type", "text/event-stream; charset=utf-8")
	h.Set("Cache-Control", "no-cache")
	h.Set("request-id", "req_fake")
	w.WriteHeader(http.StatusOK)
	rc := http.NewResponseController(w)
	_ = rc.Flush()
	for _, p := range pieces {
		_, _ = fmt.Fprint(w, p)
		_ = rc.Flush()
	}
	if cut {
		// Abort the connection: the client reads an unexpected EOF.
		panic(http.ErrAbortHandler)
	}
}

// OutputTokens is fakemodel.Tokens of everything a turn streams: its
// thinking, its text, and each tool use's thinking, name and input.
func OutputTokens(t Turn) int64 {
	s := t.Thinking + t.RedactedThinking + t.Text
	for _, tu := range t.ToolUses {
		s += tu.ThinkingBefore + tu.Name + tu.Input
	}
	return fakemodel.Tokens(s)
}
