package main

import (
	"context"
	"crypto"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/go-jose/go-jose/v4"

	"github.com/lubanhq/luban/api"
	"github.com/lubanhq/luban/signing"
)

// Verify is `luban verify FILE|-` (docs/design.md §17): it checks a signed
// decision receipt offline against a JWKS and exits 0 when it holds, 1 with
// the reason when it does not. FILE holds the JWS itself, a receipt (JSON
// with "signature"), or a webhook message carrying one.
type Verify struct {
	Stdin          io.Reader
	Stdout, Stderr io.Writer
	Getenv         func(string) string
}

// Run parses args and verifies.
func (c *Verify) Run(args []string) error {
	fs := flag.NewFlagSet("verify", flag.ContinueOnError)
	keysFile := fs.String("keys", "", "a JWKS file (saved from GET /.well-known/luban/keys) or the server's key file; default: the key file beside --db")
	db := fs.String("db", getenv(c.Getenv, "LUBAN_DB", defaultDB(c.Getenv)), "the database luban serve uses (LUBAN_DB): its key file is read when --keys is not given")
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), "Usage: luban verify [--keys FILE | --db …] FILE|-\n\nChecks a signed decision receipt offline: the JWS, a receipt with \"signature\"\nor a webhook message, from FILE or stdin (-). Exit 0 when the signature holds,\n1 with the reason when it does not.\n\nFlags:\n")
		fs.PrintDefaults()
	}
	if err := parseFlagsArgs(fs, args, c.Stdout, 1); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return &usageError{"name the receipt: luban verify FILE, or - for stdin"}
	}
	var in []byte
	var err error
	if name := fs.Arg(0); name == "-" {
		in, err = io.ReadAll(io.LimitReader(c.Stdin, 1<<20))
	} else {
		in, err = os.ReadFile(name)
	}
	if err != nil {
		return err
	}
	path := *keysFile
	if path == "" {
		path = c.keyFile(*db)
	}
	set, err := readJWKS(path)
	if err != nil {
		return err
	}
	jws, rc, hook, err := receiptJWS(in)
	if err != nil {
		return err
	}
	claims, err := signing.VerifyReceipt(jws, set)
	if err != nil {
		return fmt.Errorf("not verified: %w", err)
	}
	if rc != nil {
		if err := matches(rc, claims, !hook); err != nil {
			return fmt.Errorf("not verified: %w", err)
		}
	}
	what := claims.Decision
	if claims.Tool != "" {
		what += " " + claims.Tool
	}
	fmt.Fprintf(c.Stdout, "verified: %s %s by %s at %s (request %s, session %s)\n", claims.Kind, what, claims.By,
		claims.At.UTC().Format(time.RFC3339), claims.RequestID, claims.SessionID)
	if claims.ArgsSHA256 != "" {
		fmt.Fprintf(c.Stdout, "arguments sha256 %s\n", claims.ArgsSHA256)
	}
	switch {
	case rc != nil && !hook && claims.AnswerSHA256 != "":
		fmt.Fprintln(c.Stdout, "the receipt's answer is the one signed")
	case claims.AnswerSHA256 != "":
		fmt.Fprintf(c.Stdout, "answer sha256 %s (the answer itself is not in what was checked)\n", claims.AnswerSHA256)
	}
	return nil
}

func (c *Verify) keyFile(db string) string {
	if c.Getenv != nil {
		if k := c.Getenv("LUBAN_SIGNING_KEYS"); k != "" {
			return k
		}
	}
	return keysPath(db, c.Getenv)
}

func getenv(g func(string) string, name, def string) string {
	if g != nil {
		if v := g(name); v != "" {
			return v
		}
	}
	return def
}

// readJWKS reads a JWKS file; private keys (the server's key file) count
// by their public half.
func readJWKS(path string) (*jose.JSONWebKeySet, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("keys: %w", err)
	}
	set, err := signing.ParseJWKS(b)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	for i, k := range set.Keys {
		if s, ok := k.Key.(crypto.Signer); ok {
			set.Keys[i].Key = s.Public()
		}
	}
	return set, nil
}

