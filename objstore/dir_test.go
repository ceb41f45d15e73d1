package objstore_test

import (
	"context"
	"errors"
	"io/fs"
	"slices"
	"strings"
	"testing"

	"github.com/fencefs/fencefs/backend"
	"github.com/fencefs/fencefs/objstore"
)

// TestListDirWalkDir: a backend's List and Walk over Keys check the
// path before any listing, list or walk below the directory's prefix,
// and leave to the backend why a directory that holds nothing is not one
// (the root excepted).
func TestListDirWalkDir(t *testing.T) {
	ctx := context.Background()
	keys, err := objstore.NewKeys("t", objstore.Limits{MaxKeyBytes: 1024, MaxNameBytes: 255})
	if err != nil {
		t.Fatal(err)
	}
	stored := []string{"t/a/b.txt", "t/a/d/e.txt", "t/c.txt"}
	var listed []string
	// below lists stored under prefix, flat, or grouped by "/" as a
	// delimited listing does (a common prefix as a key ending in "/").
	below := func(prefix string, grouped bool) objstore.Lister {
		listed = append(listed, prefix)
		var out []string
		for _, k := range stored {
			rest, ok := strings.CutPrefix(k, prefix)
			if !ok {
				continue
			}
			if i := strings.IndexByte(rest, '/'); grouped && i >= 0 {
				k = prefix + rest[:i+1]
			}
			if !slices.Contains(out, k) {
				out = append(out, k)
			}
		}
		return &keyList{keys: out, pageSize: 2}
	}
	grouped := func(prefix string) objstore.Lister { return below(prefix, true) }
	flat := func(prefix string) objstore.Lister { return below(prefix, false) }
	errNotDir := errors.New("not a directory")
	var asked []string
	notDir := func(_ context.Context, op, name string) error {
		asked = append(asked, op+" "+name)
		return errNotDir
	}

	names := func(es []backend.DirEntry) (out []string) {
		for _, e := range es {
			out = append(out, e.Name)
		}
		slices.Sort(out)
		return out
	}
	for _, tt := range []struct {
		dir  string
		want []string
	}{{".", []string{"a", "c.txt"}}, {"a", []string{"b.txt", "d"}}} {
		es, err := keys.ListDir(ctx, tt.dir, grouped, notDir)
		if got := names(es); err != nil || !slices.Equal(got, tt.want) {
			t.Errorf("ListDir(%q) = %v, %v; want %v", tt.dir, got, err, tt.want)
		}
	}
	var walked []string
	err = keys.WalkDir(ctx, "a", func(name string, _ backend.DirEntry) error {
		walked = append(walked, name)
		return nil
	}, flat, notDir)
	if want := []string{"a/b.txt", "a/d", "a/d/e.txt"}; err != nil || !slices.Equal(walked, want) {
		t.Errorf("WalkDir(a) walked %v, %v; want %v", walked, err, want)
	}
	if !slices.Equal(asked, nil) {
		t.Errorf("asked why %v is not a directory", asked)
	}

	if _, err := keys.ListDir(ctx, "c.txt", grouped, notDir); err != errNotDir {
		t.Errorf("ListDir(c.txt): %v, want the backend's error", err)
	}
	if err := keys.WalkDir(ctx, "none", func(string, backend.DirEntry) error { return nil }, flat, notDir); err != errNotDir {
		t.Errorf("WalkDir(none): %v, want the backend's error", err)
	}
	if want := []string{"list c.txt", "walk none"}; !slices.Equal(asked, want) {
		t.Errorf("asked %v, want %v", asked, want)
	}

	// A listing that can seek is asked to skip past a directory the walk
	// function skips.
	seeking := &seekList{keyList: keyList{keys: []string{"t/a/b.txt", "t/a/d/e.txt", "t/c.txt"}, pageSize: 1}}
	walked = nil
	err = keys.WalkDir(ctx, ".", func(name string, e backend.DirEntry) error {
		walked = append(walked, name)
		if name == "a" {
			return fs.SkipDir
		}
		return nil
	}, func(string) objstore.Lister { return seeking }, notDir)
	if want := []string{"a", "c.txt"}; err != nil || !slices.Equal(walked, want) || len(seeking.seeks) == 0 || !strings.HasPrefix(seeking.seeks[0], "t/a/") {
		t.Errorf("WalkDir(.) skipping a: walked %v, %v, seeks %q; want %v and a seek past t/a/", walked, err, seeking.seeks, want)
	}

	listed = nil
	if _, err := keys.ListDir(ctx, "../x", grouped, notDir); err == nil {
		t.Error("ListDir(../x) succeeded")
	}
	if err := keys.WalkDir(ctx, "a//b", func(string, backend.DirEntry) error { return nil }, flat, notDir); err == nil {
		t.Error("WalkDir(a//b) succeeded")
	}
	if listed != nil {
		t.Errorf("an invalid path was listed: %v", listed)
	}
}

// seekList is a keyList that can seek, recording where it was asked to.
type seekList struct {
	keyList
	seeks []string
}

func (l *seekList) Seek(key string) {
	l.seeks = append(l.seeks, key)
	for l.next < len(l.keys) && l.keys[l.next] <= key {
		l.next++
	}
}
