package people

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	mrand "math/rand/v2"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/prometheus/client_golang/prometheus"
	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"

	"github.com/lubanhq/luban/api"
	"github.com/lubanhq/luban/store"
)

// Hook is one configured webhook (the `webhooks:` config, docs/design.md §12). URL
// identifies it: deliveries are stored per URL.
type Hook struct {
	URL string
	// Secret is the Standard Webhooks signing secret, "whsec_" + base64.
	Secret string
	// Events is a subset of the api.Webhook* types; empty means all.
	Events []string
}

func (h Hook) wants(typ string) bool { return len(h.Events) == 0 || slices.Contains(h.Events, typ) }

// DispatcherOptions configures NewDispatcher. Store and ID are required.
type DispatcherOptions struct {
	Store store.Store
	Hooks []Hook
	// ID names this process in delivery leases (the runner's instance id
	// is a good one); two replicas must not share it.
	ID string
	// Client sends the requests. Default: an http.Client with Timeout.
	// Redirects are never followed, whatever its CheckRedirect says: a 3xx
	// answer is a failed attempt (docs/design.md §11).
	Client *http.Client
	// Timeout bounds one attempt (connect, send, answer). Default 10s.
	Timeout time.Duration
	// Window is how long a delivery is retried, counted from its creation:
	// an attempt that fails after it gives up (status failed). Default 25h,
	// so every delivery is retried for at least 24 hours (docs/design.md §12).
	Window time.Duration
	// Backoff is the pause before retry n (1 for the first retry). Default
	// DefaultBackoff.
	Backoff func(n int) time.Duration
	// Poll bounds the time between looks at the outbox when nothing wakes
	// the dispatcher (other replicas' retries come due). Default 30s.
	Poll time.Duration
	// Workers bounds the attempts in flight. Default 8.
	Workers int
	// Now is the clock. Default time.Now.
	Now    func() time.Time
	Logger *slog.Logger
	// Metrics, when set, gets luban_webhook_deliveries_total and
	// luban_notification_deliveries_total.
	Metrics prometheus.Registerer
	// Channels are the other ways of reaching people (email, Slack,
	// docs/design.md §17); their rows share the outbox with the webhooks'.
	Channels []Channel

	// fault is called at named points of the outbox (InjectFault, lubantest builds only).
	fault func(point string)
}

// DefaultBackoff is exponential with full jitter in its upper half: retry n
// waits a random time in [d/2, d) with d = 5s·2^(n-1), capped at one hour
// (5s, 10s, 20s, … 1h, 1h, …).
func DefaultBackoff(n int) time.Duration {
	d := 5 * time.Second * time.Duration(math.Pow(2, float64(min(max(n-1, 0), 20))))
	d = min(d, time.Hour)
	return d/2 + time.Duration(mrand.Int64N(int64(d/2)))
}

// Dispatcher fans the principal feed out into webhook deliveries and sends
// them after commit (a transactional outbox): at least once per delivery,
// the same webhook-id on every attempt, retried with backoff until Window
// has passed, one sender per delivery at a time across replicas (a lease
// taken by an atomic claim). A slow or dead receiver never holds up a run:
// runs only write the feed row; everything here happens beside them.
type Dispatcher struct {
	o       DispatcherOptions
	log     *slog.Logger
	signers map[string]*standardwebhooks.Webhook
	hooks   map[string]Hook
	sem     chan struct{}
	wg      sync.WaitGroup
	counter *prometheus.CounterVec
	// notified counts channel attempts by channel and outcome.
	notified *prometheus.CounterVec
}

