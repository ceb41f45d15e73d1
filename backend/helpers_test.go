package backend_test

import (
	"bytes"
	"context"
	"errors"
	"io/fs"
	"reflect"
	"strings"
	"testing"

	"github.com/fencefs/fencefs/backend"
)

func sampleTree() *listOnly {
	return newListOnly(map[string]string{
		"a.txt":       "A",
		"a/b.txt":     "AB",
		"a/c/d.txt":   "ACD",
		"b/":          "",
		"z/deep/y.md": "Z",
	})
}

func TestStatFallback(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name    string
		want    backend.FileInfo
		wantErr error
	}{
		{name: ".", want: backend.FileInfo{Name: ".", Mode: fs.ModeDir, Size: -1}},
		{name: "a.txt", want: backend.FileInfo{Name: "a.txt", Size: 1, ModTime: modTime}},
		{name: "a", want: backend.FileInfo{Name: "a", Mode: fs.ModeDir, ModTime: modTime}},
		{name: "a/c/d.txt", want: backend.FileInfo{Name: "d.txt", Size: 3, ModTime: modTime}},
		{name: "b", want: backend.FileInfo{Name: "b", Mode: fs.ModeDir, ModTime: modTime}},
		{name: "missing", wantErr: fs.ErrNotExist},
		{name: "a/missing", wantErr: fs.ErrNotExist},
		{name: "missing/x", wantErr: fs.ErrNotExist},
		{name: "a.txt/x", wantErr: fs.ErrNotExist}, // through a file: missing, not "not a directory"
		{name: "a/../a.txt", wantErr: backend.ErrInvalidPath},
		{name: "/a.txt", wantErr: fs.ErrInvalid},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := sampleTree()
			got, err := backend.Stat(ctx, b, tt.name)
			if tt.wantErr != nil {
				if !errors.Is(err, tt.wantErr) {
					t.Fatalf("Stat(%q) error = %v, want %v", tt.name, err, tt.wantErr)
				}
				var pe *fs.PathError
				if !errors.As(err, &pe) || pe.Path != tt.name {
					t.Errorf("Stat(%q) error %#v does not name the path", tt.name, err)
				}
				return
			}
			if err != nil {
				t.Fatalf("Stat(%q): %v", tt.name, err)
			}
			if got != tt.want {
				t.Errorf("Stat(%q) = %+v, want %+v", tt.name, got, tt.want)
			}
			if b.lists == 0 {
				t.Errorf("Stat(%q) did not use the listing fallback", tt.name)
			}
		})
	}
}

// stater adds a Stat fast path that records its calls.
type stater struct {
	*listOnly
	calls []string
}

func (s *stater) Stat(ctx context.Context, name string) (backend.FileInfo, error) {
	s.calls = append(s.calls, name)
	return backend.FileInfo{Name: "fast", Size: 7}, nil
}

func TestStatUsesStater(t *testing.T) {
	s := &stater{listOnly: sampleTree()}
	got, err := backend.Stat(context.Background(), s, "a.txt")
	if err != nil || got.Name != "fast" || !reflect.DeepEqual(s.calls, []string{"a.txt"}) || s.lists != 0 {
		t.Fatalf("Stat = %+v, %v; calls %v, lists %d; want the Stater fast path only", got, err, s.calls, s.lists)
	}
}

type walkStep struct {
	name string
	dir  bool
}

func collectWalk(t *testing.T, b backend.Backend, dir string, skip map[string]bool) ([]walkStep, error) {
	t.Helper()
	var got []walkStep
	err := backend.Walk(context.Background(), b, dir, func(name string, e backend.DirEntry) error {
		got = append(got, walkStep{name, e.IsDir()})
		if skip[name] {
			return fs.SkipDir
		}
		return nil
	})
	return got, err
}

