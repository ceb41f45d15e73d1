// Package backendtest holds the checks that the tests of several
// backends share.
package backendtest

import (
	"context"
	"errors"
	"io"
	"io/fs"
	"testing"

	"github.com/fencefs/fencefs/backend"
)

// WantPathErr fails t unless err is an *fs.PathError naming name and
// matching target; what says which call gave err.
func WantPathErr(t testing.TB, what string, err error, name string, target error) {
	t.Helper()
	if !errors.Is(err, target) {
		t.Errorf("%s: error %v, want %v", what, err, target)
		return
	}
	var pe *fs.PathError
	if !errors.As(err, &pe) || pe.Path != name {
		t.Errorf("%s: error %#v is not an *fs.PathError naming %q", what, err, name)
	}
}

// Read is one case of CheckReads: the name to open and either the
// content it must read or the error it must give.
type Read struct {
	Name, Want string
	Err        error
}

// CheckReads opens each case's name with b and checks that it reads the
// wanted content and closes cleanly, or fails with a path error naming
// it and matching the wanted error.
func CheckReads(t testing.TB, ctx context.Context, b backend.Reader, cases []Read) {
	t.Helper()
	for _, c := range cases {
		r, err := b.OpenRead(ctx, c.Name)
		if c.Err != nil {
			if err == nil {
				r.Close()
			}
			WantPathErr(t, "OpenRead("+c.Name+")", err, c.Name, c.Err)
			continue
		}
		if err != nil {
			t.Errorf("OpenRead(%q): %v", c.Name, err)
			continue
		}
		data, err := io.ReadAll(r)
		if err != nil || string(data) != c.Want {
			t.Errorf("OpenRead(%q) read %q, %v; want %q", c.Name, data, err, c.Want)
		}
		if err := r.Close(); err != nil {
			t.Errorf("Close(%q): %v", c.Name, err)
		}
	}
}
