package scripted

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/lubanhq/luban/askuser"
	"github.com/lubanhq/luban/model"
)

// Provider plays a Scenario. It is stateless and safe for concurrent use.
type Provider struct {
	s     *Scenario
	delay time.Duration
}

// New returns a Provider playing s, paced by the scenario's delay; s must
// not be changed afterwards.
func New(s *Scenario) *Provider { return &Provider{s: s, delay: s.delay} }

// SetDelay sets the pace of the streamed text (Scenario.Delay; 0 streams at
// once). Call it before the provider is used.
func (p *Provider) SetDelay(d time.Duration) { p.delay = max(d, 0) }

// Delay is the pace of the streamed text, per piece of PaceRunes characters.
func (p *Provider) Delay() time.Duration { return p.delay }

// Name is "scripted:<scenario name>".
func (p *Provider) Name() string { return "scripted:" + p.s.Name }

// Scenario returns the scenario being played.
func (p *Provider) Scenario() *Scenario { return p.s }

// Generate plays the next turn for req, deterministically: let u be the index
// of the last user message in req.Messages (-1 if none) and k the number of
// assistant messages after it; turn k is played, or Final once k is past the
// last turn (FinalOnError instead when it is set and a result of the last
// turn's tool calls is an error). The same request always gives the same
// response, so restarts between turns are harmless.
//
// Tool call i of the turn gets the id "call_<u>_<k>_<i>", unique within a
// conversation. {{results}} in the text is replaced by the tool results since
// message u, {{lastResults}} by those of the previous turn. The text goes through onDelta in four pieces split on
// character boundaries, or, with a delay, in pieces of PaceRunes characters
// each after the delay. Generate fails only when ctx is done (a stop
// mid-stream ends it between two pieces).
func (p *Provider) Generate(ctx context.Context, req *model.Request, onDelta func(text string)) (*model.Response, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("scripted: %w", err)
	}
	u := -1
	for i, m := range req.Messages {
		if m.Role == model.RoleUser {
			u = i
		}
	}
	k := 0
	for _, m := range req.Messages[u+1:] {
		if m.Role == model.RoleAssistant {
			k++
		}
	}

	// prev is where the last turn's tool results begin: after the last
	// assistant message since the user's (or after the user's message).
	prev := u + 1
	for i := len(req.Messages) - 1; i > u; i-- {
		if req.Messages[i].Role == model.RoleAssistant {
			prev = i
			break
		}
	}

	msg := model.Message{Role: model.RoleAssistant}
	var text string
	if k < len(p.s.Turns) {
		t := p.s.Turns[k]
		text = t.Text
		for i, c := range t.ToolCalls {
			msg.ToolCalls = append(msg.ToolCalls, model.ToolCall{
				ID:        fmt.Sprintf("call_%d_%d_%d", max(u, 0), k, i),
				Name:      c.Name,
				Arguments: string(c.Arguments),
			})
		}
	} else {
		text = p.s.Final
		if p.s.FinalOnError != "" && anyError(req.Messages[prev:]) {
			text = p.s.FinalOnError
		}
	}
	if strings.Contains(text, ResultsPlaceholder) || strings.Contains(text, LastResultsPlaceholder) {
		text = strings.NewReplacer(ResultsPlaceholder, Results(req.Messages[u+1:]),
			LastResultsPlaceholder, Results(req.Messages[prev:])).Replace(text)
	}
	msg.Content = text
	if onDelta != nil {
		if p.delay <= 0 {
			for _, piece := range pieces(text, 4) {
				onDelta(piece)
			}
		} else if err := p.pace(ctx, text, onDelta); err != nil {
			return nil, err
		}
	}
	finish := "stop"
	if len(msg.ToolCalls) > 0 {
		finish = "tool_calls"
	}
	return &model.Response{Message: msg, FinishReason: finish}, nil
}

// anyError reports whether one of the tool messages among msgs is an error.
func anyError(msgs []model.Message) bool {
	for _, m := range msgs {
		if m.Role == model.RoleTool && m.IsError {
			return true
		}
	}
	return false
}

// pace sends text through onDelta PaceRunes characters at a time, waiting
// p.delay before each; it stops with ctx's error once ctx is done.
func (p *Provider) pace(ctx context.Context, text string, onDelta func(string)) error {
	t := time.NewTimer(p.delay)
	defer t.Stop()
	for text != "" {
		select {
		case <-ctx.Done():
			return fmt.Errorf("scripted: %w", ctx.Err())
		case <-t.C:
		}
		end, n := 0, 0
		for end < len(text) && n < PaceRunes {
			_, size := utf8.DecodeRuneInString(text[end:])
			end += size
			n++
		}
		onDelta(text[:end])
		text = text[end:]
		t.Reset(p.delay)
	}
	return nil
}

// pieces splits s into about n pieces on rune boundaries ("" gives none).
func pieces(s string, n int) []string {
	if s == "" {
		return nil
	}
	size := max(len(s)/n, 1)
	var out []string
	for len(s) > 0 {
		end := min(size, len(s))
		for end < len(s) && !utf8.RuneStart(s[end]) {
			end++
		}
		out = append(out, s[:end])
		s = s[end:]
	}
	return out
}

