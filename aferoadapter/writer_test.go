package aferoadapter_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"reflect"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/spf13/afero"

	"github.com/fencefs/fencefs/aferoadapter"
	"github.com/fencefs/fencefs/backend"
	"github.com/fencefs/fencefs/internal/backendtest"
)

// rawFiles lists every non-directory in the MemMapFs, temporary files
// included, as storage paths.
func rawFiles(t *testing.T, mem afero.Fs) []string {
	t.Helper()
	var out []string
	err := afero.Walk(mem, "/", func(p string, info fs.FileInfo, err error) error {
		if err != nil {
			return err
		}
		if !info.IsDir() {
			out = append(out, p[1:])
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(out)
	return out
}

func wantContent(t *testing.T, b backend.Backend, name, want string) {
	t.Helper()
	data, err := backend.ReadFile(context.Background(), b, name)
	if err != nil || string(data) != want {
		t.Errorf("ReadFile(%q) = %q, %v; want %q", name, data, err, want)
	}
}

func wantRaw(t *testing.T, mem afero.Fs, want ...string) {
	t.Helper()
	sort.Strings(want)
	if got := rawFiles(t, mem); !reflect.DeepEqual(got, want) {
		t.Errorf("raw files = %q, want %q", got, want)
	}
}

func hexHash(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

func TestWriteCommit(t *testing.T) {
	ctx := context.Background()
	mem, b := memFS(t, map[string]string{"f": "old"})
	tests := []struct{ name, content string }{
		{"f", "replaced"},
		{"new", "created"},
		{"n1/n2/deep", "parents created"},
		{"empty", ""},
	}
	for _, tt := range tests {
		if err := backend.WriteFile(ctx, b, tt.name, []byte(tt.content), backend.WriteOptions{}); err != nil {
			t.Fatalf("WriteFile(%q): %v", tt.name, err)
		}
		wantContent(t, b, tt.name, tt.content)
	}
	wantRaw(t, mem, "f", "new", "n1/n2/deep", "empty")
	if fi, err := b.Stat(ctx, "new"); err != nil || fi.Mode != 0o644 {
		t.Errorf("Stat(new) = %+v, %v; want mode 0644", fi, err)
	}
	if fi, err := b.Stat(ctx, "n1/n2"); err != nil || fi.Mode != fs.ModeDir|0o755 {
		t.Errorf("Stat(n1/n2) = %+v, %v; want a 0755 directory", fi, err)
	}
}

func TestWritePendingIsInvisible(t *testing.T) {
	ctx := context.Background()
	mem, b := memFS(t, map[string]string{"f": "old"})
	fw, err := b.OpenWrite(ctx, "f", backend.WriteOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := fw.Write([]byte("pending")); err != nil {
		t.Fatal(err)
	}
	wantContent(t, b, "f", "old")
	entries, err := b.List(ctx, ".")
	if err != nil || len(entries) != 1 || entries[0].Name != "f" {
		t.Errorf("List during a pending write = %+v, %v; want only f", entries, err)
	}
	if got := rawFiles(t, mem); len(got) != 2 {
		t.Errorf("raw files during a pending write = %q, want f and one temporary file", got)
	}
	if err := fw.Commit(); err != nil {
		t.Fatal(err)
	}
	if err := fw.Close(); err != nil {
		t.Errorf("Close after Commit = %v, want nil", err)
	}
	if err := fw.Commit(); !errors.Is(err, fs.ErrClosed) {
		t.Errorf("second Commit = %v, want fs.ErrClosed", err)
	}
	if _, err := fw.Write([]byte("x")); !errors.Is(err, fs.ErrClosed) {
		t.Errorf("Write after Commit = %v, want fs.ErrClosed", err)
	}
	wantContent(t, b, "f", "pending")
	wantRaw(t, mem, "f")
}

func TestWriteAbandon(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name  string
		write bool
	}{
		{"f", true},
		{"f", false},
		{"g", true},
		{"d1/d2/g", true},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%s/write=%v", tt.name, tt.write), func(t *testing.T) {
			mem, b := memFS(t, map[string]string{"f": "old"})
			fw, err := b.OpenWrite(ctx, tt.name, backend.WriteOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if tt.write {
				if _, err := fw.Write([]byte("never")); err != nil {
					t.Fatal(err)
				}
			}
			if err := fw.Close(); err != nil {
				t.Fatalf("Close without Commit: %v", err)
			}
			if err := fw.Close(); err != nil {
				t.Errorf("second Close: %v", err)
			}
			wantContent(t, b, "f", "old")
			wantRaw(t, mem, "f")
		})
	}
}

func TestWriteCancelledBeforeCommit(t *testing.T) {
	mem, b := memFS(t, map[string]string{"f": "old"})
	ctx, cancel := context.WithCancel(context.Background())
	fw, err := b.OpenWrite(ctx, "f", backend.WriteOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := fw.Write([]byte("new")); err != nil {
		t.Fatal(err)
	}
	cancel()
	backendtest.WantPathErr(t, "Commit", fw.Commit(), "f", context.Canceled)
	if err := fw.Close(); err != nil {
		t.Errorf("Close after a failed Commit: %v", err)
	}
	wantContent(t, b, "f", "old")
	wantRaw(t, mem, "f")
}

func TestWriteErrors(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name    string
		pre     backend.Precondition
		wantErr error
	}{
		{name: ".", wantErr: backend.ErrIsDir},
		{name: "d", wantErr: backend.ErrIsDir},
		{name: "f/x", wantErr: backend.ErrNotDir},
		{name: "f/x/y", wantErr: backend.ErrNotDir},
		{name: "d/../f", wantErr: backend.ErrInvalidPath},
		{name: "/f", wantErr: backend.ErrInvalidPath},
		{name: "~f", wantErr: backend.ErrInvalidPath},
		{name: "f", pre: backend.Precondition{CreateOnly: true}, wantErr: fs.ErrExist},
		{name: "f", pre: backend.Precondition{MatchHash: hexHash("other")}, wantErr: backend.ErrPrecondition},
		{name: "g", pre: backend.Precondition{MatchHash: hexHash("old")}, wantErr: backend.ErrPrecondition},
		{name: "nodir/g", pre: backend.Precondition{MatchHash: hexHash("old")}, wantErr: backend.ErrPrecondition},
		{name: "f", pre: backend.Precondition{MatchVersion: "v1"}, wantErr: backend.ErrPrecondition},
	}
	for _, tt := range tests {
		mem, b := memFS(t, map[string]string{"f": "old", "d/keep": "k"})
		err := backend.WriteFile(ctx, b, tt.name, []byte("new"), backend.WriteOptions{Precondition: tt.pre})
		backendtest.WantPathErr(t, fmt.Sprintf("write %q with %+v", tt.name, tt.pre), err, tt.name, tt.wantErr)
		wantContent(t, b, "f", "old")
		wantRaw(t, mem, "d/keep", "f")
		if _, err := b.Stat(ctx, "nodir"); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("write %q: a refused write created its directory: %v", tt.name, err)
		}
	}
}

func TestWritePreconditions(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name string
		pre  backend.Precondition
		want string
	}{
		{"f", backend.Precondition{MatchHash: hexHash("old")}, "new"},
		{"f", backend.Precondition{MatchHash: strings.ToUpper(hexHash("old"))}, "new"},
		{"g", backend.Precondition{CreateOnly: true}, "new"},
		{"d/g", backend.Precondition{CreateOnly: true}, "new"},
	}
	for _, tt := range tests {
		_, b := memFS(t, map[string]string{"f": "old"})
		if err := backend.WriteFile(ctx, b, tt.name, []byte("new"), backend.WriteOptions{Precondition: tt.pre}); err != nil {
			t.Errorf("write %q with %+v: %v", tt.name, tt.pre, err)
		}
		wantContent(t, b, tt.name, tt.want)
	}
}

// TestPreconditionCheckedAtCommit checks that the precondition is judged
// against the target as it is at Commit, not at OpenWrite.
func TestPreconditionCheckedAtCommit(t *testing.T) {
	ctx := context.Background()
	mem, b := memFS(t, map[string]string{"f": "old"})
	tests := []struct {
		pre     backend.Precondition
		meddle  string // written to f between OpenWrite and Commit
		wantErr error
	}{
		{backend.Precondition{MatchHash: hexHash("old")}, "changed", backend.ErrPrecondition},
		{backend.Precondition{CreateOnly: true}, "appeared", fs.ErrExist},
	}
	for _, tt := range tests {
		name := "f"
		if tt.pre.CreateOnly {
			name = "g"
		}
		fw, err := b.OpenWrite(ctx, name, backend.WriteOptions{Precondition: tt.pre})
		if err != nil {
			t.Fatal(err)
		}
		fw.Write([]byte("mine"))
		if err := backend.WriteFile(ctx, b, name, []byte(tt.meddle), backend.WriteOptions{}); err != nil {
			t.Fatal(err)
		}
		backendtest.WantPathErr(t, fmt.Sprintf("Commit with %+v", tt.pre), fw.Commit(), name, tt.wantErr)
		fw.Close()
		wantContent(t, b, name, tt.meddle)
	}
	wantRaw(t, mem, "f", "g")
}

// TestConcurrentPreconditions checks that of several writers presenting
// the same precondition exactly one commits.
func TestConcurrentPreconditions(t *testing.T) {
	ctx := context.Background()
	const writers = 8
	tests := []struct {
		name string
		pre  backend.Precondition
	}{
		{"f", backend.Precondition{MatchHash: hexHash("old")}},
		{"g", backend.Precondition{CreateOnly: true}},
	}
	for _, tt := range tests {
		mem, b := memFS(t, map[string]string{"f": "old"})
		// Every writer is open before any commits, so all pass the early
		// check and only the commit lock can tell them apart.
		fws := make([]backend.FileWriter, writers)
		for i := range fws {
			fw, err := b.OpenWrite(ctx, tt.name, backend.WriteOptions{Precondition: tt.pre})
			if err != nil {
				t.Fatal(err)
			}
			fw.Write(fmt.Appendf(nil, "writer %d", i))
			fws[i] = fw
		}
		var wg sync.WaitGroup
		errs := make([]error, writers)
		for i, fw := range fws {
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer fw.Close()
				errs[i] = fw.Commit()
			}()
		}
		wg.Wait()
		winners := 0
		for _, err := range errs {
			switch {
			case err == nil:
				winners++
			case !errors.Is(err, backend.ErrPrecondition) && !errors.Is(err, fs.ErrExist):
				t.Errorf("%s: unexpected error %v", tt.name, err)
			}
		}
		if winners != 1 {
			t.Errorf("%s with %+v: %d writers committed, want exactly 1", tt.name, tt.pre, winners)
		}
		want := []string{"f"}
		if tt.name == "g" {
			want = append(want, "g")
		}
		wantRaw(t, mem, want...)
	}
}

