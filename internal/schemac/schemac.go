// Package schemac compiles a JSON Schema that may come from outside luban
// (an MCP server's tool inputSchema or elicitation requestedSchema, a
// tool's parameters) with santhosh-tekuri/jsonschema, so that compiling it
// loads nothing and is bounded (docs/design.md §23, "What a server sends is
// untrusted"): every reference that leaves the document ($ref, $dynamicRef or
// $schema naming file://, http://, a relative file or anything not inside
// the document) is refused with the same error whether or not the thing it
// names exists; a schema is at most MaxBytes; and one compilation is given
// Timeout, after which the caller gets an error (the compilation, which
// reads no file or network, ends on its own).
package schemac

import (
	"bytes"
	"errors"
	"fmt"
	"time"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// MaxBytes bounds a schema document compiled by Compile.
const MaxBytes = 256 << 10

// Timeout bounds the time one Compile waits for the compilation.
const Timeout = 2 * time.Second

// ErrExternalRef is the error, wrapped, of a schema that refers to a
// document outside itself.
var ErrExternalRef = errors.New("external references are not allowed: a schema must be self-contained (only references inside the document, such as #/$defs/x)")

// Options are the compiler settings of Compile.
type Options struct {
	// AssertFormat makes "format" an assertion (email, uri, date, ...)
	// instead of an annotation.
	AssertFormat bool
}

// Compile compiles schema (JSON; empty means {"type":"object"}) as a JSON
// Schema of draft 2020-12 unless its $schema names another draft. A
// document over MaxBytes, one that is not JSON, one that refers outside
// itself (ErrExternalRef) or one that does not compile within Timeout is
// an error whose text may go back to the party that sent the schema: it
// names the reference, never what a file system or a network said about it.
func Compile(schema []byte, o Options) (*jsonschema.Schema, error) {
	if len(bytes.TrimSpace(schema)) == 0 {
		schema = []byte(`{"type":"object"}`)
	}
	if len(schema) > MaxBytes {
		return nil, fmt.Errorf("the schema is larger than %d bytes", MaxBytes)
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(schema))
	if err != nil {
		return nil, fmt.Errorf("not JSON: %w", err)
	}
	type result struct {
		s   *jsonschema.Schema
		err error
	}
	done := make(chan result, 1)
	go func() {
		s, err := compile(doc, o)
		done <- result{s, err}
	}()
	t := time.NewTimer(Timeout)
	defer t.Stop()
	select {
	case r := <-done:
		return r.s, r.err
	case <-t.C:
		return nil, fmt.Errorf("the schema did not compile within %s", Timeout)
	}
}

// Name is the URL a compiled document has; a reference resolves against it.
const Name = "mem:///luban/schema.json"

func compile(doc any, o Options) (*jsonschema.Schema, error) {
	c := NewCompiler()
	if o.AssertFormat {
		c.AssertFormat()
	}
	if err := c.AddResource(Name, doc); err != nil {
		return nil, clean(err)
	}
	s, err := c.Compile(Name)
	if err != nil {
		return nil, clean(err)
	}
	return s, nil
}

// NewCompiler is a draft 2020-12 compiler whose loader refuses every URL:
// only the documents added with AddResource (and the drafts' metaschemas,
// which the library holds in memory) can be referred to.
func NewCompiler() *jsonschema.Compiler {
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	c.UseLoader(refuse{})
	return c
}

// refuse is a jsonschema.URLLoader that loads nothing.
type refuse struct{}

func (refuse) Load(string) (any, error) { return nil, ErrExternalRef }

// clean rewrites the library's error for a refused load as "reference to
// <url>: ErrExternalRef", so nothing in it depends on the URL's target.
func clean(err error) error {
	var le *jsonschema.LoadURLError
	if errors.As(err, &le) {
		return fmt.Errorf("reference to %q: %w", clip(le.URL), ErrExternalRef)
	}
	return err
}

func clip(s string) string {
	if r := []rune(s); len(r) > 200 {
		return string(r[:200]) + "…"
	}
	return s
}
