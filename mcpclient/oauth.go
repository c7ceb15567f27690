package mcpclient

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
	"golang.org/x/oauth2"
)

// TokenStore keeps each MCP server's OAuth grant across restarts
// (docs/design.md §11, "OAuth"). Load returns nil, nil when the server has
// none; Save(server, nil) forgets it. SecretFile is luban's, sealed with
// AES-GCM.
type TokenStore interface {
	Load(server string) (*Grant, error)
	Save(server string, g *Grant) error
}

// Grant is what luban keeps of one server's authorization: the client it
// authorized as (pre-registered, dynamically registered or a client ID
// metadata document URL), the authorization server's endpoints, the scopes
// asked for, and the token (access token, refresh token, expiry). ServerURL
// is the MCP server's URL it was granted for: a grant for another URL (the
// config changed) is not used.
type Grant struct {
	ServerURL    string           `json:"serverUrl"`
	ClientID     string           `json:"clientId"`
	ClientSecret string           `json:"clientSecret,omitempty"`
	AuthURL      string           `json:"authUrl"`
	TokenURL     string           `json:"tokenUrl"`
	AuthStyle    oauth2.AuthStyle `json:"authStyle"`
	Scopes       []string         `json:"scopes,omitempty"`
	RedirectURL  string           `json:"redirectUrl"`
	Token        *oauth2.Token    `json:"token"`
}

func (g *Grant) config() *oauth2.Config {
	return &oauth2.Config{ClientID: g.ClientID, ClientSecret: g.ClientSecret, RedirectURL: g.RedirectURL, Scopes: g.Scopes,
		Endpoint: oauth2.Endpoint{AuthURL: g.AuthURL, TokenURL: g.TokenURL, AuthStyle: g.AuthStyle}}
}

// DefaultAuthorizationTTL is how long a server's authorization URL waits
// for a person before it is dropped (the next connection attempt makes a
// new one).
const DefaultAuthorizationTTL = 10 * time.Minute

// StateAuthorization is the state of a server that waits for a person to
// authorize luban (docs/design.md §11): its Authorization is listed by
// Manager.Authorizations until then.
const StateAuthorization State = "needs_authorization"

// The errors of BeginAuthorization and CompleteAuthorization.
var (
	// ErrNoAuthorization: no authorization waits under that server or
	// state (never made, already used, or expired).
	ErrNoAuthorization = errors.New("mcpclient: no such authorization is pending (it expired, was used, or never existed)")
	// ErrOtherAuthorizer: the authorization was begun by another principal,
	// who alone may complete it.
	ErrOtherAuthorizer = errors.New("mcpclient: this authorization was begun by someone else")
)

// Authorization is an MCP server that waits for a person to authorize
// luban at its authorization server: since when, until when this round's
// URL is valid, and who may do it (the server's oauth.authorizers; empty:
// anyone who can sign in).
type Authorization struct {
	Server      string    `json:"server"`
	Since       time.Time `json:"since"`
	ExpiresAt   time.Time `json:"expiresAt"`
	Authorizers []string  `json:"-"`
}

// pendingAuth is one authorization round: the URL (which carries the state
// and the PKCE challenge; the verifier stays with the SDK's handler in the
// goroutine that waits), who began it, and where the result goes.
type pendingAuth struct {
	s       *server
	url     string
	state   string
	since   time.Time
	expires time.Time
	by      string
	done    chan authOutcome // buffered 1; written once
}

type authOutcome struct {
	res *auth.AuthorizationResult
	err error
}

// oauthHandler is the transport's auth.OAuthHandler: the SDK's
// AuthorizationCodeHandler (discovery, registration, PKCE, resource
// indicators, scope step-up) whose tokens are persisted, and which first
// tries the refresh token when the server answers 401 to a token that has
// not expired.
type oauthHandler struct {
	s     *server
	inner *auth.AuthorizationCodeHandler
	hc    *http.Client

	mu        sync.Mutex
	ts        oauth2.TokenSource
	grant     *Grant // the latest saved
	refreshed string // the access token a forced refresh replaced last
}

