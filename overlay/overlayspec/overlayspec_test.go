package overlayspec_test

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fencefs/fencefs/backend"
	"github.com/fencefs/fencefs/mountspec"
	"github.com/fencefs/fencefs/overlay"
	"github.com/fencefs/fencefs/overlay/overlayspec"
	"github.com/fencefs/fencefs/tenant"
)

// schemes returns a registry with the overlay scheme, closed with t.
func schemes(t *testing.T) mountspec.Schemes {
	sc := overlayspec.New(mountspec.Options{})
	t.Cleanup(sc.Close)
	return mountspec.Schemes{overlayspec.Prefix: sc}
}

// TestOpen: an overlay: spec over two local directories (one holding '+'
// and '%' in its name) opens to an overlay whose writes reach only the
// upper directory, prints back to a spec that parses the same, and is
// read-only when its upper layer is.
func TestOpen(t *testing.T) {
	ctx := t.Context()
	root := t.TempDir()
	baseDir, upperDir := filepath.Join(root, "base+1%"), filepath.Join(root, "up")
	for _, d := range []string{baseDir, upperDir} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(baseDir, "a.txt"), []byte("base\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	ss := schemes(t)
	spec := "overlay:" + overlayspec.Join("local:"+baseDir+":ro", "local:"+upperDir)
	s, err := ss.Parse(spec)
	if err != nil {
		t.Fatal(err)
	}
	if s.Kind != overlayspec.Prefix || s.ReadOnly || s.String() != spec {
		t.Fatalf("parsed %+v, prints %q, want %q", s, s.String(), spec)
	}
	if again, err := ss.Parse(s.String()); err != nil || again != s {
		t.Fatalf("printed spec parses to %+v, %v", again, err)
	}
	o := mountspec.New(mountspec.Options{Schemes: ss})
	defer o.Close()
	b, c, err := o.Open(ctx, "ws", s, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, ok := b.(*overlay.FS); !ok {
		t.Fatalf("opened %T, want an *overlay.FS", b)
	}
	if data, err := backend.ReadFile(ctx, b, "a.txt"); err != nil || string(data) != "base\n" {
		t.Fatalf("read through = %q, %v", data, err)
	}
	if err := backend.WriteFile(ctx, b, "a.txt", []byte("mine\n"), backend.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	if data, _ := os.ReadFile(filepath.Join(baseDir, "a.txt")); string(data) != "base\n" {
		t.Errorf("the base changed: %q", data)
	}
	if data, _ := os.ReadFile(filepath.Join(upperDir, "a.txt")); string(data) != "mine\n" {
		t.Errorf("the upper layer holds %q", data)
	}

	ro, err := ss.Parse("overlay:" + overlayspec.Join("local:"+baseDir, "local:"+upperDir+":ro"))
	if err != nil || !ro.ReadOnly {
		t.Fatalf("read-only upper: %+v, %v", ro, err)
	}
	rb, rc, err := o.Open(ctx, "ro", ro, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	if err := backend.WriteFile(ctx, rb, "b.txt", nil, backend.WriteOptions{}); !errors.Is(err, backend.ErrReadOnly) {
		t.Errorf("write over a read-only upper layer: %v", err)
	}
}

// TestOpenFS: the overlay opened for review lands its change on a
// writable base.
func TestOpenFS(t *testing.T) {
	ctx := t.Context()
	baseDir, upperDir := t.TempDir(), t.TempDir()
	sc := overlayspec.New(mountspec.Options{})
	defer sc.Close()
	s, err := sc.Parse(overlayspec.Join("local:"+baseDir, "local:"+upperDir))
	if err != nil {
		t.Fatal(err)
	}
	o, c, err := sc.OpenFS(ctx, s, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := backend.WriteFile(ctx, o, "new.txt", []byte("x"), backend.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	res, err := o.Commit(ctx)
	if err != nil || len(res.Landed) != 1 || len(res.Conflicts) != 0 {
		t.Fatalf("Commit = %+v, %v", res, err)
	}
	if data, err := os.ReadFile(filepath.Join(baseDir, "new.txt")); err != nil || string(data) != "x" {
		t.Errorf("base new.txt = %q, %v", data, err)
	}
}

// TestTemplate: a tenant template gives each tenant its own upper layer
// over the shared base.
func TestTemplate(t *testing.T) {
	ss := schemes(t)
	tm, err := tenant.ParseTemplate("overlay:local:/srv/repo:ro+local:/srv/upper/{tenant}")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ss.Parse(tm.String()); err != nil {
		t.Fatalf("the template does not parse: %v", err)
	}
	for _, id := range []string{"t1", "t10"} {
		tid, err := tenant.ParseID(id)
		if err != nil {
			t.Fatal(err)
		}
		spec, err := tm.Expand(tid)
		if err != nil {
			t.Fatal(err)
		}
		s, err := ss.Parse(spec)
		if err != nil {
			t.Fatal(err)
		}
		if want := "overlay:local:/srv/repo:ro+local:/srv/upper/" + id; s.String() != want {
			t.Errorf("tenant %s: %q, want %q", id, s.String(), want)
		}
	}
}

func TestParseErrors(t *testing.T) {
	ss := schemes(t)
	for _, c := range []struct{ spec, want string }{
		{"overlay:local:/a", "bare '+'"},
		{"overlay:local:/a+local:/b+local:/c", "bare '+'"},
		{"overlay:+local:/b", "empty"},
		{"overlay:local:/a+", "empty"},
		{"overlay:local:/a%2x+local:/b", "not %25 or %2B"},
		{"overlay:local:/a%+local:/b", "not %25 or %2B"},
		{"overlay:local:/a+overlay:local:/b%2Blocal:/c", "is an overlay"},
		{"overlay:nope:/a+local:/b", "the base"},
		{"overlay:local:/a+s3://", "the upper layer"},
	} {
		_, err := ss.Parse(c.spec)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Parse(%q) = %v, want an error saying %q", c.spec, err, c.want)
		}
	}
}

// TestOpenMissingLayer: a layer that cannot be opened is an error naming
// it, and nothing stays open.
func TestOpenMissingLayer(t *testing.T) {
	sc := overlayspec.New(mountspec.Options{})
	defer sc.Close()
	s, err := sc.Parse(overlayspec.Join("local:"+t.TempDir(), "local:"+filepath.Join(t.TempDir(), "missing")))
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := sc.Open(t.Context(), s, time.Second); err == nil || !strings.Contains(err.Error(), "upper layer") || !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Open over a missing upper directory: %v", err)
	}
}

// FuzzSplit: Join and Split are inverse, and whatever Split accepts joins
// back to a string that splits the same.
func FuzzSplit(f *testing.F) {
	for _, s := range []string{"local:/a+local:/b", "local:/a%2Bb+s3://x/y%25", "a+b+c", "%", "+", "a%2b+b", "%25%2B+%"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		base, upper, err := overlayspec.Split(s)
		if err != nil {
			return
		}
		if base == "" || upper == "" {
			t.Fatalf("Split(%q) = %q, %q: an empty part", s, base, upper)
		}
		joined := overlayspec.Join(base, upper)
		b2, u2, err := overlayspec.Split(joined)
		if err != nil || b2 != base || u2 != upper {
			t.Fatalf("Split(Join(%q, %q)) = %q, %q, %v", base, upper, b2, u2, err)
		}
		// Any two specs survive Join: the halves of s cut anywhere.
		for i := 1; i < len(s); i++ {
			b, u := s[:i], s[i:]
			if b3, u3, err := overlayspec.Split(overlayspec.Join(b, u)); err != nil || b3 != b || u3 != u {
				t.Fatalf("Split(Join(%q, %q)) = %q, %q, %v", b, u, b3, u3, err)
			}
		}
	})
}

// FuzzParse: whatever the scheme accepts prints back to a spec that
// parses to the same Spec.
func FuzzParse(f *testing.F) {
	for _, s := range []string{"local:/a:ro+local:/b", "local:/a%2B+s3://b/p?region=x", "sftp://u@h/d+local:/x:ro", "local:/a+overlay:x"} {
		f.Add(s)
	}
	ss := mountspec.Schemes{overlayspec.Prefix: overlayspec.New(mountspec.Options{})}
	f.Fuzz(func(t *testing.T, rest string) {
		s, err := ss.Parse(overlayspec.Prefix + rest)
		if err != nil {
			return
		}
		again, err := ss.Parse(s.String())
		if err != nil || again != s {
			t.Fatalf("%q parses to %+v, printed %q, which parses to %+v, %v", rest, s, s.String(), again, err)
		}
	})
}

// TestLayers: the Scheme is mountspec.Layered: an overlay spec's layers
// come back parsed, with their kinds, as a server needs them to prove
// tenant templates disjoint.
func TestLayers(t *testing.T) {
	ss := schemes(t)
	sp, err := ss.Parse("overlay:local:/srv/re%2Bpo:ro+s3://b/t/x?region=r")
	if err != nil {
		t.Fatal(err)
	}
	ly, ok := ss[overlayspec.Prefix].(mountspec.Layered)
	if !ok {
		t.Fatal("the overlay Scheme is not mountspec.Layered")
	}
	layers, err := ly.Layers(sp)
	if err != nil {
		t.Fatal(err)
	}
	if len(layers) != 2 || layers[0].Kind != mountspec.KindLocal || layers[0].Dir != "/srv/re+po" || !layers[0].ReadOnly ||
		layers[1].Kind != mountspec.KindS3 || layers[1].S3.Bucket != "b" || layers[1].S3.Prefix != "t/x" {
		t.Errorf("layers %+v", layers)
	}
	if _, err := ly.Layers(mountspec.Spec{Kind: overlayspec.Prefix, Opaque: "local:/a"}); err == nil {
		t.Error("a spec that is not BASE+UPPER gave layers")
	}
}
