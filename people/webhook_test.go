package people_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"
	"github.com/stretchr/testify/require"

	"github.com/lubanhq/luban/api"
	"github.com/lubanhq/luban/people"
	"github.com/lubanhq/luban/store"
	"github.com/lubanhq/luban/store/postgres"
	"github.com/lubanhq/luban/store/postgres/pgtest"
)

// request is one webhook request as the receiver got it.
type request struct {
	Header http.Header
	Body   []byte
	Status int // what the receiver answered
}

// receiver is a real HTTP server on loopback. respond decides the status of
// the n-th request (1, 2, …) carrying a webhook-id; nil answers 204.
type receiver struct {
	srv     *httptest.Server
	mu      sync.Mutex
	got     []request
	seen    map[string]int
	respond func(id string, n int) int
	ch      chan request
}

func newReceiver(t *testing.T, respond func(id string, n int) int) *receiver {
	return newReceiverOn(t, nil, respond)
}

// newReceiverOn is newReceiver on listener ln (nil: a new loopback port).
func newReceiverOn(t *testing.T, ln net.Listener, respond func(id string, n int) int) *receiver {
	rv := &receiver{seen: map[string]int{}, respond: respond, ch: make(chan request, 1000)}
	rv.srv = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		id := r.Header.Get("webhook-id")
		rv.mu.Lock()
		rv.seen[id]++
		n := rv.seen[id]
		rv.mu.Unlock()
		status := http.StatusNoContent
		if rv.respond != nil {
			status = rv.respond(id, n)
		}
		req := request{Header: r.Header.Clone(), Body: body, Status: status}
		rv.mu.Lock()
		rv.got = append(rv.got, req)
		rv.mu.Unlock()
		w.WriteHeader(status)
		rv.ch <- req
	}))
	if ln != nil {
		rv.srv.Listener.Close()
		rv.srv.Listener = ln
	}
	rv.srv.Start()
	t.Cleanup(rv.srv.Close)
	return rv
}

// waitDelivered reads requests until n distinct webhook-ids were answered
// with a 2xx, and returns the accepted requests by id.
func (rv *receiver) waitDelivered(t *testing.T, n int) map[string]request {
	t.Helper()
	ok := map[string]request{}
	deadline := time.After(waitFor)
	for len(ok) < n {
		select {
		case r := <-rv.ch:
			if r.Status < 300 {
				ok[r.Header.Get("webhook-id")] = r
			}
		case <-deadline:
			t.Fatalf("%d of %d webhooks delivered", len(ok), n)
		}
	}
	return ok
}

func newSecret(t *testing.T) string {
	var b [32]byte
	_, err := rand.Read(b[:])
	require.NoError(t, err)
	return "whsec_" + base64.StdEncoding.EncodeToString(b[:])
}

// runDispatcher starts d.Run; the returned func stops it and waits for the
// attempts in flight.
func runDispatcher(t *testing.T, d *people.Dispatcher) func() {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); d.Run(ctx) }()
	stop := func() { cancel(); <-done }
	t.Cleanup(stop)
	return sync.OnceFunc(stop)
}

func fast(int) time.Duration { return time.Millisecond }

// verifyWithNode checks every request with the official npm
// standardwebhooks verifier (people/testdata/verify, installed by
// scripts/test.sh with npm ci).
func verifyWithNode(t *testing.T, secret string, reqs []request) {
	t.Helper()
	dir, err := filepath.Abs("testdata/verify")
	require.NoError(t, err)
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "standardwebhooks")); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("the npm standardwebhooks package is not installed in %s (scripts/test.sh runs npm ci there)", dir)
		}
		t.Skipf("npm standardwebhooks not installed: run (cd %s && npm ci)", dir)
	}
	type msg struct {
		Headers map[string]string `json:"headers"`
		Body    string            `json:"body"`
	}
	in := struct {
		Secret   string `json:"secret"`
		Messages []msg  `json:"messages"`
	}{Secret: secret}
	for _, r := range reqs {
		h := map[string]string{}
		for _, k := range []string{"webhook-id", "webhook-timestamp", "webhook-signature"} {
			h[k] = r.Header.Get(k)
		}
		in.Messages = append(in.Messages, msg{Headers: h, Body: string(r.Body)})
	}
	b, err := json.Marshal(in)
	require.NoError(t, err)
	cmd := exec.Command("node", filepath.Join(dir, "verify.mjs"))
	cmd.Dir = dir
	cmd.Stdin = bytes.NewReader(b)
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "official verifier: %s", out)
	require.Equal(t, len(reqs), strings.Count(string(out), "ok msg_"), "%s", out)
}

