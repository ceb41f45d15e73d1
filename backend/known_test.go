package backend_test

import (
	"context"
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

func TestKnownMissing(t *testing.T) {
	ctx := backend.WithKnownMissing(context.Background(), "s3/d/new.txt")
	if !backend.KnownMissing(ctx, "s3/d/new.txt") {
		t.Error("KnownMissing of the name told = false")
	}
	if backend.KnownMissing(ctx, "s3/d/other.txt") {
		t.Error("KnownMissing of another name = true")
	}
	if _, ok := backend.KnownFile(ctx, "s3/d/new.txt"); ok {
		t.Error("a missing name is a known file")
	}
	// A mount passes it on under the child's path, and drops it for
	// another name or the mount's root.
	if fwd := backend.ForwardKnownFile(ctx, "s3/d/new.txt", "d/new.txt"); !backend.KnownMissing(fwd, "d/new.txt") {
		t.Error("ForwardKnownFile lost the missing name")
	}
	if fwd := backend.ForwardKnownFile(ctx, "s3/d/x", "d/x"); backend.KnownMissing(fwd, "d/new.txt") || backend.KnownMissing(fwd, "d/x") {
		t.Error("ForwardKnownFile passed on a claim about another name")
	}
	if fwd := backend.ForwardKnownFile(backend.WithKnownMissing(context.Background(), "s3"), "s3", "."); backend.KnownMissing(fwd, ".") {
		t.Error("ForwardKnownFile told a mount's root missing")
	}
	// The latest claim wins.
	ctx = backend.WithKnownFile(ctx, "s3/d/new.txt", backend.FileInfo{Size: 1, Version: "v"})
	if backend.KnownMissing(ctx, "s3/d/new.txt") {
		t.Error("KnownMissing after WithKnownFile = true")
	}
}
