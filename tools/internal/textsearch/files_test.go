package textsearch

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"slices"
	"strings"
	"testing"
)

// mapOpener serves files from a map.
type mapOpener map[string]string

func (m mapOpener) OpenRead(_ context.Context, name string) (io.ReadCloser, error) {
	s, ok := m[name]
	if !ok {
		return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrNotExist}
	}
	return io.NopCloser(strings.NewReader(s)), nil
}

func TestSearchFilesOrder(t *testing.T) {
	files := mapOpener{}
	var names []string
	for i := range 200 {
		name := fmt.Sprintf("f%03d", i)
		names = append(names, name)
		files[name] = strings.Repeat(fmt.Sprintf("hit %d\nmiss\n", i), i%5)
	}
	names = append(names, "missing")
	files["bin"] = "hit\x00"
	names = append(names, "bin")
	m := mustCompile(t, "hit", Options{})
	var got []string
	var errs []error
	err := m.SearchFiles(context.Background(), files, slices.Values(names), 4, 0, func(r FileResult) bool {
		got = append(got, r.Name)
		if r.Err != nil {
			errs = append(errs, r.Err)
		} else if len(r.Lines) != len(names) && len(r.Lines) != strings.Count(files[r.Name], "hit") {
			t.Errorf("%s: %d lines", r.Name, len(r.Lines))
		}
		return true
	})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got, names) {
		t.Fatalf("results out of order: %v", got)
	}
	if len(errs) != 2 || !errors.Is(errs[0], fs.ErrNotExist) || !errors.Is(errs[1], ErrBinary) {
		t.Fatalf("errors = %v", errs)
	}
}

func TestSearchFilesStopAndCap(t *testing.T) {
	files := mapOpener{"a": strings.Repeat("x\n", 1000), "b": "x\n", "c": "x\n"}
	m := mustCompile(t, "x", Options{})
	var seen []string
	err := m.SearchFiles(context.Background(), files, slices.Values([]string{"a", "b", "c"}), 2, 10, func(r FileResult) bool {
		seen = append(seen, r.Name)
		if r.Name == "a" && len(r.Lines) != 11 {
			t.Errorf("a: %d lines, want 11 (cap + 1)", len(r.Lines))
		}
		return r.Name != "b"
	})
	if err != nil || !slices.Equal(seen, []string{"a", "b"}) {
		t.Fatalf("seen %v, err %v", seen, err)
	}
}

func TestSearchFilesCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	m := mustCompile(t, "x", Options{})
	err := m.SearchFiles(ctx, mapOpener{"a": "x"}, slices.Values([]string{"a"}), 1, 0, func(FileResult) bool { return true })
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v", err)
	}
}

// TestSearchFilesStopWithBacklog stops while the producer still has many
// files to hand out; SearchFiles must return rather than wait for them.
func TestSearchFilesStopWithBacklog(t *testing.T) {
	files := mapOpener{}
	var names []string
	for i := range 500 {
		name := fmt.Sprint(i)
		names = append(names, name)
		files[name] = "x\n"
	}
	m := mustCompile(t, "x", Options{})
	n := 0
	err := m.SearchFiles(context.Background(), files, slices.Values(names), 2, 0, func(FileResult) bool {
		n++
		return n < 5
	})
	if err != nil || n != 5 {
		t.Fatalf("n = %d, err = %v", n, err)
	}
}

// TestSearchJobs checks that jobs of any type reach the opener and come
// back with their results, in order.
func TestSearchJobs(t *testing.T) {
	type job struct {
		path string
		id   int
	}
	files := mapOpener{"a": "hit\n", "b": "miss\n", "c": "hit\nhit\n"}
	jobs := []job{{"a", 1}, {"b", 2}, {"c", 3}, {"a", 4}}
	open := func(ctx context.Context, j job) (io.ReadCloser, error) { return files.OpenRead(ctx, j.path) }
	m := mustCompile(t, "hit", Options{})
	var got []string
	err := SearchJobs(context.Background(), m, open, slices.Values(jobs), 2, 0, func(j job, r FileResult) bool {
		if r.Name != "" || r.Err != nil {
			t.Errorf("job %v: name %q, error %v", j, r.Name, r.Err)
		}
		got = append(got, fmt.Sprintf("%s%d:%d", j.path, j.id, len(r.Lines)))
		return true
	})
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"a1:1", "b2:0", "c3:2", "a4:1"}; !slices.Equal(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
}