// TestWebhooksSignedAndVerified: a whole ask → answer → done cycle reaches
// a real receiver as interaction.requested, interaction.resolved and
// run.finished, signed per Standard Webhooks (checked by the Go library and
// by the official npm verifier), without the answer's free text, and each
// delivery shows in the session's trace.
func TestWebhooksSignedAndVerified(t *testing.T) {
	t.Parallel()
	s := start(t)
	rv := newReceiver(t, nil)
	secret := newSecret(t)
	d, err := people.NewDispatcher(people.DispatcherOptions{Store: s.Store, ID: "inst_test", Backoff: fast,
		Hooks: []people.Hook{{URL: rv.srv.URL + "/hook", Secret: secret}}})
	require.NoError(t, err)
	stop := runDispatcher(t, d)

	const freeText = "the staging branch, 机密"
	sess, req := chatAs(t, s, "test-token", "ship it")
	resp := s.Request("POST", "/api/chat/continue", map[string]any{"sessionId": sess, "requestId": req.ID, "customInput": freeText}, "", "Accept", "application/json")
	require.Equal(t, 202, resp.StatusCode)
	resp.Body.Close()

	got := rv.waitDelivered(t, 3)
	stop()
	wh, err := standardwebhooks.NewWebhook(secret)
	require.NoError(t, err)
	byType := map[string]map[string]any{}
	var all []request
	for id, r := range got {
		require.True(t, strings.HasPrefix(id, "msg_"))
		require.Equal(t, "application/json", r.Header.Get("Content-Type"))
		require.NoError(t, wh.Verify(r.Body, r.Header), "signature of %s", id)
		require.True(t, strings.HasPrefix(r.Header.Get("webhook-signature"), "v1,"))
		require.NotContains(t, string(r.Body), "staging", "free text of an answer is never sent")
		var m struct {
			Type      string         `json:"type"`
			Timestamp time.Time      `json:"timestamp"`
			Data      map[string]any `json:"data"`
		}
		require.NoError(t, json.Unmarshal(r.Body, &m))
		require.False(t, m.Timestamp.IsZero())
		byType[m.Type] = m.Data
		all = append(all, r)
	}
	require.Len(t, byType, 3)
	rq := byType[api.WebhookInteractionRequested]
	require.Equal(t, sess, rq["sessionId"])
	require.NotEmpty(t, rq["sessionTitle"])
	require.Equal(t, "Which branch?", rq["request"].(map[string]any)["title"], "questions are sent")
	rs := byType[api.WebhookInteractionResolved]
	rc := rs["receipt"].(map[string]any)
	require.Equal(t, req.ID, rc["requestId"])
	require.Equal(t, "answered", rc["status"])
	require.Equal(t, float64(len([]rune(freeText))), rc["customInputLength"])
	require.NotContains(t, rc, "customInput")
	fin := byType[api.WebhookRunFinished]
	require.Equal(t, sess, fin["sessionId"])
	require.Equal(t, "completed", fin["status"])
	require.Equal(t, req.RunID, fin["runId"])

	verifyWithNode(t, secret, all)

	// Delivery status in the trace and in the store.
	var tr api.TraceView
	require.Equal(t, 200, s.JSON("GET", "/api/sessions/"+sess+"/trace", nil, &tr))
	delivered := 0
	for _, it := range tr.Trace {
		if it.Kind == "webhook" {
			var v map[string]any
			require.NoError(t, json.Unmarshal(it.Data, &v))
			require.Equal(t, "delivered", v["status"])
			require.Equal(t, float64(204), v["code"])
			delivered++
		}
	}
	require.Equal(t, 3, delivered)
	list, err := s.Store.WebhookList(context.Background(), sess)
	require.NoError(t, err)
	require.Len(t, list, 3)
	for _, dl := range list {
		require.Equal(t, store.WebhookDelivered, dl.Status)
		require.Equal(t, 1, dl.Attempts)
	}
}

