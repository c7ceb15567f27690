package acceptance

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/stretchr/testify/require"

	"github.com/lubanhq/luban/api"
	"github.com/lubanhq/luban/internal/testkit/fakeanthropic"
	"github.com/lubanhq/luban/internal/testkit/fakeopenai"
	"github.com/lubanhq/luban/internal/testkit/lubantest"
	"github.com/lubanhq/luban/model"
	"github.com/lubanhq/luban/model/anthropic"
	"github.com/lubanhq/luban/model/openai"
)

// Provider habits through the whole run (issue 6), for whichever model fake
// LUBAN_ACCEPTANCE_MODEL picks: text and tool arguments cut inside UTF-8
// characters, streams cut in the middle, 429/5xx with Retry-After, retries
// exhausted, and the API key kept out of everything a person can read.

// habit is how a fake misbehaves for one turn.
type habit struct {
	chunkBytes int    // pieces of text and arguments, in bytes (cuts characters)
	cut        bool   // the connection drops in the middle of the stream
	status     int    // an HTTP error answer instead of a stream
	retryAfter string // with status: the Retry-After header
	reasoning  string // DeepSeek reasoning_content / Anthropic thinking, never shown
}

// habitFake is a modelFake that can misbehave and build a provider that
// retries, with a key.
type habitFake interface {
	modelFake
	pushHabit(h habit, tr turn)
	retryingProvider(t testing.TB, key string, retries int, base, timeout time.Duration) model.Provider
	// hang makes every request with an empty queue wait for release.
	hang(release <-chan struct{})
	// sentKey is the key as the fake received it on request i.
	sentKey(i int) string
}

func (f *openaiFake) pushHabit(h habit, tr turn) {
	ft := fakeopenai.Turn{Text: tr.text, ChunkBytes: h.chunkBytes, Status: h.status, RetryAfter: h.retryAfter, Reasoning: h.reasoning}
	for _, c := range tr.calls {
		ft.ToolCalls = append(ft.ToolCalls, fakeopenai.ToolCall{ID: c.id, Name: c.name, Arguments: c.args})
	}
	if h.cut {
		ft.CutAfterChunks = 3 // role, then two text pieces
	}
	f.srv.Push(ft)
}

func (f *openaiFake) retryingProvider(t testing.TB, key string, retries int, base, timeout time.Duration) model.Provider {
	p, err := openai.New(openai.Options{BaseURL: f.srv.URL(), Model: "fake-model", APIKey: key,
		MaxRetries: retries, BaseBackoff: base, CallTimeout: timeout})
	require.NoError(t, err)
	return p
}

func (f *openaiFake) hang(release <-chan struct{}) {
	f.srv.SetHandler(func(*fakeopenai.Request) fakeopenai.Turn { <-release; return fakeopenai.Turn{Text: "late"} })
}

func (f *openaiFake) sentKey(i int) string { return f.srv.Requests()[i].Header.Get("Authorization") }

func (f *anthropicFake) pushHabit(h habit, tr turn) {
	ft := fakeanthropic.Turn{Text: tr.text, ChunkBytes: h.chunkBytes, Status: h.status, RetryAfter: h.retryAfter, Thinking: h.reasoning}
	for _, c := range tr.calls {
		ft.ToolUses = append(ft.ToolUses, fakeanthropic.ToolUse{ID: c.id, Name: c.name, Input: c.args})
	}
	if h.chunkBytes > 0 {
		ft.WriteBytes = 5 // and the socket writes cut events, lines and characters too
	}
	if h.cut {
		ft.CutAfterEvents = 5 // message_start, ping, block start, two text pieces
	}
	f.srv.Push(ft)
}

func (f *anthropicFake) retryingProvider(t testing.TB, key string, retries int, base, timeout time.Duration) model.Provider {
	p, err := anthropic.New(anthropic.Options{BaseURL: f.srv.URL(), Model: "fake-model", APIKey: key,
		MaxRetries: retries, BaseBackoff: base, CallTimeout: timeout})
	require.NoError(t, err)
	return p
}

