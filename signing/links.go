package signing

import (
	"context"
	"errors"
	"net/url"
	"strings"
	"time"
)

// Links makes action links (docs/design.md §17): absolute URLs
// Base/q/{requestId}?grant=G, where G is a grant (SignGrant) for one
// interaction and one person that expires with the interaction. Whatever
// sends a question outside luban (mail, Slack) calls ActionLink.
type Links struct {
	// Keys sign the grants.
	Keys *Keys
	// Base is server.publicUrl (default: http:// and the listen address),
	// without a trailing slash.
	Base string
	// ExpiresAt returns when interaction requestID stops taking answers
	// (agent.Runner.QuestionExpiry).
	ExpiresAt func(ctx context.Context, requestID string) (time.Time, error)
}

// ActionLink returns the absolute URL that lets person personID answer
// interaction requestID without signing in, once. answer, when not "",
// is an option id of a single-choice question or "approve" / "reject" of
// an approval: the link opens a confirmation page for that answer (a GET
// never answers). Errors: the interaction is unknown (from ExpiresAt), or
// requestID or personID is empty.
func (l *Links) ActionLink(requestID, personID string, answer string) (string, error) {
	if requestID == "" || personID == "" {
		return "", errors.New("signing: an action link needs a request id and a person")
	}
	exp, err := l.ExpiresAt(context.Background(), requestID)
	if err != nil {
		return "", err
	}
	g := Grant{RequestID: requestID, Person: personID}
	if !exp.IsZero() {
		g.Expires = exp.Unix()
	}
	grant, err := l.Keys.SignGrant(g)
	if err != nil {
		return "", err
	}
	q := url.Values{"grant": {grant}}
	if answer != "" {
		q.Set("answer", answer)
	}
	return strings.TrimSuffix(l.Base, "/") + "/q/" + url.PathEscape(requestID) + "?" + q.Encode(), nil
}
