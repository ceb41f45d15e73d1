package security

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"syscall"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/pkg/sftp"
	"github.com/spf13/afero"

	"github.com/fencefs/fencefs/aferoadapter"
	"github.com/fencefs/fencefs/backend"
	"github.com/fencefs/fencefs/conformance/containers"
	"github.com/fencefs/fencefs/local"
	"github.com/fencefs/fencefs/mounted"
	"github.com/fencefs/fencefs/tools"
)

// The servers the remote worlds share; TestMain terminates them.
var (
	s3srv   = containers.Shared[*containers.S3Server]{Start: containers.StartS3Server, Image: containers.S3Image()}
	sftpsrv = containers.Shared[*containers.SFTPServer]{
		Start: func(ctx context.Context) (*containers.SFTPServer, error) { return containers.StartSFTPServer(ctx) },
		Image: containers.SFTPImage(),
	}
)

func TestMain(m *testing.M) {
	containers.SetTestcontainersDefaults()
	code := m.Run()
	serveBinary.remove()
	for _, s := range []interface{ Terminate(context.Context) error }{&s3srv, &sftpsrv} {
		if err := s.Terminate(context.Background()); err != nil {
			fmt.Fprintln(os.Stderr, "terminating a test server:", err)
		}
	}
	os.Exit(code)
}

// Kinds of world, one per backend configuration the suite attacks.
const (
	kindLocal   = "local"
	kindMounted = "mounted"
	kindAfero   = "afero"
	kindS3      = "s3"
	kindSFTP    = "sftp"
)

// allKinds lists every world kind, in the order subtests run.
var allKinds = []string{kindLocal, kindMounted, kindAfero, kindS3, kindSFTP}

// nodeKind is the type of one entry of a layout.
type nodeKind int

const (
	nFile nodeKind = iota
	nDir
	nLink
	nFIFO
)

// node is one entry of a layout: a file and its content, a directory, a
// symlink and its target, or a FIFO. A link target starting with "@"
// names a path below the world's parent directory by its absolute name
// (a host path for local disk, a server path for SFTP).
type node struct {
	kind nodeKind
	data string
}

func file(data string) node   { return node{kind: nFile, data: data} }
func dir() node               { return node{kind: nDir} }
func link(target string) node { return node{kind: nLink, data: target} }
func fifo() node              { return node{kind: nFIFO} }

// layout describes storage below a world's parent directory: the root
// "ws" and the outside around it, by paths relative to the parent.
type layout map[string]node

// needs reports which abilities a layout asks of a world.
func (l layout) needs() (links, fifos bool) {
	for _, n := range l {
		links = links || n.kind == nLink
		fifos = fifos || n.kind == nFIFO
	}
	return links, fifos
}

