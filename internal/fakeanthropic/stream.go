package fakeanthropic

import (
	"fmt"
	"net/http"
	"strings"
)

// streamTurn writes turn as a Messages event stream: message_start, ping,
// one content block per thinking, text and tool_use, message_delta with the
// stop_reason and usage, message_stop.
func streamTurn(w http.ResponseWriter, id, model string, turn Turn) {
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
	add("message_start", fmt.Sprintf(`{"type":"message_start","message":{"id":%s,"type":"message","role":"assistant","model":%s,"content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":12,"cache_creation_input_tokens":0,"cache_read_input_tokens":0,"output_tokens":1}}}`,
		quote(id), quote(model)))
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
	if turn.Thinking != "" {
		var ds []string
		for _, p := range split(turn.Thinking, n) {
			ds = append(ds, `{"type":"thinking_delta","thinking":`+quote(p)+`}`)
		}
		ds = append(ds, `{"type":"signature_delta","signature":"c2lnbmF0dXJl"}`)
		block(`{"type":"thinking","thinking":"","signature":""}`, ds)
	}
	if turn.Text != "" {
		var ds []string
		for _, p := range split(turn.Text, n) {
			ds = append(ds, `{"type":"text_delta","text":`+quote(p)+`}`)
		}
		block(`{"type":"text","text":""}`, ds)
	}
	for _, tu := range turn.ToolUses {
		var ds []string
		for _, p := range split(tu.Input, n) {
			ds = append(ds, `{"type":"input_json_delta","partial_json":`+quote(p)+`}`)
		}
		block(fmt.Sprintf(`{"type":"tool_use","id":%s,"name":%s,"input":{}}`, quote(tu.ID), quote(tu.Name)), ds)
	}
	switch {
	case turn.ErrorEvent != "":
		add("error", fmt.Sprintf(`{"type":"error","error":{"type":%s,"message":"fakeanthropic: %s mid-stream"}}`, quote(turn.ErrorEvent), turn.ErrorEvent))
	case turn.NoStop:
	default:
		add("message_delta", fmt.Sprintf(`{"type":"message_delta","delta":{"stop_reason":%s,"stop_sequence":null},"usage":{"output_tokens":%d}}`, quote(stop), 1+len(turn.Text)/4))
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
		pieces = split(strings.Join(events, ""), turn.WriteBytes)
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

// split cuts s into pieces of n bytes (the last may be shorter); "" gives none.
func split(s string, n int) []string {
	var out []string
	for len(s) > n {
		out = append(out, s[:n])
		s = s[n:]
	}
	if s != "" {
		out = append(out, s)
	}
	return out
}

// quote encodes s as a JSON string like encoding/json does, except that bytes
// that are not valid UTF-8 are passed through raw instead of being replaced
// by U+FFFD, so a character cut in two reaches the client byte-exact.
func quote(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '"':
			b.WriteString(`\"`)
		case c == '\\':
			b.WriteString(`\\`)
		case c == '\n':
			b.WriteString(`\n`)
		case c == '\r':
			b.WriteString(`\r`)
		case c == '\t':
			b.WriteString(`\t`)
		case c < 0x20:
			fmt.Fprintf(&b, `\u%04x`, c)
		default:
			b.WriteByte(c)
		}
	}
	b.WriteByte('"')
	return b.String()
}
