// Package model defines the provider interface luban's run loop talks to and
// the provider-neutral message shapes (OpenAI Chat Completions vocabulary:
// messages, tool calls, tool results).
package model

import (
	"context"
	"encoding/json"
)

// Role of a message in the conversation.
type Role string

// Message roles.
const (
	RoleSystem    Role = "system"
	RoleUser      Role = "user"
	RoleAssistant Role = "assistant"
	RoleTool      Role = "tool"
)

// ToolCall is one tool call in an assistant message. Arguments is the raw
// JSON text exactly as the model produced it (it may be invalid JSON).
type ToolCall struct {
	ID        string `json:"id"`
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

// Message is one conversation message. An assistant message may carry
// ToolCalls; a tool message answers exactly one of them via ToolCallID.
type Message struct {
	Role       Role       `json:"role"`
	Content    string     `json:"content"`
	ToolCalls  []ToolCall `json:"toolCalls,omitempty"`
	ToolCallID string     `json:"toolCallId,omitempty"`
	// Name is the tool's name on a tool message.
	Name string `json:"name,omitempty"`
	// IsError marks a tool message whose result is an error.
	IsError bool `json:"isError,omitempty"`
	// Reasoning is what the model produced as its reasoning ("thinking")
	// with an assistant turn; nil when the provider sent none. It is never
	// part of Content. A provider sends it back on later requests where its
	// API requires it (docs/models.md "Reasoning models").
	Reasoning *Reasoning `json:"reasoning,omitempty"`
}

// Reasoning providers.
const (
	// ReasoningOpenAI marks reasoning from an OpenAI-compatible Chat
	// Completions server (DeepSeek, Qwen, vLLM, OpenRouter, Ollama, ...).
	ReasoningOpenAI = "openai"
	// ReasoningAnthropic marks Anthropic Messages thinking blocks.
	ReasoningAnthropic = "anthropic"
)

// Reasoning is the reasoning of one assistant turn, as readable text plus
// the provider's own data needed to send it back unchanged.
//
// Text is for people: the reasoning pieces joined in stream order, whole
// UTF-8 characters (shown folded, never counted as answer text). Redacted
// reasoning (Anthropic redacted_thinking) has no text.
//
// Provider is ReasoningOpenAI or ReasoningAnthropic: the wire format Data
// belongs to. A provider sends back only reasoning of its own kind, so a
// session that changed models never sends one API's data to another.
//
// Data is opaque outside the provider package that wrote it (JSON; for
// OpenAI-compatible servers the field name the text came in, for Anthropic
// every thinking and redacted_thinking block with its signature or data and
// its position among the turn's blocks). It is stored with the message and
// handed back to that provider as it was.
type Reasoning struct {
	Provider string          `json:"provider"`
	Text     string          `json:"text"`
	Data     json.RawMessage `json:"data,omitempty"`
}

// ToolSpec is a tool as the model sees it: name, description and the JSON
// Schema of its arguments.
type ToolSpec struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	Parameters  json.RawMessage `json:"parameters"`
}

// Request is one model call.
type Request struct {
	Messages []Message
	Tools    []ToolSpec
	// OnReasoning, when set, receives the turn's reasoning as it streams, in
	// order, in whole UTF-8 characters, from the calling goroutine; the
	// pieces join to Response.Message.Reasoning.Text. Like onDelta, pieces
	// of a failed attempt may already have been passed before the retry
	// streams its own.
	OnReasoning func(text string)
}

// Response is the complete assistant turn of one model call.
type Response struct {
	// Message has Role RoleAssistant, the full text and every tool call in
	// the order the model emitted them.
	Message Message
	// FinishReason as the provider reported it ("stop", "tool_calls", ...).
	FinishReason string
	// Retries is how many times the call was retried before it succeeded.
	Retries int
	// Usage is the token count the provider reported for the successful
	// attempt; zero when it reported none.
	Usage Usage
	// Model is the model that answered as the provider named it (it may be
	// more precise than the one requested, e.g. a dated snapshot); "" when
	// it named none.
	Model string
}

// Usage counts the tokens of one model call, as the provider reported them
// (OpenAI usage.prompt_tokens / completion_tokens, Anthropic
// usage.input_tokens / output_tokens). InputTokens includes any tokens
// served from a prompt cache.
type Usage struct {
	InputTokens, OutputTokens int64
}

// Provider generates one assistant turn. Implementations stream text through
// onDelta (called from the calling goroutine, in order; may be nil) and return
// the whole turn when the stream ends. A returned error means no part of the
// turn is to be applied.
type Provider interface {
	// Name is the provider and model as shown to people, e.g.
	// "openai:gpt-4o-mini" or "scripted:demo".
	Name() string
	Generate(ctx context.Context, req *Request, onDelta func(text string)) (*Response, error)
}

// ProviderFunc adapts a function to Provider, with a fixed name.
type ProviderFunc struct {
	ProviderName string
	Fn           func(ctx context.Context, req *Request, onDelta func(text string)) (*Response, error)
}

// Name returns f.ProviderName.
func (f ProviderFunc) Name() string { return f.ProviderName }

// Generate calls f.Fn.
func (f ProviderFunc) Generate(ctx context.Context, req *Request, onDelta func(string)) (*Response, error) {
	return f.Fn(ctx, req, onDelta)
}

// CallError is the error of a model call that failed after Retries retries
// (attempts = Retries+1). Providers that retry return it so that the trace
// shows the retry count of a failed call too (issue 6); errors.As finds it,
// and Unwrap gives the last attempt's error.
type CallError struct {
	Retries int
	Err     error
}

// Error is the last attempt's error message.
func (e *CallError) Error() string { return e.Err.Error() }

// Unwrap returns the last attempt's error.
func (e *CallError) Unwrap() error { return e.Err }
