package crashtest

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"github.com/stretchr/testify/require"

	"github.com/lubanhq/luban/internal/testkit/fakeopenai"
	"github.com/lubanhq/luban/internal/testkit/lubantest"
	"github.com/lubanhq/luban/store"
	"github.com/lubanhq/luban/store/sqlite"
)

// hookLine is one request as people/testdata/verify/receiver.mjs saw it.
type hookLine struct {
	ID        string `json:"id"`
	Type      string `json:"type"`
	RequestID string `json:"requestId"`
	Verified  bool   `json:"verified"`
	Error     string `json:"error"`
	N         int    `json:"n"`
}

// startVerifyingReceiver runs the Node receiver that checks each request
// with the official npm standardwebhooks library before answering 204
// (401 when it does not verify). It returns its URL and its request lines.
func startVerifyingReceiver(t *testing.T, secret string) (string, chan hookLine, func()) {
	t.Helper()
	dir, err := filepath.Abs("../../../people/testdata/verify")
	require.NoError(t, err)
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "standardwebhooks")); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("the npm standardwebhooks package is not installed in %s (scripts/test.sh runs npm ci there)", dir)
		}
		t.Skipf("npm standardwebhooks not installed: run (cd %s && npm ci)", dir)
	}
	cmd := exec.Command("node", "receiver.mjs")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "WEBHOOK_SECRET="+secret)
	stdin, err := cmd.StdinPipe()
	require.NoError(t, err)
	out, err := cmd.StdoutPipe()
	require.NoError(t, err)
	cmd.Stderr = os.Stderr
	require.NoError(t, cmd.Start())
	stop := sync.OnceFunc(func() {
		_ = stdin.Close() // the receiver exits when its stdin ends
		_ = cmd.Wait()
	})
	t.Cleanup(stop)
	sc := bufio.NewScanner(out)
	require.True(t, sc.Scan(), "the receiver did not start")
	url, ok := strings.CutPrefix(sc.Text(), "listening ")
	require.True(t, ok, "receiver said %q", sc.Text())
	lines := make(chan hookLine, 100)
	go func() {
		defer close(lines)
		for sc.Scan() {
			var l hookLine
			if json.Unmarshal(sc.Bytes(), &l) == nil {
				lines <- l
			}
		}
		_, _ = io.Copy(io.Discard, out)
	}()
	return url, lines, stop
}

