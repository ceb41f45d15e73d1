package sftpadapter_test

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fencefs/fencefs/backend"
	"github.com/fencefs/fencefs/conformance"
	"github.com/fencefs/fencefs/conformance/containers"
	"github.com/fencefs/fencefs/sftpadapter"
	"github.com/pkg/sftp"
	"golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/knownhosts"
)

// sftpLargeFileSize keeps the streamed file big enough to need many
// packets and concurrent requests, and small enough for a quick suite.
const sftpLargeFileSize = 16 << 20

// TestSFTP runs the conformance suite and the SFTP-specific tests against
// one real OpenSSH server.
func TestSFTP(t *testing.T) {
	ctx := context.Background()
	srv := containers.StartSFTP(ctx, t)
	h := containers.NewSFTPHarness(srv)
	t.Run("Conformance", func(t *testing.T) {
		conformance.RunWith(t, h, conformance.RunOptions{
			LargeFileSize: sftpLargeFileSize,
			// SFTP has no versions, no local path, and checks preconditions
			// apart from the commit (Capabilities.AtomicPreconditions=false).
			ExpectedSkips: []string{
				"InvalidPaths/LocalPath", "Preconditions/MatchVersion*", "Preconditions/Concurrent*",
				"Changes/Concurrent*", "Changes/ChangesRefusedWhenReadOnly", "ReadOnly/*",
				"Reopen/MatchVersionAcrossValues", "Reopen/Concurrent*",
			},
			RequireAbilities: []conformance.Ability{
				conformance.AbilitySymlinker, conformance.AbilitySpecialFileMaker, conformance.AbilityRawLister,
				conformance.AbilityChmoder, conformance.AbilityReopener,
			},
		})
	})
	t.Run("SymlinksContained", func(t *testing.T) { testSymlinksContained(t, h) })
	t.Run("LinkLimit", func(t *testing.T) { testLinkLimit(t, h) })
	t.Run("OddNamesSkipped", func(t *testing.T) { testOddNames(t, h) })
	t.Run("NonRegularRefused", func(t *testing.T) { testNonRegular(t, h) })
	t.Run("HostKeyChecked", func(t *testing.T) { testHostKey(t, srv) })
	t.Run("PasswordLogin", func(t *testing.T) { testPasswordLogin(t, srv) })
	t.Run("PreconditionsSharedFS", func(t *testing.T) { testPreconditionsSharedFS(t, h) })
	t.Run("CreateOnlyAcrossClients", func(t *testing.T) { testCreateOnlyAcrossClients(t, h) })
	t.Run("ModeKeptOnReplace", func(t *testing.T) { testModeKept(t, h) })
	t.Run("PoolRoots", func(t *testing.T) { testPoolRoots(t, srv) })
}

// newFS makes a backend on a fresh root of the harness's server.
func newFS(t *testing.T, h *containers.SFTPHarness) *sftpadapter.FS {
	t.Helper()
	return h.MakeBackend(t.Context(), t).(*sftpadapter.FS)
}

// wantErr fails unless err matches target and is an *fs.PathError that
// names a storage path, not a server path.
func wantErr(t *testing.T, what string, err, target error) {
	t.Helper()
	if !errors.Is(err, target) {
		t.Errorf("%s: error = %v, want %v", what, err, target)
		return
	}
	var pe *fs.PathError
	if !errors.As(err, &pe) {
		t.Errorf("%s: error %v (%T) is not an *fs.PathError", what, err, err)
		return
	}
	if strings.HasPrefix(pe.Path, "/") || strings.Contains(err.Error(), containers.SFTPHome) {
		t.Errorf("%s: error %q reveals a server path", what, err)
	}
}