// NewDispatcher checks the hooks' secrets and returns a Dispatcher; Run
// starts it.
func NewDispatcher(o DispatcherOptions) (*Dispatcher, error) {
	if o.Store == nil || o.ID == "" {
		return nil, errors.New("people: DispatcherOptions.Store and ID are required")
	}
	if o.Timeout <= 0 {
		o.Timeout = 10 * time.Second
	}
	if o.Client == nil {
		o.Client = &http.Client{Timeout: o.Timeout}
	}
	// A receiver is untrusted: a redirect would re-send the signed body to
	// (307, 308) or fetch (301, 302, 303) an address the configuration never
	// named, internal ones included. A 3xx is a failed attempt instead.
	c := *o.Client
	c.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	o.Client = &c
	if o.Window <= 0 {
		o.Window = 25 * time.Hour
	}
	if o.Backoff == nil {
		o.Backoff = DefaultBackoff
	}
	if o.Poll <= 0 {
		o.Poll = 30 * time.Second
	}
	if o.Workers <= 0 {
		o.Workers = 8
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	d := &Dispatcher{o: o, log: o.Logger, signers: map[string]*standardwebhooks.Webhook{}, hooks: map[string]Hook{}, sem: make(chan struct{}, o.Workers)}
	for _, h := range o.Hooks {
		wh, err := standardwebhooks.NewWebhook(h.Secret)
		if err != nil {
			return nil, fmt.Errorf("people: webhook %s: the secret is not whsec_ + base64", h.URL)
		}
		d.signers[h.URL], d.hooks[h.URL] = wh, h
	}
	d.counter = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "luban_webhook_deliveries_total",
		Help: "Webhook delivery attempts, by outcome: delivered (2xx), retry (failed, tried again later), failed (gave up after the retry window)."},
		[]string{"outcome"})
	d.notified = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "luban_notification_deliveries_total",
		Help: "Email and Slack delivery attempts, by channel and outcome: delivered, retry (failed, tried again later), failed (gave up after the retry window)."},
		[]string{"channel", "outcome"})
	if o.Metrics != nil {
		for _, c := range []prometheus.Collector{d.counter, d.notified} {
			if err := o.Metrics.Register(c); err != nil {
				return nil, fmt.Errorf("people: register metrics: %w", err)
			}
		}
	}
	return d, nil
}

// Run fans out and sends until ctx is done, then waits for the attempts in
// flight (each bounded by Timeout). It wakes on every committed feed entry
// (store.FeedKey, every replica on PostgreSQL) and when the next retry is
// due, at the latest every Poll.
func (d *Dispatcher) Run(ctx context.Context) {
	wake, unsub := d.o.Store.Subscribe(store.FeedKey)
	defer unsub()
	defer d.wg.Wait()
	for {
		d.Step(ctx)
		wait := d.o.Poll
		if next, err := d.o.Store.WebhookNextDue(ctx); err == nil && !next.IsZero() {
			wait = min(wait, max(next.Sub(d.o.Now()), time.Millisecond))
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-wake:
		case <-t.C:
		}
		t.Stop()
	}
}

// Step fans out every feed entry not yet fanned out, then starts an attempt
// for every delivery that is due (each in its own goroutine, at most Workers
// at once). It returns once they are started, not finished.
func (d *Dispatcher) Step(ctx context.Context) {
	for ctx.Err() == nil {
		entries, err := d.o.Store.FeedListUnfanned(ctx, 100)
		if err != nil {
			d.log.Error("webhooks: read the outbox", "err", err)
			break
		}
		for _, f := range entries {
			d.fault("webhook_fanout")
			if err := d.fanOut(ctx, f); err != nil {
				d.log.Error("webhooks: fan out", "owner", f.Owner, "seq", f.Seq, "err", err)
				return
			}
		}
		if len(entries) < 100 {
			break
		}
	}
	for ctx.Err() == nil {
		now := d.o.Now()
		claimed, err := d.o.Store.WebhookClaim(ctx, &store.WebhookClaimParams{Owner: d.o.ID, Now: now, Until: now.Add(3 * d.o.Timeout), Limit: d.o.Workers})
		if err != nil {
			d.log.Error("webhooks: claim", "err", err)
			return
		}
		for _, dl := range claimed {
			select {
			case d.sem <- struct{}{}:
			case <-ctx.Done():
				return
			}
			d.wg.Add(1)
			go func() {
				defer d.wg.Done()
				defer func() { <-d.sem }()
				d.attempt(context.WithoutCancel(ctx), dl)
			}()
		}
		if len(claimed) < d.o.Workers {
			return
		}
	}
}

// Sends reports whether the dispatcher has a webhook or a notification
// channel: without either, fanning out an entry only marks it fanned out.
func (d *Dispatcher) Sends() bool { return len(d.o.Hooks)+len(d.o.Channels) > 0 }

// Wait waits for the attempts Step started.
func (d *Dispatcher) Wait() { d.wg.Wait() }

