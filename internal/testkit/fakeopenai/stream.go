package fakeopenai

import (
	"context"
	"fmt"
	"net/http"
	"strings"

	"github.com/lubanhq/luban/internal/testkit/fakemodel"
	"time"
)

// streamTurn writes turn as a chat.completion.chunk event stream. Every chunk
// is one "data: {...}\n\n" event, flushed on its own.
//
// In reasoning mode the reasoning field is sent at least once, empty when
// the turn has no reasoning text. With usage, a last chunk with no choices
// carries it before [DONE], as OpenAI's stream_options.include_usage does.
func streamTurn(ctx context.Context, w http.ResponseWriter, id, model string, turn Turn, reasoningMode bool, usage *Usage) {
	n := turn.ChunkBytes
	if n <= 0 {
		n = 4
	}
	finish := turn.FinishReason
	if finish == "" {
		finish = "stop"
		if len(turn.ToolCalls) > 0 {
			finish = "tool_calls"
		}
	}

	// Deltas in order: role, reasoning pieces, text pieces, tool calls.
	deltas := []string{`{"role":"assistant","content":""}`}
	field := fakemodel.Quote(reasoningField(turn))
	pieces := fakemodel.Split(turn.Reasoning, n)
	if len(pieces) == 0 && reasoningMode {
		pieces = []string{""}
	}
	for _, p := range pieces {
		if turn.ReasoningSignature != "" {
			deltas = append(deltas, `{`+field+`:`+fakemodel.Quote(p)+`,"reasoning_details":[{"type":"reasoning.text","text":`+fakemodel.Quote(p)+`,"format":"anthropic-claude-v1","index":0}]}`)
			continue
		}
		deltas = append(deltas, `{`+field+`:`+fakemodel.Quote(p)+`}`)
	}
	if turn.ReasoningSignature != "" {
		deltas = append(deltas, `{"reasoning_details":[{"type":"reasoning.text","signature":`+fakemodel.Quote(turn.ReasoningSignature)+`,"format":"anthropic-claude-v1","index":0}]}`)
	}
	for _, p := range fakemodel.Split(turn.Text, n) {
		deltas = append(deltas, `{"content":`+fakemodel.Quote(p)+`}`)
	}
	deltas = append(deltas, toolCallDeltas(turn.ToolCalls, n)...)

	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	rc := http.NewResponseController(w)
	_ = rc.Flush()

	created := time.Now().Unix()
	sent := 0
	write := func(delta, finishReason string) {
		fr := "null"
		if finishReason != "" {
			fr = fakemodel.Quote(finishReason)
		}
		fmt.Fprintf(w, `data: {"id":%s,"object":"chat.completion.chunk","created":%d,"model":%s,"choices":[{"index":0,"delta":%s,"logprobs":null,"finish_reason":%s}]}`+"\n\n",
			fakemodel.Quote(id), created, fakemodel.Quote(model), delta, fr)
		_ = rc.Flush()
		sent++
		if turn.CutAfterChunks > 0 && sent >= turn.CutAfterChunks {
			// Abort the connection: the client reads an unexpected EOF.
			panic(http.ErrAbortHandler)
		}
	}
	for _, d := range deltas {
		write(d, "")
	}
	if turn.Hold != nil {
		select {
		case <-turn.Hold:
		case <-ctx.Done():
			if turn.Gone != nil {
				close(turn.Gone)
			}
			return
		}
	}
	if turn.NoFinish {
		return
	}
	write("{}", finish)
	if usage != nil {
		fmt.Fprintf(w, `data: {"id":%s,"object":"chat.completion.chunk","created":%d,"model":%s,"choices":[],"usage":{"prompt_tokens":%d,"completion_tokens":%d,"total_tokens":%d}}`+"\n\n",
			fakemodel.Quote(id), created, fakemodel.Quote(model), usage.PromptTokens, usage.CompletionTokens, usage.PromptTokens+usage.CompletionTokens)
		_ = rc.Flush()
	}
	if !turn.NoDone {
		_, _ = fmt.Fprint(w, "data: [DONE]\n\n")
		_ = rc.Flush()
	}
}

// toolCallDeltas cuts every call's arguments into n-byte pieces and emits them
// round-robin by call; each call's first delta carries its id, type and name.
func toolCallDeltas(calls []ToolCall, n int) []string {
	pieces := make([][]string, len(calls))
	rounds := 1
	for i, c := range calls {
		pieces[i] = fakemodel.Split(c.Arguments, n)
		if len(pieces[i]) > rounds {
			rounds = len(pieces[i])
		}
	}
	var out []string
	for r := 0; r < rounds; r++ {
		for i, c := range calls {
			var b strings.Builder
			fmt.Fprintf(&b, `{"tool_calls":[{"index":%d`, i)
			if r == 0 {
				fmt.Fprintf(&b, `,"id":%s,"type":"function"`, fakemodel.Quote(c.ID))
			}
			b.WriteString(`,"function":{`)
			if r == 0 {
				fmt.Fprintf(&b, `"name":%s,`, fakemodel.Quote(c.Name))
			}
			arg := ""
			switch {
			case r < len(pieces[i]):
				arg = pieces[i][r]
			case r > 0:
				continue // this call has no more pieces
			}
			fmt.Fprintf(&b, `"arguments":%s}}]}`, fakemodel.Quote(arg))
			out = append(out, b.String())
		}
	}
	return out
}
