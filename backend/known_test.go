package backend_test

import (
	"io/fs"
	"testing"

	"github.com/fencefs/fencefs/backend"
)

func TestKnownFile(t *testing.T) {
	file := backend.FileInfo{Name: "f", Size: 3, Version: `"v1"`}
	tests := []struct {
		name   string
		attach string
		info   backend.FileInfo
		ask    string
		ok     bool
	}{
		{"the same name", "d/f", file, "d/f", true},
		{"another name", "d/f", file, "d/g", false},
		{"nothing attached", "", file, "d/f", false},
		{"a directory is no file", "d", backend.FileInfo{Name: "d", Mode: fs.ModeDir}, "d", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := t.Context()
			if tt.attach != "" {
				ctx = backend.WithKnownFile(ctx, tt.attach, tt.info)
			}
			got, ok := backend.KnownFile(ctx, tt.ask)
			if ok != tt.ok || (ok && got != tt.info) {
				t.Errorf("KnownFile(%q) = %+v, %v; want %+v, %v", tt.ask, got, ok, tt.info, tt.ok)
			}
		})
	}
	fwd := backend.ForwardKnownFile(backend.WithKnownFile(t.Context(), "m/d/f", file), "m/d/f", "d/f")
	if got, ok := backend.KnownFile(fwd, "d/f"); !ok || got != file {
		t.Errorf("KnownFile(d/f) after ForwardKnownFile(m/d/f, d/f) = %+v, %v", got, ok)
	}
	if fwd := backend.ForwardKnownFile(t.Context(), "m/d/f", "d/f"); fwd != t.Context() {
		t.Error("ForwardKnownFile without a known file changed the context")
	}
	// A claim about another name is not passed on: the child may hold
	// that name under its own path ("d/f" below the mount point "m").
	stale := backend.ForwardKnownFile(backend.WithKnownFile(t.Context(), "d/f", file), "m/d/f", "d/f")
	if got, ok := backend.KnownFile(stale, "d/f"); ok {
		t.Errorf("KnownFile(d/f) after forwarding m/d/f under a claim about d/f = %+v, want none", got)
	}
	// Only the latest name is kept.
	ctx := backend.WithKnownFile(backend.WithKnownFile(t.Context(), "a", file), "b", file)
	if _, ok := backend.KnownFile(ctx, "a"); ok {
		t.Error("KnownFile(a) found after WithKnownFile(b)")
	}
}
