// Package scripted is a deterministic model.Provider that plays a scenario
// file (docs/design.md §6 "scripted"). It is luban's default model when no API key is
// set, so a fresh machine can run the whole product, and its name always says
// "scripted:". The file format is documented in docs/scenario.md.
//
// The provider is stateless: which turn to play is derived from the request's
// messages alone, so a server restart between two turns changes nothing.
package scripted

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// Scenario is a scripted conversation: after each user message the provider
// plays Turns in order, one per model call, then Final for every further call.
type Scenario struct {
	// Name identifies the scenario; the provider is named "scripted:<Name>".
	Name string `json:"name"`
	// Turns are played in order after each user message.
	Turns []Turn `json:"turns"`
	// Final is the text of every call past the last turn (no tool calls). It
	// may use {{results}}.
	Final string `json:"final"`
	// FinalOnError, when set, is played instead of Final when a result of
	// the last turn's tool calls (the tool messages after the last assistant
	// message) is an error: a rejected approval, a tool that failed. So a
	// scenario ends by saying what did not happen. Empty: Final is played
	// whatever the results. It may use the same placeholders.
	FinalOnError string `json:"finalOnError,omitempty"`
	// Delay paces the streamed text: a Go duration ("15ms") waited before
	// each piece of a few characters, so a person sees the reply stream and
	// can stop it. Empty or "0" streams at once in four pieces. The built-in
	// demo has "15ms" (about 200 characters a second, so its longer replies
	// stream for seconds); a Provider's SetDelay overrides it.
	Delay string `json:"delay,omitempty"`

	delay time.Duration
}

// PaceRunes is the size of one paced piece of text, in characters.
const PaceRunes = 3

// Turn is one assistant turn: text, tool calls, or both.
type Turn struct {
	// Text is streamed to the user; "{{results}}" in it is replaced by a
	// short list of the tool results since the last user message,
	// "{{lastResults}}" by those of the previous turn.
	Text string `json:"text"`
	// ToolCalls are emitted in order, each with a deterministic id.
	ToolCalls []ToolCall `json:"toolCalls"`
}

// ToolCall is one scripted tool call. Arguments is any JSON value (normally
// an object) and is sent to the run as its compact JSON text; absent means {}.
type ToolCall struct {
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments"`
}

// ResultsPlaceholder in a turn's text or in Final is replaced by the tool
// results since the last user message, one "- name: summary" line each.
const ResultsPlaceholder = "{{results}}"

// LastResultsPlaceholder in a turn's text or in Final is replaced by the
// results of the previous turn's tool calls only (the tool messages after
// the last assistant message), in the same form; in the first turn after a
// user message it has none.
const LastResultsPlaceholder = "{{lastResults}}"

//go:embed demo.json
var demoJSON []byte

// Demo returns the built-in demo scenario: every ask_user mode (single with a
// recommended option, multiple with allowCustom, toggle, text, number, date,
// directory), one AskUser batch of two questions (one with preview), two asks
// in one turn, a call of demo__plan_rollout (the form of the demo MCP server
// that `luban serve` starts for it, package internal/demomcp), a write_file
// under approval, and a closing summary of the answers, paced (Delay).
// Each call returns a fresh copy.
func Demo() *Scenario {
	s, err := Parse(demoJSON)
	if err != nil {
		panic("scripted: embedded demo.json: " + err.Error())
	}
	return s
}

// Load reads and parses a scenario file. A scenario without a name is named
// after the file (its base name without extension).
func Load(path string) (*Scenario, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("scripted: %w", err)
	}
	var probe struct {
		Name string `json:"name"`
	}
	if json.Unmarshal(data, &probe) == nil && probe.Name == "" {
		base := strings.TrimSuffix(filepath.Base(path), filepath.Ext(path))
		data, err = withName(data, base)
		if err != nil {
			return nil, fmt.Errorf("scripted: %s: %w", path, err)
		}
	}
	s, err := Parse(data)
	if err != nil {
		return nil, fmt.Errorf("%w (file %s)", err, path)
	}
	return s, nil
}

func withName(data []byte, name string) ([]byte, error) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(data, &m); err != nil {
		return nil, err
	}
	n, _ := json.Marshal(name)
	m["name"] = n
	return json.Marshal(m)
}

// Parse decodes and checks a scenario. Unknown fields are errors (they are
// typos); so are an empty name, a scenario with neither turns nor final, a
// turn with neither text nor tool calls, and a tool call without a name.
// Arguments are stored compacted.
func Parse(data []byte) (*Scenario, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var s Scenario
	if err := dec.Decode(&s); err != nil {
		return nil, fmt.Errorf("scripted: scenario: %w", err)
	}
	if strings.TrimSpace(s.Name) == "" {
		return nil, errors.New("scripted: scenario: name is required")
	}
	if s.Delay != "" {
		d, err := time.ParseDuration(s.Delay)
		if err != nil || d < 0 {
			return nil, fmt.Errorf("scripted: scenario: delay %q: a duration such as \"15ms\" is required", s.Delay)
		}
		s.delay = d
	}
	if len(s.Turns) == 0 && s.Final == "" {
		return nil, errors.New("scripted: scenario: needs turns or final")
	}
	for k := range s.Turns {
		t := &s.Turns[k]
		if t.Text == "" && len(t.ToolCalls) == 0 {
			return nil, fmt.Errorf("scripted: scenario: turns[%d]: needs text or toolCalls", k)
		}
		for i := range t.ToolCalls {
			c := &t.ToolCalls[i]
			if strings.TrimSpace(c.Name) == "" {
				return nil, fmt.Errorf("scripted: scenario: turns[%d].toolCalls[%d]: name is required", k, i)
			}
			if len(c.Arguments) == 0 || string(c.Arguments) == "null" {
				c.Arguments = json.RawMessage(`{}`)
				continue
			}
			var buf bytes.Buffer
			if err := json.Compact(&buf, c.Arguments); err != nil {
				return nil, fmt.Errorf("scripted: scenario: turns[%d].toolCalls[%d].arguments: %w", k, i, err)
			}
			c.Arguments = buf.Bytes()
		}
	}
	return &s, nil
}
