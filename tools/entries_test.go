package tools

import (
	"context"
	"errors"
	"slices"
	"testing"
)

// TestChangeEntries: the delete and the move of a directory announce
// every entry they take along, hidden ones included, as paths written as
// the request's Path is, sorted, directories with '/'; an empty
// directory's are empty, not nil; a change of files names none. On every
// backend, plain and rooted.
func TestChangeEntries(t *testing.T) {
	forEach(t, func(t *testing.T, fx fixture) {
		for _, f := range []string{"d/a.txt", "d/.cache", "d/sub/b.txt", "f.txt"} {
			fx.put(t, f, "x\n")
		}
		fx.mkdir(t, "empty")
		var got *ChangeRequest
		s := newSet(t, fx.b, Options{Tools: AllTools(), OnChangeRequest: func(_ context.Context, r *ChangeRequest) error {
			got = r
			r.Cancel("looked only")
			return nil
		}})
		for _, tc := range []struct {
			tool string
			kv   []any
			want []string
		}{
			{"delete_file", []any{"path", "d", "recursive", true}, []string{"d/.cache", "d/a.txt", "d/sub/", "d/sub/b.txt"}},
			{"move_file", []any{"source", "d", "destination", "e"}, []string{"d/.cache", "d/a.txt", "d/sub/", "d/sub/b.txt"}},
			{"delete_file", []any{"path", "empty"}, []string{}},
			{"delete_file", []any{"path", "f.txt"}, nil},
		} {
			got = nil
			if _, err := s.Call(context.Background(), tc.tool, args(t, tc.kv...)); err != nil {
				t.Fatalf("%s %v: %v", tc.tool, tc.kv, err)
			}
			if got == nil || !slices.Equal(got.Entries, tc.want) || (got.Entries == nil) != (tc.want == nil) || got.EntriesOver {
				t.Errorf("%s %v announced %#v, want %#v", tc.tool, tc.kv, got, tc.want)
			}
		}
	})
}

// TestDeleteRemovesOnlyAnnounced: an entry that appears below a
// directory after the walk its delete was announced with makes the
// delete refuse as a conflict, and nothing is removed.
func TestDeleteRemovesOnlyAnnounced(t *testing.T) {
	forEach(t, func(t *testing.T, fx fixture) {
		fx.put(t, "d/a.txt", "x\n")
		s := newSet(t, fx.b, Options{Tools: AllTools(), OnChangeRequest: func(context.Context, *ChangeRequest) error {
			fx.put(t, "d/.late", "y\n")
			return nil
		}})
		_, err := s.Call(context.Background(), "delete_file", args(t, "path", "d", "recursive", true))
		if !errors.Is(err, KindConflict) {
			t.Errorf("delete with an entry that appeared after its walk: %v, want a conflict", err)
		}
		for _, f := range []string{"d/a.txt", "d/.late"} {
			if _, ok := fx.get(t, f); !ok {
				t.Errorf("%s was removed", f)
			}
		}
	})
}