func (f *anthropicFake) hang(release <-chan struct{}) {
	f.srv.SetHandler(func(*fakeanthropic.Request) fakeanthropic.Turn { <-release; return fakeanthropic.Turn{Text: "late"} })
}

func (f *anthropicFake) sentKey(i int) string { return f.srv.Requests()[i].Header.Get("Authorization") }

// setupHabits is setup with a provider that retries and sends key: the
// suite's server restarted on it before the test's first request.
func setupHabits(t *testing.T, key string, retries int, base time.Duration, timeout ...time.Duration) (*env, habitFake) {
	t.Helper()
	e := setup(t)
	hf, ok := e.model.(habitFake)
	require.True(t, ok, "model fake %s cannot misbehave", e.model.name())
	callTimeout := waitFor
	if len(timeout) > 0 {
		callTimeout = timeout[0]
	}
	e.opts.Provider = hf.retryingProvider(t, key, retries, base, callTimeout)
	e.restart()
	return e, hf
}

// deltas is the assistant text evs show a client: each message's
// message_delta text (every delta whole UTF-8, together the beginning of
// the message), completed by its message event. A turn that arrives whole
// streams no delta (docs/design.md "Streamed text").
func deltas(t *testing.T, evs []lubantest.Event) string {
	t.Helper()
	var b strings.Builder
	streamed := map[string]string{}
	for _, ev := range evs {
		var d struct{ MessageID, Role, Delta, Content string }
		switch ev.Name {
		case "message_delta":
			require.NoError(t, ev.Decode(&d))
			require.True(t, utf8.ValidString(d.Delta), "delta %q is whole characters", d.Delta)
			streamed[d.MessageID] += d.Delta
		case "message":
			require.NoError(t, ev.Decode(&d))
			if d.Role == "assistant" {
				require.True(t, strings.HasPrefix(d.Content, streamed[d.MessageID]), "the deltas %q begin the message %q", streamed[d.MessageID], d.Content)
				b.WriteString(d.Content)
			}
		}
	}
	return b.String()
}

func TestHabitChineseCutInsideCharacters(t *testing.T) {
	t.Parallel()
	e, hf := setupHabits(t, "", 2, time.Millisecond)
	text := "部署到生产环境吗？先确认一下🚀"
	args := `{"title":"选择部署环境（生产/预发）","mode":"single","allowCustom":true,"options":[{"id":"prod","label":"生产环境 🚀"},{"id":"staging","label":"预发环境"}]}`
	final := "好的，部署到生产环境。完成✅"
	hf.pushHabit(habit{chunkBytes: 1, reasoning: "内部推理 hidden-chain"}, turn{text: text, calls: []call{{id: "call_zh", name: "ask_user", args: args}}})
	hf.pushHabit(habit{chunkBytes: 2}, turn{text: final})

	p := e.ask("", "部署")
	require.Equal(t, text, deltas(t, p.events), "events: the streamed text is byte-identical")
	require.Equal(t, "选择部署环境（生产/预发）", p.req.Title)
	require.Equal(t, "生产环境 🚀", p.req.Options[0].Label)
	calls := named(p.events, "tool_call")
	require.Len(t, calls, 1)
	var tc struct{ Arguments string }
	require.NoError(t, calls[0].Decode(&tc))
	require.Equal(t, args, tc.Arguments, "the arguments reach the event byte-identical")

	custom := "请在凌晨两点后部署，注意回滚方案 🙏"
	evs := e.answer(body(p.sessionID, p.req.ID, []string{"prod"}, custom))
	require.Equal(t, final, deltas(t, evs))

	// Store: the transcript holds the same bytes.
	tr := e.transcript(p.sessionID)
	var assistant []string
	for _, m := range tr.Messages {
		if m.Role == "assistant" {
			assistant = append(assistant, m.Content)
		}
	}
	require.Equal(t, []string{text, final}, assistant)
	require.Equal(t, "选择部署环境（生产/预发）", tr.Interactions[0].Request.Title)

	// The model got the person's text back byte-identical.
	reqs := e.waitRequests(2)
	require.NoError(t, reqs[1].err)
	require.Equal(t, custom, content(t, reqs[1].last().content).CustomInput)
	require.Equal(t, []call{{id: "call_zh", name: "ask_user", args: args}}, reqs[1].messages[len(reqs[1].messages)-2].calls)

	// Audit: the free text only as its length in characters and its hash, of
	// exactly those bytes.
	sum := sha256.Sum256([]byte(custom))
	tv := e.trace(p.sessionID)
	var found bool
	for _, a := range tv.Audit {
		if a.Action != "answered" {
			continue
		}
		var s struct {
			CustomInputLen    int    `json:"customInputLen"`
			CustomInputSha256 string `json:"customInputSha256"`
		}
		require.NoError(t, json.Unmarshal(a.Summary, &s))
		require.Equal(t, utf8.RuneCountInString(custom), s.CustomInputLen)
		require.Equal(t, hex.EncodeToString(sum[:]), s.CustomInputSha256)
		found = true
	}
	require.True(t, found, "an answered audit entry")

	// The reasoning travels only in the reasoning field of its message
	// event (TestReasoningAskUserCycle); never in text, deltas or trace.
	for _, raw := range [][]byte{mustMarshal(t, tr), mustMarshal(t, tv), mustMarshal(t, withoutReasoning(t, p.events)), mustMarshal(t, withoutReasoning(t, evs))} {
		require.NotContains(t, string(raw), "\uFFFD")
		require.NotContains(t, string(raw), "hidden-chain", "reasoning never enters the answer")
	}
}