// sorted returns the layout's paths, parents first.
func (l layout) sorted() []string {
	names := make([]string, 0, len(l))
	for n := range l {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// secrets are the unique strings planted outside the root: tok is the
// content of every outside file, nameTok part of a file name in every
// outside directory. Neither may ever appear in a tool's output.
type secrets struct {
	tok, nameTok string
}

func newSecrets() secrets {
	return secrets{tok: "CANARY-" + randHex(8), nameTok: "nm" + randHex(8)}
}

func randHex(n int) string {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		panic(err)
	}
	return hex.EncodeToString(b)
}

// canaryPattern matches the canary content; a search with it finds
// nothing inside the root.
const canaryPattern = "CANARY"

// baseLayout is the tree most cases run on: a root "ws" with a few files,
// a protected .env and a private directory, and outside it sibling
// directories whose names extend the root's ("ws-evil", "ws2"), a plain
// outside directory, files next to the root (one named like a file inside
// it) and a read-only directory "ro" that a mounted world mounts.
func baseLayout(s secrets) layout {
	canary := file(s.tok + "\n")
	l := layout{
		"ws/a.txt":          file("hello inside\n"),
		"ws/sub/b.txt":      file("inside b\n"),
		"ws/sub/deep/c.txt": file("inside c\n"),
		"ws/.env":           file("INSIDE_ENV=1\n"),
		"ws/private/p.txt":  file("private inside\n"),
		"ro/r.txt":          file("read-only inside\n"),
		"secret.txt":        canary,
		"a.txt":             canary,
	}
	for _, d := range []string{"ws-evil", "ws2", "outside"} {
		l[d+"/secret.txt"] = canary
		l[d+"/a.txt"] = canary
		l[d+"/zz-"+s.nameTok+".txt"] = canary
	}
	return l
}

// snapshot maps every path below a world's parent directory to a
// description of its type, mode, size and content.
type snapshot map[string]string

// diff returns the paths whose description differs between a and b.
func (a snapshot) diff(b snapshot) []string {
	var out []string
	for k, v := range a {
		if b[k] != v {
			out = append(out, k)
		}
	}
	for k := range b {
		if _, ok := a[k]; !ok {
			out = append(out, k)
		}
	}
	slices.Sort(out)
	return out
}

// world is one backend configuration under attack: the backend whose
// root is the layout's "ws", and the means to inspect all of the storage
// around it behind the backend's back.
type world struct {
	kind string
	b    backend.Backend
	s    secrets
	// cwd is the Options.Cwd of the tool sets ("/ws" in a mounted world).
	cwd    string
	rooted bool
	// mounts and roMounts name the mounts of a rooted world.
	mounts, roMounts []string
	// hostAbs: absolute tool paths are host paths (local disk, plain).
	hostAbs bool
	// absParent is the absolute name of the parent directory that "@"
	// stands for in link targets and tool paths.
	absParent string
	// leaks are further strings no output may contain (host and server
	// paths of the storage).
	leaks []string
	// snap describes all of the storage below the parent directory.
	snap func(t *testing.T) snapshot
	// cheapSnap: snap is cheap enough to take around every call.
	cheapSnap bool
	// hostRoot is the host directory of the root on local disk, "" for
	// other storage.
	hostRoot string
	// root is the parent-relative storage prefix of paths the tools may
	// change ("ws/"); otherRoots are further such prefixes (the other
	// writable mounts of a rooted world).
	root       string
	otherRoots []string
}

// expand replaces a leading "@" of p by the parent's absolute name.
func (w *world) expand(p string) string {
	if strings.HasPrefix(p, "@") {
		return w.absParent + p[1:]
	}
	return p
}

// set returns a tool set over the world with every tool enabled; opts
// adds to the world's defaults.
func (w *world) set(t *testing.T, opts tools.Options) *tools.Set {
	t.Helper()
	opts.Tools = tools.AllTools()
	if opts.Cwd == "" {
		opts.Cwd = w.cwd
	}
	s, err := tools.New(w.b, opts)
	if err != nil {
		t.Fatalf("tools.New: %v", err)
	}
	return s
}

// newWorld builds a world of kind over layout l. It reports false when
// the kind cannot hold the layout (symlinks or FIFOs where the storage
// has none).
func newWorld(t *testing.T, kind string, s secrets, l layout) (*world, bool) {
	t.Helper()
	links, fifos := l.needs()
	switch kind {
	case kindLocal:
		return newLocalWorld(t, s, l, false), true
	case kindMounted:
		return newLocalWorld(t, s, l, true), true
	case kindAfero:
		if links || fifos {
			return nil, false
		}
		return newAferoWorld(t, s, l), true
	case kindS3:
		if links || fifos {
			return nil, false
		}
		return newS3World(t, s, l), true
	case kindSFTP:
		return newSFTPWorld(t, s, l), true
	}
	t.Fatalf("unknown world kind %q", kind)
	return nil, false
}

// forWorlds runs fn in a parallel subtest per world kind that can hold
// layout l (made by mk from fresh secrets). Kinds that cannot hold it get
// no subtest at all; the remote kinds skip loudly without Docker.
func forWorlds(t *testing.T, kinds []string, mk func(s secrets) layout, fn func(t *testing.T, w *world)) {
	t.Helper()
	eachWorld(t, true, kinds, mk, fn)
}

// forWorldsSerial is forWorlds with subtests that run one after the
// other, for tests that change the environment.
func forWorldsSerial(t *testing.T, kinds []string, mk func(s secrets) layout, fn func(t *testing.T, w *world)) {
	t.Helper()
	eachWorld(t, false, kinds, mk, fn)
}

func eachWorld(t *testing.T, parallel bool, kinds []string, mk func(s secrets) layout, fn func(t *testing.T, w *world)) {
	t.Helper()
	for _, kind := range kinds {
		s := newSecrets()
		l := mk(s)
		if links, fifos := l.needs(); (links || fifos) && (kind == kindAfero || kind == kindS3) {
			continue
		}
		t.Run(kind, func(t *testing.T) {
			if parallel {
				t.Parallel()
			}
			w, ok := newWorld(t, kind, s, l)
			if !ok {
				t.Fatalf("world %s cannot hold the layout", kind)
			}
			fn(t, w)
		})
	}
}

// newLocalWorld builds the layout on local disk. mount puts the root
// under a mounted namespace as "/ws", with "ro" mounted read-only beside
// it.
func newLocalWorld(t testing.TB, s secrets, l layout, mount bool) *world {
	t.Helper()
	parent := t.TempDir()
	buildLocal(t, parent, l)
	w := &world{kind: kindLocal, s: s, absParent: parent, leaks: []string{parent}, cheapSnap: true,
		hostRoot: filepath.Join(parent, "ws"), root: "ws/", hostAbs: true}
	w.snap = func(t *testing.T) snapshot { return snapLocal(t, parent) }
	lb := openLocal(t, filepath.Join(parent, "ws"))
	w.b = lb
	if mount {
		if err := os.MkdirAll(filepath.Join(parent, "ro"), 0o755); err != nil {
			t.Fatal(err)
		}
		m, err := mounted.New(map[string]backend.Backend{"ws": lb, "ro": backend.ReadOnly(openLocal(t, filepath.Join(parent, "ro")))})
		if err != nil {
			t.Fatal(err)
		}
		w.kind, w.b, w.cwd, w.rooted, w.hostAbs = kindMounted, m, "/ws", true, false
		w.mounts, w.roMounts = []string{"ro", "ws"}, []string{"ro"}
	}
	return w
}

func openLocal(t testing.TB, dir string) *local.FS {
	t.Helper()
	b, err := local.New(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	return b
}

// buildLocal creates layout l below the host directory parent.
func buildLocal(t testing.TB, parent string, l layout) {
	t.Helper()
	for _, name := range l.sorted() {
		n := l[name]
		p := filepath.Join(parent, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		var err error
		switch n.kind {
		case nFile:
			err = os.WriteFile(p, []byte(n.data), 0o644)
		case nDir:
			err = os.MkdirAll(p, 0o755)
		case nLink:
			target := n.data
			if strings.HasPrefix(target, "@") {
				target = parent + target[1:]
			}
			err = os.Symlink(target, p)
		case nFIFO:
			err = syscall.Mkfifo(p, 0o644)
		}
		if err != nil {
			t.Fatalf("arranging %s: %v", name, err)
		}
	}
}

// snapLocal describes every entry below the host directory parent
// without following links.
func snapLocal(t *testing.T, parent string) snapshot {
	t.Helper()
	out := snapshot{}
	err := filepath.WalkDir(parent, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(parent, p)
		info, err := os.Lstat(p)
		if err != nil {
			return err
		}
		desc := fmt.Sprintf("%v", info.Mode())
		switch {
		case info.Mode().IsRegular():
			data, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			desc += fmt.Sprintf(" %d %x %d", info.Size(), sha256.Sum256(data), info.ModTime().UnixNano())
		case info.Mode()&fs.ModeSymlink != 0:
			target, err := os.Readlink(p)
			if err != nil {
				return err
			}
			desc += " -> " + target
		}
		out[filepath.ToSlash(rel)] = desc
		return nil
	})
	if err != nil {
		t.Fatalf("snapshot of %s: %v", parent, err)
	}
	return out
}

// newAferoWorld builds the layout in a MemMapFs and serves its "/ws"
// through a BasePathFs, so the outside lives in the same Fs.
func newAferoWorld(t *testing.T, s secrets, l layout) *world {
	t.Helper()
	mem := afero.NewMemMapFs()
	for _, name := range l.sorted() {
		n := l[name]
		var err error
		switch n.kind {
		case nFile:
			if err = mem.MkdirAll(path.Dir("/"+name), 0o755); err == nil {
				err = afero.WriteFile(mem, "/"+name, []byte(n.data), 0o644)
			}
		case nDir:
			err = mem.MkdirAll("/"+name, 0o755)
		default:
			t.Fatalf("afero world cannot hold %s", name)
		}
		if err != nil {
			t.Fatalf("arranging %s: %v", name, err)
		}
	}
	w := &world{kind: kindAfero, s: s, b: aferoadapter.New(afero.NewBasePathFs(mem, "/ws")), root: "ws/", cheapSnap: true}
	w.snap = func(t *testing.T) snapshot {
		t.Helper()
		out := snapshot{}
		err := afero.Walk(mem, "/", func(p string, info fs.FileInfo, err error) error {
			if err != nil {
				return err
			}
			desc := fmt.Sprintf("%v", info.Mode())
			if info.Mode().IsRegular() {
				data, err := afero.ReadFile(mem, p)
				if err != nil {
					return err
				}
				desc += fmt.Sprintf(" %x", sha256.Sum256(data))
			}
			out[strings.TrimPrefix(p, "/")] = desc
			return nil
		})
		if err != nil {
			t.Fatalf("afero snapshot: %v", err)
		}
		return out
	}
	return w
}

// newS3World builds the layout below a fresh key prefix of the shared S3
// server's bucket; the backend's prefix is that prefix plus "ws".
func newS3World(t *testing.T, s secrets, l layout) *world {
	t.Helper()
	srv := s3srv.Get(t)
	client := srv.Client()
	prefix := "sec-" + randHex(6) + "/"
	for _, name := range l.sorted() {
		n := l[name]
		key, body := prefix+name, n.data
		switch n.kind {
		case nFile:
		case nDir:
			key, body = key+"/", ""
		default:
			t.Fatalf("S3 world cannot hold %s", name)
		}
		putObject(t, client, key, body)
	}
	w := &world{kind: kindS3, s: s, b: srv.NewBackend(t, prefix+"ws"), absParent: "/" + strings.TrimSuffix(prefix, "/"),
		root: "ws/"}
	w.snap = func(t *testing.T) snapshot { return snapS3(t, client, prefix) }
	return w
}

// putObject stores body as key in the shared server's bucket, behind
// the backend's back.
func putObject(t *testing.T, c *s3.Client, key, body string) {
	t.Helper()
	_, err := c.PutObject(t.Context(), &s3.PutObjectInput{Bucket: aws.String(containers.DefaultS3Bucket), Key: aws.String(key), Body: strings.NewReader(body)})
	if err != nil {
		t.Fatalf("PutObject %q: %v", key, err)
	}
}

// snapS3 describes every object below prefix by its ETag and size (one
// listing request per 1000 keys), and every unfinished upload.
func snapS3(t *testing.T, c *s3.Client, prefix string) snapshot {
	t.Helper()
	out := snapshot{}
	p := s3.NewListObjectsV2Paginator(c, &s3.ListObjectsV2Input{Bucket: aws.String(containers.DefaultS3Bucket), Prefix: aws.String(prefix)})
	for p.HasMorePages() {
		page, err := p.NextPage(t.Context())
		if err != nil {
			t.Fatalf("listing %s: %v", prefix, err)
		}
		for _, o := range page.Contents {
			out[strings.TrimPrefix(aws.ToString(o.Key), prefix)] = fmt.Sprintf("%s %d", aws.ToString(o.ETag), aws.ToInt64(o.Size))
		}
	}
	up, err := c.ListMultipartUploads(t.Context(), &s3.ListMultipartUploadsInput{Bucket: aws.String(containers.DefaultS3Bucket), Prefix: aws.String(prefix)})
	if err != nil {
		t.Fatalf("listing uploads below %s: %v", prefix, err)
	}
	for _, u := range up.Uploads {
		out[strings.TrimPrefix(aws.ToString(u.Key), prefix)+"#upload"] = aws.ToString(u.UploadId)
	}
	return out
}

// newSFTPWorld builds the layout in a fresh directory of the shared SFTP
// server; the backend is rooted at its "ws".
func newSFTPWorld(t *testing.T, s secrets, l layout) *world {
	t.Helper()
	srv := sftpsrv.Get(t)
	ctx := t.Context()
	parent, err := srv.NewRoot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	c, err := srv.Client(ctx)
	if err != nil {
		t.Fatal(err)
	}
	buildSFTP(t, srv, c, parent, l)
	b, err := srv.Dial(ctx, parent+"/ws")
	if err != nil {
		t.Fatalf("sftpadapter.Dial: %v", err)
	}
	t.Cleanup(func() { b.Close() })
	w := &world{kind: kindSFTP, s: s, b: b, absParent: parent, leaks: []string{parent}, root: "ws/"}
	w.snap = func(t *testing.T) snapshot { return snapSFTP(t, c, parent) }
	return w
}

// buildSFTP creates layout l below the server directory parent with the
// harness's client (FIFOs with mkfifo in the container).
func buildSFTP(t *testing.T, srv *containers.SFTPServer, c *sftp.Client, parent string, l layout) {
	t.Helper()
	var fifos []string
	for _, name := range l.sorted() {
		n := l[name]
		p := parent + "/" + name
		if err := c.MkdirAll(path.Dir(p)); err != nil {
			t.Fatalf("arranging %s: %v", name, err)
		}
		var err error
		switch n.kind {
		case nFile:
			var f *sftp.File
			if f, err = c.Create(p); err == nil {
				_, err = f.Write([]byte(n.data))
				if cerr := f.Close(); err == nil {
					err = cerr
				}
			}
		case nDir:
			err = c.MkdirAll(p)
		case nLink:
			target := n.data
			if strings.HasPrefix(target, "@") {
				target = parent + target[1:]
			}
			err = c.Symlink(target, p)
		case nFIFO:
			fifos = append(fifos, containers.ShellQuote(p))
		}
		if err != nil {
			t.Fatalf("arranging %s: %v", name, err)
		}
	}
	if len(fifos) > 0 {
		script := "set -e; for f in " + strings.Join(fifos, " ") + `; do mkfifo -m 0644 "$f"; chown ` + containers.SFTPUser + `: "$f"; done`
		if out, err := srv.Exec(t.Context(), script); err != nil {
			t.Fatalf("mkfifo: %v: %s", err, out)
		}
	}
}

// snapSFTP describes every entry below the server directory parent, with
// the content hash of every regular file.
func snapSFTP(t *testing.T, c *sftp.Client, parent string) snapshot {
	t.Helper()
	out := snapshot{}
	walk := c.Walk(parent)
	for walk.Step() {
		if err := walk.Err(); err != nil {
			t.Fatalf("snapshot of %s: %v", parent, err)
		}
		info := walk.Stat()
		rel := strings.TrimPrefix(strings.TrimPrefix(walk.Path(), parent), "/")
		desc := fmt.Sprintf("%v %d", info.Mode(), info.ModTime().Unix())
		switch {
		case info.Mode().IsRegular():
			f, err := c.Open(walk.Path())
			if err != nil {
				t.Fatalf("snapshot of %s: %v", walk.Path(), err)
			}
			h := sha256.New()
			_, err = io.Copy(h, f)
			f.Close()
			if err != nil {
				t.Fatalf("snapshot of %s: %v", walk.Path(), err)
			}
			desc += fmt.Sprintf(" %d %x", info.Size(), h.Sum(nil))
		case info.Mode()&fs.ModeSymlink != 0:
			target, err := c.ReadLink(walk.Path())
			if err != nil {
				t.Fatalf("snapshot of %s: %v", walk.Path(), err)
			}
			desc += " -> " + target
		}
		out[rel] = desc
	}
	return out
}
