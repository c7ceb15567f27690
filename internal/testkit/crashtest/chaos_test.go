package crashtest

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/lubanhq/luban/internal/testkit/fakeopenai"
	"github.com/lubanhq/luban/internal/testkit/lubantest"
)

// The chaos conversation: every session asks chaosSteps questions, each in a
// turn that streams text and also calls the non-idempotent record_note tool,
// then ends with a text. The fake answers from the request alone (how many
// ToolResults it already holds), so a model call made again after a crash
// gets the same turn.
const chaosSteps = 2

func chaosStepText(k int) string {
	return fmt.Sprintf("第 %d 步：先看一眼代码，再问你一个问题。", k)
}

func chaosEndText(msg string) string { return "完成：" + msg }

// chaosTurn is the fake model of the chaos test.
func chaosTurn(r *fakeopenai.Request) fakeopenai.Turn {
	results, msg := 0, ""
	for _, m := range r.Messages {
		switch m["role"] {
		case "tool":
			results++
		case "user":
			if msg == "" {
				msg, _ = m["content"].(string)
			}
		}
	}
	k := results/2 + 1
	if k > chaosSteps {
		return fakeopenai.Turn{Text: chaosEndText(msg), ChunkBytes: 5}
	}
	note, _ := json.Marshal(map[string]string{"note": fmt.Sprintf("%s / step %d", msg, k)})
	return fakeopenai.Turn{
		Text:       chaosStepText(k),
		ChunkBytes: 3,
		ToolCalls: []fakeopenai.ToolCall{
			{ID: fmt.Sprintf("call_note_%d", k), Name: "record_note", Arguments: string(note)},
			{ID: fmt.Sprintf("call_ask_%d", k), Name: "ask_user", Arguments: askArgs},
		},
	}
}

// modelGate holds the next model request in the fake, once armed, until the
// test has killed the process that sent it: a kill while the model call is
// in flight.
type modelGate struct {
	mu                sync.Mutex
	armed             bool
	inflight, release chan struct{}
}

func (g *modelGate) arm() (inflight, release chan struct{}) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.armed, g.inflight, g.release = true, make(chan struct{}), make(chan struct{})
	return g.inflight, g.release
}

// wait blocks an armed request until release; others pass.
func (g *modelGate) wait() {
	g.mu.Lock()
	if !g.armed {
		g.mu.Unlock()
		return
	}
	g.armed = false
	inflight, release := g.inflight, g.release
	g.mu.Unlock()
	close(inflight)
	<-release
}

// chaos is the state of one chaos run: the sessions started so far and the
// one being driven.
type chaos struct {
	t        *testing.T
	gate     *modelGate
	rng      *rand.Rand
	known    map[string]bool
	sessions []string
	current  string
	chats    int
}

// TestChaosKill9 kills the real server process with kill -9 at points chosen
// by a seeded RNG — after a random number of SSE events, after a random
// number of bytes of a stream, or once a stream has reached its pause or end
// — across LUBAN_CHAOS_CYCLES cycles (default 24) of new chats, answers and
// followed runs, restarting it on the same SQLite file each time. Then one
// last process drives every session to its end, and nothing may be lost or
// doubled: every tool call has exactly one ToolResult (in the transcript and
// in every model request), every question was requested and resolved once,
// the event log's ids are 1..n, every step's text and the final text are
// stored whole and once, and the non-idempotent tool wrote each note at most
// once. The seed is printed; LUBAN_CHAOS_SEED=<seed> replays a failure.
func TestChaosKill9(t *testing.T) {
	t.Parallel()
	seed := uint64(time.Now().UnixNano())
	if s := os.Getenv("LUBAN_CHAOS_SEED"); s != "" {
		v, err := strconv.ParseUint(s, 10, 64)
		require.NoError(t, err, "LUBAN_CHAOS_SEED")
		seed = v
	}
	cycles := 24
	if s := os.Getenv("LUBAN_CHAOS_CYCLES"); s != "" {
		v, err := strconv.Atoi(s)
		require.NoError(t, err, "LUBAN_CHAOS_CYCLES")
		cycles = v
	}
	t.Logf("chaos: seed %d, %d cycles; replay with LUBAN_CHAOS_SEED=%d LUBAN_CHAOS_CYCLES=%d go test ./internal/testkit/crashtest -run TestChaosKill9", seed, cycles, seed, cycles)

	b := setup(t)
	gate := &modelGate{}
	b.fake.SetHandler(func(r *fakeopenai.Request) fakeopenai.Turn {
		gate.wait()
		return chaosTurn(r)
	})
	ws := t.TempDir()
	c := &chaos{t: t, gate: gate, rng: rand.New(rand.NewPCG(seed, 0x6c7562616e)), known: map[string]bool{}}
	for i := range cycles {
		p := startChaosProc(t, fmt.Sprintf("p%d", i+1), b, ws)
		c.adopt(p)
		c.cycle(p, i+1)
	}

	last := startChaosProc(t, "last", b, ws)
	c.adopt(last)
	require.NotEmpty(t, c.sessions, "the cycles started at least one session")
	for _, sid := range c.sessions {
		c.finish(last, sid)
	}
	for _, sid := range c.sessions {
		tr := checkRun(t, last, sid, "completed", b.fake)
		checkChaosTranscript(t, sid, tr)
	}
	notes, err := os.ReadFile(filepath.Join(ws, "luban-notes.txt"))
	if err == nil {
		seen := map[string]bool{}
		for _, line := range strings.Split(strings.TrimSpace(string(notes)), "\n") {
			require.False(t, seen[line], "record_note ran twice for %q", line)
			seen[line] = true
		}
	}
	t.Logf("chaos: %d sessions driven to their end across %d kill -9, %d model requests", len(c.sessions), cycles, len(b.fake.Requests()))
}

