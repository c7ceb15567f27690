package server

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"html/template"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/coreos/go-oidc/v3/oidc"
	"golang.org/x/oauth2"
)

// OIDC configures single sign-on for the page (docs/design.md §16,
// `auth.oidc`): OpenID Connect authorization code flow with PKCE against
// Issuer. A login whose Claim (default "email") is the email of a person of
// Options.People signs the browser in as that person; anyone else gets a
// 403 page that says why.
type OIDC struct {
	Issuer, ClientID, ClientSecret string
	// Claim is the ID token's claim matched against people's emails;
	// empty means "email".
	Claim string
}

const (
	// SessionCookieName is the HttpOnly cookie of a person signed in
	// through single sign-on: their id, an expiry and a MAC.
	SessionCookieName = "luban_session"
	// oidcCookieName carries one login's state, nonce and PKCE verifier
	// from /auth/login to /auth/callback.
	oidcCookieName  = "luban_oidc"
	oidcLoginMaxAge = 10 * time.Minute
	// sessionMaxAge is how long a single sign-on lasts.
	sessionMaxAge = 12 * time.Hour
)

// sso is the server's single sign-on: the provider is discovered at the
// first login (and again after a failure), so a provider that is down when
// luban starts does not stop it.
type sso struct {
	cfg OIDC
	key []byte

	mu       sync.Mutex
	provider *oidc.Provider
}

func newSSO(cfg OIDC, secrets []string) *sso {
	if cfg.Claim == "" {
		cfg.Claim = "email"
	}
	var key []byte
	if cfg.ClientSecret == "" && len(secrets) == 0 {
		// Nothing secret is configured: a key of this process (sign-ins
		// end with a restart and are not shared across replicas).
		key = make([]byte, 32)
		_, _ = rand.Read(key)
	} else {
		key = secretKey("luban sso session key", append([]string{cfg.ClientSecret}, secrets...))
	}
	return &sso{cfg: cfg, key: key}
}