func TestWalkFallbackOrder(t *testing.T) {
	tests := []struct {
		dir  string
		skip map[string]bool
		want []walkStep
	}{
		{
			dir: ".",
			want: []walkStep{
				{"a", true}, {"a/b.txt", false}, {"a/c", true}, {"a/c/d.txt", false},
				{"a.txt", false}, {"b", true}, {"z", true}, {"z/deep", true}, {"z/deep/y.md", false},
			},
		},
		{
			dir:  "a",
			want: []walkStep{{"a/b.txt", false}, {"a/c", true}, {"a/c/d.txt", false}},
		},
		{
			dir:  ".",
			skip: map[string]bool{"a": true, "z/deep": true},
			want: []walkStep{{"a", true}, {"a.txt", false}, {"b", true}, {"z", true}, {"z/deep", true}},
		},
		{dir: "b", want: nil},
	}
	for _, tt := range tests {
		got, err := collectWalk(t, sampleTree(), tt.dir, tt.skip)
		if err != nil {
			t.Errorf("Walk(%q): %v", tt.dir, err)
			continue
		}
		if !reflect.DeepEqual(got, tt.want) {
			t.Errorf("Walk(%q, skip %v) =\n%v\nwant\n%v", tt.dir, tt.skip, got, tt.want)
		}
	}
}

func TestWalkFallbackErrors(t *testing.T) {
	ctx := context.Background()
	b := sampleTree()
	if err := backend.Walk(ctx, b, "missing", func(string, backend.DirEntry) error { return nil }); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Walk(missing) = %v, want fs.ErrNotExist", err)
	}
	if err := backend.Walk(ctx, b, "a.txt", func(string, backend.DirEntry) error { return nil }); !errors.Is(err, backend.ErrNotDir) {
		t.Errorf("Walk(a.txt) = %v, want ErrNotDir", err)
	}
	stop := errors.New("stop")
	var seen []string
	err := backend.Walk(ctx, b, ".", func(name string, _ backend.DirEntry) error {
		seen = append(seen, name)
		if name == "a/b.txt" {
			return stop
		}
		return nil
	})
	if err != stop || !reflect.DeepEqual(seen, []string{"a", "a/b.txt"}) {
		t.Errorf("Walk stopping at a/b.txt = %v after %v, want the callback's error after [a a/b.txt]", err, seen)
	}
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	if err := backend.Walk(cancelled, b, ".", func(string, backend.DirEntry) error { return nil }); !errors.Is(err, context.Canceled) {
		t.Errorf("Walk with a cancelled context = %v, want context.Canceled", err)
	}
}

// walker adds a Walk fast path.
type walker struct{ *listOnly }

func (w walker) Walk(ctx context.Context, dir string, fn backend.WalkFunc) error {
	return fn("fast", backend.DirEntry{Name: "fast"})
}

func TestWalkUsesWalker(t *testing.T) {
	w := walker{sampleTree()}
	got, err := collectWalk(t, w, ".", nil)
	if err != nil || !reflect.DeepEqual(got, []walkStep{{"fast", false}}) || w.lists != 0 {
		t.Fatalf("Walk = %v, %v (lists %d); want the Walker fast path only", got, err, w.lists)
	}
}

// writable adds a Writer and DirMaker to listOnly.
type writable struct {
	*listOnly
	readOnly bool // reported through Capabilities
}

type pending struct {
	b    *listOnly
	name string
	buf  bytes.Buffer
	done bool
}

func (p *pending) Write(data []byte) (int, error) { return p.buf.Write(data) }
func (p *pending) Commit() error {
	p.b.files[p.name] = p.buf.String()
	p.done = true
	return nil
}
func (p *pending) Close() error { return nil }

func (w *writable) OpenWrite(ctx context.Context, name string, opts backend.WriteOptions) (backend.FileWriter, error) {
	return &pending{b: w.listOnly, name: name}, nil
}

func (w *writable) MkdirAll(ctx context.Context, dir string) error {
	w.dirs[dir] = true
	return nil
}

func (w *writable) Capabilities() backend.Capabilities {
	return backend.Capabilities{Name: "writable", ReadOnly: w.readOnly}
}

func TestWriteHelpers(t *testing.T) {
	ctx := context.Background()
	w := &writable{listOnly: sampleTree()}
	if err := backend.WriteFile(ctx, w, "new.txt", []byte("hello"), backend.WriteOptions{}); err != nil {
		t.Fatalf("WriteFile: %v", err)
	}
	data, err := backend.ReadFile(ctx, w, "new.txt")
	if err != nil || string(data) != "hello" {
		t.Fatalf("ReadFile after WriteFile = %q, %v", data, err)
	}
	if err := backend.MkdirAll(ctx, w, "m/n"); err != nil || !w.dirs["m/n"] {
		t.Fatalf("MkdirAll = %v, dirs %v", err, w.dirs)
	}
	if _, err := backend.ReadFile(ctx, w, "missing"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("ReadFile(missing) = %v, want fs.ErrNotExist", err)
	}
}