// TestWebhookKill9AfterCommitBeforeSend: luban kills itself with SIGKILL
// right after the question (and its outbox row) committed and before any
// request left: before the feed entry was fanned out (no delivery row
// yet), and after the fan-out committed a delivery with its webhook-id but
// before it was sent. A new process on the same file delivers it; the
// receiver, verifying with the official npm standardwebhooks library,
// accepts each webhook-id exactly once (docs/design.md §12), and after the fan-out
// the id is the one the dead process had stored.
func TestWebhookKill9AfterCommitBeforeSend(t *testing.T) {
	for _, point := range []string{"webhook_fanout", "webhook_send"} {
		t.Run(point, func(t *testing.T) {
			t.Parallel()
			fake := fakeopenai.New(t)
			fake.Push(askTurn("call_hook"))
			var key [32]byte
			_, err := rand.Read(key[:])
			require.NoError(t, err)
			secret := "whsec_" + base64.StdEncoding.EncodeToString(key[:])
			url, lines, stopReceiver := startVerifyingReceiver(t, secret)

			dir := t.TempDir()
			cfg := filepath.Join(dir, "luban.yaml")
			require.NoError(t, os.WriteFile(cfg, []byte("webhooks:\n  - url: "+url+"/hook\n    secret: "+secret+
				"\n    events: [interaction.requested]\n"), 0o600))
			db := filepath.Join(dir, "luban.db")
			// p1's attempt timeout of 1s makes the lease it dies holding
			// (3 × the timeout) run out soon; p2 keeps the default (10s),
			// so that a receiver a loaded machine slows down is not a
			// failed attempt and a second request.
			env := []string{"LUBAN_CONFIG=" + cfg}
			opts := lubantest.ProcOptions{Bin: lubanBin, Name: "p1", DB: db, ModelURL: fake.URL(),
				Env: append(env, "LUBAN_WEBHOOK_TIMEOUT=1s", "LUBAN_FAULT="+point)}
			p1 := lubantest.StartProc(t, opts)
			// The process may die before the client reads the question,
			// or before the stream's first write reached it.
			var evs []lubantest.Event
			if st, err := p1.API.TryChat("", userMessage); err == nil {
				evs, _ = st.Until("user_input_required", waitEvents)
				st.Close()
			}
			p1.WaitFault()
			select {
			case l := <-lines:
				t.Fatalf("a request left before the kill: %+v", l)
			default:
			}

			// What the dead process left in the database: the question,
			// and its outbox row not fanned out, or its delivery not sent.
			ctx := context.Background()
			sdb, err := sqlite.Open(ctx, db, nil)
			require.NoError(t, err)
			var sid struct{ SessionID string }
			if sess, ok := lubantest.Find(evs, "session"); ok {
				require.NoError(t, sess.Decode(&sid))
			} else {
				l, err := sdb.SessionList(ctx, &store.SessionListParams{Owner: lubantest.TokenPrincipal("test-token")})
				require.NoError(t, err)
				require.Len(t, l, 1, "the session the client started")
				sid.SessionID = l[0].ID
			}
			its, err := sdb.InteractionList(ctx, sid.SessionID)
			require.NoError(t, err)
			require.Len(t, its, 1)
			require.Equal(t, "pending", its[0].Status)
			un, err := sdb.FeedListUnfanned(ctx, 10)
			require.NoError(t, err)
			stored, err := sdb.WebhookList(ctx, sid.SessionID)
			require.NoError(t, err)
			if point == "webhook_fanout" {
				require.Len(t, un, 1, "the question's feed entry waits in the outbox")
				require.Equal(t, "user_input_required", un[0].Name)
				require.Empty(t, stored)
			} else {
				require.Empty(t, un, "the fan-out committed")
				require.Len(t, stored, 1)
				require.Equal(t, store.WebhookPending, stored[0].Status)
				require.Zero(t, stored[0].Attempts)
			}
			require.NoError(t, sdb.Close())

			opts.Name, opts.Env = "p2", env
			p2 := lubantest.StartProc(t, opts)
			var got hookLine
			select {
			case got = <-lines:
			case <-time.After(waitEvents):
				t.Fatalf("the webhook was not delivered after the restart:\n%s", p2.Log())
			}
			require.True(t, got.Verified, "the official verifier refused it: %s", got.Error)
			require.Equal(t, "interaction.requested", got.Type)
			require.Equal(t, 1, got.N)
			require.Equal(t, its[0].ID, got.RequestID)
			if len(stored) > 0 {
				require.Equal(t, stored[0].ID, got.ID, "the webhook-id the dead process stored")
			}
			// The delivery as /trace shows it: one attempt, delivered, that id.
			var tr struct {
				Trace []struct {
					Kind string         `json:"kind"`
					Data map[string]any `json:"data"`
				} `json:"trace"`
			}
			var hooks []map[string]any
			deadline := time.Now().Add(waitEvents)
			for len(hooks) == 0 && time.Now().Before(deadline) {
				require.Equal(t, 200, p2.API.JSON("GET", "/api/sessions/"+sid.SessionID+"/trace", nil, &tr))
				for _, e := range tr.Trace {
					if e.Kind == "webhook" {
						hooks = append(hooks, e.Data)
					}
				}
			}
			require.Len(t, hooks, 1, "the trace records the attempt")
			require.Equal(t, got.ID, hooks[0]["webhookId"])
			require.Equal(t, "delivered", hooks[0]["status"])
			require.EqualValues(t, 1, hooks[0]["attempt"])
			require.EqualValues(t, 204, hooks[0]["code"])

			// And in the process's /metrics, parsed as Prometheus text.
			mr, err := http.Get(p2.URL + "/metrics")
			require.NoError(t, err)
			parser := expfmt.NewTextParser(model.UTF8Validation)
			fams, err := parser.TextToMetricFamilies(mr.Body)
			mr.Body.Close()
			require.NoError(t, err)
			outcomes := map[string]float64{}
			for _, m := range fams["luban_webhook_deliveries_total"].GetMetric() {
				for _, l := range m.GetLabel() {
					if l.GetName() == "outcome" {
						outcomes[l.GetValue()] = m.GetCounter().GetValue()
					}
				}
			}
			require.Equal(t, map[string]float64{"delivered": 1}, outcomes)

			p2.Term() // waits for attempts in flight
			stopReceiver()
			for l := range lines {
				t.Errorf("a second request: %+v", l)
			}
		})
	}
}