func TestReplacementKeepsMode(t *testing.T) {
	ctx := context.Background()
	mem, b := memFS(t, map[string]string{"f": "old"})
	for _, perm := range []fs.FileMode{0o600, 0o750, 0o604 | fs.ModeSetuid} {
		if err := mem.Chmod("/f", perm); err != nil {
			t.Fatal(err)
		}
		if err := backend.WriteFile(ctx, b, "f", []byte(perm.String()), backend.WriteOptions{}); err != nil {
			t.Fatal(err)
		}
		wantContent(t, b, "f", perm.String())
		if fi, err := b.Stat(ctx, "f"); err != nil || fi.Mode != perm {
			t.Errorf("after replacing a %v file: Stat = %+v, %v", perm, fi, err)
		}
	}
}

func TestMkdirAll(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		dir     string
		wantErr error
	}{
		{dir: "."},
		{dir: "d"},          // exists
		{dir: "new"},        // created
		{dir: "new2/a/b/c"}, // parents created
		{dir: "d/sub"},      // below an existing one
		{dir: "f", wantErr: fs.ErrExist},
		{dir: "f/x", wantErr: backend.ErrNotDir},
		{dir: "f/x/y", wantErr: backend.ErrNotDir},
		{dir: "d/", wantErr: backend.ErrInvalidPath},
		{dir: "..", wantErr: backend.ErrInvalidPath},
	}
	for _, tt := range tests {
		_, b := memFS(t, map[string]string{"f": "x", "d/": ""})
		err := b.MkdirAll(ctx, tt.dir)
		if tt.wantErr != nil {
			backendtest.WantPathErr(t, "MkdirAll("+tt.dir+")", err, tt.dir, tt.wantErr)
			continue
		}
		if err != nil {
			t.Errorf("MkdirAll(%q): %v", tt.dir, err)
			continue
		}
		if fi, err := b.Stat(ctx, tt.dir); err != nil || !fi.IsDir() {
			t.Errorf("after MkdirAll(%q): Stat = %+v, %v", tt.dir, fi, err)
		}
	}
}

func TestNewOverBasePathMemMapFs(t *testing.T) {
	ctx := context.Background()
	mem := afero.NewMemMapFs()
	b := aferoadapter.New(afero.NewBasePathFs(mem, "/tenant"))
	if err := backend.WriteFile(ctx, b, "a/f", []byte("x"), backend.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	if data, err := afero.ReadFile(mem, "/tenant/a/f"); err != nil || string(data) != "x" {
		t.Errorf("file under the base path = %q, %v", data, err)
	}
	if got, err := b.ResolveSymlinks(ctx, "a/f"); err != nil || got != "a/f" {
		t.Errorf("ResolveSymlinks without symlinks = %q, %v; want the path itself", got, err)
	}
	_, err := b.Readlink(ctx, "a/f")
	backendtest.WantPathErr(t, "Readlink of a file", err, "a/f", fs.ErrInvalid)
}