func TestWriteHelpersReadOnly(t *testing.T) {
	ctx := context.Background()
	backends := map[string]backend.Backend{
		"no Writer":        sampleTree(),
		"reports ReadOnly": &writable{listOnly: sampleTree(), readOnly: true},
	}
	for label, b := range backends {
		t.Run(label, func(t *testing.T) {
			_, err := backend.OpenWrite(ctx, b, "x", backend.WriteOptions{})
			checkReadOnly(t, err, "x")
			checkReadOnly(t, backend.WriteFile(ctx, b, "y", nil, backend.WriteOptions{}), "y")
			checkReadOnly(t, backend.MkdirAll(ctx, b, "d"), "d")
		})
	}
}

func checkReadOnly(t *testing.T, err error, name string) {
	t.Helper()
	var pe *fs.PathError
	if !errors.As(err, &pe) || pe.Path != name {
		t.Errorf("error %v is not an *fs.PathError naming %q", err, name)
	}
	if !errors.Is(err, backend.ErrReadOnly) || !errors.Is(err, fs.ErrPermission) {
		t.Errorf("error %v does not match ErrReadOnly and fs.ErrPermission", err)
	}
}

func TestCapabilitiesOf(t *testing.T) {
	if got := backend.CapabilitiesOf(sampleTree()); got != (backend.Capabilities{Name: "unknown", ReadOnly: true}) {
		t.Errorf("CapabilitiesOf(read-only backend) = %+v", got)
	}
	w := &writable{listOnly: sampleTree()}
	if got := backend.CapabilitiesOf(w); got.Name != "writable" || got.ReadOnly {
		t.Errorf("CapabilitiesOf(reporter) = %+v", got)
	}
}

func TestSortEntries(t *testing.T) {
	entries := []backend.DirEntry{{Name: "b"}, {Name: "a.txt"}, {Name: "a"}, {Name: "B"}, {Name: "a-b"}}
	backend.SortEntries(entries)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name)
	}
	if got := strings.Join(names, " "); got != "B a a-b a.txt b" {
		t.Errorf("SortEntries = %s", got)
	}
}

func TestEntryAndInfoKinds(t *testing.T) {
	tests := []struct {
		mode               fs.FileMode
		dir, link, regular bool
	}{
		{0, false, false, true},
		{0o644, false, false, true},
		{fs.ModeDir | 0o755, true, false, false},
		{fs.ModeSymlink, false, true, false},
		{fs.ModeNamedPipe, false, false, false},
	}
	for _, tt := range tests {
		e := backend.DirEntry{Name: "n", Type: tt.mode.Type(), Size: 3, ModTime: modTime}
		if e.IsDir() != tt.dir || e.IsSymlink() != tt.link || e.IsRegular() != tt.regular {
			t.Errorf("DirEntry %v: IsDir %v IsSymlink %v IsRegular %v", tt.mode, e.IsDir(), e.IsSymlink(), e.IsRegular())
		}
		fi := backend.FileInfo{Name: "n", Mode: tt.mode}
		if fi.IsDir() != tt.dir || fi.IsSymlink() != tt.link || fi.IsRegular() != tt.regular {
			t.Errorf("FileInfo %v: IsDir %v IsSymlink %v IsRegular %v", tt.mode, fi.IsDir(), fi.IsSymlink(), fi.IsRegular())
		}
		if info := e.Info(); info.Name != "n" || info.Size != 3 || info.Mode != tt.mode.Type() || !info.ModTime.Equal(modTime) {
			t.Errorf("DirEntry.Info() = %+v", info)
		}
	}
	if !(backend.Precondition{}).IsZero() || (backend.Precondition{CreateOnly: true}).IsZero() ||
		(backend.Precondition{MatchHash: "ab"}).IsZero() || (backend.Precondition{MatchVersion: "v"}).IsZero() {
		t.Error("Precondition.IsZero is wrong")
	}
}
