package s3adapter_test

import (
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"strconv"
	"testing"

	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/fencefs/fencefs/backend"
	"github.com/fencefs/fencefs/internal/testserver"
	"github.com/fencefs/fencefs/s3adapter"
)

// keysBackend serves keys, each holding its own name, from an in-memory
// S3 server and returns a read-only backend over them. It exists for key
// sets a POSIX-backed server such as versitygw cannot hold: an object
// next to a prefix of the same name ("a" and "a/b"), and keys with empty
// or dot segments. Everything else is tested against the real server.
func keysBackend(t *testing.T, keys ...string) *s3adapter.FS {
	t.Helper()
	objects := make(map[string]string, len(keys))
	for _, k := range keys {
		objects[k] = k
	}
	f, err := s3adapter.New(testserver.StartS3(t, "b", objects), "b", "", s3adapter.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// TestObjectAndPrefix pins the meaning of a key that is both an object
// and a prefix: the directory wins everywhere, and the object cannot be
// reached (never aliased).
func TestObjectAndPrefix(t *testing.T) {
	ctx := t.Context()
	f := keysBackend(t, "a", "a/b", "a-x", "a.txt", "d", "d/", "e")

	if got, want := listNames(t, f, "."), []string{"a-x", "a.txt", "a/", "d/", "e"}; !slices.Equal(got, want) {
		t.Errorf("List(.) = %q, want %q", got, want)
	}
	if got, want := listNames(t, f, "a"), []string{"b"}; !slices.Equal(got, want) {
		t.Errorf("List(a) = %q, want %q", got, want)
	}
	for _, name := range []string{"a", "d"} {
		fi, err := f.Stat(ctx, name)
		if err != nil || !fi.IsDir() {
			t.Errorf("Stat(%q) = %+v, %v; want a directory", name, fi, err)
		}
		r, err := f.OpenRead(ctx, name)
		if err == nil {
			r.Close()
		}
		if !errors.Is(err, backend.ErrIsDir) {
			t.Errorf("OpenRead(%q) error = %v, want backend.ErrIsDir", name, err)
		}
	}
	if got, err := backend.ReadFile(ctx, f, "a/b"); err != nil || string(got) != "a/b" {
		t.Errorf("ReadFile(a/b) = %q, %v", got, err)
	}
	if fi, err := f.Stat(ctx, "e"); err != nil || fi.IsDir() || fi.Size != 1 {
		t.Errorf("Stat(e) = %+v, %v; want a 1-byte file", fi, err)
	}
	if got, want := walkNames(t, f, "."), []string{"a-x", "a.txt", "a/", "a/b", "d/", "e"}; !slices.Equal(got, want) {
		t.Errorf("Walk(.) = %q, want %q", got, want)
	}
}

// TestObjectAndPrefixPastAPage puts more names between an object and its
// directory ("a.000" sorts between "a" and "a/") than Stat's listing asks
// for: the directory still wins, and the object without one is a file.
func TestObjectAndPrefixPastAPage(t *testing.T) {
	ctx := t.Context()
	keys := []string{"a", "a/b", "c"}
	for i := range 150 {
		keys = append(keys, fmt.Sprintf("a.%03d", i), fmt.Sprintf("c.%03d", i))
	}
	f := keysBackend(t, keys...)
	if fi, err := f.Stat(ctx, "a"); err != nil || !fi.IsDir() {
		t.Errorf("Stat(a) = %+v, %v; want a directory", fi, err)
	}
	if r, err := f.OpenRead(ctx, "a"); !errors.Is(err, backend.ErrIsDir) {
		if err == nil {
			r.Close()
		}
		t.Errorf("OpenRead(a) error = %v, want backend.ErrIsDir", err)
	}
	if fi, err := f.Stat(ctx, "c"); err != nil || fi.IsDir() || fi.Size != 1 || fi.Version != testserver.ETag("c") {
		t.Errorf("Stat(c) = %+v, %v; want the 1-byte file", fi, err)
	}
	if got, err := backend.ReadFile(ctx, f, "c"); err != nil || string(got) != "c" {
		t.Errorf("ReadFile(c) = %q, %v", got, err)
	}
}

// TestNonCanonicalKeys checks keys with empty and dot segments, which
// versitygw normalizes away: they are skipped, never shown as another
// path.
func TestNonCanonicalKeys(t *testing.T) {
	f := keysBackend(t, "/lead", "//x", "x//y", "x/./z", "x/../w", "x/ok", "x/.", "..", "./p", "q/")
	if got, want := listNames(t, f, "."), []string{"q/", "x/"}; !slices.Equal(got, want) {
		t.Errorf("List(.) = %q, want %q", got, want)
	}
	if got, want := listNames(t, f, "x"), []string{"ok"}; !slices.Equal(got, want) {
		t.Errorf("List(x) = %q, want %q", got, want)
	}
	if got, want := walkNames(t, f, "."), []string{"q/", "x/", "x/ok"}; !slices.Equal(got, want) {
		t.Errorf("Walk(.) = %q, want %q", got, want)
	}
	if _, err := f.Stat(t.Context(), "lead"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Stat(lead) error = %v, want fs.ErrNotExist (the key is /lead)", err)
	}
}

// TestListPagesOfMixedEntries lists a directory whose 2500 entries are
// files and directories interleaved across page boundaries.
func TestListPagesOfMixedEntries(t *testing.T) {
	var keys []string
	for i := range 1250 {
		keys = append(keys, "m/f"+strconv.Itoa(i), "m/g"+strconv.Itoa(i)+"/x")
	}
	f := keysBackend(t, keys...)
	entries, err := f.List(t.Context(), "m")
	if err != nil {
		t.Fatal(err)
	}
	dirs := 0
	for _, e := range entries {
		if e.IsDir() {
			dirs++
		}
	}
	if len(entries) != 2500 || dirs != 1250 {
		t.Errorf("List(m) gave %d entries (%d directories), want 2500 (1250)", len(entries), dirs)
	}
}

func walkNames(t *testing.T, f *s3adapter.FS, dir string) []string {
	t.Helper()
	var names []string
	err := f.Walk(t.Context(), dir, func(name string, e backend.DirEntry) error {
		if e.IsDir() {
			name += "/"
		}
		names = append(names, name)
		return nil
	})
	if err != nil {
		t.Fatalf("Walk(%q): %v", dir, err)
	}
	slices.Sort(names)
	return names
}

// TestKnownFile reads under backend.WithKnownFile: the version the caller
// has just listed is served by the GET alone, and a version that changed
// since makes the read list afresh, so a directory that now shadows the
// name still wins.
func TestKnownFile(t *testing.T) {
	objects := map[string]string{"a": "a", "a/b": "a/b", "e": "e"}
	c := &counter{}
	client := s3.New(testserver.StartS3(t, "b", objects).Options(), func(o *s3.Options) {
		c.inner = o.HTTPClient
		if c.inner == nil {
			c.inner = awshttp.NewBuildableClient()
		}
		o.HTTPClient = c
	})
	f, err := s3adapter.New(client, "b", "", s3adapter.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, read, known, version string
		want                       string
		wantErr                    error
		requests                   int64
	}{
		{"the listed version", "e", "e", testserver.ETag("e"), "e", nil, 1},
		{"no word", "e", "", "", "e", nil, 2},
		{"word on another name", "e", "x", testserver.ETag("e"), "e", nil, 2},
		{"a changed version", "e", "e", `"old"`, "e", nil, 3},
		{"a changed version now shadowed", "a", "a", `"old"`, "", backend.ErrIsDir, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := t.Context()
			if tt.known != "" {
				ctx = backend.WithKnownFile(ctx, tt.known, backend.FileInfo{Size: -1, Version: tt.version})
			}
			c.reset()
			got, err := backend.ReadFile(ctx, f, tt.read)
			if string(got) != tt.want || !errors.Is(err, tt.wantErr) || (err != nil) != (tt.wantErr != nil) {
				t.Errorf("ReadFile(%q) = %q, %v; want %q, %v", tt.read, got, err, tt.want, tt.wantErr)
			}
			if n := c.all.Load(); n != tt.requests {
				t.Errorf("ReadFile(%q) sent %d requests, want %d", tt.read, n, tt.requests)
			}
		})
	}
}