// arrange runs fn with the harness's own client and fails t on error.
func arrange(t *testing.T, srv *containers.SFTPServer, fn func(c *sftp.Client) error) {
	t.Helper()
	c, err := srv.Client(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if err := fn(c); err != nil {
		t.Fatalf("arranging the server: %v", err)
	}
}

// putServer writes a file on the server with the harness's client.
func putServer(c *sftp.Client, p string, data []byte) error {
	f, err := c.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_TRUNC)
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

func testSymlinksContained(t *testing.T, h *containers.SFTPHarness) {
	ctx := t.Context()
	b := newFS(t, h)
	root := h.Root(t, b)
	sibling := root + "0" // shares the root's name as a prefix
	arrange(t, h.Server, func(c *sftp.Client) error {
		for _, d := range []string{root + "/dir", sibling} {
			if err := c.Mkdir(d); err != nil {
				return err
			}
		}
		if err := putServer(c, root+"/dir/file", []byte("inside")); err != nil {
			return err
		}
		if err := putServer(c, sibling+"/secret", []byte("next door")); err != nil {
			return err
		}
		links := [][2]string{
			{"../", "up"},
			{"/etc", "etc"},
			{"/etc/passwd", "passwd"},
			{root + "/dir/file", "inabs"},
			{root + "/../" + filepath.Base(root) + "/dir/file", "inabsdotdot"},
			{sibling + "/secret", "sib"},
			{"loop2", "loop1"},
			{"loop1", "loop2"},
			{"self", "self"},
			{"dir/file", "rel"},
			{"dir", "dirlink"},
			{"missing/x", "dangling"},
			{"dir/../dir/file", "dotdot"},
			{"../../..", "dir/climb"},
		}
		for _, l := range links {
			if err := c.Symlink(l[0], root+"/"+l[1]); err != nil {
				return err
			}
		}
		return nil
	})

	resolve := []struct {
		name, want string
		err        error
	}{
		{"up", "", backend.ErrOutside},
		{"etc", "", backend.ErrOutside},
		{"etc/passwd", "", backend.ErrOutside},
		{"passwd", "", backend.ErrOutside},
		{"sib", "", backend.ErrOutside},
		{"dir/climb", "", backend.ErrOutside},
		{"inabsdotdot", "", backend.ErrOutside},
		{"loop1", "", backend.ErrLoop},
		{"self/x", "", backend.ErrLoop},
		{"inabs", "dir/file", nil},
		{"rel", "dir/file", nil},
		{"dirlink/file", "dir/file", nil},
		{"dotdot", "dir/file", nil},
		{"dangling", "missing/x", nil},
		{"missing/a", "missing/a", nil},
		{"dir/file", "dir/file", nil},
	}
	for _, tt := range resolve {
		got, err := b.ResolveSymlinks(ctx, tt.name)
		if tt.err != nil {
			wantErr(t, fmt.Sprintf("ResolveSymlinks(%q)", tt.name), err, tt.err)
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("ResolveSymlinks(%q) = %q, %v; want %q", tt.name, got, err, tt.want)
		}
	}

	readlink := []struct {
		name, want string
		err        error
	}{
		{"etc", "", backend.ErrOutside},
		{"sib", "", backend.ErrOutside},
		{"inabs", "dir/file", nil},
		{"rel", "dir/file", nil},
		{"up", "../", nil},
		{"dir", "", fs.ErrInvalid},
	}
	for _, tt := range readlink {
		got, err := b.Readlink(ctx, tt.name)
		if tt.err != nil {
			wantErr(t, fmt.Sprintf("Readlink(%q)", tt.name), err, tt.err)
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("Readlink(%q) = %q, %v; want %q", tt.name, got, err, tt.want)
		}
	}

	// The backend's own operations never follow a link.
	_, err := b.OpenRead(ctx, "etc/passwd")
	wantErr(t, "OpenRead(etc/passwd)", err, backend.ErrSymlink)
	_, err = b.OpenRead(ctx, "passwd")
	wantErr(t, "OpenRead(passwd)", err, backend.ErrNotRegular)
	_, err = b.Stat(ctx, "etc/passwd")
	wantErr(t, "Stat(etc/passwd)", err, backend.ErrSymlink)
	_, err = b.List(ctx, "etc")
	wantErr(t, "List(etc)", err, backend.ErrSymlink)
	_, err = b.OpenWrite(ctx, "etc/evil", backend.WriteOptions{})
	wantErr(t, "OpenWrite(etc/evil)", err, backend.ErrSymlink)
	err = b.MkdirAll(ctx, "etc/evil")
	wantErr(t, "MkdirAll(etc/evil)", err, backend.ErrSymlink)
	_, err = b.OpenWrite(ctx, "passwd", backend.WriteOptions{})
	wantErr(t, "OpenWrite(passwd)", err, backend.ErrNotRegular)
	fi, err := b.Stat(ctx, "passwd")
	if err != nil || !fi.IsSymlink() {
		t.Errorf("Stat(passwd) = %+v, %v; want the link itself", fi, err)
	}
	var walked []string
	err = b.Walk(ctx, ".", func(name string, e backend.DirEntry) error {
		walked = append(walked, name)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range walked {
		if strings.HasPrefix(n, "etc/") || strings.HasPrefix(n, "dirlink/") || strings.HasPrefix(n, "up/") {
			t.Errorf("Walk followed a symlink: %q", n)
		}
	}
	data, err := h.Server.ReadServerFile(ctx, "/etc/passwd")
	if err != nil || len(data) == 0 {
		t.Fatalf("the link target should exist on the server: %v", err)
	}
}

func testLinkLimit(t *testing.T, h *containers.SFTPHarness) {
	ctx := t.Context()
	b := newFS(t, h)
	root := h.Root(t, b)
	// l0 -> l1 -> ... -> l40 -> file: l1 needs 40 links, l0 needs 41.
	arrange(t, h.Server, func(c *sftp.Client) error {
		if err := putServer(c, root+"/file", []byte("x")); err != nil {
			return err
		}
		for i := range 41 {
			target := fmt.Sprintf("l%d", i+1)
			if i == 40 {
				target = "file"
			}
			if err := c.Symlink(target, fmt.Sprintf("%s/l%d", root, i)); err != nil {
				return err
			}
		}
		return nil
	})
	if got, err := b.ResolveSymlinks(ctx, "l1"); err != nil || got != "file" {
		t.Errorf("ResolveSymlinks(l1) through 40 links = %q, %v; want file", got, err)
	}
	_, err := b.ResolveSymlinks(ctx, "l0")
	wantErr(t, "ResolveSymlinks(l0) through 41 links", err, backend.ErrLoop)
}

func testOddNames(t *testing.T, h *containers.SFTPHarness) {
	ctx := t.Context()
	b := newFS(t, h)
	root := h.Root(t, b)
	// Names a POSIX server allows and a storage path does not (or does),
	// made with a shell inside the container.
	script := fmt.Sprintf(`set -e
cd %s
mkdir sub
for d in . sub; do
	touch "$d/back\\slash" "$d/~tilde" "$d/$(printf 'new\nline')" "$d/$(printf 'bad\377utf8')" "$d/C:" "$d/ok" "$d/ sp"
done
chown -R %s: .`, containers.ShellQuote(root), containers.SFTPUser)
	if out, err := h.Server.Exec(ctx, script); err != nil {
		t.Fatalf("creating odd names: %v\n%s", err, out)
	}
	want := map[string][]string{
		".":   {" sp", "new\nline", "ok", "sub"},
		"sub": {" sp", "C:", "new\nline", "ok"}, // a drive-like name is only refused first
	}
	for dir, names := range want {
		entries, err := b.List(ctx, dir)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, e := range entries {
			got = append(got, e.Name)
		}
		slices.Sort(got)
		if !slices.Equal(got, names) {
			t.Errorf("List(%q) = %q, want %q", dir, got, names)
		}
	}
	var walked []string
	err := b.Walk(ctx, ".", func(name string, _ backend.DirEntry) error {
		if !backend.ValidPath(name) {
			t.Errorf("Walk reported %q, which is not a storage path", name)
		}
		walked = append(walked, name)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(walked) != 8 {
		t.Errorf("Walk reported %q, want the 8 valid paths", walked)
	}
	if data, err := backend.ReadFile(ctx, b, "sub/C:"); err != nil || len(data) != 0 {
		t.Errorf("ReadFile(sub/C:) = %q, %v", data, err)
	}
}

func testNonRegular(t *testing.T, h *containers.SFTPHarness) {
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	b := newFS(t, h)
	root := h.Root(t, b)
	h.MakeFIFO(ctx, t, b, "pipe")
	if out, err := h.Server.Exec(ctx, "mknod "+containers.ShellQuote(root+"/null")+" c 1 3"); err != nil {
		t.Fatalf("mknod: %v\n%s", err, out)
	}
	for name, typ := range map[string]fs.FileMode{"pipe": fs.ModeNamedPipe, "null": fs.ModeDevice | fs.ModeCharDevice} {
		fi, err := b.Stat(ctx, name)
		if err != nil || fi.Mode.Type() != typ {
			t.Errorf("Stat(%s) = %v, %v; want type %v", name, fi.Mode, err, typ)
		}
		r, err := b.OpenRead(ctx, name)
		if err == nil {
			r.Close()
		}
		wantErr(t, "OpenRead("+name+")", err, backend.ErrNotRegular)
		_, err = b.OpenWrite(ctx, name, backend.WriteOptions{})
		wantErr(t, "OpenWrite("+name+")", err, backend.ErrNotRegular)
	}
	if ctx.Err() != nil {
		t.Fatal("refusing special files took until the deadline: something blocked")
	}
}

func testHostKey(t *testing.T, srv *containers.SFTPServer) {
	ctx := t.Context()
	root := containers.SFTPHome
	_, other, _ := ed25519.GenerateKey(rand.Reader)
	otherSigner, err := ssh.NewSignerFromKey(other)
	if err != nil {
		t.Fatal(err)
	}
	rsaOut, err := srv.Exec(ctx, "cat /etc/ssh/ssh_host_rsa_key.pub")
	if err != nil {
		t.Fatal(err)
	}
	rsaKey, _, _, _, err := ssh.ParseAuthorizedKey([]byte(rsaOut))
	if err != nil {
		t.Fatal(err)
	}
	knownHosts := func(keys ...ssh.PublicKey) string {
		p := filepath.Join(t.TempDir(), "known_hosts")
		var b bytes.Buffer
		for _, k := range keys {
			fmt.Fprintln(&b, knownhosts.Line([]string{srv.Addr}, k))
		}
		if err := os.WriteFile(p, b.Bytes(), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	tests := []struct {
		name string
		edit func(c *sftpadapter.Config)
		want error // nil: the dial succeeds
	}{
		{"pinned", func(c *sftpadapter.Config) {}, nil},
		{"pinned rsa key", func(c *sftpadapter.Config) { c.HostKey = rsaKey }, nil},
		{"pinned other key", func(c *sftpadapter.Config) { c.HostKey = otherSigner.PublicKey() }, sftpadapter.ErrHostKey},
		{"known_hosts", func(c *sftpadapter.Config) {
			c.HostKey, c.KnownHostsFile = nil, knownHosts(srv.HostKey)
		}, nil},
		{"known_hosts rsa only", func(c *sftpadapter.Config) {
			c.HostKey, c.KnownHostsFile = nil, knownHosts(rsaKey)
		}, nil},
		{"known_hosts other key", func(c *sftpadapter.Config) {
			c.HostKey, c.KnownHostsFile = nil, knownHosts(otherSigner.PublicKey())
		}, sftpadapter.ErrHostKey},
		{"known_hosts without the host", func(c *sftpadapter.Config) {
			c.HostKey, c.KnownHostsFile = nil, knownHosts()
		}, sftpadapter.ErrHostKey},
		{"no host key method", func(c *sftpadapter.Config) { c.HostKey = nil }, sftpadapter.ErrNoHostKeyCheck},
		{"insecure, asked for", func(c *sftpadapter.Config) {
			c.HostKey, c.InsecureIgnoreHostKey = nil, true
		}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := srv.Config(root)
			tt.edit(&cfg)
			b, err := sftpadapter.Dial(ctx, cfg)
			if tt.want == nil {
				if err != nil {
					t.Fatalf("Dial: %v", err)
				}
				b.Close()
				return
			}
			if err == nil {
				b.Close()
			}
			if !errors.Is(err, tt.want) {
				t.Errorf("Dial = %v, want %v", err, tt.want)
			}
		})
	}
}

func testPasswordLogin(t *testing.T, srv *containers.SFTPServer) {
	cfg := srv.Config(containers.SFTPHome)
	cfg.PrivateKey, cfg.Password = nil, containers.SFTPPassword
	b, err := sftpadapter.Dial(t.Context(), cfg)
	if err != nil {
		t.Fatalf("Dial with a password: %v", err)
	}
	defer b.Close()
	cfg.Password = "wrong"
	if b, err := sftpadapter.Dial(t.Context(), cfg); err == nil {
		b.Close()
		t.Error("Dial with a wrong password succeeded")
	}
}

func sha(data []byte) string {
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}

// race runs n writers of name at once and returns how many committed and
// the errors of the others.
func race(ctx context.Context, bs []*sftpadapter.FS, name string, pre backend.Precondition) (int, []error) {
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		wins int
		errs []error
	)
	for i, b := range bs {
		wg.Go(func() {
			err := backend.WriteFile(ctx, b, name, []byte(fmt.Sprintf("writer %d", i)), backend.WriteOptions{Precondition: pre})
			mu.Lock()
			defer mu.Unlock()
			if err == nil {
				wins++
			} else {
				errs = append(errs, err)
			}
		})
	}
	wg.Wait()
	return wins, errs
}

// testPreconditionsSharedFS checks the documented guarantee: writers that
// share one FS see preconditions checked atomically with the commit.
func testPreconditionsSharedFS(t *testing.T, h *containers.SFTPHarness) {
	ctx := t.Context()
	b := newFS(t, h)
	const writers = 8
	shared := slices.Repeat([]*sftpadapter.FS{b}, writers)
	for round := range 3 {
		name := fmt.Sprintf("create-%d", round)
		wins, errs := race(ctx, shared, name, backend.Precondition{CreateOnly: true})
		if wins != 1 {
			t.Errorf("round %d: %d CreateOnly writers won, want 1", round, wins)
		}
		for _, err := range errs {
			wantErr(t, "losing CreateOnly", err, fs.ErrExist)
		}
		name = fmt.Sprintf("cas-%d", round)
		if err := backend.WriteFile(ctx, b, name, []byte("v0"), backend.WriteOptions{}); err != nil {
			t.Fatal(err)
		}
		wins, errs = race(ctx, shared, name, backend.Precondition{MatchHash: sha([]byte("v0"))})
		if wins != 1 {
			t.Errorf("round %d: %d MatchHash writers won, want 1", round, wins)
		}
		for _, err := range errs {
			wantErr(t, "losing MatchHash", err, backend.ErrPrecondition)
		}
	}
	raw := h.ListRaw(ctx, t, b)
	if len(raw) != 6 {
		t.Errorf("storage holds %q, want the 6 targets only", raw)
	}
}

// testCreateOnlyAcrossClients checks that CreateOnly holds between
// separate connections too, thanks to hardlink@openssh.com.
func testCreateOnlyAcrossClients(t *testing.T, h *containers.SFTPHarness) {
	ctx := t.Context()
	first := newFS(t, h)
	root := h.Root(t, first)
	clients := []*sftpadapter.FS{first}
	for range 5 {
		b, err := h.Server.Dial(ctx, root)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { b.Close() })
		clients = append(clients, b)
	}
	for round := range 3 {
		wins, errs := race(ctx, clients, fmt.Sprintf("c%d", round), backend.Precondition{CreateOnly: true})
		if wins != 1 {
			t.Errorf("round %d: %d CreateOnly writers on separate connections won, want 1", round, wins)
		}
		for _, err := range errs {
			wantErr(t, "losing CreateOnly", err, fs.ErrExist)
		}
	}
	if raw := h.ListRaw(ctx, t, first); len(raw) != 3 {
		t.Errorf("storage holds %q, want the 3 targets only", raw)
	}
}

func testModeKept(t *testing.T, h *containers.SFTPHarness) {
	ctx := t.Context()
	b := newFS(t, h)
	if err := backend.WriteFile(ctx, b, "run.sh", []byte("#!/bin/sh\n"), backend.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	h.Chmod(ctx, t, b, "run.sh", 0o751)
	if err := backend.WriteFile(ctx, b, "run.sh", []byte("#!/bin/sh\necho hi\n"), backend.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	fi, err := b.Stat(ctx, "run.sh")
	if err != nil || fi.Mode.Perm() != 0o751 {
		t.Errorf("after a replace, Stat = %v, %v; want mode 0751", fi.Mode, err)
	}
}

// readAll reads name through b.
func readAll(t *testing.T, ctx context.Context, b backend.Backend, name string) string {
	t.Helper()
	r, err := b.OpenRead(ctx, name)
	if err != nil {
		t.Fatalf("OpenRead(%s): %v", name, err)
	}
	defer r.Close()
	data, err := io.ReadAll(r)
	if err != nil {
		t.Fatalf("reading %s: %v", name, err)
	}
	return string(data)
}
