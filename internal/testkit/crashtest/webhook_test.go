package crashtest

import (
	"crypto/rand"
	"encoding/base64"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/lubanhq/luban/internal/testkit/fakeopenai"
	"github.com/lubanhq/luban/internal/testkit/lubantest"
)

// TestWebhookKill9BetweenCommitAndSend: the question is committed, its
// webhook is on its way (the receiver holds the first request open, so
// luban has not recorded any answer), and luban is killed with kill -9. A
// new process on the same file sends the same webhook-id again once the
// dead process's lease has run out (3 × LUBAN_WEBHOOK_TIMEOUT), and the
// receiver accepts that id exactly once (docs/design.md §12).
func TestWebhookKill9BetweenCommitAndSend(t *testing.T) {
	t.Parallel()
	fake := fakeopenai.New(t)
	fake.Push(askTurn("call_hook"))

	var mu sync.Mutex
	seen := map[string]int{}     // requests per webhook-id
	accepted := map[string]int{} // 2xx answers per webhook-id
	arrived := make(chan string, 10)
	delivered := make(chan string, 10)
	rv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.ReadAll(r.Body)
		id := r.Header.Get("webhook-id")
		mu.Lock()
		seen[id]++
		n := seen[id]
		mu.Unlock()
		arrived <- id
		if n == 1 {
			<-r.Context().Done() // held open until the sender is gone
			return
		}
		mu.Lock()
		accepted[id]++
		mu.Unlock()
		w.WriteHeader(http.StatusNoContent)
		delivered <- id
	}))
	defer rv.Close()

	var key [32]byte
	_, err := rand.Read(key[:])
	require.NoError(t, err)
	dir := t.TempDir()
	cfg := filepath.Join(dir, "luban.yaml")
	require.NoError(t, os.WriteFile(cfg, []byte("webhooks:\n  - url: "+rv.URL+"/hook\n    secret: whsec_"+base64.StdEncoding.EncodeToString(key[:])+
		"\n    events: [interaction.requested]\n"), 0o600))
	db := filepath.Join(dir, "luban.db")
	opts := lubantest.ProcOptions{Bin: lubanBin, Name: "p1", DB: db, ModelURL: fake.URL(),
		Env: []string{"LUBAN_CONFIG=" + cfg, "LUBAN_WEBHOOK_TIMEOUT=2s"}}
	p1 := lubantest.StartProc(t, opts)
	st := p1.API.Chat("", userMessage)
	_, err = st.Until("user_input_required", waitEvents)
	require.NoError(t, err)
	st.Close()

	var id string
	select {
	case id = <-arrived:
	case <-time.After(waitEvents):
		t.Fatal("the webhook never arrived")
	}
	p1.Kill9()

	// p2 keeps the default timeout (10s): a second attempt of its own,
	// after one a loaded machine slowed past 2s, would be a third request.
	opts.Name, opts.Env = "p2", []string{"LUBAN_CONFIG=" + cfg}
	p2 := lubantest.StartProc(t, opts)
	select {
	case got := <-delivered:
		require.Equal(t, id, got, "the same webhook-id after the restart")
	case <-time.After(waitEvents):
		t.Fatalf("the webhook was not sent again after the restart:\n%s", p2.Log())
	}
	p2.Term() // waits for attempts in flight: a second send would be seen
	mu.Lock()
	defer mu.Unlock()
	require.Equal(t, map[string]int{id: 1}, accepted, "accepted once per id")
	require.Equal(t, 2, seen[id])
}
