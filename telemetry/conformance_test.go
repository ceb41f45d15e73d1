//go:build linux

package telemetry

import (
	"context"
	"testing"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/fencefs/fencefs/backend"
	"github.com/fencefs/fencefs/conformance"
	"github.com/fencefs/fencefs/internal/backendtest"
	"github.com/fencefs/fencefs/local"
	"github.com/fencefs/fencefs/memfs"
)

// tracedHarness makes local backends behind a TracedFS that spans every
// operation (roots), so the suites check that the wrapper forwards every
// behaviour and its spans end.
func tracedHarness(t *testing.T) (*backendtest.HostHarness, *tracetest.InMemoryExporter) {
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	t.Cleanup(func() { tp.Shutdown(t.Context()) })
	tr := New(Options{TracerProvider: tp, Paths: true})
	return backendtest.NewHostHarness("", func(t *testing.T, dir string) backend.Backend {
		b, err := local.New(dir)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { b.Close() })
		f := tr.Backend(b, "").(*TracedFS)
		f.roots = true
		return f
	}), exp
}

func abilities() []conformance.Ability {
	return []conformance.Ability{
		conformance.AbilitySymlinker, conformance.AbilitySpecialFileMaker, conformance.AbilityRawLister,
		conformance.AbilityChmoder, conformance.AbilitySeeder, conformance.AbilityReopener,
	}
}

// TestConformanceTraced runs the backend suite on local disk behind the
// tracing wrapper: it must pass exactly as local disk does.
func TestConformanceTraced(t *testing.T) {
	h, exp := tracedHarness(t)
	conformance.RunWith(t, h, conformance.RunOptions{
		ExpectedSkips: []string{
			"Preconditions/MatchVersion*", "Reopen/MatchVersionAcrossValues",
			"ReadOnly/*", "Changes/ChangesRefusedWhenReadOnly",
		},
		RequireAbilities: abilities(),
	})
	if len(exp.GetSpans()) == 0 {
		t.Fatal("the suite ran without a span")
	}
}

// TestToolsTraced runs the tools suite on local disk behind the wrapper.
func TestToolsTraced(t *testing.T) {
	h, _ := tracedHarness(t)
	conformance.RunToolsWith(t, h, conformance.ToolsOptions{
		ExpectedSkips:    []string{"ToolSelection/ReadOnlyBackend"},
		RequireAbilities: abilities(),
	})
}

// TestToolsTracedMemfs runs the tools suite on a memfs behind the
// wrapper: a backend without symlinks, a Walker or host paths, which the
// wrapper declines for as memfs does.
func TestToolsTracedMemfs(t *testing.T) {
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	t.Cleanup(func() { tp.Shutdown(t.Context()) })
	tr := New(Options{TracerProvider: tp})
	conformance.RunToolsWith(t, conformance.HarnessFunc(func(ctx context.Context, t *testing.T) backend.Backend {
		f := tr.Backend(memfs.New(), "").(*TracedFS)
		f.roots = true
		return f
	}), conformance.ToolsOptions{ExpectedSkips: []string{"Symlinks/*", "SpecialFiles/*", "ToolSelection/ReadOnlyBackend", "WriteFile/ModeKept"}})
}
