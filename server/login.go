package server

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"html/template"
	"net/http"
	"net/url"
	"strings"
)

// pageCSP is the Content-Security-Policy of the page. Images may only be
// data: URLs, so nothing in the page (model-written Markdown included) can
// make the browser request a URL of this origin, or any other, by showing
// an image; scripts, styles and API calls stay on the page's own origin.
const pageCSP = "default-src 'self'; img-src data:; style-src 'self' 'unsafe-inline'; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"

// confirmCSP is the Content-Security-Policy of the sign-in confirmation:
// no script, no image, a form that can only post to this origin.
const confirmCSP = "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'"

const cookieMaxAge = 30 * 24 * 3600

// loginKey is the key of the confirmation forms' CSRF field. It is derived
// from the accepted tokens, which are secret and the same on every replica
// (docs/deploy.md), so a form made by one replica or before a restart is
// accepted by another.
func loginKey(tokens []string) []byte {
	return secretKey("luban login confirmation", tokens)
}

// secretKey derives the key of one purpose from secrets that are the same
// on every replica: SHA-256 of the purpose and the secrets, each followed
// by a NUL but the last.
func secretKey(purpose string, secrets []string) []byte {
	sum := sha256.Sum256([]byte(purpose + "\x00" + strings.Join(secrets, "\x00")))
	return sum[:]
}

// loginMAC binds a confirmation form to the browser that was shown it (the
// value of its cookie, "" without one) and to the token it signs in with.
func (s *Server) loginMAC(cookie, token string) string {
	m := hmac.New(sha256.New, s.loginKey)
	m.Write([]byte(cookie))
	m.Write([]byte{0})
	m.Write([]byte(token))
	return hex.EncodeToString(m.Sum(nil))
}

func rawCookie(r *http.Request) string {
	if c, err := r.Cookie(CookieName); err == nil {
		return c.Value
	}
	return ""
}

func (s *Server) setLoginCookie(w http.ResponseWriter, r *http.Request, token string) {
	http.SetCookie(w, &http.Cookie{Name: CookieName, Value: token, Path: "/", MaxAge: cookieMaxAge, HttpOnly: true, SameSite: http.SameSiteStrictMode, Secure: r.TLS != nil})
	http.Redirect(w, r, pagePath(r), http.StatusSeeOther)
}

// pagePath is the page route a sign-in link was opened on, without its
// query (the token): the link of a session or a question lands there.
// Anything that is not a plain local path is "/".
func pagePath(r *http.Request) string {
	p := r.URL.Path
	if !signInRoute(p) || strings.Contains(p, "\\") {
		return "/"
	}
	return p
}

// signInRoute reports whether a sign-in link (?token=) is taken on path:
// the page's own views (/, /inbox, a session, a question), never an asset.
func signInRoute(path string) bool {
	return pageRoute(path) && (path == "/" || path == "/inbox" || strings.HasPrefix(path, "/s/") || strings.HasPrefix(path, "/q/"))
}

func plain(w http.ResponseWriter, status int, msg string) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(status)
	_, _ = w.Write([]byte(msg))
}

// tokenLogin handles GET /?token=… and the same link on a session, a
// question or the inbox (docs/design.md §8, §18 "Signing in"). A valid
// token becomes the HttpOnly cookie and the browser is sent to the same
// view without the token in its URL, when the browser has no valid
// cookie yet (or one of the same principal) and the link was not followed
// from another site. A link followed from another site gets a page whose
// only way on is a link to the same URL (continuePage): the SameSite=Strict
// cookie is not sent on a navigation from another site, so only a request
// from this origin can tell whether the browser is signed in. A browser
// signed in as another principal gets a confirmation page: only the user's
// POST of its form (handleLogin) switches. The URL as anything but a page
// (an image, a script, a fetch) never sets a cookie.
func (s *Server) tokenLogin(w http.ResponseWriter, r *http.Request) bool {
	tok := r.URL.Query().Get("token")
	if tok == "" || r.Method != http.MethodGet {
		return false
	}
	to := s.authenticate(tok)
	if to == "" {
		s.rejectedToken(w, r)
		return true
	}
	if dest := r.Header.Get("Sec-Fetch-Dest"); dest != "" && dest != "document" {
		plain(w, http.StatusForbidden, "a sign-in link works only when opened as a page\n")
		return true
	}
	cookie := rawCookie(r)
	from := s.authenticate(cookie)
	switch {
	case fromOtherSite(r):
		s.page(w, http.StatusOK, continueTmpl, confirmView{Token: tok, Path: pagePath(r)})
	case from == to || from == "":
		s.setLoginCookie(w, r, tok)
	default:
		s.page(w, http.StatusOK, confirmTmpl, confirmView{From: from, To: to, Token: tok, CSRF: s.loginMAC(cookie, tok)})
	}
	return true
}

