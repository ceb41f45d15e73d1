package telemetry

import (
	"context"
	"errors"
	"io/fs"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/fencefs/fencefs/backend"
)

// TracedFS is a backend wrapped so that each storage operation is a span,
// a child of the span in the operation's context (a tool call's); see
// [Tracing.Backend]. Like [backend.ReadOnlyFS] it is one type whatever
// the wrapped backend implements: every behaviour interface is there,
// forwarding to the wrapped backend's or declining with
// errors.ErrUnsupported where it has none, and its Capabilities are the
// wrapped backend's.
type TracedFS struct {
	b    backend.Backend
	t    *Tracing
	name string
	// roots makes spans under contexts without one too (tests).
	roots bool
}

// Backend returns b with a span per storage operation (open_read, list,
// stat, walk, open_write to commit, mkdir_all, remove, rename, copy,
// ...), named by name (a mount's name; "" for b's kind), made only under
// a context that already holds a recording span, so that probes and work
// outside tool calls start no traces. A read's span lasts from the open
// to the Close and counts the bytes read; a write's from the open to the
// Commit or Close and counts the bytes written. A nil *Tracing returns b
// itself.
func (t *Tracing) Backend(b backend.Backend, name string) backend.Backend {
	if t == nil {
		return b
	}
	if name == "" {
		name = backend.CapabilitiesOf(b).Name
	}
	return &TracedFS{b: b, t: t, name: name}
}

// Unwrap returns the wrapped backend.
func (f *TracedFS) Unwrap() backend.Backend { return f.b }

// start returns the span of operation op on name, or nil when ctx holds
// no recording span.
func (f *TracedFS) start(ctx context.Context, op, name string) (context.Context, trace.Span) {
	if !f.roots && !trace.SpanFromContext(ctx).IsRecording() {
		return ctx, nil
	}
	attrs := []attribute.KeyValue{AttrOperation.String(op), AttrStorage.String(f.name)}
	if f.t.opts.Paths {
		attrs = append(attrs, AttrPath.String(name))
	}
	return f.t.tracer.Start(ctx, "storage "+op, trace.WithSpanKind(trace.SpanKindInternal), trace.WithAttributes(attrs...))
}

// end ends span (when there is one) with err's status: a missing file or
// a decline is an answer, not a failure.
func end(span trace.Span, err error) {
	if span == nil {
		return
	}
	if err != nil && !errors.Is(err, fs.ErrNotExist) && !errors.Is(err, errors.ErrUnsupported) {
		span.RecordError(err)
		span.SetStatus(codes.Error, err.Error())
	}
	span.End()
}

// OpenRead opens name; the span lasts until the reader's Close.
func (f *TracedFS) OpenRead(ctx context.Context, name string) (backend.FileReader, error) {
	ctx, span := f.start(ctx, "open_read", name)
	r, err := f.b.OpenRead(ctx, name)
	if span == nil {
		return r, err
	}
	if err != nil {
		end(span, err)
		return nil, err
	}
	return &tracedReader{FileReader: r, span: span}, nil
}

// tracedReader counts the bytes read and ends its span on Close.
type tracedReader struct {
	backend.FileReader
	span trace.Span
	n    int64
	done bool
}

func (r *tracedReader) Read(p []byte) (int, error) {
	n, err := r.FileReader.Read(p)
	r.n += int64(n)
	return n, err
}

func (r *tracedReader) Close() error {
	err := r.FileReader.Close()
	if !r.done {
		r.done = true
		r.span.SetAttributes(AttrBytes.Int64(r.n))
		end(r.span, err)
	}
	return err
}

// List passes through under a span.
func (f *TracedFS) List(ctx context.Context, dir string) ([]backend.DirEntry, error) {
	ctx, span := f.start(ctx, "list", dir)
	entries, err := f.b.List(ctx, dir)
	end(span, err)
	return entries, err
}