// Results renders the tool messages among msgs as a short readable list, one
// "- <tool>: <summary>" line per result, in order. An ask_user result
// ({"selections","customInput","cancelled",...}, docs/design.md §3) is summarised as
// the chosen labels with their ids, the typed text, or "已取消 (cancelled)" /
// "已过期 (expired)"; any other result (an AskUser answer text, another tool)
// is its text on one line, shortened to 300 characters, with an AskUser
// answer's framing for the model dropped and a line that is a JSON object
// (edited arguments of an approval) shown as its fields, strings as text. Without tool results
// it returns "（没有工具结果 / no tool results）".
func Results(msgs []model.Message) string {
	names := map[string]string{}
	var lines []string
	for _, m := range msgs {
		for _, c := range m.ToolCalls {
			names[c.ID] = c.Name
		}
		if m.Role != model.RoleTool {
			continue
		}
		name := m.Name
		if name == "" {
			name = names[m.ToolCallID]
		}
		if name == "" {
			name = "tool"
		}
		lines = append(lines, "- "+name+": "+summarize(m))
	}
	if len(lines) == 0 {
		return "（没有工具结果 / no tool results）"
	}
	return strings.Join(lines, "\n")
}

// askUserResult is the ask_user ToolResult content shape (docs/design.md §3).
type askUserResult struct {
	Selections  *[]string `json:"selections"`
	CustomInput string    `json:"customInput"`
	Cancelled   bool      `json:"cancelled"`
	Expired     bool      `json:"expired"`
	Labels      []string  `json:"labels"`
}

func summarize(m model.Message) string {
	prefix := ""
	if m.IsError {
		prefix = "出错 (error): "
	}
	var r askUserResult
	if !m.IsError && json.Unmarshal([]byte(m.Content), &r) == nil && r.Selections != nil {
		switch {
		case r.Expired:
			return "已过期 (expired)"
		case r.Cancelled:
			return "已取消 (cancelled)"
		}
		var parts []string
		for i, id := range *r.Selections {
			if i < len(r.Labels) && r.Labels[i] != "" && r.Labels[i] != id {
				parts = append(parts, fmt.Sprintf("%s (%s)", r.Labels[i], id))
			} else {
				parts = append(parts, id)
			}
		}
		if r.CustomInput != "" {
			parts = append(parts, fmt.Sprintf("“%s”", oneLine(r.CustomInput, 200)))
		}
		if len(parts) == 0 {
			return "（未选择 / nothing chosen）"
		}
		return strings.Join(parts, ", ")
	}
	return prefix + oneLine(readable(m.Content), 300)
}

// readable is a tool result as a person reads it: an AskUser answer without
// its framing for the model, and every line that is a JSON object (the
// arguments a person edited before approving, for one) as its fields,
// strings quoted as text rather than JSON-escaped.
func readable(s string) string {
	if rest, ok := strings.CutPrefix(s, askuser.BatchResultHead); ok {
		s = strings.TrimSuffix(strings.TrimSpace(rest), askuser.BatchResultTail)
	}
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		if t := strings.TrimSpace(l); strings.HasPrefix(t, "{") && strings.HasSuffix(t, "}") {
			if f, ok := fields(t); ok {
				lines[i] = f
			}
		}
	}
	return strings.Join(lines, "\n")
}

// fields renders a JSON object as "key “value”, …" in its own key order,
// strings on one line and shortened; ok is false when text is not one.
func fields(text string) (string, bool) {
	dec := json.NewDecoder(strings.NewReader(text))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return "", false
	}
	var parts []string
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return "", false
		}
		key, _ := tok.(string)
		var v any
		if err := dec.Decode(&v); err != nil {
			return "", false
		}
		if str, ok := v.(string); ok {
			parts = append(parts, fmt.Sprintf("%s “%s”", key, oneLine(str, 120)))
			continue
		}
		var b strings.Builder
		enc := json.NewEncoder(&b)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(v); err != nil {
			return "", false
		}
		parts = append(parts, key+" "+strings.TrimSpace(b.String()))
	}
	if _, err := dec.Token(); err != nil || dec.More() {
		return "", false
	}
	return strings.Join(parts, ", "), true
}

// oneLine joins s's non-blank lines with "; " (with a space after a line
// that ends in a colon, which already introduces the next) and cuts it to
// max characters.
func oneLine(s string, limit int) string {
	var b strings.Builder
	for _, l := range strings.Split(s, "\n") {
		if l = strings.TrimSpace(l); l == "" {
			continue
		}
		if b.Len() > 0 {
			prev := b.String()
			if strings.HasSuffix(prev, ":") || strings.HasSuffix(prev, "：") {
				b.WriteString(" ")
			} else {
				b.WriteString("; ")
			}
		}
		b.WriteString(l)
	}
	out := b.String()
	if utf8.RuneCountInString(out) > limit {
		out = string([]rune(out)[:limit]) + "…"
	}
	return out
}