func (d *Dispatcher) fanOut(ctx context.Context, f *store.FeedEntry) error {
	typ, body, err := d.message(ctx, f)
	if err != nil {
		return err
	}
	p := &store.WebhookEnqueueParams{Owner: f.Owner, Seq: f.Seq, Now: d.o.Now()}
	if typ != "" {
		for _, h := range d.o.Hooks {
			if h.wants(typ) {
				p.Deliveries = append(p.Deliveries, &store.WebhookDelivery{ID: newMessageID(), Hook: h.URL, SessionID: f.SessionID, Type: typ, Body: body})
			}
		}
	}
	if err := d.fanChannels(ctx, f, p); err != nil {
		return err
	}
	return d.o.Store.WebhookEnqueue(ctx, p)
}

// message builds the webhook body of feed entry f (api.WebhookMessage),
// with the free text of answers replaced by lengths. A feed event with no
// webhook type gives "".
func (d *Dispatcher) message(ctx context.Context, f *store.FeedEntry) (string, json.RawMessage, error) {
	var typ string
	var data any
	switch f.Name {
	case api.EventUserInputRequired:
		var req api.InputRequest
		if err := json.Unmarshal(f.Data, &req); err != nil {
			return "", nil, fmt.Errorf("feed entry %s/%d: %w", f.Owner, f.Seq, err)
		}
		title := ""
		if ss, err := d.o.Store.SessionGet(ctx, f.SessionID); err == nil {
			title = ss.Title
		}
		typ, data = api.WebhookInteractionRequested, api.WebhookRequested{SessionID: f.SessionID, SessionTitle: title, Request: req}
	case api.EventUserInputResolved:
		var rc api.Receipt
		if err := json.Unmarshal(f.Data, &rc); err != nil {
			return "", nil, fmt.Errorf("feed entry %s/%d: %w", f.Owner, f.Seq, err)
		}
		typ, data = api.WebhookInteractionResolved, api.WebhookResolved{SessionID: f.SessionID, Receipt: redact(&rc)}
	case api.EventUserInputReminder:
		var rm api.InputReminder
		if err := json.Unmarshal(f.Data, &rm); err != nil {
			return "", nil, fmt.Errorf("feed entry %s/%d: %w", f.Owner, f.Seq, err)
		}
		// The request as asked; a question whose session was deleted
		// since is sent by its ids alone.
		req := api.InputRequest{ID: rm.RequestID, SessionID: rm.SessionID, RunID: rm.RunID, ExpiresAt: rm.ExpiresAt}
		if it, err := d.o.Store.InteractionGet(ctx, rm.RequestID); err == nil {
			_ = json.Unmarshal(it.Request, &req)
		}
		title := ""
		if ss, err := d.o.Store.SessionGet(ctx, f.SessionID); err == nil {
			title = ss.Title
		}
		typ, data = api.WebhookInteractionReminder, api.WebhookReminder{SessionID: f.SessionID, SessionTitle: title, Reason: rm.Reason,
			Notify: rm.Notify, From: rm.From, Message: rm.Message, Request: req}
	case api.EventDone:
		var done api.DoneEvent
		if err := json.Unmarshal(f.Data, &done); err != nil {
			return "", nil, fmt.Errorf("feed entry %s/%d: %w", f.Owner, f.Seq, err)
		}
		typ, data = api.WebhookRunFinished, api.WebhookFinished{SessionID: f.SessionID, RunID: done.RunID, Status: done.Status}
	default:
		return "", nil, nil
	}
	body, err := json.Marshal(api.WebhookMessage{Type: typ, Timestamp: f.CreatedAt.UTC(), Data: data})
	return typ, body, err
}

// redact turns a Receipt into a WebhookReceipt: option ids and question
// labels stay, free text becomes its length in characters.
func redact(rc *api.Receipt) api.WebhookReceipt {
	out := api.WebhookReceipt{RequestID: rc.RequestID, ToolCallID: rc.ToolCallID, Status: rc.Status, Selections: rc.Selections,
		CustomInputLength: utf8.RuneCountInString(rc.CustomInput), ResolvedAt: rc.ResolvedAt, Signature: rc.Signature}
	if out.Selections == nil {
		out.Selections = []string{}
	}
	for _, a := range rc.Answers {
		sel := a.Selected
		if sel == nil {
			sel = []string{}
		}
		out.Answers = append(out.Answers, api.WebhookAnswer{Question: a.Question, Selected: sel, OtherLength: utf8.RuneCountInString(a.Other)})
	}
	return out
}

