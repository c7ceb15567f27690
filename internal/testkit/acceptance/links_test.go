package acceptance

import (
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/lubanhq/luban/api"
	"github.com/lubanhq/luban/approval"
	"github.com/lubanhq/luban/internal/testkit/lubantest"
	"github.com/lubanhq/luban/signing"
	"github.com/lubanhq/luban/tool"
)

// linkClient is a browser without cookies that does not follow redirects:
// what a person who clicks a link in a mail has.
var linkClient = &http.Client{Timeout: waitFor, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

type linkResp struct {
	status   int
	body     string
	location string
	header   http.Header
}

func linkGet(t *testing.T, u string) linkResp {
	t.Helper()
	resp, err := linkClient.Get(u)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return linkResp{resp.StatusCode, string(b), resp.Header.Get("Location"), resp.Header}
}

func linkPost(t *testing.T, u string, form url.Values) linkResp {
	t.Helper()
	resp, err := linkClient.PostForm(u, form)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return linkResp{resp.StatusCode, string(b), resp.Header.Get("Location"), resp.Header}
}

// grantOf is the grant= of an action link.
func grantOf(t *testing.T, link string) string {
	t.Helper()
	u, err := url.Parse(link)
	require.NoError(t, err)
	return u.Query().Get("grant")
}

// docs/design.md §17, §29: an action link opens one approval without a
// session, a GET (also of an option link) never answers, the option link's
// confirmation answers once through the resolve transition as the grant's
// person, and the link then shows the signed receipt; tampered, expired,
// foreign, other-question and other-key grants are 403, and a used link is
// 403 on POST.
func TestActionLinkApproval(t *testing.T) {
	t.Parallel()
	keys, err := signing.Generate()
	require.NoError(t, err)
	d := &deployTool{}
	e := setup(t, func(o *lubantest.Options) {
		o.Keys = keys
		o.Tools = []tool.Tool{d.tool()}
		o.Approval = approval.Policy{Rules: []approval.Rule{{Pattern: "deploy", Decision: approval.Always}}}
	})
	e.model.push(turn{calls: []call{{id: "call_d", name: "deploy", args: `{"service":"<b>api</b>","replicas":2}`}}}, turn{text: "done"})
	p := e.ask("", "deploy")
	owner := lubantest.TokenPrincipal(e.srv.Token)
	links := &signing.Links{Keys: keys, Base: e.srv.URL + "/", ExpiresAt: e.srv.Runner.QuestionExpiry}
	link, err := links.ActionLink(p.req.ID, owner, "")
	require.NoError(t, err)
	require.True(t, strings.HasPrefix(link, e.srv.URL+"/q/"+p.req.ID+"?"), link)
	grant := grantOf(t, link)
	pending := func() bool { return e.pending(p.sessionID).Pending != nil }

	page := linkGet(t, link)
	require.Equal(t, http.StatusOK, page.status, page.body)
	require.Contains(t, page.body, "deploy")
	require.Contains(t, page.body, "&lt;b&gt;api&lt;/b&gt;", "the arguments are text, not markup")
	require.NotContains(t, page.body, "<b>api</b>")
	require.Contains(t, page.body, `value="approve"`)
	require.Equal(t, "no-referrer", page.header.Get("Referrer-Policy"), "the grant never leaves in a Referer")
	require.Contains(t, page.header.Get("Content-Security-Policy"), "default-src 'none'")

	opt, err := links.ActionLink(p.req.ID, owner, "approve")
	require.NoError(t, err)
	for i := 0; i < 2; i++ { // a mail scanner follows the link, then the person does
		confirm := linkGet(t, opt)
		require.Equal(t, http.StatusOK, confirm.status)
		require.Contains(t, confirm.body, "Approve: run deploy")
		require.Contains(t, confirm.body, `name="decision" value="approve"`)
	}
	require.True(t, pending(), "a GET never answers")

	other := func(g signing.Grant) string { s, err := keys.SignGrant(g); require.NoError(t, err); return s }
	stranger, err := signing.Generate()
	require.NoError(t, err)
	strangerGrant, err := stranger.SignGrant(signing.Grant{RequestID: p.req.ID, Person: owner})
	require.NoError(t, err)
	parts := strings.Split(grant, ".")
	edited, _ := json.Marshal(signing.Grant{RequestID: p.req.ID, Person: "mallory"})
	for name, g := range map[string]string{
		"edited":         parts[0] + "." + base64.RawURLEncoding.EncodeToString(edited) + "." + parts[2],
		"cut short":      grant[:len(grant)-4],
		"expired":        other(signing.Grant{RequestID: p.req.ID, Person: owner, Expires: time.Now().Add(-time.Minute).Unix()}),
		"other question": other(signing.Grant{RequestID: "ask_someother", Person: owner}),
		"foreign person": other(signing.Grant{RequestID: p.req.ID, Person: "mallory"}),
		"other key":      strangerGrant,
		"empty":          "",
	} {
		u := e.srv.URL + "/q/" + p.req.ID + "?grant=" + url.QueryEscape(g)
		require.Equal(t, http.StatusForbidden, linkGet(t, u).status, name)
		r := linkPost(t, e.srv.URL+"/q/"+p.req.ID, url.Values{"grant": {g}, "decision": {"approve"}})
		require.Equal(t, http.StatusForbidden, r.status, name)
		require.NotContains(t, r.body, "&lt;b&gt;api", "%s: a refused grant shows nothing of the question", name)
	}
	require.True(t, pending(), "no refused grant answered")
	require.Nil(t, d.args, "the tool did not run")

	answered := linkPost(t, e.srv.URL+"/q/"+p.req.ID, url.Values{"grant": {grant}, "decision": {"approve"}})
	require.Equal(t, http.StatusSeeOther, answered.status, answered.body)
	require.Equal(t, "/q/"+p.req.ID+"?grant="+url.QueryEscape(grant), answered.location)
	evs := e.replay(p.sessionID, 0, doneOf(p.runID))
	var rc api.Receipt
	for _, ev := range evs {
		if ev.Name == "user_input_resolved" {
			require.NoError(t, ev.Decode(&rc))
		}
	}
	require.Equal(t, api.DecisionApprove, rc.Decision)
	d.mu.Lock()
	require.JSONEq(t, `{"service":"<b>api</b>","replicas":2}`, string(d.args), "the tool ran once, approved through the link")
	d.mu.Unlock()
	set := fetchJWKS(t, e.srv.URL)
	c := joseClaims(t, set, rc.Signature)
	require.Equal(t, owner, c.By, "the grant's person answered")

	shown := linkGet(t, e.srv.URL+answered.location)
	require.Equal(t, http.StatusOK, shown.status)
	require.Contains(t, shown.body, "approve")
	require.Contains(t, shown.body, `class="signed"`)
	require.Contains(t, shown.body, rc.Signature, "the JWS is there to copy")
	require.NotContains(t, shown.body, `value="approve"`, "no form once answered")
	again := linkPost(t, e.srv.URL+"/q/"+p.req.ID, url.Values{"grant": {grant}, "decision": {"reject"}})
	require.Equal(t, http.StatusForbidden, again.status, "a used link answers nothing more")
	require.Contains(t, again.body, "Already answered")

	dl := linkGet(t, e.srv.URL+"/q/"+p.req.ID+"/receipt?grant="+url.QueryEscape(grant))
	require.Equal(t, http.StatusOK, dl.status)
	require.Contains(t, dl.header.Get("Content-Disposition"), "attachment")
	var got api.Receipt
	require.NoError(t, json.Unmarshal([]byte(dl.body), &got))
	require.Equal(t, rc.Signature, got.Signature)

	// Without a grant the path stays the page's single-question route.
	require.Equal(t, http.StatusNotFound, linkGet(t, e.srv.URL+"/q/"+p.req.ID).status, "lubantest serves no page")
}

// docs/design.md §17: a question's link shows its options as a form (text
// as text); an answer that breaks it is 422 and leaves it pending; a
// valid one answers; a question that expired meanwhile is 403.
func TestActionLinkQuestion(t *testing.T) {
	t.Parallel()
	keys, err := signing.Generate()
	require.NoError(t, err)
	e := setup(t, func(o *lubantest.Options) { o.Keys = keys })
	args := `{"title":"<script>alert(1)</script> which?","mode":"single","options":[{"id":"safe","label":"Safe <i>way</i>"},{"id":"fast","label":"Fast"}]}`
	e.model.push(turn{calls: []call{{id: "call_q", name: "ask_user", args: args}}}, turn{calls: []call{{id: "call_q2", name: "ask_user", args: singleArgs}}})
	p := e.ask("", "ask")
	owner := lubantest.TokenPrincipal(e.srv.Token)
	links := &signing.Links{Keys: keys, Base: e.srv.URL, ExpiresAt: e.srv.Runner.QuestionExpiry}
	link, err := links.ActionLink(p.req.ID, owner, "")
	require.NoError(t, err)
	page := linkGet(t, link)
	require.Equal(t, http.StatusOK, page.status)
	require.NotContains(t, page.body, "<script>alert(1)</script>")
	require.Contains(t, page.body, "&lt;script&gt;alert(1)&lt;/script&gt; which?")
	require.Contains(t, page.body, "Safe &lt;i&gt;way&lt;/i&gt;")
	require.Contains(t, page.body, `type="radio" name="selections" value="fast"`)

	opt, err := links.ActionLink(p.req.ID, owner, "fast")
	require.NoError(t, err)
	require.Contains(t, linkGet(t, opt).body, "Your answer: <strong>Fast</strong>")

	grant := grantOf(t, link)
	bad := linkPost(t, e.srv.URL+"/q/"+p.req.ID, url.Values{"grant": {grant}, "selections": {"nope"}})
	require.Equal(t, http.StatusUnprocessableEntity, bad.status, bad.body)
	require.Contains(t, bad.body, "nothing was answered")
	require.NotNil(t, e.pending(p.sessionID).Pending, "a rejected answer leaves the question pending")

	ok := linkPost(t, e.srv.URL+"/q/"+p.req.ID, url.Values{"grant": {grant}, "selections": {"fast"}})
	require.Equal(t, http.StatusSeeOther, ok.status, ok.body)
	evs := e.replay(p.sessionID, 0, func(ev lubantest.Event) bool {
		return ev.Name == "user_input_required" && strings.Contains(string(ev.Data), "call_q2")
	})
	second := e.pausedAt(p.sessionID, p.runID, evs[len(evs)-1:])
	shown := linkGet(t, e.srv.URL+ok.location)
	require.Contains(t, shown.body, "Chosen: Fast")

	// The next question expires while its link is open: the answer is 403.
	link2, err := links.ActionLink(second.req.ID, owner, "")
	require.NoError(t, err)
	e.clock.advance(48 * time.Hour)
	late := linkPost(t, e.srv.URL+"/q/"+second.req.ID, url.Values{"grant": {grantOf(t, link2)}, "selections": {"safe"}})
	require.Equal(t, http.StatusForbidden, late.status, late.body)
}
