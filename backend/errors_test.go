package backend_test

import (
	"errors"
	"fmt"
	"io/fs"
	"testing"

	"github.com/fencefs/fencefs/backend"
)

func TestSentinels(t *testing.T) {
	ioSentinels := []error{fs.ErrInvalid, fs.ErrPermission, fs.ErrExist, fs.ErrNotExist, fs.ErrClosed}
	tests := []struct {
		err    error
		parent error // the io/fs sentinel it also matches, or nil
	}{
		{backend.ErrInvalidPath, fs.ErrInvalid},
		{backend.ErrIsDir, nil},
		{backend.ErrNotDir, nil},
		{backend.ErrNotRegular, nil},
		{backend.ErrPrecondition, nil},
		{backend.ErrOutside, fs.ErrPermission},
		{backend.ErrLoop, nil},
		{backend.ErrSymlink, nil},
		{backend.ErrNameTooLong, fs.ErrInvalid},
		{backend.ErrReadOnly, fs.ErrPermission},
	}
	for _, tt := range tests {
		wrapped := &fs.PathError{Op: "op", Path: "a/b", Err: fmt.Errorf("context: %w", tt.err)}
		if !errors.Is(wrapped, tt.err) {
			t.Errorf("%v: a wrapped error does not match itself", tt.err)
		}
		for _, s := range ioSentinels {
			if got, want := errors.Is(wrapped, s), s == tt.parent; got != want {
				t.Errorf("errors.Is(%v, %v) = %v, want %v", tt.err, s, got, want)
			}
		}
		for _, other := range tests {
			if other.err != tt.err && errors.Is(tt.err, other.err) {
				t.Errorf("%v matches %v", tt.err, other.err)
			}
		}
		if tt.err.Error() == "" {
			t.Errorf("%#v has an empty message", tt.err)
		}
	}
}

func TestPathError(t *testing.T) {
	if backend.PathError("op", "x", nil) != nil {
		t.Error("PathError(nil) is not nil")
	}
	host := &fs.PathError{Op: "open", Path: "/home/user/root/a/b", Err: fs.ErrNotExist}
	tests := []struct {
		in      error
		wantErr error
	}{
		{fs.ErrNotExist, fs.ErrNotExist},
		{backend.ErrIsDir, backend.ErrIsDir},
		{host, fs.ErrNotExist},
		{fmt.Errorf("wrapped: %w", host), fs.ErrNotExist},
	}
	for _, tt := range tests {
		err := backend.PathError("read", "a/b", tt.in)
		pe, ok := err.(*fs.PathError)
		if !ok {
			t.Fatalf("PathError(%v) = %T, want *fs.PathError", tt.in, err)
		}
		if pe.Op != "read" || pe.Path != "a/b" || !errors.Is(err, tt.wantErr) {
			t.Errorf("PathError(%v) = %#v, want op read, path a/b, matching %v", tt.in, pe, tt.wantErr)
		}
	}
}
