package mountspec_test

import (
	"context"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/fencefs/fencefs/backend"
	"github.com/fencefs/fencefs/memfs"
	"github.com/fencefs/fencefs/mountspec"
)

// memScheme opens "mem:NAME" specs to in-memory backends, one per name:
// a kind of storage the package does not know.
type memScheme struct{ fs map[string]*memfs.FS }

func (m memScheme) Parse(rest string) (mountspec.Spec, error) {
	name, ro := strings.CutSuffix(rest, ":ro")
	if name == "" {
		return mountspec.Spec{}, errors.New("mem: the name is empty")
	}
	return mountspec.Spec{ReadOnly: ro, Opaque: rest}, nil
}

func (m memScheme) Open(_ context.Context, s mountspec.Spec, _ time.Duration) (backend.Backend, io.Closer, error) {
	name, _ := strings.CutSuffix(s.Opaque, ":ro")
	return m.fs[name], io.NopCloser(nil), nil
}

// TestSchemes: a spec of a registered prefix is parsed and opened by its
// Scheme, read-only applies to it, it prints back as written, and the
// package's own kinds keep their parser.
func TestSchemes(t *testing.T) {
	ctx := t.Context()
	schemes := mountspec.Schemes{"mem:": memScheme{map[string]*memfs.FS{"a": memfs.New()}}}
	s, err := schemes.Parse("mem:a:ro")
	if err != nil {
		t.Fatal(err)
	}
	if s.Kind != "mem:" || !s.ReadOnly || s.String() != "mem:a:ro" {
		t.Fatalf("parsed %+v, prints %q", s, s.String())
	}
	o := mountspec.New(mountspec.Options{Schemes: schemes})
	defer o.Close()
	b, c, err := o.Open(ctx, "m", s, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := backend.MkdirAll(ctx, b, "x"); err == nil {
		t.Error("a read-only scheme mount made a directory")
	}
	if _, err := schemes.Parse("mem:"); err == nil {
		t.Error("the scheme's refusal was not returned")
	}
	if _, err := schemes.Parse("gs://b"); err == nil || !strings.Contains(err.Error(), "mem:...") {
		t.Errorf("an unknown spec: %v", err)
	}
	if l, err := schemes.Parse("local:/x"); err != nil || l.Kind != mountspec.KindLocal {
		t.Errorf("local: with schemes: %+v, %v", l, err)
	}
	if _, _, err := mountspec.New(mountspec.Options{}).Open(ctx, "m", s, time.Second); err == nil {
		t.Error("an opener without the scheme opened its spec")
	}
}
