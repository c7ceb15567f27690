package principal

import (
	"crypto/sha256"
	"crypto/subtle"
	"fmt"
	"strings"
)

// Person is someone of the configuration's `people:` (docs/design.md §16).
// Their ID is their principal: the owner of the sessions they start and
// the name routes give them.
type Person struct {
	ID, Name, Email, Slack string
	// Tokens are the person's bearer tokens.
	Tokens []string
	Groups []string
}

// Directory answers who a token, a login's email or an id is. The zero
// value and a nil *Directory know nobody (every token is then a principal
// of its own, as the server decides).
type Directory struct {
	people  []*Person
	byID    map[string]*Person
	byEmail map[string]*Person
	tokens  []tokenOf
}

type tokenOf struct {
	sum    [32]byte
	person *Person
}

// NewDirectory indexes people. A repeated id, email (without case) or token
// is an error; the configuration refuses those earlier, naming the line.
func NewDirectory(people []Person) (*Directory, error) {
	d := &Directory{byID: map[string]*Person{}, byEmail: map[string]*Person{}}
	seen := map[[32]byte]bool{}
	for i := range people {
		p := &people[i]
		if p.ID == "" {
			return nil, fmt.Errorf("people: person %d has no id", i)
		}
		if _, dup := d.byID[p.ID]; dup {
			return nil, fmt.Errorf("people: %q is listed twice", p.ID)
		}
		d.byID[p.ID] = p
		if p.Email != "" {
			e := strings.ToLower(p.Email)
			if _, dup := d.byEmail[e]; dup {
				return nil, fmt.Errorf("people: the email %q is listed twice", p.Email)
			}
			d.byEmail[e] = p
		}
		for _, t := range p.Tokens {
			sum := sha256.Sum256([]byte(t))
			if seen[sum] {
				return nil, fmt.Errorf("people: a token of %q is listed twice", p.ID)
			}
			seen[sum] = true
			d.tokens = append(d.tokens, tokenOf{sum: sum, person: p})
		}
		d.people = append(d.people, p)
	}
	return d, nil
}

// Len is the number of people.
func (d *Directory) Len() int {
	if d == nil {
		return 0
	}
	return len(d.people)
}

// People lists everyone in the configuration's order.
func (d *Directory) People() []*Person {
	if d == nil {
		return nil
	}
	return d.people
}

// ByToken returns the person whose token tok is, or nil. The comparison
// takes the same time whichever token matches (it compares digests in
// constant time, and looks at every token).
func (d *Directory) ByToken(tok string) *Person {
	if d == nil || tok == "" {
		return nil
	}
	sum := sha256.Sum256([]byte(tok))
	var found *Person
	for _, t := range d.tokens {
		if subtle.ConstantTimeCompare(t.sum[:], sum[:]) == 1 {
			found = t.person
		}
	}
	return found
}

// ByEmail returns the person with that email (compared without case), or
// nil.
func (d *Directory) ByEmail(email string) *Person {
	if d == nil || email == "" {
		return nil
	}
	return d.byEmail[strings.ToLower(email)]
}

// Get returns the person of id, or nil.
func (d *Directory) Get(id string) *Person {
	if d == nil {
		return nil
	}
	return d.byID[id]
}

// Tokens are every person's tokens, in the configuration's order.
func (d *Directory) Tokens() []string {
	var out []string
	for _, p := range d.People() {
		out = append(out, p.Tokens...)
	}
	return out
}
