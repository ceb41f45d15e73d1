package sftpadapter

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/fencefs/fencefs/backend"
	"github.com/pkg/sftp"
	"golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/knownhosts"
)

func testKey(t *testing.T) (ssh.Signer, []byte) {
	t.Helper()
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	signer, err := ssh.NewSignerFromKey(priv)
	if err != nil {
		t.Fatal(err)
	}
	block, err := ssh.MarshalPrivateKey(priv, "")
	if err != nil {
		t.Fatal(err)
	}
	return signer, pem.EncodeToMemory(block)
}

func TestClientConfig(t *testing.T) {
	signer, keyPEM := testKey(t)
	keyFile := filepath.Join(t.TempDir(), "id")
	if err := os.WriteFile(keyFile, keyPEM, 0o600); err != nil {
		t.Fatal(err)
	}
	known := filepath.Join(t.TempDir(), "known_hosts")
	if err := os.WriteFile(known, []byte(knownhosts.Line([]string{"example.net:2222"}, signer.PublicKey())+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	base := Config{Addr: "example.net:2222", User: "u", Password: "p", HostKey: signer.PublicKey()}
	tests := []struct {
		name    string
		edit    func(c *Config)
		wantErr error  // matched with errors.Is when set
		errText string // otherwise a substring of the error
		auth    int    // number of auth methods when it succeeds
	}{
		{"pinned key and password", func(c *Config) {}, nil, "", 1},
		{"no host key check", func(c *Config) { c.HostKey = nil }, ErrNoHostKeyCheck, "", 0},
		{"two host key checks", func(c *Config) { c.InsecureIgnoreHostKey = true }, nil, "only one", 0},
		{"insecure asked for", func(c *Config) { c.HostKey, c.InsecureIgnoreHostKey = nil, true }, nil, "", 1},
		{"known_hosts", func(c *Config) { c.HostKey, c.KnownHostsFile = nil, known }, nil, "", 1},
		{"missing known_hosts", func(c *Config) { c.HostKey, c.KnownHostsFile = nil, known+".missing" }, fs.ErrNotExist, "", 0},
		{"no credentials", func(c *Config) { c.Password = "" }, nil, "no credentials", 0},
		{"key and password", func(c *Config) { c.PrivateKey = keyPEM }, nil, "", 2},
		{"key file", func(c *Config) { c.Password, c.KeyFile = "", keyFile }, nil, "", 1},
		{"missing key file", func(c *Config) { c.KeyFile = keyFile + ".missing" }, fs.ErrNotExist, "", 0},
		{"bad key", func(c *Config) { c.PrivateKey = []byte("not a key") }, nil, "private key", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := base
			tt.edit(&cfg)
			conf, err := clientConfig(cfg, withDefaultPort(cfg.Addr))
			switch {
			case tt.wantErr != nil:
				if !errors.Is(err, tt.wantErr) {
					t.Fatalf("error = %v, want %v", err, tt.wantErr)
				}
			case tt.errText != "":
				if err == nil || !strings.Contains(err.Error(), tt.errText) {
					t.Fatalf("error = %v, want one mentioning %q", err, tt.errText)
				}
			case err != nil:
				t.Fatal(err)
			case len(conf.Auth) != tt.auth:
				t.Errorf("%d auth methods, want %d", len(conf.Auth), tt.auth)
			}
		})
	}
}

func TestHostKeyCallbackTagsRejections(t *testing.T) {
	signer, _ := testKey(t)
	other, _ := testKey(t)
	known := filepath.Join(t.TempDir(), "known_hosts")
	if err := os.WriteFile(known, []byte(knownhosts.Line([]string{"example.net:2222"}, signer.PublicKey())+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	remote := &net.TCPAddr{IP: net.IPv4(192, 0, 2, 1), Port: 2222}
	for _, cfg := range []Config{
		{Addr: "example.net:2222", User: "u", Password: "p", HostKey: signer.PublicKey()},
		{Addr: "example.net:2222", User: "u", Password: "p", KnownHostsFile: known},
	} {
		conf, err := clientConfig(cfg, cfg.Addr)
		if err != nil {
			t.Fatal(err)
		}
		if err := conf.HostKeyCallback("example.net:2222", remote, signer.PublicKey()); err != nil {
			t.Errorf("the right key was refused: %v", err)
		}
		if err := conf.HostKeyCallback("example.net:2222", remote, other.PublicKey()); !errors.Is(err, ErrHostKey) {
			t.Errorf("a wrong key gave %v, want ErrHostKey", err)
		}
		if got := conf.HostKeyAlgorithms; len(got) != 1 || got[0] != ssh.KeyAlgoED25519 {
			t.Errorf("host key algorithms %q, want only the known key's", got)
		}
	}
}

func TestWithDefaultPort(t *testing.T) {
	for in, want := range map[string]string{
		"host":       "host:22",
		"host:2222":  "host:2222",
		"127.0.0.1":  "127.0.0.1:22",
		"[::1]:2022": "[::1]:2022",
		"::1":        "[::1]:22",
	} {
		if got := withDefaultPort(in); got != want {
			t.Errorf("withDefaultPort(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestCheckPath(t *testing.T) {
	long := strings.Repeat("x", maxNameBytes)
	tests := []struct {
		name string
		want error
	}{
		{".", nil},
		{"a/b", nil},
		{long, nil},
		{"a/" + long + "y", backend.ErrNameTooLong},
		{"/abs", backend.ErrInvalidPath},
		{"a/../b", backend.ErrInvalidPath},
		{"", backend.ErrInvalidPath},
	}
	for _, tt := range tests {
		err := checkPath("op", tt.name)
		if tt.want == nil && err != nil || tt.want != nil && !errors.Is(err, tt.want) {
			t.Errorf("checkPath(%.20q) = %v, want %v", tt.name, err, tt.want)
		}
	}
}

func TestIsTempName(t *testing.T) {
	if n := tempName(); !isTempName(n) {
		t.Errorf("tempName() = %q is not recognised", n)
	}
	pattern := regexp.MustCompile(stagingPattern)
	for _, n := range []string{".fencefs-.tmp", ".fencefs-0123456789abcdeg.tmp", "fencefs-0123456789abcdef.tmp", ".fencefs-0123456789abcdef.tmpx", "notes.tmp"} {
		if isTempName(n) || pattern.MatchString(n) {
			t.Errorf("isTempName(%q) = %v, declared pattern matches: %v", n, isTempName(n), pattern.MatchString(n))
		}
	}
	for _, n := range []string{tempName(), ".fencefs-0123456789ABCDEF.tmp"} {
		if !isTempName(n) || !pattern.MatchString(n) {
			t.Errorf("isTempName(%q) = %v, declared pattern matches: %v", n, isTempName(n), pattern.MatchString(n))
		}
		if err := checkPath("op", "d/"+n); !errors.Is(err, backend.ErrInvalidPath) {
			t.Errorf("checkPath(d/%s) = %v, want ErrInvalidPath", n, err)
		}
	}
}

func TestUnderRoot(t *testing.T) {
	tests := []struct {
		root, p, want string
		ok            bool
	}{
		{"/home/u/root", "/home/u/root", ".", true},
		{"/home/u/root", "/home/u/root/", ".", true},
		{"/home/u/root", "/home/u/root/a/b", "a/b", true},
		{"/home/u/root", "//home/./u/root/a", "a", true},
		{"/home/u/root", "/home/u/root/../x", "../x", true}, // the caller resolves ".."
		{"/home/u/root", "/home/u/root0/a", "", false},
		{"/home/u/root", "/home/u/../u/root/a", "", false},
		{"/home/u/root", "/home/u", "", false},
		{"/home/u/root", "/etc/passwd", "", false},
		{"/", "/etc/passwd", "etc/passwd", true},
		{"/", "/", ".", true},
	}
	for _, tt := range tests {
		f := &FS{root: tt.root}
		got, ok := f.underRoot(tt.p)
		if got != tt.want || ok != tt.ok {
			t.Errorf("underRoot(%q) in %q = %q, %v; want %q, %v", tt.p, tt.root, got, ok, tt.want, tt.ok)
		}
	}
}

func TestCleanBelow(t *testing.T) {
	tests := []struct {
		in, want string
		ok       bool
	}{
		{".", ".", true},
		{"a/b", "a/b", true},
		{"a/../b", "b", true},
		{"a/..", ".", true},
		{"../x", "", false},
		{"a/../../x", "", false},
	}
	for _, tt := range tests {
		got, ok := cleanBelow(tt.in)
		if got != tt.want || ok != tt.ok {
			t.Errorf("cleanBelow(%q) = %q, %v; want %q, %v", tt.in, got, ok, tt.want, tt.ok)
		}
	}
}

// FuzzLinkTargetContained checks that mapping an absolute link target
// onto the root never yields a path outside it.
func FuzzLinkTargetContained(f *testing.F) {
	for _, s := range []string{"/r/a", "/r/../r/a", "/r/a/../../b", "/r0/a", "/r/./a//b", "/"} {
		f.Add("/r", s)
	}
	f.Add("/", "/a/../..")
	f.Fuzz(func(t *testing.T, root, p string) {
		if !strings.HasPrefix(root, "/") || path.Clean(root) != root || !strings.HasPrefix(p, "/") {
			return
		}
		fsys := &FS{root: root}
		rest, ok := fsys.underRoot(p)
		if ok {
			rest, ok = cleanBelow(rest)
		}
		if !ok {
			return
		}
		if rest != "." && (strings.HasPrefix(rest, "/") || slices.Contains(strings.Split(rest, "/"), "..")) {
			t.Fatalf("%q in %q mapped to %q", p, root, rest)
		}
		if full := path.Join(root, rest); full != root && !strings.HasPrefix(full, strings.TrimSuffix(root, "/")+"/") {
			t.Fatalf("%q in %q mapped to %q, outside", p, root, rest)
		}
	})
}

func TestMapErr(t *testing.T) {
	status := func(code uint32) error { return &sftp.StatusError{Code: code} }
	tests := []struct {
		in   error
		want error
	}{
		{os.ErrNotExist, fs.ErrNotExist},
		{&fs.PathError{Op: "open", Path: "/home/u/x", Err: os.ErrPermission}, fs.ErrPermission},
		{status(2), fs.ErrNotExist},
		{status(3), fs.ErrPermission},
		{status(5), fs.ErrInvalid},
		{status(8), errors.ErrUnsupported},
		{&os.LinkError{Op: "rename", Old: "/a", New: "/b", Err: os.ErrExist}, fs.ErrExist},
	}
	for _, tt := range tests {
		got := mapErr(tt.in)
		if !errors.Is(got, tt.want) {
			t.Errorf("mapErr(%v) = %v, want %v", tt.in, got, tt.want)
		}
		if strings.Contains(fmt.Sprint(got), "/home/u") {
			t.Errorf("mapErr(%v) kept a server path: %v", tt.in, got)
		}
	}
}

func TestIsTransportErr(t *testing.T) {
	tests := []struct {
		err  error
		want bool
	}{
		{nil, false},
		{io.EOF, false},
		{os.ErrNotExist, false},
		{&sftp.StatusError{Code: 4}, false},
		{backend.ErrNotDir, false},
		{sftp.ErrSSHFxConnectionLost, true},
		{fmt.Errorf("failed to send packet: %w", io.EOF), true},
		{io.ErrUnexpectedEOF, true},
		{&fs.PathError{Op: "read", Path: "x", Err: net.ErrClosed}, true},
		{syscall.ECONNRESET, true},
		{context.DeadlineExceeded, false},
		{&net.OpError{Op: "read", Err: errors.New("boom")}, true},
		{&fs.PathError{Op: "write", Path: "x", Err: syscall.EFBIG}, false},
		{syscall.EMFILE, false},
	}
	for _, tt := range tests {
		if got := isTransportErr(tt.err); got != tt.want {
			t.Errorf("isTransportErr(%v) = %v, want %v", tt.err, got, tt.want)
		}
	}
}