// receiptJWS finds the JWS in in: the text itself, or the "signature" of
// a receipt, of {"receipt": …}, or of a webhook message's data.receipt.
// The receipt, when there is one, is returned to be compared with what
// was signed; hook reports that it came from a webhook message, whose
// receipt carries no answer.
func receiptJWS(in []byte) (jws string, rc *api.Receipt, hook bool, err error) {
	s := strings.TrimSpace(string(in))
	if !strings.HasPrefix(s, "{") {
		if s == "" {
			return "", nil, false, errors.New("not verified: the input is empty")
		}
		return s, nil, false, nil
	}
	var top api.Receipt
	var doc struct {
		Receipt *api.Receipt `json:"receipt"`
		Data    *struct {
			Receipt *api.Receipt `json:"receipt"`
		} `json:"data"`
	}
	if err := json.Unmarshal(in, &top); err != nil {
		return "", nil, false, fmt.Errorf("not verified: the input is neither a JWS nor JSON: %v", err)
	}
	_ = json.Unmarshal(in, &doc)
	rc = &top
	switch {
	case doc.Data != nil && doc.Data.Receipt != nil:
		rc, hook = doc.Data.Receipt, true
	case doc.Receipt != nil:
		rc = doc.Receipt
	}
	if rc.Signature == "" {
		return "", nil, false, errors.New("not verified: the receipt carries no signature")
	}
	return rc.Signature, rc, hook, nil
}

// matches checks that a receipt says what its signature says: its
// request, session-free fields, status or decision, time and, when
// withAnswer (a receipt, not a webhook's), its answer.
func matches(rc *api.Receipt, c *api.ReceiptClaims, withAnswer bool) error {
	if rc.RequestID != "" && rc.RequestID != c.RequestID {
		return fmt.Errorf("the receipt is for request %s but its signature for %s", rc.RequestID, c.RequestID)
	}
	if !rc.ResolvedAt.IsZero() && !rc.ResolvedAt.Equal(c.At) {
		return fmt.Errorf("the receipt was resolved at %s but its signature says %s", rc.ResolvedAt.Format(time.RFC3339Nano), c.At.Format(time.RFC3339Nano))
	}
	if rc.Decision != "" && string(rc.Decision) != c.Decision {
		return fmt.Errorf("the receipt says %s but its signature says %s", rc.Decision, c.Decision)
	}
	if withAnswer && rc.Decision == "" && rc.Status != "" && string(rc.Status) != c.Decision {
		return fmt.Errorf("the receipt says %s but its signature says %s", rc.Status, c.Decision)
	}
	if rc.By != nil && rc.By.ID != "" && rc.By.ID != c.By {
		return fmt.Errorf("the receipt names %s but its signature %s", rc.By.ID, c.By)
	}
	if withAnswer && c.AnswerSHA256 != "" && signing.AnswerSHA256(rc) != c.AnswerSHA256 {
		return errors.New("the receipt's answer is not the one signed")
	}
	return nil
}

// Keys is `luban keys rotate` (docs/operations.md): a new signing key goes
// first in the key file; the old keys stay to verify what they signed.
type Keys struct {
	Stdout io.Writer
	Getenv func(string) string
}

// Run parses args and rotates.
func (c *Keys) Run(_ context.Context, args []string) error {
	fs := flag.NewFlagSet("keys", flag.ContinueOnError)
	file := fs.String("signing-keys", getenv(c.Getenv, "LUBAN_SIGNING_KEYS", ""), "the key file (LUBAN_SIGNING_KEYS); default: luban.keys.json beside --db")
	db := fs.String("db", getenv(c.Getenv, "LUBAN_DB", defaultDB(c.Getenv)), "the database luban serve uses (LUBAN_DB)")
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), "Usage: luban keys rotate [--signing-keys FILE | --db …]\n\nPuts a new signing key first in the key file; the old public keys stay in\nthe JWKS so that what they signed still verifies. Restart luban serve (every\nreplica) to sign with the new key.\n\nFlags:\n")
		fs.PrintDefaults()
	}
	if len(args) == 0 || args[0] != "rotate" {
		fs.Usage()
		return &usageError{"luban keys: the one subcommand is rotate"}
	}
	if err := parseFlags(fs, args[1:], c.Stdout); err != nil {
		return err
	}
	path := *file
	if path == "" {
		path = keysPath(*db, c.Getenv)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("keys: %w", err)
	}
	k, err := signing.Parse(b)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	if k, err = k.Rotated(); err != nil {
		return err
	}
	if err := k.Save(path); err != nil {
		return fmt.Errorf("keys: %w", err)
	}
	fmt.Fprintf(c.Stdout, "new signing key %s in %s (%d keys); restart luban serve to sign with it\n", k.KID(), path, len(k.JWKS().Keys))
	return nil
}