func (s *server) newOAuthHandler() (*oauthHandler, error) {
	o := s.m.opts
	if o.RedirectURL == "" {
		return nil, errors.New("oauth needs luban's callback URL (mcpclient.Options.RedirectURL)")
	}
	h := &oauthHandler{s: s, hc: o.OAuthHTTPClient}
	if h.hc == nil {
		h.hc = &http.Client{Timeout: 30 * time.Second, CheckRedirect: sameOrigin}
	}
	c := s.cfg.OAuth
	cfg := &auth.AuthorizationCodeHandlerConfig{
		RedirectURL:              o.RedirectURL,
		AuthorizationCodeFetcher: s.fetchCode,
		RequestRefreshToken:      true,
		Client:                   h.hc,
		NewTokenSource: func(ctx context.Context, cfg *oauth2.Config, tok *oauth2.Token) (oauth2.TokenSource, error) {
			g := &Grant{ServerURL: s.cfg.URL, ClientID: cfg.ClientID, ClientSecret: cfg.ClientSecret, AuthURL: cfg.Endpoint.AuthURL,
				TokenURL: cfg.Endpoint.TokenURL, AuthStyle: cfg.Endpoint.AuthStyle, Scopes: cfg.Scopes, RedirectURL: cfg.RedirectURL, Token: tok}
			return h.install(g), nil
		},
	}
	if len(c.Scopes) > 0 {
		cfg.ScopeFilter = func(discovered []string) []string {
			out := slices.Clone(discovered)
			for _, sc := range c.Scopes {
				if !slices.Contains(out, sc) {
					out = append(out, sc)
				}
			}
			return out
		}
	}
	if c.ClientMetadataURL != "" {
		cfg.ClientIDMetadataDocumentConfig = &auth.ClientIDMetadataDocumentConfig{URL: c.ClientMetadataURL}
	}
	if c.ClientID != "" {
		cfg.PreregisteredClient = &oauthex.ClientCredentials{ClientID: c.ClientID}
		if c.ClientSecret != "" {
			cfg.PreregisteredClient.ClientSecretAuth = &oauthex.ClientSecretAuth{ClientSecret: c.ClientSecret}
		}
	} else {
		cfg.DynamicClientRegistrationConfig = &auth.DynamicClientRegistrationConfig{Metadata: &oauthex.ClientRegistrationMetadata{
			RedirectURIs: []string{o.RedirectURL},
			ClientName:   "luban",
			GrantTypes:   []string{"authorization_code", "refresh_token"},
		}}
	}
	if o.Tokens != nil {
		g, err := o.Tokens.Load(s.cfg.Name)
		if err != nil {
			s.m.log.Warn("mcp oauth grant unreadable; a person will authorize again", "mcpServer", s.cfg.Name, "err", err)
		} else if g != nil && g.Token != nil && g.ServerURL == s.cfg.URL {
			h.ts = h.wrap(g)
			h.grant = g
		}
	}
	inner, err := auth.NewAuthorizationCodeHandler(cfg)
	if err != nil {
		return nil, err
	}
	h.inner = inner
	return h, nil
}

// install makes g the handler's grant: saved, and its token source the
// transport's.
func (h *oauthHandler) install(g *Grant) oauth2.TokenSource {
	ts := h.wrap(g)
	h.mu.Lock()
	h.ts = ts
	h.mu.Unlock()
	h.save(g)
	return ts
}

// wrap is g's token source: oauth2's (which refreshes an expired access
// token with the refresh token) that saves every new token.
func (h *oauthHandler) wrap(g *Grant) oauth2.TokenSource {
	ctx := context.WithValue(context.Background(), oauth2.HTTPClient, h.hc)
	return &savingSource{h: h, g: g, base: g.config().TokenSource(ctx, g.Token), last: g.Token.AccessToken}
}

func (h *oauthHandler) save(g *Grant) {
	h.mu.Lock()
	h.grant = g
	h.mu.Unlock()
	if st := h.s.m.opts.Tokens; st != nil {
		if err := st.Save(h.s.cfg.Name, g); err != nil {
			h.s.m.log.Warn("mcp oauth grant not saved; it lasts until luban stops", "mcpServer", h.s.cfg.Name, "err", err)
		}
	}
}

// savingSource saves the grant with each new token its base returns.
type savingSource struct {
	h    *oauthHandler
	base oauth2.TokenSource
	mu   sync.Mutex
	g    *Grant
	last string
}

