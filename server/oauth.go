package server

import (
	"errors"
	"html/template"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/lubanhq/luban/api"
	"github.com/lubanhq/luban/mcpclient"
)

// MCPAuthorizer is the OAuth side of luban's MCP client (mcpclient.Manager;
// docs/design.md §11, "OAuth"): the servers waiting for a person, beginning
// a round for one person, and completing it from the callback.
type MCPAuthorizer interface {
	Authorizations() []mcpclient.Authorization
	BeginAuthorization(server, by string) (string, error)
	PendingServer(state string) (server, by string, err error)
	CompleteAuthorization(state, code, iss, errCode, by string) (string, error)
}

// mayAuthorize reports whether principal p may authorize an MCP server
// whose oauth.authorizers are list: anyone signed in when it is empty, else
// a person it names or a member of a group:<id> it names.
func (s *Server) mayAuthorize(p string, list []string) bool {
	if len(list) == 0 {
		return true
	}
	if slices.Contains(list, p) {
		return true
	}
	if person := s.opts.People.Get(p); person != nil {
		for _, g := range person.Groups {
			if slices.Contains(list, "group:"+g) {
				return true
			}
		}
	}
	return false
}

// handleMCPAuthorizations is GET /api/mcp/authorizations.
func (s *Server) handleMCPAuthorizations(w http.ResponseWriter, r *http.Request) {
	out := api.MCPAuthorizationList{Authorizations: []api.MCPAuthorization{}}
	if s.opts.MCPAuth != nil {
		p := Principal(r.Context())
		for _, a := range s.opts.MCPAuth.Authorizations() {
			if s.mayAuthorize(p, a.Authorizers) {
				out.Authorizations = append(out.Authorizations, api.MCPAuthorization{Server: a.Server, Since: a.Since, ExpiresAt: a.ExpiresAt,
					ConnectURL: "/oauth/start/" + url.PathEscape(a.Server)})
			}
		}
	}
	writeJSON(w, http.StatusOK, out)
}

// handleOAuthStart is GET /oauth/start/{server} (signed in): the round of a
// server waiting for authorization is bound to the caller, who is sent to
// the authorization server (303). A server waiting for none, or one the
// caller may not authorize, is a plain page saying so.
func (s *Server) handleOAuthStart(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("server")
	p := Principal(r.Context())
	if s.opts.MCPAuth == nil {
		plain(w, http.StatusNotFound, "No MCP server waits for authorization.")
		return
	}
	var found *mcpclient.Authorization
	for _, a := range s.opts.MCPAuth.Authorizations() {
		if a.Server == name {
			found = &a
			break
		}
	}
	if found == nil {
		plain(w, http.StatusNotFound, "The MCP server "+name+" does not wait for authorization (it may be connected already).")
		return
	}
	if !s.mayAuthorize(p, found.Authorizers) {
		plain(w, http.StatusForbidden, "You may not authorize the MCP server "+name+": its oauth.authorizers do not name you.")
		return
	}
	u, err := s.opts.MCPAuth.BeginAuthorization(name, p)
	if err != nil {
		plain(w, http.StatusNotFound, "The MCP server "+name+" does not wait for authorization any more.")
		return
	}
	s.log.Info("mcp authorization begun", "mcpServer", name, "by", p)
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("Referrer-Policy", "no-referrer")
	http.Redirect(w, r, u, http.StatusSeeOther)
}

var oauthConfirm = template.Must(template.New("confirm").Parse(`<!doctype html>
<html><head><meta charset="utf-8"><meta name="viewport" content="width=device-width">
<title>Connect {{.Server}} · luban</title>
<style>body{font:16px system-ui,sans-serif;max-width:32rem;margin:4rem auto;padding:0 1rem}button{font:inherit;padding:.5rem 1rem}</style></head>
<body><h1>Connect {{.Server}}</h1>
{{if .Error}}<p>The authorization server answered: <code>{{.Error}}</code>. Report it to luban, which starts a new round.</p>{{else}}
<p>The authorization server sent you back to luban. Finish connecting the MCP server <strong>{{.Server}}</strong>, so that its tools act with this authorization?</p>{{end}}
<form method="post" action="/oauth/callback">
<input type="hidden" name="state" value="{{.State}}"><input type="hidden" name="code" value="{{.Code}}">
<input type="hidden" name="iss" value="{{.Iss}}"><input type="hidden" name="error" value="{{.Error}}">
<button type="submit">{{if .Error}}Report{{else}}Connect {{.Server}}{{end}}</button></form>
</body></html>`))

// handleOAuthCallback is GET /oauth/callback, where the authorization
// server sends the browser back (a navigation from another site, so without
// luban's SameSite=Strict cookie): for a pending round's state it shows a
// form that posts the answer back to luban from luban's own origin, where
// the person is known (handleOAuthComplete). An unknown, used or expired
// state is a 400 page.
func (s *Server) handleOAuthCallback(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	state := q.Get("state")
	if s.opts.MCPAuth == nil || state == "" {
		plain(w, http.StatusBadRequest, "This is not a pending authorization: start again from luban's page.")
		return
	}
	name, _, err := s.opts.MCPAuth.PendingServer(state)
	if err != nil {
		plain(w, http.StatusBadRequest, "This authorization expired or was used already: start again from luban's page.")
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.Header().Set("X-Frame-Options", "DENY")
	w.Header().Set("Content-Security-Policy", confirmCSP)
	// same-origin, not no-referrer: under no-referrer a browser sends
	// "Origin: null" with the form's POST, which the same-origin check of
	// POST /oauth/callback refuses; no other site gets this URL (its code).
	w.Header().Set("Referrer-Policy", "same-origin")
	_ = oauthConfirm.Execute(w, map[string]string{"Server": name, "State": state, "Code": q.Get("code"), "Iss": q.Get("iss"), "Error": q.Get("error")})
}

// handleOAuthComplete is POST /oauth/callback (signed in, same origin):
// the round with the form's state is completed by the person who began it
// (403 for anyone else), once; the server then exchanges the code and
// connects, and the browser goes back to the page.
func (s *Server) handleOAuthComplete(w http.ResponseWriter, r *http.Request) {
	if s.opts.MCPAuth == nil {
		plain(w, http.StatusBadRequest, "No MCP server waits for authorization.")
		return
	}
	if err := r.ParseForm(); err != nil {
		plain(w, http.StatusBadRequest, "The form could not be read.")
		return
	}
	f := r.PostForm
	p := Principal(r.Context())
	name, err := s.opts.MCPAuth.CompleteAuthorization(f.Get("state"), f.Get("code"), f.Get("iss"), f.Get("error"), p)
	switch {
	case errors.Is(err, mcpclient.ErrOtherAuthorizer):
		plain(w, http.StatusForbidden, "Someone else began this authorization: only they can finish it.")
		return
	case err != nil:
		plain(w, http.StatusBadRequest, "This authorization expired or was used already: start again from luban's page.")
		return
	}
	s.log.Info("mcp authorization completed", "mcpServer", name, "by", p, "declined", strings.TrimSpace(f.Get("error")) != "")
	http.Redirect(w, r, "/", http.StatusSeeOther)
}