func (o *sso) discover(ctx context.Context) (*oidc.Provider, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.provider != nil {
		return o.provider, nil
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	p, err := oidc.NewProvider(ctx, o.cfg.Issuer)
	if err != nil {
		return nil, err
	}
	o.provider = p
	return p, nil
}

func (o *sso) oauth(p *oidc.Provider, r *http.Request) *oauth2.Config {
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	return &oauth2.Config{ClientID: o.cfg.ClientID, ClientSecret: o.cfg.ClientSecret, Endpoint: p.Endpoint(),
		RedirectURL: scheme + "://" + r.Host + "/auth/callback", Scopes: []string{oidc.ScopeOpenID, "email", "profile"}}
}

func (o *sso) mac(parts ...string) string {
	m := hmac.New(sha256.New, o.key)
	for _, p := range parts {
		m.Write([]byte(p))
		m.Write([]byte{0})
	}
	return hex.EncodeToString(m.Sum(nil))
}

// seal and open carry a value in a cookie: base64url(JSON).MAC.
func (o *sso) seal(purpose string, v any) string {
	b, _ := json.Marshal(v)
	enc := base64.RawURLEncoding.EncodeToString(b)
	return enc + "." + o.mac(purpose, enc)
}

func (o *sso) open(purpose, s string, v any) bool {
	enc, mac, ok := strings.Cut(s, ".")
	if !ok || !hmac.Equal([]byte(mac), []byte(o.mac(purpose, enc))) {
		return false
	}
	b, err := base64.RawURLEncoding.DecodeString(enc)
	return err == nil && json.Unmarshal(b, v) == nil
}

type loginState struct {
	State, Nonce, Verifier, Next string
	Exp                          int64
}

type signedIn struct {
	ID  string `json:"id"`
	Exp int64  `json:"exp"`
}

func randomString() string {
	b := make([]byte, 24)
	_, _ = rand.Read(b)
	return base64.RawURLEncoding.EncodeToString(b)
}

// sessionPrincipal is the person a valid single sign-on cookie names, or
// "" (no cookie, a bad MAC, expired, or the person is no longer
// configured).
func (s *Server) sessionPrincipal(r *http.Request) string {
	if s.sso == nil {
		return ""
	}
	c, err := r.Cookie(SessionCookieName)
	if err != nil {
		return ""
	}
	var v signedIn
	if !s.sso.open("session", c.Value, &v) || time.Now().Unix() > v.Exp || s.opts.People.Get(v.ID) == nil {
		return ""
	}
	return v.ID
}

// handleSSOLogin is GET /auth/login: it starts a login at the provider
// (authorization code with PKCE, a state and a nonce kept in a short-lived
// cookie) and sends the browser there. next (a path of this site) is where
// the browser goes once signed in.
func (s *Server) handleSSOLogin(w http.ResponseWriter, r *http.Request) {
	p, err := s.sso.discover(r.Context())
	if err != nil {
		s.log.Warn("single sign-on: the provider cannot be reached", "issuer", s.sso.cfg.Issuer, "err", err)
		s.ssoPage(w, http.StatusBadGateway, ssoView{Reason: "the sign-in provider " + s.sso.cfg.Issuer + " cannot be reached; try again in a moment", ReasonZH: "无法连接登录服务 " + s.sso.cfg.Issuer + "，请稍后再试"})
		return
	}
	next := r.URL.Query().Get("next")
	if !strings.HasPrefix(next, "/") || strings.HasPrefix(next, "//") || strings.HasPrefix(next, "/\\") {
		next = "/"
	}
	st := loginState{State: randomString(), Nonce: randomString(), Verifier: oauth2.GenerateVerifier(), Next: next, Exp: time.Now().Add(oidcLoginMaxAge).Unix()}
	http.SetCookie(w, &http.Cookie{Name: oidcCookieName, Value: s.sso.seal("login", st), Path: "/auth/", MaxAge: int(oidcLoginMaxAge.Seconds()),
		HttpOnly: true, SameSite: http.SameSiteLaxMode, Secure: r.TLS != nil})
	w.Header().Set("Cache-Control", "no-store")
	http.Redirect(w, r, s.sso.oauth(p, r).AuthCodeURL(st.State, oauth2.S256ChallengeOption(st.Verifier), oidc.Nonce(st.Nonce)), http.StatusFound)
}

// handleSSOCallback is GET /auth/callback: the provider's answer. The state
// must be the one this browser's login cookie holds; the code is exchanged
// with the PKCE verifier, the ID token verified (issuer, audience, expiry,
// signature, nonce), and its claim (from the ID token, else from UserInfo)
// must be the email of a person; with the claim "email", email_verified
// must be true (an address the provider did not verify names nobody). The browser is then signed in as the person
// (a Lax cookie, so the redirect from the provider's site carries it); any
// failure is a page that says why, and signs nobody in.
func (s *Server) handleSSOCallback(w http.ResponseWriter, r *http.Request) {
	refuse := func(status int, en, zh string) {
		http.SetCookie(w, &http.Cookie{Name: oidcCookieName, Path: "/auth/", MaxAge: -1})
		s.ssoPage(w, status, ssoView{Reason: en, ReasonZH: zh, Retry: true})
	}
	var st loginState
	c, err := r.Cookie(oidcCookieName)
	if err != nil || !s.sso.open("login", c.Value, &st) || time.Now().Unix() > st.Exp || st.State != r.URL.Query().Get("state") {
		refuse(http.StatusBadRequest, "this sign-in was not started in this browser, or took longer than 10 minutes", "这次登录不是在此浏览器中发起的，或已超过 10 分钟")
		return
	}
	if e := r.URL.Query().Get("error"); e != "" {
		refuse(http.StatusForbidden, "the sign-in provider refused the login: "+e+" "+r.URL.Query().Get("error_description"), "登录服务拒绝了这次登录："+e)
		return
	}
	p, err := s.sso.discover(r.Context())
	if err != nil {
		refuse(http.StatusBadGateway, "the sign-in provider cannot be reached", "无法连接登录服务")
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), 15*time.Second)
	defer cancel()
	tok, err := s.sso.oauth(p, r).Exchange(ctx, r.URL.Query().Get("code"), oauth2.VerifierOption(st.Verifier))
	if err != nil {
		s.log.Warn("single sign-on: code exchange failed", "err", err)
		refuse(http.StatusForbidden, "the sign-in provider did not accept the login code", "登录服务没有接受登录码")
		return
	}
	raw, _ := tok.Extra("id_token").(string)
	idt, err := p.Verifier(&oidc.Config{ClientID: s.sso.cfg.ClientID}).Verify(ctx, raw)
	if err != nil || idt.Nonce != st.Nonce {
		s.log.Warn("single sign-on: the ID token is not valid", "err", err)
		refuse(http.StatusForbidden, "the sign-in provider's ID token is not valid", "登录服务的 ID 令牌无效")
		return
	}
	var claims map[string]any
	if err := idt.Claims(&claims); err != nil {
		refuse(http.StatusForbidden, "the ID token's claims cannot be read", "无法读取 ID 令牌的声明")
		return
	}
	claim := s.sso.cfg.Claim
	if _, ok := claims[claim]; !ok {
		// Claims asked for by scope may come from the UserInfo endpoint
		// only (OpenID Connect Core §5.4); its subject must be the token's.
		if ui, err := p.UserInfo(ctx, oauth2.StaticTokenSource(tok)); err == nil && ui.Subject == idt.Subject {
			var more map[string]any
			if ui.Claims(&more) == nil {
				for k, v := range more {
					if _, ok := claims[k]; !ok {
						claims[k] = v
					}
				}
			}
		} else if err != nil {
			s.log.Warn("single sign-on: UserInfo failed", "err", err)
		}
	}
	email, _ := claims[claim].(string)
	if email == "" {
		refuse(http.StatusForbidden, fmt.Sprintf("the sign-in provider sent no %q for this account, so luban cannot tell who you are", claim), fmt.Sprintf("登录服务没有提供此账号的 %q，luban 无法确认你的身份", claim))
		return
	}
	if v, _ := claims["email_verified"].(bool); !v && claim == "email" {
		refuse(http.StatusForbidden, email+" is not verified at the sign-in provider", email+" 在登录服务中尚未验证")
		return
	}
	person := s.opts.People.ByEmail(email)
	if person == nil {
		refuse(http.StatusForbidden, "you signed in as "+email+", but no person of this luban has that email; ask whoever runs it to add you to people:", "你以 "+email+" 登录，但此 luban 的人员名单（people:）中没有这个邮箱；请联系管理员添加")
		return
	}
	http.SetCookie(w, &http.Cookie{Name: oidcCookieName, Path: "/auth/", MaxAge: -1})
	http.SetCookie(w, &http.Cookie{Name: SessionCookieName, Value: s.sso.seal("session", signedIn{ID: person.ID, Exp: time.Now().Add(sessionMaxAge).Unix()}),
		Path: "/", MaxAge: int(sessionMaxAge.Seconds()), HttpOnly: true, SameSite: http.SameSiteLaxMode, Secure: r.TLS != nil})
	w.Header().Set("Cache-Control", "no-store")
	http.Redirect(w, r, st.Next, http.StatusSeeOther)
}