// TestWebhooksRetryAfter500: a receiver that answers 500 twice gets the same
// webhook-id (and body) a third time, and the delivery is then recorded as
// delivered after three attempts; the trace shows each attempt.
func TestWebhooksRetryAfter500(t *testing.T) {
	t.Parallel()
	s := start(t)
	rv := newReceiver(t, func(id string, n int) int {
		if n <= 2 {
			return 500
		}
		return 200
	})
	secret := newSecret(t)
	reg := prometheus.NewRegistry()
	d, err := people.NewDispatcher(people.DispatcherOptions{Store: s.Store, ID: "inst_test", Backoff: fast, Metrics: reg,
		Hooks: []people.Hook{{URL: rv.srv.URL, Secret: secret, Events: []string{api.WebhookInteractionRequested}}}})
	require.NoError(t, err)
	stop := runDispatcher(t, d)
	sess, _ := chatAs(t, s, "test-token", "ship it")
	got := rv.waitDelivered(t, 1)
	stop()
	require.Equal(t, map[string]float64{"retry": 2, "delivered": 1}, deliveryCounts(t, reg))
	var id string
	for k := range got {
		id = k
	}
	rv.mu.Lock()
	var bodies []string
	for _, r := range rv.got {
		require.Equal(t, id, r.Header.Get("webhook-id"), "only the one subscribed event, the same id on every attempt")
		bodies = append(bodies, string(r.Body))
	}
	rv.mu.Unlock()
	require.Len(t, bodies, 3)
	require.Equal(t, bodies[0], bodies[2], "the same body on every attempt")
	list, err := s.Store.WebhookList(context.Background(), sess)
	require.NoError(t, err)
	require.Len(t, list, 1)
	require.Equal(t, store.WebhookDelivered, list[0].Status)
	require.Equal(t, 3, list[0].Attempts)
	require.Equal(t, 200, list[0].LastCode)
	var statuses []string
	for _, a := range webhookAttempts(t, s.Store, sess) {
		statuses = append(statuses, a.String())
	}
	require.Equal(t, []string{"pending 500", "pending 500", "delivered 200"}, statuses)
}

// TestWebhooksRedirectIsAFailedAttempt: a receiver answering 307 (which
// would make a following client re-send the signed body to the Location) and
// then 302 (which would make it fetch the Location) gets neither followed:
// each 3xx is a failed attempt, retried, counted as a retry and traced as
// "pending 307" / "pending 302"; the third attempt's 200 delivers. The
// listener the redirects point to receives nothing.
func TestWebhooksRedirectIsAFailedAttempt(t *testing.T) {
	t.Parallel()
	s := start(t)
	var elsewhere sync.Map // what the redirect target received, by method + path
	target := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		elsewhere.Store(r.Method+" "+r.URL.Path, string(body))
		w.WriteHeader(http.StatusOK)
	}))
	t.Cleanup(target.Close)
	var mu sync.Mutex
	var codes []int
	delivered := make(chan string, 10)
	rv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.ReadAll(r.Body)
		mu.Lock()
		n := len(codes) + 1
		code := map[int]int{1: http.StatusTemporaryRedirect, 2: http.StatusFound}[n]
		if code == 0 {
			code = http.StatusOK
		}
		codes = append(codes, code)
		mu.Unlock()
		if code != http.StatusOK {
			w.Header().Set("Location", target.URL+"/internal/"+strconv.Itoa(code))
		}
		w.WriteHeader(code)
		if code == http.StatusOK {
			delivered <- r.Header.Get("webhook-id")
		}
	}))
	t.Cleanup(rv.Close)
	reg := prometheus.NewRegistry()
	d, err := people.NewDispatcher(people.DispatcherOptions{Store: s.Store, ID: "inst_test", Backoff: fast, Metrics: reg,
		Hooks: []people.Hook{{URL: rv.URL, Secret: newSecret(t), Events: []string{api.WebhookInteractionRequested}}}})
	require.NoError(t, err)
	stop := runDispatcher(t, d)
	sess, _ := chatAs(t, s, "test-token", "ship it")
	select {
	case <-delivered:
	case <-time.After(waitFor):
		t.Fatal("the delivery never reached the receiver with a 200")
	}
	stop()
	elsewhere.Range(func(k, v any) bool {
		t.Errorf("the redirect target received %v (body %d bytes): redirects must not be followed", k, len(v.(string)))
		return true
	})
	mu.Lock()
	require.Equal(t, []int{307, 302, 200}, codes)
	mu.Unlock()
	require.Equal(t, map[string]float64{"retry": 2, "delivered": 1}, deliveryCounts(t, reg))
	list, err := s.Store.WebhookList(context.Background(), sess)
	require.NoError(t, err)
	require.Len(t, list, 1)
	require.Equal(t, store.WebhookDelivered, list[0].Status)
	require.Equal(t, 3, list[0].Attempts)
	var statuses []string
	for _, a := range webhookAttempts(t, s.Store, sess) {
		statuses = append(statuses, a.String())
		if a.Code/100 == 3 {
			require.Contains(t, a.Error, "redirect", "the trace says why a 3xx failed")
		}
	}
	require.Equal(t, []string{"pending 307", "pending 302", "delivered 200"}, statuses)
}