// rejectedToken answers a sign-in link whose token is not valid: 401 and
// no cookie. A browser opening it as a page gets the page itself (with the
// 401 status), which sees the token still in its URL, says in the user's
// language that the token was rejected and what to do, and drops the token
// from the address; anything else (curl, a fetch, no page built) gets the
// plain-text sentence.
func (s *Server) rejectedToken(w http.ResponseWriter, r *http.Request) {
	page := r.Header.Get("Sec-Fetch-Dest") == "document"
	if r.Header.Get("Sec-Fetch-Dest") == "" {
		// A browser without fetch metadata: a page is what asks for HTML.
		page = strings.Contains(r.Header.Get("Accept"), "text/html")
	}
	if s.opts.Web == nil || !page {
		plain(w, http.StatusUnauthorized, "invalid token: open the URL printed by `luban serve`\n")
		return
	}
	req := r.Clone(r.Context())
	// The page's file handler answers a conditional request with 304,
	// which would hide the 401.
	req.Header.Del("If-Modified-Since")
	req.Header.Del("If-None-Match")
	req.Header.Del("Range")
	w.Header().Set("Cache-Control", "no-store")
	pageHeaders(w)
	s.opts.Web.ServeHTTP(&statusWriter{ResponseWriter: w, status: http.StatusUnauthorized}, req)
}

// statusWriter is a ResponseWriter that sends status in place of a success
// status the wrapped handler writes (an error status passes as it is).
type statusWriter struct {
	http.ResponseWriter
	status int
	wrote  bool
}

// WriteHeader sends the writer's status for any 2xx code, else code.
func (w *statusWriter) WriteHeader(code int) {
	if w.wrote {
		return
	}
	w.wrote = true
	if code >= 200 && code < 300 {
		code = w.status
	}
	w.ResponseWriter.WriteHeader(code)
}

// Write sends the writer's status first when the handler did not.
func (w *statusWriter) Write(b []byte) (int, error) {
	if !w.wrote {
		w.WriteHeader(http.StatusOK)
	}
	return w.ResponseWriter.Write(b)
}

// fromOtherSite reports whether a navigation was started by another site:
// Sec-Fetch-Site cross-site or same-site (another port of this host is the
// same site), or, from a browser without fetch metadata, a Referer of
// another host.
func fromOtherSite(r *http.Request) bool {
	switch r.Header.Get("Sec-Fetch-Site") {
	case "cross-site", "same-site":
		return true
	case "":
		if ref := r.Header.Get("Referer"); ref != "" {
			u, err := url.Parse(ref)
			return err != nil || u.Host != r.Host
		}
	}
	return false
}