// ListTypes passes through under a span, to List where the wrapped
// backend has no TypeLister.
func (f *TracedFS) ListTypes(ctx context.Context, dir string) ([]backend.DirEntry, error) {
	ctx, span := f.start(ctx, "list", dir)
	entries, err := backend.ListTypes(ctx, f.b, dir)
	end(span, err)
	return entries, err
}

// Stat uses the wrapped backend's Stater or the listing fallback, under a
// span.
func (f *TracedFS) Stat(ctx context.Context, name string) (backend.FileInfo, error) {
	ctx, span := f.start(ctx, "stat", name)
	fi, err := backend.Stat(ctx, f.b, name)
	end(span, err)
	return fi, err
}

// Walk passes through to the wrapped backend's Walker under a span, and
// declines without one.
func (f *TracedFS) Walk(ctx context.Context, dir string, fn backend.WalkFunc) error {
	w, ok := f.b.(backend.Walker)
	if !ok {
		if err := backend.CheckPath("walk", dir); err != nil {
			return err
		}
		return &fs.PathError{Op: "walk", Path: dir, Err: backend.ErrUnsupported}
	}
	ctx, span := f.start(ctx, "walk", dir)
	err := w.Walk(ctx, dir, fn)
	end(span, err)
	return err
}

// ResolveSymlinks passes through under a span, and declines on a backend
// without links.
func (f *TracedFS) ResolveSymlinks(ctx context.Context, name string) (string, error) {
	if _, ok := f.b.(backend.SymlinkResolver); !ok {
		return backend.ResolveSymlinks(ctx, f.b, name)
	}
	ctx, span := f.start(ctx, "resolve_symlinks", name)
	s, err := backend.ResolveSymlinks(ctx, f.b, name)
	end(span, err)
	return s, err
}

// TraceSymlinks passes through under a span, and declines on a backend
// without links.
func (f *TracedFS) TraceSymlinks(ctx context.Context, name string, visit func(string) error) (string, error) {
	if _, ok := f.b.(backend.SymlinkResolver); !ok {
		return backend.TraceSymlinks(ctx, f.b, name, visit)
	}
	ctx, span := f.start(ctx, "resolve_symlinks", name)
	s, err := backend.TraceSymlinks(ctx, f.b, name, visit)
	end(span, err)
	return s, err
}

// Readlink passes through under a span, and declines on a backend without
// links.
func (f *TracedFS) Readlink(ctx context.Context, name string) (string, error) {
	if _, ok := f.b.(backend.SymlinkResolver); !ok {
		return backend.Readlink(ctx, f.b, name)
	}
	ctx, span := f.start(ctx, "readlink", name)
	s, err := backend.Readlink(ctx, f.b, name)
	end(span, err)
	return s, err
}

// LocalPath passes through.
func (f *TracedFS) LocalPath(name string) (string, bool) { return backend.LocalPath(f.b, name) }

// MapHostPath passes through.
func (f *TracedFS) MapHostPath(hostPath string) (string, error) {
	return backend.MapHostPath(f.b, hostPath)
}

// OpenWrite opens a write under a span that lasts until its Commit or
// Close.
func (f *TracedFS) OpenWrite(ctx context.Context, name string, opts backend.WriteOptions) (backend.FileWriter, error) {
	ctx, span := f.start(ctx, "write", name)
	w, err := backend.OpenWrite(ctx, f.b, name, opts)
	if span == nil {
		return w, err
	}
	if err != nil {
		end(span, err)
		return nil, err
	}
	return &tracedWriter{FileWriter: w, span: span}, nil
}

// tracedWriter counts the bytes written and ends its span at Commit or
// Close.
type tracedWriter struct {
	backend.FileWriter
	span trace.Span
	n    int64
	done bool
}

func (w *tracedWriter) Write(p []byte) (int, error) {
	n, err := w.FileWriter.Write(p)
	w.n += int64(n)
	return n, err
}

func (w *tracedWriter) Commit() error {
	err := w.FileWriter.Commit()
	w.finish("commit", err)
	return err
}

func (w *tracedWriter) Close() error {
	err := w.FileWriter.Close()
	w.finish("abandon", err)
	return err
}