// newMessageID is a webhook-id: "msg_" and 16 random bytes in hex.
func newMessageID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return "msg_" + hex.EncodeToString(b[:])
}

// attempt sends delivery dl once and records the outcome under its lease.
func (d *Dispatcher) attempt(ctx context.Context, dl *store.WebhookDelivery) {
	code, errText := 0, ""
	signer, ok := d.signers[dl.Hook]
	ch := d.channelOf(dl.Hook)
	switch {
	case ch != nil:
		ok = true
		d.fault("webhook_send")
		errText = ch.Send(ctx, dl)
	case !ok:
		errText = "no webhook with this url is configured any more"
	default:
		d.fault("webhook_send")
		code, errText = d.send(ctx, signer, dl)
	}
	now := d.o.Now()
	p := &store.WebhookFinishParams{ID: dl.ID, LeaseOwner: d.o.ID, LastCode: code, LastError: errText, Now: now}
	outcome := "delivered"
	switch {
	case ok && errText == "":
		p.Status = store.WebhookDelivered
	case !ok || now.Sub(dl.CreatedAt) >= d.o.Window:
		p.Status, outcome = store.WebhookFailed, "failed"
	default:
		p.Status, outcome = store.WebhookPending, "retry"
		p.NextAt = now.Add(d.o.Backoff(dl.Attempts + 1))
	}
	trace := map[string]any{"webhookId": dl.ID, "type": dl.Type, "url": dl.Hook, "attempt": dl.Attempts + 1, "status": p.Status}
	if code != 0 {
		trace["code"] = code
	}
	if errText != "" {
		trace["error"] = errText
	}
	if p.Status == store.WebhookPending {
		trace["nextAt"] = p.NextAt
	}
	p.Trace, _ = json.Marshal(trace)
	won, err := d.o.Store.WebhookFinish(ctx, p)
	if err != nil {
		d.log.Error("webhooks: record attempt", "id", dl.ID, "err", err)
		return
	}
	if !won {
		d.log.Warn("webhooks: lease lost before the attempt was recorded", "id", dl.ID)
		return
	}
	if ch != nil {
		d.notified.WithLabelValues(strings.TrimSuffix(ch.Prefix(), ":"), outcome).Inc()
	} else {
		d.counter.WithLabelValues(outcome).Inc()
	}
	if p.Status != store.WebhookDelivered {
		d.log.Warn("webhooks: delivery failed", "id", dl.ID, "url", dl.Hook, "attempt", dl.Attempts+1, "status", p.Status, "code", code, "err", errText)
	}
}

// send POSTs the body with the Standard Webhooks headers: webhook-id (the
// same on every attempt), webhook-timestamp (this attempt's, Unix seconds)
// and webhook-signature ("v1," + base64 HMAC-SHA256 of id.timestamp.body).
// It returns the status code and "" for a 2xx answer, else what failed.
func (d *Dispatcher) send(ctx context.Context, signer *standardwebhooks.Webhook, dl *store.WebhookDelivery) (int, string) {
	ts := d.o.Now()
	sig, err := signer.Sign(dl.ID, ts, dl.Body)
	if err != nil {
		return 0, "sign: " + err.Error()
	}
	ctx, cancel := context.WithTimeout(ctx, d.o.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, dl.Hook, bytes.NewReader(dl.Body))
	if err != nil {
		return 0, err.Error()
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "luban-webhooks")
	req.Header.Set(standardwebhooks.HeaderWebhookID, dl.ID)
	req.Header.Set(standardwebhooks.HeaderWebhookTimestamp, strconv.FormatInt(ts.Unix(), 10))
	req.Header.Set(standardwebhooks.HeaderWebhookSignature, sig)
	resp, err := d.o.Client.Do(req)
	if err != nil {
		return 0, err.Error()
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	if resp.StatusCode >= 300 && resp.StatusCode <= 399 {
		return resp.StatusCode, "HTTP " + strconv.Itoa(resp.StatusCode) + ": a redirect, not followed (configure the final URL)"
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return resp.StatusCode, "HTTP " + strconv.Itoa(resp.StatusCode)
	}
	return resp.StatusCode, ""
}