// startChaosProc is startProc with a lease of half a second, so a run left
// by a killed process is taken over sooner.
func startChaosProc(t *testing.T, name string, b *testBundle, ws string) *proc {
	t.Helper()
	return lubantest.StartProc(t, lubantest.ProcOptions{
		Bin: lubanBin, Name: name, DB: b.db, ModelURL: b.fake.URL(), APIKey: "sk-crashtest",
		Lease: "500ms", Heartbeat: "500ms", Workspace: ws, Env: []string{"LUBAN_TEST_TOOLS=1"},
	})
}

// adopt learns the sessions the server has that the client never saw the
// session event of (the process died first): the newest one is the one
// being driven.
func (c *chaos) adopt(p *proc) {
	var l struct {
		Sessions []struct{ ID string } `json:"sessions"`
	}
	require.Equal(c.t, http.StatusOK, p.API.JSON("GET", "/api/sessions", nil, &l))
	for i := len(l.Sessions) - 1; i >= 0; i-- {
		if id := l.Sessions[i].ID; !c.known[id] {
			c.known[id] = true
			c.sessions = append(c.sessions, id)
			c.current = id
		}
	}
}

// state is a session's status and the id of its last event.
func (c *chaos) state(p *proc, sid string) (string, int64) {
	var tr struct {
		Session struct {
			Status string `json:"status"`
		} `json:"session"`
		LastEventID int64 `json:"lastEventId"`
	}
	require.Equal(c.t, http.StatusOK, p.API.JSON("GET", "/api/sessions/"+sid, nil, &tr))
	return tr.Session.Status, tr.LastEventID
}

func (c *chaos) status(p *proc, sid string) string {
	st, _ := c.state(p, sid)
	return st
}

// cycle does one thing a client does — start a chat, answer the pending
// question, or follow a run still going — reads the response up to the kill
// point the RNG picks, and kills the process there with kill -9.
func (c *chaos) cycle(p *proc, n int) {
	t := c.t
	action, sid := "chat", c.current
	var pending map[string]any
	var after int64
	status := ""
	if sid != "" {
		// The last event id is read before the pending question: a run that
		// pauses after this check announces it in an event after the id.
		status, after = c.state(p, sid)
	}
	if sid != "" && status != "completed" {
		if pending = getPending(t, p, sid).Pending; pending != nil {
			action = "answer"
		} else {
			action = "follow"
		}
	}
	// A chat and an answer each lead to a model call; a quarter of them are
	// killed while that call is in flight.
	var inflight, release chan struct{}
	if action != "follow" && c.rng.IntN(4) == 0 {
		inflight, release = c.gate.arm()
		defer close(release)
	}
	var resp *http.Response
	var err error
	switch action {
	case "chat":
		sid = "(new)"
		c.chats++
		body, _ := json.Marshal(map[string]string{"sessionId": "", "message": fmt.Sprintf("chaos session %d", c.chats)})
		resp, err = p.Post("/api/chat", string(body))
	case "answer":
		resp, err = p.Post("/api/chat/continue", continueBody(sid, pending["id"].(string)))
	case "follow":
		resp = p.API.Request("GET", "/api/sessions/"+sid+"/events", nil, "", "Last-Event-ID", strconv.FormatInt(after, 10))
	}
	require.NoError(t, err, "cycle %d: %s", n, action)
	if resp.StatusCode != http.StatusOK {
		raw, _ := io.ReadAll(resp.Body)
		t.Fatalf("cycle %d: %s %s: %s %s", n, action, sid, resp.Status, raw)
	}
	defer resp.Body.Close()

	if inflight != nil {
		select {
		case <-inflight:
		case <-time.After(waitEvents):
			t.Fatalf("cycle %d: %s %s: no model call within %s", n, action, sid, waitEvents)
		}
		if action == "chat" {
			// The session event is written before the model is called.
			c.readEvents(p.API.Open(resp, p.Name+"-chat"), 1, false)
		}
		t.Logf("cycle %d: %s %s, kill -9 while the model call is in flight", n, action, sid)
		p.Kill9() // before the deferred release lets the fake answer
		return
	}

	switch mode := c.rng.IntN(3); mode {
	case 0:
		want := c.rng.IntN(12)
		st := p.API.Open(resp, fmt.Sprintf("%s-%s", p.Name, action))
		got := c.readEvents(st, want, action == "follow")
		t.Logf("cycle %d: %s %s, kill -9 after %d of %d SSE events", n, action, sid, len(got), want)
	case 1:
		want := c.rng.IntN(3000)
		got := readBytes(resp.Body, want)
		c.noteSession(got)
		t.Logf("cycle %d: %s %s, kill -9 after %d of %d bytes", n, action, sid, len(got), want)
	default:
		st := p.API.Open(resp, fmt.Sprintf("%s-%s", p.Name, action))
		got := c.readEvents(st, -1, action == "follow")
		t.Logf("cycle %d: %s %s, kill -9 once the stream paused or ended (%d events)", n, action, sid, len(got))
	}
	p.Kill9()
}