func (w *tracedWriter) finish(how string, err error) {
	if w.done {
		return
	}
	w.done = true
	w.span.SetAttributes(AttrBytes.Int64(w.n), attribute.String("fencefs.storage.write.end", how))
	end(w.span, err)
}

// MkdirAll passes through under a span.
func (f *TracedFS) MkdirAll(ctx context.Context, dir string) error {
	ctx, span := f.start(ctx, "mkdir_all", dir)
	err := backend.MkdirAll(ctx, f.b, dir)
	end(span, err)
	return err
}

// Remove passes through under a span.
func (f *TracedFS) Remove(ctx context.Context, name string, opts backend.RemoveOptions) error {
	ctx, span := f.start(ctx, "remove", name)
	err := backend.Remove(ctx, f.b, name, opts)
	end(span, err)
	return err
}

// RemoveFiles passes through to the wrapped backend's BatchRemover under
// a span, and declines without one.
func (f *TracedFS) RemoveFiles(ctx context.Context, names []string) error {
	br, ok := f.b.(backend.BatchRemover)
	if !ok {
		return &fs.PathError{Op: "remove", Path: ".", Err: backend.ErrUnsupported}
	}
	ctx, span := f.start(ctx, "remove_files", ".")
	if span != nil {
		span.SetAttributes(attribute.Int("fencefs.storage.files", len(names)))
	}
	err := br.RemoveFiles(ctx, names)
	end(span, err)
	return err
}

// Rename passes through under a span.
func (f *TracedFS) Rename(ctx context.Context, from, to string, opts backend.RenameOptions) error {
	ctx, span := f.start(ctx, "rename", from)
	if span != nil && f.t.opts.Paths {
		span.SetAttributes(attribute.String("fencefs.storage.path.to", to))
	}
	err := backend.Rename(ctx, f.b, from, to, opts)
	end(span, err)
	return err
}

// Copy passes through to the wrapped backend's Copier under a span, and
// declines without one (backend.Copy then streams the file through this
// wrapper's OpenRead and OpenWrite).
func (f *TracedFS) Copy(ctx context.Context, from, to string, opts backend.CopyOptions) error {
	c, ok := f.b.(backend.Copier)
	if !ok {
		for _, name := range []string{from, to} {
			if err := backend.CheckPath("copy", name); err != nil {
				return err
			}
		}
		return &fs.PathError{Op: "copy", Path: from, Err: backend.ErrUnsupported}
	}
	ctx, span := f.start(ctx, "copy", from)
	if span != nil && f.t.opts.Paths {
		span.SetAttributes(attribute.String("fencefs.storage.path.to", to))
	}
	err := c.Copy(ctx, from, to, opts)
	end(span, err)
	return err
}

// Capabilities are the wrapped backend's.
func (f *TracedFS) Capabilities() backend.Capabilities { return backend.CapabilitiesOf(f.b) }

// CapabilitiesAt are the wrapped backend's at name.
func (f *TracedFS) CapabilitiesAt(name string) backend.Capabilities {
	return backend.CapabilitiesAt(f.b, name)
}

// Interface checks.
var (
	_ backend.Backend                = (*TracedFS)(nil)
	_ backend.Stater                 = (*TracedFS)(nil)
	_ backend.Writer                 = (*TracedFS)(nil)
	_ backend.DirMaker               = (*TracedFS)(nil)
	_ backend.SymlinkResolver        = (*TracedFS)(nil)
	_ backend.Walker                 = (*TracedFS)(nil)
	_ backend.TypeLister             = (*TracedFS)(nil)
	_ backend.LocalPather            = (*TracedFS)(nil)
	_ backend.HostPathMapper         = (*TracedFS)(nil)
	_ backend.CapabilityReporter     = (*TracedFS)(nil)
	_ backend.PathCapabilityReporter = (*TracedFS)(nil)
	_ backend.Remover                = (*TracedFS)(nil)
	_ backend.BatchRemover           = (*TracedFS)(nil)
	_ backend.Renamer                = (*TracedFS)(nil)
	_ backend.Copier                 = (*TracedFS)(nil)
)
