// Package fakeslack plays Slack for tests: a Web API on loopback that
// records chat.postMessage and chat.update calls (as github.com/slack-go/slack
// sends them) and answers as Slack does, and a sender of interaction
// payloads (button clicks) signed exactly as Slack signs them
// (X-Slack-Signature: v0=hex(HMAC-SHA256(secret, "v0:<ts>:<body>"))).
package fakeslack

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// Call is one Web API call: Method is "chat.postMessage" or
// "chat.update"; Channel, TS (chat.update's message, chat.postMessage's
// answer), Text and Blocks (the Block Kit JSON) as sent.
type Call struct {
	Method, Channel, TS, Text string
	Blocks                    []Block
}

// Block is a Block Kit block as far as the tests read it.
type Block struct {
	Type     string    `json:"type"`
	BlockID  string    `json:"block_id"`
	Text     *Text     `json:"text"`
	Elements []Element `json:"elements"`
}

// Text is a text object.
type Text struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

// Element is a block element: a button (Text is its label object), or a
// context's text object (Text is then the text itself).
type Element struct {
	Type     string          `json:"type"`
	ActionID string          `json:"action_id"`
	Value    string          `json:"value"`
	URL      string          `json:"url"`
	Style    string          `json:"style"`
	Text     json.RawMessage `json:"text"`
}

// Label is the element's text: a button's label, a text object's text.
func (e Element) Label() string {
	var s string
	if json.Unmarshal(e.Text, &s) == nil {
		return s
	}
	var t Text
	_ = json.Unmarshal(e.Text, &t)
	return t.Text
}

// Button returns the button labelled label, or nil.
func (c Call) Button(label string) *Element {
	for _, b := range c.Blocks {
		for i, e := range b.Elements {
			if e.Type == "button" && e.Label() == label {
				return &b.Elements[i]
			}
		}
	}
	return nil
}

// AllText is every text of the message's blocks, one per line.
func (c Call) AllText() string {
	var out []string
	for _, b := range c.Blocks {
		if b.Text != nil {
			out = append(out, b.Text.Text)
		}
		for _, e := range b.Elements {
			if l := e.Label(); l != "" {
				out = append(out, l)
			}
		}
	}
	return strings.Join(out, "\n")
}

// API is the fake Web API. URL (ending with '/') is its base, for
// slack.OptionAPIURL / notify.slack.apiUrl.
type API struct {
	URL   string
	Token string
	// Calls receives every call (buffered).
	Calls chan Call
	mu    sync.Mutex
	all   []Call
	n     int
}

// Start starts a fake Web API accepting bot token token.
func Start(t testing.TB, token string) *API {
	a := &API{Token: token, Calls: make(chan Call, 1000)}
	srv := httptest.NewServer(http.HandlerFunc(a.serve))
	t.Cleanup(srv.Close)
	a.URL = srv.URL + "/api/"
	return a
}

// All returns every call so far.
func (a *API) All() []Call {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]Call(nil), a.all...)
}