// readEvents reads up to max events (all when max < 0) or until the run
// pauses or ends, learning the session of a chat from its session event.
func (c *chaos) readEvents(st *lubantest.Stream, max int, follow bool) []lubantest.Event {
	ctx, cancel := context.WithTimeout(context.Background(), waitEvents)
	defer cancel()
	var evs []lubantest.Event
	for max < 0 || len(evs) < max {
		ev, err := st.Next(ctx)
		if err != nil {
			require.ErrorIs(c.t, err, io.EOF, "events so far: %v", lubantest.Names(evs))
			break
		}
		evs = append(evs, ev)
		if ev.Name == "session" {
			var s struct{ SessionID string }
			require.NoError(c.t, ev.Decode(&s))
			if !c.known[s.SessionID] {
				c.known[s.SessionID] = true
				c.sessions = append(c.sessions, s.SessionID)
			}
			c.current = s.SessionID
		}
		if follow && runPausedOrDone(ev) {
			break
		}
	}
	return evs
}

// runPausedOrDone tells a follower of the events after the session's last
// event id when to stop: at a question or at the end of the run.
func runPausedOrDone(ev lubantest.Event) bool {
	return ev.Name == "user_input_required" || ev.Name == "done"
}

// noteSession learns the session of a chat from the raw bytes read, when
// they hold its whole session event.
func (c *chaos) noteSession(raw []byte) {
	s := string(raw)
	i := strings.Index(s, "event: session\ndata: ")
	if i < 0 {
		return
	}
	line, _, ok := strings.Cut(s[i+len("event: session\ndata: "):], "\n")
	if !ok {
		return
	}
	var se struct{ SessionID string }
	if json.Unmarshal([]byte(line), &se) == nil && se.SessionID != "" {
		if !c.known[se.SessionID] {
			c.known[se.SessionID] = true
			c.sessions = append(c.sessions, se.SessionID)
		}
		c.current = se.SessionID
	}
}

// readBytes reads up to n bytes of body (fewer when the stream ends first).
func readBytes(body io.ReadCloser, n int) []byte {
	buf := make([]byte, n)
	done := make(chan int, 1)
	go func() {
		k, _ := io.ReadFull(body, buf)
		done <- k
	}()
	select {
	case k := <-done:
		return buf[:k]
	case <-time.After(waitEvents):
		body.Close()
		return buf[:<-done]
	}
}

// finish drives a session's run to its end on a process that stays up:
// answer each question, follow the run while it goes on.
func (c *chaos) finish(p *proc, sid string) {
	t := c.t
	for range 4 * (chaosSteps + 1) {
		status, after := c.state(p, sid)
		if status == "completed" {
			return
		}
		if pv := getPending(t, p, sid).Pending; pv != nil {
			resp, err := p.Post("/api/chat/continue", continueBody(sid, pv["id"].(string)))
			require.NoError(t, err)
			if resp.StatusCode != http.StatusOK {
				raw, _ := io.ReadAll(resp.Body)
				t.Fatalf("finish %s: continue: %s %s", sid, resp.Status, raw)
			}
			_, err = p.API.Open(resp, "last-continue").All(waitEvents)
			require.NoError(t, err)
			continue
		}
		st := p.API.Events(sid, after)
		c.readEvents(st, -1, true)
		st.Close()
	}
	var tr json.RawMessage
	p.API.JSON("GET", "/api/sessions/"+sid, nil, &tr)
	require.Equal(t, "completed", c.status(p, sid), "session %s did not reach its end: %s", sid, tr)
}

// checkChaosTranscript checks the conversation is whole and said once: the
// user's message, each step's text with its two calls and their two
// results, the final text.
func checkChaosTranscript(t *testing.T, sid string, tr transcript) {
	t.Helper()
	var user string
	var texts []string
	for _, m := range tr.Messages {
		switch m.Role {
		case "user":
			require.Empty(t, user, "session %s: a second user message", sid)
			user = m.Content
		case "assistant":
			texts = append(texts, m.Content)
		}
	}
	require.NotEmpty(t, user, "session %s: the user's message is lost", sid)
	want := make([]string, 0, chaosSteps+1)
	for k := 1; k <= chaosSteps; k++ {
		want = append(want, chaosStepText(k))
	}
	want = append(want, chaosEndText(user))
	require.Equal(t, want, texts, "session %s: every assistant text whole and once", sid)
}