// ssoRedirect sends a page navigation without a valid sign-in to the
// single sign-on (when configured); it reports whether it did.
func (s *Server) ssoRedirect(w http.ResponseWriter, r *http.Request) bool {
	if s.sso == nil || r.Method != http.MethodGet || r.Header.Get("Sec-Fetch-Dest") != "" && r.Header.Get("Sec-Fetch-Dest") != "document" {
		return false
	}
	if s.authenticate(rawCookie(r)) != "" || s.sessionPrincipal(r) != "" {
		return false
	}
	http.Redirect(w, r, "/auth/login?next="+url.QueryEscape(r.URL.RequestURI()), http.StatusFound)
	return true
}

type ssoView struct {
	Reason, ReasonZH string
	Retry            bool
	Status           string
}

func (s *Server) ssoPage(w http.ResponseWriter, status int, v ssoView) {
	v.Status = strconv.Itoa(status)
	s.page(w, status, ssoTmpl, v)
}

var ssoTmpl = template.Must(template.New("sso").Parse(`<!doctype html>
<html lang="zh-CN">
<head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>luban · 无法登录 · Cannot sign in</title></head>
<body style="font-family: system-ui, sans-serif; max-width: 36rem; margin: 3rem auto; padding: 0 1rem; line-height: 1.5">
<main data-testid="sso-refused" data-status="{{.Status}}">
<h1>无法登录 <small lang="en">Cannot sign in</small></h1>
<p data-testid="sso-reason-zh">{{.ReasonZH}}</p>
<p lang="en" data-testid="sso-reason">{{.Reason}}</p>
{{if .Retry}}<p><a href="/auth/login" data-testid="sso-retry">重试 · Try again</a></p>{{end}}
</main>
</body>
</html>
`))