func (a *API) serve(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	method := strings.TrimPrefix(r.URL.Path, "/api/")
	body, _ := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	vals := map[string]string{}
	if strings.HasPrefix(r.Header.Get("Content-Type"), "application/json") {
		var m map[string]any
		_ = json.Unmarshal(body, &m)
		for k, v := range m {
			switch v := v.(type) {
			case string:
				vals[k] = v
			default:
				b, _ := json.Marshal(v)
				vals[k] = string(b)
			}
		}
	} else {
		form, _ := url.ParseQuery(string(body))
		for k := range form {
			vals[k] = form.Get(k)
		}
	}
	// The token comes as a bearer header or, as slack-go sends it, a form field.
	if r.Header.Get("Authorization") != "Bearer "+a.Token && vals["token"] != a.Token {
		_, _ = io.WriteString(w, `{"ok":false,"error":"invalid_auth"}`)
		return
	}
	c := Call{Method: method, Channel: vals["channel"], TS: vals["ts"], Text: vals["text"]}
	if vals["blocks"] != "" {
		if err := json.Unmarshal([]byte(vals["blocks"]), &c.Blocks); err != nil {
			_, _ = io.WriteString(w, `{"ok":false,"error":"invalid_blocks"}`)
			return
		}
	}
	var answer map[string]any
	switch method {
	case "chat.postMessage":
		a.mu.Lock()
		a.n++
		c.TS = fmt.Sprintf("1700000000.%06d", a.n)
		a.mu.Unlock()
		// A message to a user id lands in the app's DM with them.
		ch := c.Channel
		if strings.HasPrefix(ch, "U") {
			ch = "D" + ch[1:]
		}
		c.Channel = ch
		answer = map[string]any{"ok": true, "channel": ch, "ts": c.TS, "message": map[string]any{"text": c.Text, "ts": c.TS}}
	case "chat.update":
		answer = map[string]any{"ok": true, "channel": c.Channel, "ts": c.TS, "text": c.Text}
	default:
		_, _ = io.WriteString(w, `{"ok":false,"error":"unknown_method"}`)
		return
	}
	a.mu.Lock()
	a.all = append(a.all, c)
	a.mu.Unlock()
	a.Calls <- c
	_ = json.NewEncoder(w).Encode(answer)
}

// Click is one button click as Slack reports it to an app.
type Click struct {
	User            string // the Slack user id
	Channel, TS     string // the message's conversation and ts
	ActionID, Value string
	Label           string
	At              time.Time // when Slack signs it; zero: now
}

// Payload is the block_actions interaction payload of the click, shaped
// as Slack sends it.
func (c Click) Payload() []byte {
	p := map[string]any{
		"type":         "block_actions",
		"user":         map[string]any{"id": c.User, "username": strings.ToLower(c.User), "name": strings.ToLower(c.User), "team_id": "T0LUBAN"},
		"api_app_id":   "A0LUBAN",
		"token":        "verification-token-unused",
		"container":    map[string]any{"type": "message", "message_ts": c.TS, "channel_id": c.Channel, "is_ephemeral": false},
		"trigger_id":   "1.2.3",
		"team":         map[string]any{"id": "T0LUBAN", "domain": "luban-test"},
		"channel":      map[string]any{"id": c.Channel, "name": "directmessage"},
		"message":      map[string]any{"type": "message", "ts": c.TS, "text": "…"},
		"response_url": "https://hooks.slack.invalid/actions/T0LUBAN/1/abc",
		"actions": []any{map[string]any{"action_id": c.ActionID, "block_id": "luban_actions", "type": "button", "value": c.Value,
			"text": map[string]any{"type": "plain_text", "text": c.Label}, "action_ts": "1700000001.000001"}},
	}
	b, _ := json.Marshal(p)
	return b
}

// Sign returns the headers Slack sends with body at time at, signed with
// secret.
func Sign(secret string, body []byte, at time.Time) http.Header {
	ts := strconv.FormatInt(at.Unix(), 10)
	mac := hmac.New(sha256.New, []byte(secret))
	_, _ = io.WriteString(mac, "v0:"+ts+":")
	_, _ = mac.Write(body)
	h := http.Header{}
	h.Set("Content-Type", "application/x-www-form-urlencoded")
	h.Set("X-Slack-Request-Timestamp", ts)
	h.Set("X-Slack-Signature", "v0="+hex.EncodeToString(mac.Sum(nil)))
	h.Set("User-Agent", "Slackbot 1.0 (+https://api.slack.com/robots)")
	return h
}

// Send posts click to endpoint signed with secret (hdr, when set, changes
// headers after signing) and returns the status and body of the answer.
func Send(t testing.TB, endpoint, secret string, c Click, hdr func(http.Header)) (int, []byte) {
	t.Helper()
	body := []byte("payload=" + url.QueryEscape(string(c.Payload())))
	at := c.At
	if at.IsZero() {
		at = time.Now()
	}
	req, err := http.NewRequest(http.MethodPost, endpoint, strings.NewReader(string(body)))
	require.NoError(t, err)
	req.Header = Sign(secret, body, at)
	if hdr != nil {
		hdr(req.Header)
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	out, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, out
}