// webhookAttempt is a "webhook" entry of a session's trace: one delivery
// attempt.
type webhookAttempt struct {
	Status string `json:"status"`
	Code   int    `json:"code"`
	Error  string `json:"error"`
}

func (a webhookAttempt) String() string { return fmt.Sprintf("%s %d", a.Status, a.Code) }

// webhookAttempts returns the delivery attempts traced in session sess, in
// order.
func webhookAttempts(t *testing.T, st store.Store, sess string) []webhookAttempt {
	t.Helper()
	tr, err := st.TraceList(context.Background(), sess)
	require.NoError(t, err)
	var out []webhookAttempt
	for _, e := range tr {
		if e.Kind == "webhook" {
			var a webhookAttempt
			require.NoError(t, json.Unmarshal(e.Data, &a))
			out = append(out, a)
		}
	}
	return out
}

// deliveryCounts scrapes reg as /metrics does (Prometheus text format),
// parses it with the Prometheus text parser and returns
// luban_webhook_deliveries_total by outcome.
func deliveryCounts(t *testing.T, reg *prometheus.Registry) map[string]float64 {
	t.Helper()
	srv := httptest.NewServer(promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	defer srv.Close()
	resp, err := http.Get(srv.URL)
	require.NoError(t, err)
	defer resp.Body.Close()
	parser := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := parser.TextToMetricFamilies(resp.Body)
	require.NoError(t, err)
	out := map[string]float64{}
	for _, m := range fams["luban_webhook_deliveries_total"].GetMetric() {
		for _, l := range m.GetLabel() {
			if l.GetName() == "outcome" {
				out[l.GetValue()] = m.GetCounter().GetValue()
			}
		}
	}
	return out
}

// TestWebhooksGiveUpAfterWindow: an attempt that fails once the retry
// window has passed gives up: status failed in the outbox, in the trace and
// in luban_webhook_deliveries_total{outcome="failed"}, and no more attempts.
func TestWebhooksGiveUpAfterWindow(t *testing.T) {
	t.Parallel()
	s := start(t)
	rv := newReceiver(t, func(string, int) int { return 503 })
	reg := prometheus.NewRegistry()
	d, err := people.NewDispatcher(people.DispatcherOptions{Store: s.Store, ID: "inst_test", Backoff: fast, Metrics: reg, Window: time.Nanosecond,
		Hooks: []people.Hook{{URL: rv.srv.URL, Secret: newSecret(t), Events: []string{api.WebhookInteractionRequested}}}})
	require.NoError(t, err)
	stop := runDispatcher(t, d)
	sess, _ := chatAs(t, s, "test-token", "ship it")
	select {
	case r := <-rv.ch:
		require.Equal(t, 503, r.Status)
	case <-time.After(waitFor):
		t.Fatal("no attempt")
	}
	var list []*store.WebhookDelivery
	require.Eventually(t, func() bool {
		list, err = s.Store.WebhookList(context.Background(), sess)
		return err == nil && len(list) == 1 && list[0].Status != store.WebhookPending
	}, waitFor, 10*time.Millisecond)
	d.Step(context.Background()) // nothing is due any more
	stop()
	require.Equal(t, store.WebhookFailed, list[0].Status)
	require.Equal(t, 1, list[0].Attempts)
	require.Equal(t, 503, list[0].LastCode)
	rv.mu.Lock()
	require.Len(t, rv.got, 1, "no attempt after giving up")
	rv.mu.Unlock()
	require.Equal(t, map[string]float64{"failed": 1}, deliveryCounts(t, reg))
	tr, err := s.Store.TraceList(context.Background(), sess)
	require.NoError(t, err)
	var hooks []map[string]any
	for _, e := range tr {
		if e.Kind == "webhook" {
			var v map[string]any
			require.NoError(t, json.Unmarshal(e.Data, &v))
			hooks = append(hooks, v)
		}
	}
	require.Len(t, hooks, 1)
	require.Equal(t, "failed", hooks[0]["status"])
	require.EqualValues(t, 503, hooks[0]["code"])
	require.NotContains(t, hooks[0], "nextAt")
}

// TestWebhooksRetryAfterRefused: while nothing listens at the webhook's
// address the attempt fails (connection refused) and is retried; once a
// receiver listens there it gets the delivery.
func TestWebhooksRetryAfterRefused(t *testing.T) {
	t.Parallel()
	s := start(t)
	addr, listen := refusingPort(t) // nothing listens yet: connections are refused
	failed := make(chan int, 1)
	listening := make(chan struct{})
	backoff := func(n int) time.Duration {
		failed <- n
		<-listening // the retry is scheduled once the receiver is up
		return time.Millisecond
	}
	secret := newSecret(t)
	d, err := people.NewDispatcher(people.DispatcherOptions{Store: s.Store, ID: "inst_test", Backoff: backoff,
		Hooks: []people.Hook{{URL: "http://" + addr + "/hook", Secret: secret, Events: []string{api.WebhookInteractionRequested}}}})
	require.NoError(t, err)
	runDispatcher(t, d)
	sess, _ := chatAs(t, s, "test-token", "ship it")
	select {
	case n := <-failed:
		require.Equal(t, 1, n)
	case <-time.After(waitFor):
		t.Fatal("no failed attempt")
	}
	rv := newReceiverOn(t, listen(), nil)
	close(listening)
	got := rv.waitDelivered(t, 1)
	require.Len(t, got, 1)
	tr, err := s.Store.TraceList(context.Background(), sess)
	require.NoError(t, err)
	var first map[string]any
	for _, e := range tr {
		if e.Kind == "webhook" {
			require.NoError(t, json.Unmarshal(e.Data, &first))
			break
		}
	}
	require.Equal(t, "pending", first["status"])
	require.Contains(t, first["error"], "refused")
}

// TestWebhooksTwoReplicasOnPostgres: two dispatchers with their own
// connections to one PostgreSQL database fan out and send the same outbox
// at once; every feed entry becomes one delivery, sent once.
func TestWebhooksTwoReplicasOnPostgres(t *testing.T) {
	t.Parallel()
	url := pgtest.Schema(t)
	ctx := context.Background()
	open := func() store.Store {
		st, err := postgres.Open(ctx, url, nil)
		require.NoError(t, err)
		t.Cleanup(func() { st.Close() })
		return st
	}
	st1, st2 := open(), open()
	rv := newReceiver(t, nil)
	secret := newSecret(t)
	hooks := []people.Hook{{URL: rv.srv.URL, Secret: secret}}
	d1, err := people.NewDispatcher(people.DispatcherOptions{Store: st1, ID: "inst_1", Hooks: hooks, Backoff: fast})
	require.NoError(t, err)
	d2, err := people.NewDispatcher(people.DispatcherOptions{Store: st2, ID: "inst_2", Hooks: hooks, Backoff: fast})
	require.NoError(t, err)
	stop1, stop2 := runDispatcher(t, d1), runDispatcher(t, d2)

	const n = 40
	var sessions []string
	for i := range 4 {
		ss, err := st1.SessionCreate(ctx, &store.SessionCreateParams{ID: fmt.Sprintf("sess_%d", i), Owner: "alice", Title: "t", Now: time.Now()})
		require.NoError(t, err)
		sessions = append(sessions, ss.ID)
	}
	var wg sync.WaitGroup
	for i := range n {
		st := st1
		if i%2 == 1 {
			st = st2
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			data := fmt.Sprintf(`{"runId":"run_%d","status":"completed"}`, i)
			assert := st.InTx(ctx, func(tx store.Tx) error {
				_, err := tx.EventAppend(ctx, &store.EventAppendParams{SessionID: sessions[i%4], Name: api.EventDone, Data: json.RawMessage(data), Now: time.Now()})
				return err
			})
			require.NoError(t, assert)
		}()
	}
	wg.Wait()
	got := rv.waitDelivered(t, n)
	stop1()
	stop2()
	rv.mu.Lock()
	defer rv.mu.Unlock()
	require.Len(t, rv.got, n, "every delivery sent once, none twice")
	for id, c := range rv.seen {
		require.Equal(t, 1, c, "webhook-id %s", id)
	}
	runs := map[string]bool{}
	for _, r := range got {
		var m struct {
			Data api.WebhookFinished `json:"data"`
		}
		require.NoError(t, json.Unmarshal(r.Body, &m))
		runs[m.Data.RunID] = true
	}
	require.Len(t, runs, n, "one delivery per feed entry")
	total := 0
	for _, sid := range sessions {
		list, err := st1.WebhookList(ctx, sid)
		require.NoError(t, err)
		for _, dl := range list {
			require.Equal(t, store.WebhookDelivered, dl.Status)
			require.Equal(t, 1, dl.Attempts)
		}
		total += len(list)
	}
	require.Equal(t, n, total)
}

// TestWebhooksSlowReceiverNeverSlowsARun: a receiver that holds every
// request open does not hold up the run: the question is asked, answered
// and the run ends while the first webhook request is still unanswered
// (were the run waiting on it, this test would hang instead).
func TestWebhooksSlowReceiverNeverSlowsARun(t *testing.T) {
	t.Parallel()
	s := start(t)
	release := make(chan struct{})
	arrived := make(chan string, 10)
	answered := make(chan string, 10)
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		arrived <- r.Header.Get("webhook-id")
		select {
		case <-release:
		case <-r.Context().Done():
			return
		}
		w.WriteHeader(http.StatusNoContent)
		answered <- r.Header.Get("webhook-id")
	}))
	defer slow.Close()
	d, err := people.NewDispatcher(people.DispatcherOptions{Store: s.Store, ID: "inst_test", Backoff: fast, Timeout: time.Minute, Workers: 1,
		Hooks: []people.Hook{{URL: slow.URL, Secret: newSecret(t)}}})
	require.NoError(t, err)
	stop := runDispatcher(t, d)

	sess, req := chatAs(t, s, "test-token", "ship it")
	select {
	case <-arrived: // interaction.requested is being sent, and held
	case <-time.After(waitFor):
		t.Fatal("no webhook request")
	}
	resp := s.Request("POST", "/api/chat/continue", map[string]any{"sessionId": sess, "requestId": req.ID, "customInput": "main"}, "", "Accept", "application/json")
	require.Equal(t, 202, resp.StatusCode)
	resp.Body.Close()
	evs := s.EventsUntil(sess, 0, api.EventDone, waitFor)
	var done api.DoneEvent
	require.NoError(t, evs[len(evs)-1].Decode(&done))
	require.Equal(t, api.RunCompleted, done.Status)
	select {
	case id := <-answered:
		t.Fatalf("the receiver answered %s before it was released", id)
	default:
	}

	close(release)
	for range 3 { // requested, resolved, finished: all delivered once released
		select {
		case <-answered:
		case <-time.After(waitFor):
			t.Fatal("the held deliveries did not complete after the release")
		}
	}
	stop()
}
