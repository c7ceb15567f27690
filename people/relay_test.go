package people_test

import (
	"bufio"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/lubanhq/luban/api"
	"github.com/lubanhq/luban/people"
)

// TestSlackRelayRecipe runs the Slack recipe of docs/notifications.md as
// shipped (examples/slack-relay/relay.mjs, npm ci by scripts/test.sh)
// between a dispatcher and a fake Slack incoming webhook: a question
// becomes one Slack message naming the session and the question; Slack's
// first failure makes the relay answer 502 and luban retry with the same
// webhook-id; a forged request is refused with 401 and never reaches Slack.
func TestSlackRelayRecipe(t *testing.T) {
	t.Parallel()
	dir, err := filepath.Abs("../examples/slack-relay")
	require.NoError(t, err)
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "standardwebhooks")); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("examples/slack-relay is not installed (scripts/test.sh runs npm ci there)")
		}
		t.Skipf("run (cd %s && npm ci)", dir)
	}
	var mu sync.Mutex
	var texts []string
	slackCalls := 0
	slack := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var m struct {
			Text string `json:"text"`
		}
		b, _ := io.ReadAll(r.Body)
		require.NoError(t, json.Unmarshal(b, &m), "%s", b)
		mu.Lock()
		defer mu.Unlock()
		slackCalls++
		if slackCalls == 1 {
			w.WriteHeader(http.StatusInternalServerError)
			return
		}
		texts = append(texts, m.Text)
		w.WriteHeader(http.StatusOK)
	}))
	defer slack.Close()

	secret := newSecret(t)
	cmd := exec.Command("node", "relay.mjs")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "LUBAN_WEBHOOK_SECRET="+secret, "SLACK_WEBHOOK_URL="+slack.URL, "LUBAN_URL=https://luban.example", "PORT=0")
	out, err := cmd.StdoutPipe()
	require.NoError(t, err)
	cmd.Stderr = os.Stderr
	require.NoError(t, cmd.Start())
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	sc := bufio.NewScanner(out)
	require.True(t, sc.Scan(), "the relay did not start")
	relay, ok := strings.CutPrefix(sc.Text(), "relay listening on ")
	require.True(t, ok, "relay said %q", sc.Text())
	go func() { _, _ = io.Copy(io.Discard, out) }()

	// A forged request: 401, Slack never called.
	forged, err := http.NewRequest("POST", relay, strings.NewReader(`{"type":"interaction.requested","timestamp":"2026-01-01T00:00:00Z","data":{}}`))
	require.NoError(t, err)
	forged.Header.Set("webhook-id", "msg_forged")
	forged.Header.Set("webhook-timestamp", "1767225600")
	forged.Header.Set("webhook-signature", "v1,bm90IGEgc2lnbmF0dXJl")
	resp, err := http.DefaultClient.Do(forged)
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, 401, resp.StatusCode)

	s := start(t)
	rv := newReceiver(t, nil) // the relay answers; this one only proves the hook fired for the other types
	d, err := people.NewDispatcher(people.DispatcherOptions{Store: s.Store, ID: "inst_test", Backoff: fast, Hooks: []people.Hook{
		{URL: relay, Secret: secret, Events: []string{api.WebhookInteractionRequested}},
		{URL: rv.srv.URL, Secret: newSecret(t), Events: []string{api.WebhookInteractionRequested}},
	}})
	require.NoError(t, err)
	stop := runDispatcher(t, d)
	sess, req := chatAs(t, s, "test-token", "deploy the site")
	rv.waitDelivered(t, 1)
	require.Eventually(t, func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(texts) == 1
	}, waitFor, 10*time.Millisecond)
	stop()

	mu.Lock()
	defer mu.Unlock()
	require.Equal(t, 2, slackCalls, "the failed call and its retry, nothing more")
	require.Equal(t, "luban needs you in “deploy the site”: *"+req.Title+"* — https://luban.example/s/"+sess, texts[0])
	list, err := s.Store.WebhookList(t.Context(), sess)
	require.NoError(t, err)
	attempts := map[string]int{}
	for _, dl := range list {
		if dl.Hook == relay {
			attempts[dl.Status] = dl.Attempts
			require.Equal(t, 204, dl.LastCode)
		}
	}
	require.Equal(t, map[string]int{"delivered": 2}, attempts, "one delivery to the relay: 502, then 204, same webhook-id")
}