func TestHabitCutStreamRetriedNothingHalfApplied(t *testing.T) {
	t.Parallel()
	e, hf := setupHabits(t, "", 2, time.Millisecond)
	// The first attempt dies after a little text, with a tool call that must
	// never be applied; the retry carries the real turn.
	hf.pushHabit(habit{cut: true}, turn{text: "第一次尝试的文字很长很长", calls: []call{{id: "call_ghost", name: "ask_user", args: singleArgs}}})
	hf.pushHabit(habit{}, turn{text: "第二次", calls: []call{{id: "call_real", name: "ask_user", args: singleArgs}}})

	p := e.ask("", "帮我改代码")
	require.Len(t, named(p.events, "tool_call"), 1)
	require.Len(t, named(p.events, "user_input_required"), 1)
	var tc struct{ ToolCallID string }
	require.NoError(t, one(t, p.events, "tool_call").Decode(&tc))
	require.Equal(t, "call_real", tc.ToolCallID)
	require.Equal(t, []string{"第二次"}, assistantMessages(t, p.events), "the stored message is the successful attempt's")

	calls := e.trace(p.sessionID).kinds("model_call")
	require.Len(t, calls, 1)
	require.EqualValues(t, 1, calls[0]["retries"])
	require.Len(t, e.pending(p.sessionID).Pending.ToolCallID, len("call_real"))
}

