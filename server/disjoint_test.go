package server

import (
	"context"
	"errors"
	"io"
	"net/http"
	"path/filepath"
	"testing"
	"time"

	"github.com/fencefs/fencefs/backend"
	"github.com/fencefs/fencefs/mountspec"
	"github.com/fencefs/fencefs/overlay/overlayspec"
	"github.com/fencefs/fencefs/tenant"
)

// TestTenantMountsDisjoint: New refuses tenant mounts that some tenant id
// could use to reach another tenant's storage or a shared mount (checked
// by tenant.Disjoint over the parsed specs, for every id), and a relative
// local template; disjoint mounts of every kind start.
func TestTenantMountsDisjoint(t *testing.T) {
	base := t.TempDir()
	schemes := mountspec.Schemes{"fake://": fakeScheme{}}
	schemes[overlayspec.Prefix] = overlayspec.New(mountspec.Options{Schemes: schemes})
	anyone := AuthenticatorFunc(func(*http.Request) (*tenant.Identity, error) { return nil, ErrUnauthenticated })
	mounts := func(specs ...string) []TenantMount {
		var out []TenantMount
		for i, s := range specs {
			tmpl, err := tenant.ParseTemplate(s)
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, TenantMount{Name: string(rune('a' + i)), Template: tmpl})
		}
		return out
	}
	d := filepath.Join(base, "d")
	for _, c := range []struct {
		name  string
		specs []string
		ok    bool
	}{
		{"another template's directory", []string{"local:" + d + "/{tenant}", "local:" + d + "/notes/{tenant}"}, false},
		{"a shared read-only mount", []string{"local:" + d + "/{tenant}", "local:" + d + "/shared:ro"}, false},
		{"S3 prefixes", []string{"s3://bucket/t/{tenant}?endpoint=http://127.0.0.1:1", "s3://bucket/t/common?endpoint=http://127.0.0.1:1&ro=1"}, false},
		{"SFTP directories", []string{"sftp://u@127.0.0.1:1/data/{tenant}?insecure=1&password_env=FENCEFS_NONE", "sftp://u@127.0.0.1:1/data/shared?insecure=1&password_env=FENCEFS_NONE"}, false},
		{"relative", []string{"local:rel/{tenant}"}, false},
		{"a Scheme's buckets", []string{"fake://b/t/{tenant}", "fake://b/t/shared?ro=1"}, false},
		{"a Scheme's other bucket", []string{"fake://b/t/{tenant}", "fake://c/t/shared"}, true},
		{"an overlay's upper layer in another template's directory", []string{"overlay:local:" + base + "/repo:ro+local:" + d + "/{tenant}", "local:" + d + "/notes/{tenant}"}, false},
		{"an overlay's upper layer around a shared mount", []string{"overlay:local:" + base + "/repo:ro+local:" + d + "/{tenant}", "local:" + d + "/shared:ro"}, false},
		{"an overlay's base in another template's directory", []string{"overlay:local:" + d + "/{tenant}:ro+local:" + d + "/up/{tenant}", "local:" + d + "/notes/{tenant}"}, false},
		{"two overlays' upper layers", []string{"overlay:local:" + base + "/repo:ro+local:" + d + "/{tenant}", "overlay:local:" + base + "/repo:ro+local:" + d + "/notes/{tenant}"}, false},
		{"an overlay's Scheme layer", []string{"overlay:fake://b/t/{tenant}/x+local:" + d + "/up/{tenant}", "fake://b/t/shared?ro=1"}, false},
		{"an overlay's relative upper layer", []string{"overlay:local:" + base + "/repo:ro+local:rel/{tenant}"}, false},
		{"disjoint overlays", []string{"overlay:local:" + base + "/repo:ro+local:" + d + "/ws/{tenant}", "local:" + d + "/notes/{tenant}", "local:" + base + "/repo:ro",
			"overlay:local:" + d + "/own/{tenant}/base:ro+local:" + d + "/own/{tenant}/up"}, true},
		{"disjoint", []string{"local:" + d + "/ws/{tenant}", "local:" + d + "/notes/{tenant}", "s3://bucket/t/{tenant}?endpoint=http://127.0.0.1:1"}, true},
	} {
		s, err := New(t.Context(), Config{TenantMounts: mounts(c.specs...), Identity: anyone, Schemes: schemes})
		if err == nil {
			s.Close()
		}
		var oe *tenant.OverlapError
		switch {
		case c.ok && err != nil:
			t.Errorf("%s: refused: %v", c.name, err)
		case !c.ok && !errors.As(err, &oe) && !errors.Is(err, tenant.ErrRelative):
			t.Errorf("%s: %v, want an overlap or a relative path refused", c.name, err)
		}
	}
}

// fakeScheme parses "fake://BUCKET/PATH" specs as a cloud storage Scheme
// does, keeping the rest as Opaque; it opens nothing.
type fakeScheme struct{}

func (fakeScheme) Parse(rest string) (mountspec.Spec, error) {
	return mountspec.Spec{Opaque: rest}, nil
}

func (fakeScheme) Open(context.Context, mountspec.Spec, time.Duration) (backend.Backend, io.Closer, error) {
	return nil, nil, errors.New("fake storage")
}