// handleLogin is POST /login, the confirmation form of tokenLogin: it
// switches the cookie to the form's token when the form comes from this
// origin (Origin, or Sec-Fetch-Site) and its csrf field was made for this
// browser's cookie and this token. Anything else is 403 and changes nothing.
func (s *Server) handleLogin(w http.ResponseWriter, r *http.Request) {
	if !sameOrigin(r) {
		dropBody(w, r)
		plain(w, http.StatusForbidden, "cross-origin sign-in refused: open the sign-in link yourself\n")
		return
	}
	if err := r.ParseForm(); err != nil {
		if !s.bodyFailed(w, r, err) {
			plain(w, http.StatusBadRequest, "malformed form: "+err.Error()+"\n")
		}
		return
	}
	tok, csrf := r.PostForm.Get("token"), r.PostForm.Get("csrf")
	want := s.loginMAC(rawCookie(r), tok)
	if s.authenticate(tok) == "" || !hmac.Equal([]byte(csrf), []byte(want)) {
		plain(w, http.StatusForbidden, "this confirmation is not valid for this browser: open the sign-in link again\n")
		return
	}
	s.setLoginCookie(w, r, tok)
}

type confirmView struct {
	From, To, Token, CSRF string
	// Path is the page the link was opened on (pagePath).
	Path string
}

var confirmTmpl = template.Must(template.New("confirm").Parse(`<!doctype html>
<html lang="zh-CN">
<head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>luban · 切换身份？</title></head>
<body style="font-family: system-ui, sans-serif; max-width: 36rem; margin: 3rem auto; padding: 0 1rem; line-height: 1.5">
<main data-testid="login-confirm">
<h1>切换身份？ <small lang="en">Switch identity?</small></h1>
<p>这个链接要让此浏览器改用另一个令牌登录，之后在这里发送的消息会进入那个身份的会话。不是你自己打开的链接，请保持当前身份。</p>
<p lang="en">This link signs this browser in with another token; messages you send here afterwards go to that identity's sessions. If you did not open this link yourself, keep the current identity.</p>
<dl>
<dt>当前 · current</dt><dd data-testid="login-from"><code>{{if .From}}{{.From}}{{else}}未登录 · not signed in{{end}}</code></dd>
<dt>链接 · link</dt><dd data-testid="login-to"><code>{{.To}}</code></dd>
</dl>
<form method="post" action="/login">
<input type="hidden" name="token" value="{{.Token}}">
<input type="hidden" name="csrf" value="{{.CSRF}}">
<button type="submit" data-testid="login-switch">切换到 {{.To}} · Switch</button>
<a href="/" data-testid="login-keep" style="margin-left: 1rem">保持当前身份 · Keep the current identity</a>
</form>
</main>
</body>
</html>
`))

// continueTmpl is the page of a token URL followed from another site.
var continueTmpl = template.Must(template.New("continue").Parse(`<!doctype html>
<html lang="zh-CN">
<head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>luban · 继续登录？</title></head>
<body style="font-family: system-ui, sans-serif; max-width: 36rem; margin: 3rem auto; padding: 0 1rem; line-height: 1.5">
<main data-testid="login-continue-page">
<h1>继续登录？ <small lang="en">Continue signing in?</small></h1>
<p>这个登录链接是从另一个网站打开的。只有当它是你自己打开的链接时才继续：之后在这里发送的消息会进入这个令牌的会话。</p>
<p lang="en">This sign-in link was opened from another site. Continue only if you opened it yourself: messages you send here afterwards go to this token's sessions.</p>
<p><a href="{{.Path}}?token={{.Token}}" data-testid="login-continue">继续 · Continue</a>
<a href="/" data-testid="login-keep" style="margin-left: 1rem">取消 · Cancel</a></p>
</main>
</body>
</html>
`))

// page writes a sign-in page (the token login's, single sign-on's) with
// status: HTML that runs no script, cannot be framed, is not cached and
// never sends its URL (which holds a token) to another site as a Referer.
func (s *Server) page(w http.ResponseWriter, status int, t *template.Template, v any) {
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Cache-Control", "no-store")
	h.Set("Content-Security-Policy", confirmCSP)
	h.Set("X-Frame-Options", "DENY")
	h.Set("X-Content-Type-Options", "nosniff")
	// Same-origin: the form's POST still carries Origin, and the token in
	// this page's URL is never sent to another site as a Referer.
	h.Set("Referrer-Policy", "same-origin")
	w.WriteHeader(status)
	_ = t.Execute(w, v)
}
