package objstore

import (
	"context"
	"errors"
	"io/fs"
	"slices"
	"testing"

	"github.com/fencefs/fencefs/backend"
)

func TestLevels(t *testing.T) {
	for dir, want := range map[string][]string{
		"a":     {"a"},
		"a/b":   {"a", "a/b"},
		"a/b/c": {"a", "a/b", "a/b/c"},
	} {
		if got := Levels(dir); !slices.Equal(got, want) {
			t.Errorf("Levels(%q) = %q, want %q", dir, got, want)
		}
	}
}

// settleMap settles paths from a map (missing when absent) and records
// what it was asked.
type settleMap struct {
	kinds map[string]Kind
	err   error
	asked []string
}

func (m *settleMap) settle(_ context.Context, name string) (Kind, backend.FileInfo, error) {
	m.asked = append(m.asked, name)
	return m.kinds[name], backend.FileInfo{}, m.err
}

func TestMissingDirs(t *testing.T) {
	tests := []struct {
		name  string
		kinds map[string]Kind
		want  []string
		err   error
		asked []string
	}{
		{"exists", map[string]Kind{"a/b/c": Dir}, nil, nil, []string{"a/b/c"}},
		{"a file there", map[string]Kind{"a/b/c": File}, nil, fs.ErrExist, []string{"a/b/c"}},
		{"nothing", nil, []string{"a", "a/b", "a/b/c"}, nil, []string{"a/b/c", "a"}},
		{"parent exists", map[string]Kind{"a": Dir, "a/b": Dir}, []string{"a/b/c"}, nil, []string{"a/b/c", "a", "a/b"}},
		{"a file above", map[string]Kind{"a": Dir, "a/b": File}, nil, backend.ErrNotDir, []string{"a/b/c", "a", "a/b"}},
		{"top level", nil, []string{"x"}, nil, []string{"x"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := "a/b/c"
			if tt.name == "top level" {
				dir = "x"
			}
			m := &settleMap{kinds: tt.kinds}
			got, err := MissingDirs(context.Background(), dir, m.settle)
			if !slices.Equal(got, tt.want) || !errors.Is(err, tt.err) || (err == nil) != (tt.err == nil) {
				t.Errorf("MissingDirs = %q, %v; want %q, %v", got, err, tt.want, tt.err)
			}
			if !slices.Equal(m.asked, tt.asked) {
				t.Errorf("settled %q, want %q", m.asked, tt.asked)
			}
		})
	}
	failed := errors.New("listing failed")
	_, err := MissingDirs(context.Background(), "a", (&settleMap{err: failed}).settle)
	var pe *fs.PathError
	if !errors.As(err, &pe) || pe.Op != "mkdir" || pe.Path != "a" || pe.Err != failed {
		t.Errorf("settle error = %#v", err)
	}
}

func TestCheckAncestors(t *testing.T) {
	ctx := context.Background()
	m := &settleMap{kinds: map[string]Kind{"a": Dir, "a/b": File}}
	err := CheckAncestors(ctx, "write", "a/b/c/f", "a/b/c", m.settle)
	var pe *fs.PathError
	if !errors.As(err, &pe) || pe.Path != "a/b/c/f" || !errors.Is(err, backend.ErrNotDir) {
		t.Errorf("CheckAncestors = %v, want ErrNotDir naming a/b/c/f", err)
	}
	if want := []string{"a", "a/b"}; !slices.Equal(m.asked, want) {
		t.Errorf("settled %q, want %q", m.asked, want)
	}
	if err := CheckAncestors(ctx, "write", "x/f", "x", (&settleMap{}).settle); err != nil {
		t.Errorf("CheckAncestors over missing levels = %v", err)
	}
}

func TestKindOf(t *testing.T) {
	if KindOf(true, true) != Dir || KindOf(true, false) != Dir || KindOf(false, true) != File || KindOf(false, false) != Missing {
		t.Error("KindOf: a path with keys below it is a directory, even with an object of its name")
	}
}

// TestSettle checks Settle on the delimited listing of the keys that
// start with "p/f" and, when that fills its page, the listing below it.
func TestSettle(t *testing.T) {
	k := Keys{prefix: "p/"}
	tests := []struct {
		name     string
		first    []string // the delimited listing, common prefixes ending in "/"
		pageSize int
		below    []string
		want     Kind
		asked    bool // whether below was read
	}{
		{"missing", nil, 3, nil, Missing, false},
		{"object", []string{"p/f"}, 3, nil, File, false},
		{"object and directory", []string{"p/f", "p/f/"}, 3, nil, Dir, false},
		{"marker only", []string{"p/f/"}, 3, nil, Dir, false},
		{"object and longer names", []string{"p/f", "p/f.a", "p/f.b"}, 3, nil, File, false},
		{"page filled, nothing below", []string{"p/f", "p/f.a", "p/f.b", "p/f.c"}, 3, nil, File, true},
		{"page filled, keys below", []string{"p/f", "p/f.a", "p/f.b", "p/f.c", "p/f/"}, 3, []string{"p/f/x"}, Dir, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			first := &seekList{keys: tt.first, pageSize: tt.pageSize}
			asked := false
			hasBelow := func(_ context.Context, name string) (bool, error) {
				asked = true
				if name != "f" {
					t.Errorf("hasBelow(%q), want f", name)
				}
				return len(tt.below) > 0, nil
			}
			kind, info, err := k.Settle(context.Background(), "f", first, hasBelow)
			if err != nil || kind != tt.want {
				t.Fatalf("Settle = %v, %v; want %v", kind, err, tt.want)
			}
			if asked != tt.asked {
				t.Errorf("asked below: %v, want %v", asked, tt.asked)
			}
			if kind == File && (info.Name != "f" || !info.Mode.IsRegular()) {
				t.Errorf("file info = %+v", info)
			}
		})
	}
}

func TestCheckWritable(t *testing.T) {
	ctx := context.Background()
	// below lists the directories with keys below them; kinds settles
	// the ancestors.
	below := map[string]bool{"d": true, "d/sub": true}
	hasBelow := func(_ context.Context, name string) (bool, error) { return below[name], nil }
	m := &settleMap{kinds: map[string]Kind{"f": File, "e": Missing}}
	tests := []struct {
		name string
		want error
	}{
		{"top", nil},
		{"d/x", nil},
		{"d/sub", backend.ErrIsDir},
		{"f/x", backend.ErrNotDir},
		{"e/x", nil}, // the parent is missing: created by the write
	}
	for _, tt := range tests {
		err := CheckWritable(ctx, tt.name, hasBelow, m.settle)
		if !errors.Is(err, tt.want) || (err == nil) != (tt.want == nil) {
			t.Errorf("CheckWritable(%q) = %v, want %v", tt.name, err, tt.want)
		}
		if tt.want == backend.ErrIsDir {
			continue // CheckParent does not look at the target
		}
		err = CheckParent(ctx, tt.name, hasBelow, m.settle)
		if !errors.Is(err, tt.want) || (err == nil) != (tt.want == nil) {
			t.Errorf("CheckParent(%q) = %v, want %v", tt.name, err, tt.want)
		}
	}
	failed := errors.New("listing failed")
	err := CheckWritable(ctx, "a/b", func(context.Context, string) (bool, error) { return false, failed }, m.settle)
	var pe *fs.PathError
	if !errors.As(err, &pe) || pe.Op != "write" || pe.Path != "a/b" || pe.Err != failed {
		t.Errorf("listing error = %#v", err)
	}
}