func TestHabitRetryAfterThenExhausted(t *testing.T) {
	t.Parallel()
	key := "sk-secret-" + strings.Repeat("k", 24)
	// A base backoff of an hour: a retry happens within the call only when
	// the server's Retry-After is honoured.
	e, hf := setupHabits(t, key, 2, time.Hour)
	hf.pushHabit(habit{status: http.StatusTooManyRequests, retryAfter: "0"}, turn{})
	hf.pushHabit(habit{}, turn{text: "限流之后"})
	sid, _, evs := e.chat("", "你好")
	require.Equal(t, "限流之后", deltas(t, evs))

	// Three 503 answers with Retry-After: 0 exhaust two retries; the run ends
	// with a clear error event and applies nothing.
	for range 3 {
		hf.pushHabit(habit{status: http.StatusServiceUnavailable, retryAfter: "0"}, turn{})
	}
	_, _, evs = e.chat(sid, "再来")
	errEv := one(t, evs, "error")
	var ee struct{ Code, Message string }
	require.NoError(t, errEv.Decode(&ee))
	require.Equal(t, "model_error", ee.Code)
	require.Contains(t, ee.Message, "503")
	require.Contains(t, ee.Message, "attempt 3 of 3")
	require.Empty(t, named(evs, "tool_call"))
	require.Empty(t, assistantMessages(t, evs))
	var done struct{ Status string }
	require.NoError(t, one(t, evs, "done").Decode(&done))
	require.Equal(t, "failed", done.Status)

	// The failure is part of the transcript: a reload shows it with its code
	// and message, after the failed run's own user message; the earlier run,
	// which completed, has no error.
	var tr api.Transcript
	e.get("/api/sessions/"+sid, &tr)
	require.Len(t, tr.Errors, 1)
	require.Equal(t, "model_error", tr.Errors[0].Code)
	require.Equal(t, ee.Message, tr.Errors[0].Message)
	require.False(t, tr.Errors[0].At.IsZero())
	failedRun := tr.Errors[0].RunID
	var userOfFailed []string
	for _, m := range tr.Messages {
		if m.RunID == failedRun && m.Role == api.RoleUser {
			userOfFailed = append(userOfFailed, m.Content)
		}
	}
	require.Equal(t, []string{"再来"}, userOfFailed)

	tv := e.trace(sid)
	calls := tv.kinds("model_call")
	require.Len(t, calls, 2)
	require.EqualValues(t, 1, calls[0]["retries"])
	require.NotEmpty(t, calls[0]["finishReason"])
	require.EqualValues(t, 2, calls[1]["retries"])
	require.Contains(t, calls[1]["error"], "503")
	for _, c := range calls {
		require.Equal(t, e.model.name()+":fake-model", c["provider"])
		require.Equal(t, "fake-model", c["model"])
		require.Equal(t, []any{"ask_user", "AskUser"}, c["tools"])
		require.Contains(t, c, "latencyMs")
		require.Contains(t, c, "messageCount")
	}
	require.EqualValues(t, 1, calls[0]["messageCount"].(float64)-countSystem(e.waitRequests(1)[0]))

	// The key went to the model server, and nowhere a person can read.
	require.Len(t, e.model.requests(), 5)
	require.Contains(t, hf.sentKey(0), key)
	require.NotContains(t, string(mustMarshal(t, tv)), key)
	require.NotContains(t, string(mustMarshal(t, e.transcript(sid))), key)
	for _, ev := range evs {
		require.NotContains(t, string(ev.Data), key)
	}
}

// assistantMessages are the contents of the assistant "message" events.
func assistantMessages(t *testing.T, evs []lubantest.Event) []string {
	t.Helper()
	var out []string
	for _, ev := range named(evs, "message") {
		var m struct{ Role, Content string }
		require.NoError(t, ev.Decode(&m))
		if m.Role == "assistant" {
			out = append(out, m.Content)
		}
	}
	return out
}

// countSystem is 1 when the request starts with a system message.
func countSystem(r wireRequest) float64 {
	if len(r.messages) > 0 && r.messages[0].role == "system" {
		return 1
	}
	return 0
}

func mustMarshal(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	require.NoError(t, err)
	return b
}

func TestHabitTimeoutPerModelCall(t *testing.T) {
	t.Parallel()
	e, hf := setupHabits(t, "", 3, time.Millisecond, 300*time.Millisecond)
	release := make(chan struct{})
	t.Cleanup(func() { close(release) })
	hf.hang(release) // the model server accepts the request and never answers

	_, _, evs := e.chat("", "你好")
	var ee struct{ Code, Message string }
	require.NoError(t, one(t, evs, "error").Decode(&ee))
	require.Equal(t, "model_error", ee.Code)
	require.Contains(t, ee.Message, "deadline exceeded")
	var done struct{ Status string }
	require.NoError(t, one(t, evs, "done").Decode(&done))
	require.Equal(t, "failed", done.Status)
	require.Len(t, e.model.requests(), 1, "the timeout bounds the whole call: no retry after it")
}
