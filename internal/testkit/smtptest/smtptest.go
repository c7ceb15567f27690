// Package smtptest runs a real SMTP server (github.com/emersion/go-smtp) on
// loopback for tests: STARTTLS with a certificate of its own CA, AUTH
// PLAIN with one username and password, and every accepted message
// recorded with what the conversation proved (TLS, the login) and its
// parsed text and HTML parts.
package smtptest

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/pem"
	"errors"
	"io"
	"math/big"
	"mime"
	"mime/multipart"
	"mime/quotedprintable"
	"net"
	"net/mail"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/emersion/go-sasl"
	"github.com/emersion/go-smtp"
	"github.com/stretchr/testify/require"
)

// Message is one mail the server accepted.
type Message struct {
	From string
	To   []string
	// TLS reports that the conversation had switched to TLS (STARTTLS)
	// before MAIL FROM; User is who logged in with AUTH ("" for nobody).
	TLS  bool
	User string
	// Raw is the message as received; Header its parsed header.
	Raw    []byte
	Header mail.Header
	// Text and HTML are the decoded text/plain and text/html parts, with
	// "\n" line ends.
	Text, HTML string
}

// Server is a running SMTP server. Addr is its host:port; Username and
// Password are the only login it accepts; ClientTLS trusts its certificate.
type Server struct {
	Addr, Username, Password string
	ClientTLS                *tls.Config
	// CertPEM is the server's certificate in PEM (a process told
	// SSL_CERT_FILE=<a file of it> trusts the server).
	CertPEM []byte
	// Messages receives every accepted message (buffered).
	Messages chan *Message
	srv      *smtp.Server
	ln       net.Listener
	mu       sync.Mutex
	all      []*Message
	// Fail, when set, is called at DATA; a non-nil error refuses the
	// message (4xx: the sender should retry).
	Fail func(m *Message) error
}

// Start starts a server on 127.0.0.1 (a new port, or addr when not empty)
// and stops it when the test ends.
func Start(t testing.TB, addr string) *Server {
	t.Helper()
	cert, pool := selfSigned(t)
	if addr == "" {
		addr = "127.0.0.1:0"
	}
	ln, err := net.Listen("tcp", addr)
	require.NoError(t, err)
	s := &Server{Addr: ln.Addr().String(), Username: "luban", Password: "s3cret-" + rand.Text()[:8], Messages: make(chan *Message, 100), ln: ln,
		ClientTLS: &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12},
		CertPEM:   pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: cert.Certificate[0]})}
	s.srv = smtp.NewServer(smtp.BackendFunc(func(c *smtp.Conn) (smtp.Session, error) { return &session{s: s, c: c}, nil }))
	s.srv.Domain = "smtptest.local"
	s.srv.TLSConfig = &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
	s.srv.AllowInsecureAuth = false // AUTH only after STARTTLS
	s.srv.MaxMessageBytes = 1 << 20
	s.srv.ReadTimeout, s.srv.WriteTimeout = 10*time.Second, 10*time.Second
	go func() { _ = s.srv.Serve(ln) }()
	t.Cleanup(func() { _ = s.srv.Close() })
	return s
}

// Close stops the server.
func (s *Server) Close() { _ = s.srv.Close() }

// All returns every accepted message so far.
func (s *Server) All() []*Message {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]*Message(nil), s.all...)
}

type session struct {
	s    *Server
	c    *smtp.Conn
	user string
	m    *Message
}

func (ss *session) AuthMechanisms() []string { return []string{sasl.Plain} }

func (ss *session) Auth(string) (sasl.Server, error) {
	return sasl.NewPlainServer(func(_, username, password string) error {
		if username != ss.s.Username || password != ss.s.Password {
			return errors.New("invalid username or password")
		}
		ss.user = username
		return nil
	}), nil
}

func (ss *session) Mail(from string, _ *smtp.MailOptions) error {
	if ss.user == "" {
		return smtp.ErrAuthRequired
	}
	_, tlsOn := ss.c.TLSConnectionState()
	ss.m = &Message{From: from, TLS: tlsOn, User: ss.user}
	return nil
}

func (ss *session) Rcpt(to string, _ *smtp.RcptOptions) error {
	ss.m.To = append(ss.m.To, to)
	return nil
}

func (ss *session) Data(r io.Reader) error {
	raw, err := io.ReadAll(r)
	if err != nil {
		return err
	}
	m := ss.m
	m.Raw = raw
	parsed, err := mail.ReadMessage(bytes.NewReader(raw))
	if err != nil {
		return &smtp.SMTPError{Code: 554, Message: "unparsable message: " + err.Error()}
	}
	m.Header = parsed.Header
	if err := parts(m, parsed.Header.Get("Content-Type"), parsed.Header.Get("Content-Transfer-Encoding"), parsed.Body); err != nil {
		return &smtp.SMTPError{Code: 554, Message: "unparsable body: " + err.Error()}
	}
	if ss.s.Fail != nil {
		if err := ss.s.Fail(m); err != nil {
			return &smtp.SMTPError{Code: 451, Message: err.Error()}
		}
	}
	ss.s.mu.Lock()
	ss.s.all = append(ss.s.all, m)
	ss.s.mu.Unlock()
	ss.s.Messages <- m
	return nil
}

// parts decodes the text/plain and text/html parts of a body into m.
func parts(m *Message, ctype, cte string, body io.Reader) error {
	mt, params, err := mime.ParseMediaType(ctype)
	if err != nil {
		return err
	}
	if strings.HasPrefix(mt, "multipart/") {
		mr := multipart.NewReader(body, params["boundary"])
		for {
			p, err := mr.NextRawPart()
			if errors.Is(err, io.EOF) {
				return nil
			}
			if err != nil {
				return err
			}
			if err := parts(m, p.Header.Get("Content-Type"), p.Header.Get("Content-Transfer-Encoding"), p); err != nil {
				return err
			}
		}
	}
	var r io.Reader = body
	switch strings.ToLower(cte) {
	case "quoted-printable":
		r = quotedprintable.NewReader(body)
	case "base64":
		r = base64.NewDecoder(base64.StdEncoding, body) // line breaks are skipped
	}
	b, err := io.ReadAll(r)
	if err != nil {
		return err
	}
	text := strings.ReplaceAll(string(b), "\r\n", "\n")
	switch mt {
	case "text/plain":
		m.Text = text
	case "text/html":
		m.HTML = text
	}
	return nil
}

func (ss *session) Reset()        { ss.m = nil }
func (ss *session) Logout() error { return nil }

// selfSigned makes a CA-less self-signed certificate for 127.0.0.1 and
// localhost, and a pool that trusts it.
func selfSigned(t testing.TB) (tls.Certificate, *x509.CertPool) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "smtptest"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true, IsCA: true,
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, DNSNames: []string{"localhost"}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	require.NoError(t, err)
	leaf, err := x509.ParseCertificate(der)
	require.NoError(t, err)
	pool := x509.NewCertPool()
	pool.AddCert(leaf)
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key, Leaf: leaf}, pool
}
