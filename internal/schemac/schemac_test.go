package schemac_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lubanhq/luban/internal/schemac"
)

// compileSoon compiles schema and fails the test when Compile has not
// returned within 5 s (a $ref to a FIFO blocks an open forever).
func compileSoon(t *testing.T, schema string) error {
	t.Helper()
	done := make(chan error, 1)
	go func() {
		_, err := schemac.Compile([]byte(schema), schemac.Options{})
		done <- err
	}()
	select {
	case err := <-done:
		return err
	case <-time.After(5 * time.Second):
		t.Fatalf("Compile of %s did not return", schema)
		return nil
	}
}

// A schema that refers to a file, a FIFO, a URL or another draft's
// metaschema by file is refused with ErrExternalRef; nothing is read or
// fetched, and the error is the same whether the file exists or not (no
// file-existence oracle for the server that sent the schema).
func TestExternalReferencesRefused(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	secret := filepath.Join(dir, "secret.json")
	require.NoError(t, os.WriteFile(secret, []byte(`{"enum":["TOP-SECRET-VALUE"]}`), 0o600))
	fifo := filepath.Join(dir, "fifo")
	require.NoError(t, syscall.Mkfifo(fifo, 0o600))
	var hits atomic.Int32
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		hits.Add(1)
		_, _ = w.Write([]byte(`{"enum":["FETCHED"]}`))
	}))
	t.Cleanup(hs.Close)

	for _, schema := range []string{
		`{"type":"object","properties":{"x":{"$ref":"file://` + secret + `"}}}`,
		`{"$ref":"file://` + fifo + `"}`,
		`{"$ref":"` + hs.URL + `/s.json"}`,
		`{"$schema":"file://` + secret + `","type":"object"}`,
		`{"$id":"file://` + dir + `/","properties":{"x":{"$ref":"secret.json"}}}`,
		`{"properties":{"x":{"$dynamicRef":"file://` + secret + `#x"}}}`,
		`{"$ref":"secret.json"}`,
	} {
		err := compileSoon(t, schema)
		require.Error(t, err, schema)
		assert.True(t, errors.Is(err, schemac.ErrExternalRef), "%s: %v", schema, err)
		assert.NotContains(t, err.Error(), "TOP-SECRET-VALUE")
		assert.NotContains(t, err.Error(), "FETCHED")
	}
	assert.Zero(t, hits.Load(), "a URL was fetched")

	// The same reference to a file that exists and to one that does not:
	// the same error.
	ref := `{"$ref":"file://` + secret + `"}`
	present := compileSoon(t, ref)
	require.NoError(t, os.Remove(secret))
	missing := compileSoon(t, ref)
	require.Error(t, present)
	assert.Equal(t, present.Error(), missing.Error())
	assert.NotContains(t, strings.ToLower(missing.Error()), "no such file")
}

// Thousands of FIFO references in one schema neither block nor grow the
// process's threads: nothing is opened.
func TestManyFIFOReferences(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	var props []string
	for i := range 2000 {
		p := filepath.Join(dir, fmt.Sprint("f", i))
		require.NoError(t, syscall.Mkfifo(p, 0o600))
		props = append(props, fmt.Sprintf(`"p%d":{"$ref":"file://%s"}`, i, p))
	}
	err := compileSoon(t, `{"type":"object","properties":{`+strings.Join(props, ",")+`}}`)
	require.ErrorIs(t, err, schemac.ErrExternalRef)
}

// References inside the document, and the draft metaschemas the library
// holds, still work; a schema over MaxBytes is refused.
func TestInternalReferencesAndSize(t *testing.T) {
	t.Parallel()
	s, err := schemac.Compile([]byte(`{"$schema":"https://json-schema.org/draft/2020-12/schema","$defs":{"n":{"type":"integer","minimum":1}},"type":"object","properties":{"a":{"$ref":"#/$defs/n"}}}`), schemac.Options{})
	require.NoError(t, err)
	require.NoError(t, s.Validate(map[string]any{"a": jsonNumber("2")}))
	require.Error(t, s.Validate(map[string]any{"a": jsonNumber("0")}))

	_, err = schemac.Compile([]byte(`{"$schema":"http://json-schema.org/draft-07/schema#","definitions":{"n":{"type":"string"}},"properties":{"a":{"$ref":"#/definitions/n"}}}`), schemac.Options{})
	require.NoError(t, err, "draft-07 with its metaschema in memory")

	big := `{"description":"` + strings.Repeat("x", schemac.MaxBytes) + `"}`
	_, err = schemac.Compile([]byte(big), schemac.Options{})
	require.ErrorContains(t, err, "larger than")
}

func jsonNumber(s string) json.Number { return json.Number(s) }