func (t *savingSource) Token() (*oauth2.Token, error) {
	tok, err := t.base.Token()
	if err != nil {
		return nil, err
	}
	t.mu.Lock()
	changed := tok.AccessToken != t.last
	if changed {
		t.last = tok.AccessToken
		g := *t.g
		g.Token = tok
		t.g = &g
	}
	g := t.g
	t.mu.Unlock()
	if changed {
		t.h.save(g)
	}
	return tok, nil
}

// TokenSource is the token source of the grant in use (nil before the
// first authorization).
func (h *oauthHandler) TokenSource(context.Context) (oauth2.TokenSource, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.ts, nil
}

// Authorize answers a 401 or 403 (auth.OAuthHandler): a 401 to an access
// token luban holds a refresh token for is first answered by refreshing it
// (once per access token), and only then by the SDK's authorization flow,
// which asks a person (fetchCode).
func (h *oauthHandler) Authorize(ctx context.Context, req *http.Request, resp *http.Response) error {
	if resp.StatusCode == http.StatusUnauthorized && h.forceRefresh(ctx) {
		resp.Body.Close()
		return nil
	}
	return h.inner.Authorize(ctx, req, resp)
}

func (h *oauthHandler) forceRefresh(ctx context.Context) bool {
	h.mu.Lock()
	g := h.grant
	h.mu.Unlock()
	if g == nil || g.Token == nil || g.Token.RefreshToken == "" || g.ServerURL != h.s.cfg.URL {
		return false
	}
	h.mu.Lock()
	if h.refreshed == g.Token.AccessToken {
		h.mu.Unlock()
		return false
	}
	h.refreshed = g.Token.AccessToken
	h.mu.Unlock()
	stale := &oauth2.Token{RefreshToken: g.Token.RefreshToken, Expiry: time.Unix(1, 0)}
	tok, err := g.config().TokenSource(context.WithValue(ctx, oauth2.HTTPClient, h.hc), stale).Token()
	if err != nil {
		h.s.m.log.Info("mcp oauth refresh refused; a person will authorize again", "mcpServer", h.s.cfg.Name, "err", err)
		return false
	}
	if tok.RefreshToken == "" {
		tok.RefreshToken = g.Token.RefreshToken
	}
	ng := *g
	ng.Token = tok
	h.install(&ng)
	h.mu.Lock()
	h.refreshed = tok.AccessToken
	h.mu.Unlock()
	h.s.m.log.Info("mcp oauth token refreshed after a 401", "mcpServer", h.s.cfg.Name)
	return true
}

// fetchCode is the SDK handler's AuthorizationCodeFetcher: it makes the
// authorization URL a pending Authorization of the server, pauses the
// connection attempt's and the calls' timeouts, and waits until a person
// completes it (CompleteAuthorization), the round expires, or ctx ends.
func (s *server) fetchCode(ctx context.Context, args *auth.AuthorizationArgs) (*auth.AuthorizationResult, error) {
	u, err := url.Parse(args.URL)
	if err != nil {
		return nil, err
	}
	ttl := s.m.opts.AuthorizationTTL
	now := time.Now().UTC()
	p := &pendingAuth{s: s, url: args.URL, state: u.Query().Get("state"), since: now, expires: now.Add(ttl), done: make(chan authOutcome, 1)}
	if p.state == "" {
		return nil, errors.New("the authorization URL has no state")
	}
	m := s.m
	m.authMu.Lock()
	if old := s.auth; old != nil {
		delete(m.auths, old.state)
	}
	m.auths[p.state] = p
	s.auth = p
	m.authMu.Unlock()
	defer func() {
		m.authMu.Lock()
		delete(m.auths, p.state)
		if s.auth == p {
			s.auth = nil
		}
		m.authMu.Unlock()
	}()
	prev := s.status().State
	if prev != StateReady {
		prev = StateConnecting
	}
	s.set(StateAuthorization, time.Time{})
	defer func() {
		if s.status().State == StateAuthorization {
			s.set(prev, time.Time{})
		}
	}()
	if f := s.firstDone; f != nil {
		f()
	}
	m.log.Warn("mcp server needs authorization: a person connects it from the page", "mcpServer", s.cfg.Name, "expiresAt", p.expires)
	if m.opts.OnAuthorization != nil {
		m.opts.OnAuthorization(Authorization{Server: s.cfg.Name, Since: p.since, ExpiresAt: p.expires, Authorizers: s.authorizers()})
	}
	resume := s.pauseAll()
	defer resume()
	timer := time.NewTimer(ttl)
	defer timer.Stop()
	select {
	case o := <-p.done:
		if o.err != nil {
			return nil, o.err
		}
		m.log.Info("mcp server authorized", "mcpServer", s.cfg.Name, "by", p.by)
		return o.res, nil
	case <-timer.C:
		return nil, fmt.Errorf("nobody authorized luban within %s", ttl)
	case <-ctx.Done():
		return nil, context.Cause(ctx)
	}
}

