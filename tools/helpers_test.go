package tools

import (
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"strings"
	"testing"

	"github.com/spf13/afero"

	"github.com/fencefs/fencefs/aferoadapter"
	"github.com/fencefs/fencefs/backend"
	"github.com/fencefs/fencefs/local"
)

// fixture is a fresh backend for one test, with set-up helpers that go
// through the backend itself.
type fixture struct {
	name string
	b    backend.Backend
	// dir is the host directory of a local backend, "" otherwise.
	dir string
}

// backends returns a fresh backend of every kind the tool tests run on.
func backends(t *testing.T) []fixture {
	t.Helper()
	dir := t.TempDir()
	lb, err := local.New(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { lb.Close() })
	return []fixture{
		{name: "local", b: lb, dir: dir},
		{name: "mem", b: newMemFS()},
		{name: "afero", b: aferoadapter.New(afero.NewMemMapFs())},
	}
}

// forEach runs fn as a subtest on every backend.
func forEach(t *testing.T, fn func(t *testing.T, fx fixture)) {
	t.Helper()
	for _, fx := range backends(t) {
		t.Run(fx.name, func(t *testing.T) { fn(t, fx) })
	}
}

// localFixture returns a local backend alone.
func localFixture(t *testing.T) fixture {
	t.Helper()
	return backends(t)[0]
}

func (fx fixture) put(t *testing.T, name, data string) {
	t.Helper()
	if dir, _ := backend.Split(name); dir != "." {
		fx.mkdir(t, dir)
	}
	if err := backend.WriteFile(context.Background(), fx.b, name, []byte(data), backend.WriteOptions{}); err != nil {
		t.Fatalf("put %s: %v", name, err)
	}
}

func (fx fixture) mkdir(t *testing.T, name string) {
	t.Helper()
	if err := backend.MkdirAll(context.Background(), fx.b, name); err != nil {
		t.Fatalf("mkdir %s: %v", name, err)
	}
}

func (fx fixture) get(t *testing.T, name string) (string, bool) {
	t.Helper()
	data, err := backend.ReadFile(context.Background(), fx.b, name)
	if errors.Is(err, fs.ErrNotExist) {
		return "", false
	}
	if err != nil {
		t.Fatalf("get %s: %v", name, err)
	}
	return string(data), true
}

func (fx fixture) mustGet(t *testing.T, name string) string {
	t.Helper()
	data, ok := fx.get(t, name)
	if !ok {
		t.Fatalf("%s does not exist", name)
	}
	return data
}

// newSet builds a Set or fails the test.
func newSet(t *testing.T, b backend.Backend, opts Options) *Set {
	t.Helper()
	s, err := New(b, opts)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return s
}

// args encodes tool arguments.
func args(t *testing.T, kv ...any) json.RawMessage {
	t.Helper()
	m := map[string]any{}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i].(string)] = kv[i+1]
	}
	raw, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return raw
}

// ok calls a tool and fails the test on any error.
func ok(t *testing.T, s *Set, tool string, kv ...any) string {
	t.Helper()
	out, err := s.Call(context.Background(), tool, args(t, kv...))
	if err != nil {
		t.Fatalf("%s(%v): unexpected error %v", tool, kv, err)
	}
	return out
}

// retry calls a tool that must fail with a retryable error of a known
// kind and returns its message.
func retry(t *testing.T, s *Set, tool string, kv ...any) string {
	t.Helper()
	out, err := s.Call(context.Background(), tool, args(t, kv...))
	if err == nil {
		t.Fatalf("%s(%v) = %q, want a retry error", tool, kv, out)
	}
	if !IsRetry(err) {
		t.Fatalf("%s(%v): error %v is not a retry error", tool, kv, err)
	}
	if k := KindOf(err); k == KindUnknown || !errors.Is(err, k) || OutcomeOf(err) == OutcomeError {
		t.Errorf("%s(%v): refusal %q has kind %q (outcome %s); every refusal has a kind", tool, kv, err, k, OutcomeOf(err))
	}
	return err.Error()
}

// wantEqual fails when got differs from want, showing both.
func wantEqual(t *testing.T, got, want string) {
	t.Helper()
	if got != want {
		t.Errorf("got:\n%q\nwant:\n%q", got, want)
	}
}

// recorder collects the events a Set emits.
type recorder struct{ events []Event }

func (r *recorder) on(_ context.Context, ev Event) { r.events = append(r.events, ev) }

func (r *recorder) kinds() string {
	var k []string
	for _, e := range r.events {
		k = append(k, e.Kind())
	}
	return strings.Join(k, ",")
}
