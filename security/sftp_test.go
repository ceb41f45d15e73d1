package security

import (
	"context"
	"io"
	"io/fs"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/pkg/sftp"
	"golang.org/x/crypto/ssh"

	"github.com/fencefs/fencefs/conformance/containers"
	"github.com/fencefs/fencefs/internal/testserver"
	"github.com/fencefs/fencefs/sftpadapter"
	"github.com/fencefs/fencefs/tools"
)

// fakeEntry is a directory entry a hostile server makes up.
type fakeEntry struct {
	name string
	mode fs.FileMode
}

func (e fakeEntry) Name() string       { return e.name }
func (e fakeEntry) Size() int64        { return 64 }
func (e fakeEntry) Mode() fs.FileMode  { return e.mode }
func (e fakeEntry) ModTime() time.Time { return time.Unix(1, 0) }
func (e fakeEntry) IsDir() bool        { return e.mode.IsDir() }
func (e fakeEntry) Sys() any           { return nil }

// entries is a fixed directory listing.
type entries []os.FileInfo

func (l entries) ListAt(out []os.FileInfo, off int64) (int, error) {
	if off >= int64(len(l)) {
		return 0, io.EOF
	}
	n := copy(out, l[off:])
	if n < len(out) {
		return n, io.EOF
	}
	return n, nil
}

// hostileLister adds made-up entries to the listings of one directory
// and passes everything else to the in-memory server's handlers.
type hostileLister struct {
	inner sftp.FileLister
	dir   string
	fake  []os.FileInfo
}

func (h *hostileLister) Filelist(r *sftp.Request) (sftp.ListerAt, error) {
	l, err := h.inner.Filelist(r)
	if err != nil || r.Method != "List" || r.Filepath != h.dir {
		return l, err
	}
	all := make([]os.FileInfo, 64)
	n, _ := l.ListAt(all, 0)
	return append(entries(all[:n:n]), h.fake...), nil
}

func (h *hostileLister) Lstat(r *sftp.Request) (sftp.ListerAt, error) {
	return h.inner.(sftp.LstatFileLister).Lstat(r)
}

func (h *hostileLister) Readlink(p string) (string, error) {
	return h.inner.(sftp.ReadlinkFileLister).Readlink(p)
}

// hostileNames are names a hostile SFTP server returns in the listing
// of the root: with "/" and "..", empty, dot names, with NUL bytes. Each
// would name the canary file outside the root, or alias another name, if
// it were believed.
var hostileNames = []fakeEntry{
	{"../secret.txt", 0o644}, {"../../secret.txt", 0o644}, {"sub/../../secret.txt", 0o644},
	{"x/../../secret.txt", 0o644}, {"/secret.txt", 0o644}, {"..", fs.ModeDir | 0o755}, {".", fs.ModeDir | 0o755},
	{"", 0o644}, {"../", fs.ModeDir | 0o755}, {"secret.txt\x00", 0o644}, {"a\x00../secret.txt", 0o644},
	{"../ws-evil", fs.ModeDir | 0o755}, {"sub/b.txt", 0o644}, {"/", fs.ModeDir | 0o755},
}

// TestSFTPHostileServerNames serves the root through an SFTP server that
// lists made-up names holding "/", ".." or NUL: no tool shows them, reads
// through them or lists the outside they point at.
func TestSFTPHostileServerNames(t *testing.T) {
	s := newSecrets()
	h := sftp.InMemHandler()
	fake := make([]os.FileInfo, len(hostileNames))
	for i, e := range hostileNames {
		fake[i] = e
	}
	h.FileList = &hostileLister{inner: h.FileList, dir: "/ws", fake: fake}
	addr, hostKey := testserver.StartSFTP(t, testserver.SFTPConfig{User: "agent", Password: "pw", Handlers: &h})
	ctx := t.Context()
	cfg := sftpadapter.Config{Addr: addr, User: "agent", Password: "pw", HostKey: hostKey, Root: "/ws"}
	arrangeInMem(t, cfg, baseLayout(s))
	b, err := sftpadapter.Dial(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	w := &world{kind: "sftp-hostile", s: s, b: b, root: "ws/"}
	set := w.set(t, tools.Options{})
	for _, tool := range tools.AllTools() {
		for _, p := range []string{".", "secret.txt", "sub", "ws-evil/secret.txt"} {
			_, out, err := w.attack(t, set, probe{tool: tool, args: pathArgs(tool, p), echo: p}, nil)
			if err == nil && tool == listDirectory && p == "." {
				for _, bad := range []string{"..", "\x00", "/secret", "x/", "ws-evil"} {
					if strings.Contains(out, bad) {
						t.Errorf("list_directory shows a made-up name (%q):\n%s", bad, out)
					}
				}
			}
		}
	}
}

// arrangeInMem creates layout l (files and directories) on the server of
// cfg at "/", with a plain SFTP client.
func arrangeInMem(t *testing.T, cfg sftpadapter.Config, l layout) {
	t.Helper()
	conn, err := ssh.Dial("tcp", cfg.Addr, &ssh.ClientConfig{User: cfg.User, Auth: []ssh.AuthMethod{ssh.Password(cfg.Password)},
		HostKeyCallback: ssh.FixedHostKey(cfg.HostKey), Timeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	c, err := sftp.NewClient(conn)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	for _, name := range l.sorted() {
		n := l[name]
		p := "/" + name
		if err := c.MkdirAll(p[:strings.LastIndexByte(p, '/')+1]); err != nil {
			t.Fatalf("arranging %s: %v", name, err)
		}
		switch n.kind {
		case nFile:
			f, err := c.Create(p)
			if err != nil {
				t.Fatalf("arranging %s: %v", name, err)
			}
			_, err = f.Write([]byte(n.data))
			f.Close()
			if err != nil {
				t.Fatalf("arranging %s: %v", name, err)
			}
		case nDir:
			if err := c.MkdirAll(p); err != nil {
				t.Fatalf("arranging %s: %v", name, err)
			}
		default:
			t.Fatalf("cannot arrange %s", name)
		}
	}
}

// oddServerNames are names a real server holds inside the root that no
// storage path can have (invalid UTF-8, backslashes, "~", control
// characters): each file holds the canary, which must
// never be shown, under that name or any other.
var oddServerNames = []string{`$'\xff\xfe.txt'`, `'a\..\..\b.txt'`, `'~home.txt'`, `$'nl\nsecret.txt'`, `$'cr\rx.txt'`, `$'tab\tx.txt'`}

// TestSFTPServerOddNames plants files with names no storage path can have
// in the root on a real SFTP server (created in the container): no tool
// shows their content, and walks go on past them.
func TestSFTPServerOddNames(t *testing.T) {
	forWorlds(t, []string{kindSFTP}, baseLayout, func(t *testing.T, w *world) {
		srv := sftpsrv.Get(t)
		script := "set -e; cd " + containers.ShellQuote(w.absParent+"/ws") + "; for f in " + strings.Join(oddServerNames, " ") +
			`; do printf '%s\n' ` + containers.ShellQuote(w.s.tok) + ` > "$f"; chown ` + containers.SFTPUser + `: "$f"; done`
		if out, err := srv.Exec(context.WithoutCancel(t.Context()), script); err != nil {
			t.Fatalf("planting odd names: %v: %s", err, out)
		}
		w.attackPaths(t, w.set(t, tools.Options{}), []pathCase{{".", contained, ""}, {"sub", contained, ""}, {"a.txt", contained, ""}})
	})
}