func (s *server) authorizers() []string {
	if s.cfg.OAuth == nil {
		return nil
	}
	return s.cfg.OAuth.Authorizers
}

// pauseAll stops the running connection attempt's timeout and every
// call's while a person authorizes; the func it returns resumes them.
func (s *server) pauseAll() func() {
	s.mu.Lock()
	var resumes []func()
	if s.attemptPause != nil {
		resumes = append(resumes, s.attemptPause())
	}
	for c := range s.inflight {
		resumes = append(resumes, c.pause())
	}
	s.mu.Unlock()
	return func() {
		for _, r := range resumes {
			r()
		}
	}
}

// Authorizations lists the servers that wait for a person to authorize
// luban, in config order.
func (m *Manager) Authorizations() []Authorization {
	m.authMu.Lock()
	defer m.authMu.Unlock()
	var out []Authorization
	for _, s := range m.servers {
		if p := s.auth; p != nil && time.Now().Before(p.expires) {
			out = append(out, Authorization{Server: s.cfg.Name, Since: p.since, ExpiresAt: p.expires, Authorizers: s.authorizers()})
		}
	}
	return out
}

// BeginAuthorization binds server's pending authorization to the principal
// by and returns the URL to send that person's browser to (the
// authorization server's, with state, PKCE challenge, scopes and resource).
// Who may authorize is the caller's check (Authorization.Authorizers). A
// later Begin by someone else takes the round over. ErrNoAuthorization
// when the server waits for none.
func (m *Manager) BeginAuthorization(server, by string) (string, error) {
	m.authMu.Lock()
	defer m.authMu.Unlock()
	for _, s := range m.servers {
		if s.cfg.Name == server && s.auth != nil && time.Now().Before(s.auth.expires) {
			s.auth.by = by
			return s.auth.url, nil
		}
	}
	return "", ErrNoAuthorization
}

// PendingServer names the server whose pending authorization has state,
// and who began it; ErrNoAuthorization when none has.
func (m *Manager) PendingServer(state string) (server, by string, err error) {
	m.authMu.Lock()
	defer m.authMu.Unlock()
	p, ok := m.auths[state]
	if !ok || !time.Now().Before(p.expires) {
		return "", "", ErrNoAuthorization
	}
	return p.s.cfg.Name, p.by, nil
}

// CompleteAuthorization hands the authorization server's answer at the
// callback (code, state, iss; or its error code) to the round with that
// state, once: the SDK's handler checks the state and issuer and exchanges
// the code (with the PKCE verifier and the resource), and the server
// connects with its tools. by must be whoever began the round
// (ErrOtherAuthorizer otherwise); an unknown, used or expired state is
// ErrNoAuthorization. It returns the server's name.
func (m *Manager) CompleteAuthorization(state, code, iss, errCode, by string) (string, error) {
	m.authMu.Lock()
	p, ok := m.auths[state]
	if !ok || !time.Now().Before(p.expires) {
		m.authMu.Unlock()
		return "", ErrNoAuthorization
	}
	if p.by != by {
		m.authMu.Unlock()
		return "", ErrOtherAuthorizer
	}
	delete(m.auths, state)
	// Listed no more from now on: the exchange and the connection follow.
	if p.s.auth == p {
		p.s.auth = nil
	}
	m.authMu.Unlock()
	o := authOutcome{res: &auth.AuthorizationResult{Code: code, State: state, Iss: iss}}
	if errCode != "" || code == "" {
		if errCode == "" {
			errCode = "no code"
		}
		o = authOutcome{err: fmt.Errorf("the authorization server answered %q", errCode)}
	}
	p.done <- o
	return p.s.cfg.Name, nil
}
