package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"
)

// fakeModel is a zero-latency OpenAI-compatible Chat Completions endpoint.
// A conversation whose last message is the user's gets one ask_user tool
// call; one whose last message is a tool result gets final text. It stamps
// two instants per conversation (keyed by the user's message, which the
// client makes unique): when the tool-call chunk was flushed, and when the
// request that follows an answer arrived.
type fakeModel struct {
	mu      sync.Mutex
	chunkAt map[string]time.Time
	resumed map[string]chan time.Time
}

func newFakeModel() *fakeModel {
	return &fakeModel{chunkAt: map[string]time.Time{}, resumed: map[string]chan time.Time{}}
}

// expect registers key before its continue is sent; the channel receives
// the arrival time of the model request that follows the answer.
func (f *fakeModel) expect(key string) <-chan time.Time {
	ch := make(chan time.Time, 1)
	f.mu.Lock()
	f.resumed[key] = ch
	f.mu.Unlock()
	return ch
}

// takeChunk returns (and forgets) when key's tool-call chunk was flushed.
func (f *fakeModel) takeChunk(key string) (time.Time, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	t, ok := f.chunkAt[key]
	delete(f.chunkAt, key)
	return t, ok
}

const benchAsk = `{"title":"请选择执行方式","mode":"single","options":[{"id":"safe","label":"先分析","recommended":true},{"id":"implement","label":"直接实现"}]}`

func (f *fakeModel) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	arrived := time.Now()
	body, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	// Only what the answer depends on is decoded (into types, not into
	// interface values: the benchmark measures luban, not this decoder);
	// the whole body is still checked to be valid JSON.
	var req struct {
		Messages []struct {
			Role    string `json:"role"`
			Content string `json:"content"`
		} `json:"messages"`
	}
	if err := json.Unmarshal(body, &req); err != nil || len(req.Messages) == 0 {
		http.Error(w, "bad request", http.StatusBadRequest)
		return
	}
	key := ""
	for _, m := range req.Messages {
		if m.Role == "user" {
			key = m.Content
		}
	}
	resume := req.Messages[len(req.Messages)-1].Role == "tool"
	if resume {
		f.mu.Lock()
		ch := f.resumed[key]
		delete(f.resumed, key)
		f.mu.Unlock()
		if ch != nil {
			ch <- arrived
		}
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.WriteHeader(http.StatusOK)
	rc := http.NewResponseController(w)
	chunk := func(delta, finish string) {
		fmt.Fprintf(w, `data: {"id":"chatcmpl-bench","object":"chat.completion.chunk","created":%d,"model":"bench","choices":[{"index":0,"delta":%s,"finish_reason":%s}]}`+"\n\n",
			arrived.Unix(), delta, finish)
	}
	if resume {
		chunk(`{"role":"assistant","content":"好的，先分析。"}`, "null")
		chunk(`{}`, `"stop"`)
	} else {
		args, _ := json.Marshal(benchAsk)
		chunk(`{"role":"assistant","content":"我需要问一下。"}`, "null")
		chunk(`{"tool_calls":[{"index":0,"id":"call_`+strings.ReplaceAll(key, " ", "_")+`","type":"function","function":{"name":"ask_user","arguments":`+string(args)+`}}]}`, "null")
		_ = rc.Flush()
		f.mu.Lock()
		f.chunkAt[key] = time.Now()
		f.mu.Unlock()
		chunk(`{}`, `"tool_calls"`)
	}
	fmt.Fprint(w, "data: [DONE]\n\n")
	_ = rc.Flush()
}
