package tenant

import (
	"bytes"
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"go.yaml.in/yaml/v3"
)

// StaticIssuer is the Identity.Issuer of a static token.
const StaticIssuer = "file"

// HashToken returns the hex SHA-256 of token, the form a token file stores
// it in. Tokens should be at least 32 random bytes: the file's hashes are
// unsalted, which is safe only for secrets nobody can guess.
func HashToken(token string) string {
	sum := sha256.Sum256([]byte(token))
	return hex.EncodeToString(sum[:])
}

// tokenFile is the YAML of a token file; ParseTokenFile shows it.
type tokenFile struct {
	Tokens []tokenEntry `yaml:"tokens"`
}

type tokenEntry struct {
	Name    string    `yaml:"name"`
	SHA256  string    `yaml:"sha256"`
	Tenant  string    `yaml:"tenant"`
	Scopes  []string  `yaml:"scopes"`
	Expires time.Time `yaml:"expires"`
}

type staticToken struct {
	hash [sha256.Size]byte
	id   Identity
}

// StaticVerifier verifies tokens listed, as SHA-256 hashes, in a token
// file, for deployments without an OAuth issuer. Reload reads the file
// again (the server calls it on SIGHUP); until a Reload succeeds the
// tokens read last stay in force.
type StaticVerifier struct {
	path   string
	tokens atomic.Pointer[map[[sha256.Size]byte]staticToken]
}

// NewStatic returns a StaticVerifier over the token file at path, which it
// reads once; see ParseTokenFile for the format.
func NewStatic(path string) (*StaticVerifier, error) {
	v := &StaticVerifier{path: path}
	if err := v.Reload(); err != nil {
		return nil, err
	}
	return v, nil
}

// Reload reads the token file again and, when it parses, replaces the
// tokens in force. On an error the old tokens stay, so a half-edited file
// locks nobody out and lets nobody new in.
func (v *StaticVerifier) Reload() error {
	data, err := os.ReadFile(v.path)
	if err != nil {
		return fmt.Errorf("tenant: token file: %w", err)
	}
	tokens, err := parseTokens(data)
	if err != nil {
		return fmt.Errorf("tenant: token file %s: %w", v.path, err)
	}
	byHash := make(map[[sha256.Size]byte]staticToken, len(tokens))
	for _, t := range tokens {
		byHash[t.hash] = t
	}
	v.tokens.Store(&byHash)
	return nil
}

// ParseTokenFile checks a token file's content without loading it:
//
//	tokens:
//	  - name: ci-bot                     # the Identity's Subject; unique
//	    sha256: <HashToken of the token> # unique
//	    tenant: t1                       # a safe id (ParseID)
//	    scopes: [files:read, files:write]
//	    expires: 2027-06-30T00:00:00Z    # optional
//
// Unknown keys are errors, so a misspelt "expires" does not make a token
// last forever.
func ParseTokenFile(data []byte) error {
	_, err := parseTokens(data)
	return err
}

func parseTokens(data []byte) ([]staticToken, error) {
	var f tokenFile
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(&f); err != nil && !errors.Is(err, io.EOF) {
		return nil, err
	}
	names := make(map[string]bool, len(f.Tokens))
	hashes := make(map[[sha256.Size]byte]bool, len(f.Tokens))
	tokens := make([]staticToken, 0, len(f.Tokens))
	for i, e := range f.Tokens {
		t, err := e.parse()
		if err != nil {
			return nil, fmt.Errorf("token %d (%q): %w", i+1, e.Name, err)
		}
		if names[e.Name] {
			return nil, fmt.Errorf("token %d: name %q used twice", i+1, e.Name)
		}
		if hashes[t.hash] {
			return nil, fmt.Errorf("token %d (%q): the same token as an earlier entry", i+1, e.Name)
		}
		names[e.Name], hashes[t.hash] = true, true
		tokens = append(tokens, t)
	}
	return tokens, nil
}

func (e tokenEntry) parse() (staticToken, error) {
	var t staticToken
	if strings.TrimSpace(e.Name) == "" {
		return t, errors.New("no name")
	}
	h, err := hex.DecodeString(e.SHA256)
	if err != nil || len(h) != sha256.Size {
		return t, errors.New("sha256 is not 64 hex digits (tenant.HashToken of the token)")
	}
	copy(t.hash[:], h)
	tenant, err := ParseID(e.Tenant)
	if err != nil {
		return t, fmt.Errorf("tenant: %w", err)
	}
	t.id = Identity{Issuer: StaticIssuer, Subject: e.Name, Tenant: tenant, Scopes: e.Scopes, Expiry: e.Expires}
	return t, nil
}

// Verify finds token among the file's. It looks the token up by its
// SHA-256, so the time a lookup takes depends on the hash, which tells a
// guesser nothing about any token, and compares the entry it found in
// constant time. An unknown or expired token gets an error matching
// auth.ErrInvalidToken.
func (v *StaticVerifier) Verify(_ context.Context, token string) (*Identity, error) {
	sum := sha256.Sum256([]byte(token))
	found, ok := (*v.tokens.Load())[sum]
	if !ok || subtle.ConstantTimeCompare(sum[:], found.hash[:]) != 1 {
		return nil, invalidToken("unknown token")
	}
	if !found.id.Expiry.IsZero() && !time.Now().Before(found.id.Expiry) {
		return nil, invalidToken("token %q expired at %s", found.id.Subject, found.id.Expiry.Format(time.RFC3339))
	}
	id := found.id
	id.Scopes = slices.Clone(id.Scopes)
	return &id, nil
}
