package server

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"net/http"
	"net/url"
	"strings"

	"github.com/lubanhq/luban/api"
)

// CookieName is the HttpOnly cookie that carries the page's token.
const CookieName = "luban_token"

type principalKey struct{}

// Principal returns the authenticated principal of a request handled by the
// API: the id of the person whose token it is (Options.People), else "p_"
// and the first 16 hex digits of the SHA-256 of its token.
func Principal(ctx context.Context) string {
	p, _ := ctx.Value(principalKey{}).(string)
	return p
}

func principalOf(token string) string {
	sum := sha256.Sum256([]byte(token))
	return "p_" + hex.EncodeToString(sum[:8])
}

// allTokens are the tokens of Tokens and of People: secrets the same on
// every replica, from which the server derives its form and state keys.
func (o *Options) allTokens() []string {
	return append(append([]string{}, o.Tokens...), o.People.Tokens()...)
}

// authenticate returns the principal for a token, or "": a person's id
// (docs/design.md §16), else the token's own principal.
func (s *Server) authenticate(token string) string {
	if token == "" {
		return ""
	}
	if p := s.opts.People.ByToken(token); p != nil {
		return p.ID
	}
	for i, t := range s.opts.Tokens {
		if len(t) == len(token) && subtle.ConstantTimeCompare([]byte(t), []byte(token)) == 1 {
			return s.tokenPrincipals[i]
		}
	}
	return ""
}

// bearer returns the principal of an Authorization header's value
// "Bearer <token>" (the scheme without case, RFC 7235 §2.1), or "" for
// another scheme or a token that authenticates nobody.
func (s *Server) bearer(authorization string) string {
	scheme, tok, ok := strings.Cut(authorization, " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return ""
	}
	return s.authenticate(strings.TrimSpace(tok))
}

// requireAuth authenticates /api calls: "Authorization: Bearer <token>", or
// the page's cookie (a token, or a single sign-on's session). A
// state-changing call authenticated by the cookie alone must come from the
// page's own origin (docs/design.md §8), so another site cannot answer a
// question in the user's name.
func (s *Server) requireAuth(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if h := r.Header.Get("Authorization"); h != "" {
			p := s.bearer(h)
			if p == "" {
				refuse(w, r, http.StatusUnauthorized, api.ErrorDetail{Code: api.CodeUnauthorized, Message: "invalid bearer token"})
				return
			}
			next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), principalKey{}, p)))
			return
		}
		c, err := r.Cookie(CookieName)
		p := ""
		if err == nil {
			p = s.authenticate(c.Value)
		}
		if p == "" {
			p = s.sessionPrincipal(r)
		}
		if p == "" {
			refuse(w, r, http.StatusUnauthorized, api.ErrorDetail{Code: api.CodeUnauthorized, Message: "authentication required: send Authorization: Bearer <token>, or open the URL the server printed"})
			return
		}
		if r.Method != http.MethodGet && r.Method != http.MethodHead && !sameOrigin(r) {
			refuse(w, r, http.StatusForbidden, api.ErrorDetail{Code: api.CodeForbiddenOrigin, Message: "cross-origin request refused"})
			return
		}
		next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), principalKey{}, p)))
	})
}

func sameOrigin(r *http.Request) bool {
	origin := r.Header.Get("Origin")
	if origin == "" {
		return r.Header.Get("Sec-Fetch-Site") == "same-origin"
	}
	u, err := url.Parse(origin)
	return err == nil && u.Host == r.Host && (u.Scheme == "http" || u.Scheme == "https")
}
