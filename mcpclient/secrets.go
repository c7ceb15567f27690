package mcpclient

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
)

// SecretFile keeps the OAuth grants of the MCP servers (docs/design.md §11,
// "OAuth") in one file, each grant sealed with AES-256-GCM under a key kept
// in a second file beside it (created with 32 random bytes on first use).
// Both files are written with mode 0600; the grants file is replaced
// atomically (a temporary file renamed over it). A grant sealed under
// another key, or tampered with, reads as no grant: the server then asks a
// person again, and nothing else breaks. SecretFile implements TokenStore.
type SecretFile struct {
	// Path is the grants file (luban.oauth beside the database).
	Path string
	// KeyPath is the key file (luban.secret.key beside the database).
	KeyPath string

	mu  sync.Mutex
	key []byte
}

// NewSecretFile returns the store of the grants in dir: dir/luban.oauth,
// sealed with the key dir/luban.secret.key.
func NewSecretFile(dir string) *SecretFile {
	return &SecretFile{Path: filepath.Join(dir, "luban.oauth"), KeyPath: filepath.Join(dir, "luban.secret.key")}
}

// loadKey reads the key file, creating it (and its directory) when it does
// not exist. A key file that is not 32 bytes is an error naming it.
func (f *SecretFile) loadKey() ([]byte, error) {
	if f.key != nil {
		return f.key, nil
	}
	k, err := os.ReadFile(f.KeyPath)
	if errors.Is(err, fs.ErrNotExist) {
		k = make([]byte, 32)
		if _, err := rand.Read(k); err != nil {
			return nil, err
		}
		if err := os.MkdirAll(filepath.Dir(f.KeyPath), 0o700); err != nil {
			return nil, err
		}
		// O_EXCL: two processes creating the key at once keep one of them.
		w, err := os.OpenFile(f.KeyPath, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if errors.Is(err, fs.ErrExist) {
			return f.loadKey()
		}
		if err != nil {
			return nil, err
		}
		if _, err := w.Write(k); err != nil {
			w.Close()
			return nil, err
		}
		if err := w.Close(); err != nil {
			return nil, err
		}
	} else if err != nil {
		return nil, err
	}
	if len(k) != 32 {
		return nil, fmt.Errorf("%s: a secret key file holds 32 bytes, this one %d", f.KeyPath, len(k))
	}
	f.key = k
	return k, nil
}

func (f *SecretFile) aead() (cipher.AEAD, error) {
	k, err := f.loadKey()
	if err != nil {
		return nil, err
	}
	b, err := aes.NewCipher(k)
	if err != nil {
		return nil, err
	}
	return cipher.NewGCM(b)
}

// readAll reads the file's sealed grants by server name (none when the
// file does not exist).
func (f *SecretFile) readAll() (map[string]string, error) {
	b, err := os.ReadFile(f.Path)
	if errors.Is(err, fs.ErrNotExist) {
		return map[string]string{}, nil
	}
	if err != nil {
		return nil, err
	}
	m := map[string]string{}
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("%s: %w", f.Path, err)
	}
	return m, nil
}

// Load returns the grant of server, nil when there is none (or it cannot
// be opened with the key: sealed under another key, or altered).
func (f *SecretFile) Load(server string) (*Grant, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	m, err := f.readAll()
	if err != nil {
		return nil, err
	}
	sealed, ok := m[server]
	if !ok {
		return nil, nil
	}
	a, err := f.aead()
	if err != nil {
		return nil, err
	}
	b, err := base64.StdEncoding.DecodeString(sealed)
	if err != nil || len(b) < a.NonceSize() {
		return nil, nil
	}
	plain, err := a.Open(nil, b[:a.NonceSize()], b[a.NonceSize():], []byte(server))
	if err != nil {
		return nil, nil
	}
	var g Grant
	if err := json.Unmarshal(plain, &g); err != nil {
		return nil, nil
	}
	return &g, nil
}

// Save seals g as server's grant (nil removes it) and replaces the file.
func (f *SecretFile) Save(server string, g *Grant) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	m, err := f.readAll()
	if err != nil {
		return err
	}
	if g == nil {
		delete(m, server)
	} else {
		a, err := f.aead()
		if err != nil {
			return err
		}
		plain, err := json.Marshal(g)
		if err != nil {
			return err
		}
		nonce := make([]byte, a.NonceSize())
		if _, err := rand.Read(nonce); err != nil {
			return err
		}
		// The server's name is the additional data: a grant copied to
		// another server's entry does not open.
		m[server] = base64.StdEncoding.EncodeToString(a.Seal(nonce, nonce, plain, []byte(server)))
	}
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(f.Path), 0o700); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(f.Path), ".luban.oauth-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if err := tmp.Chmod(0o600); err != nil {
		tmp.Close()
		return err
	}
	if _, err := tmp.Write(b); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), f.Path)
}
