package gcsadapter

import (
	"context"
	"errors"
	"io"
	"io/fs"
	"time"

	"cloud.google.com/go/storage"
	"google.golang.org/api/iterator"

	"github.com/fencefs/fencefs/backend"
	"github.com/fencefs/fencefs/objstore"
)

// listAttrs are the attributes a listing asks for.
var listAttrs = []string{"Name", "Size", "Generation", "Created", "Updated"}

// listPage sends one listing request for at most max names from token on
// and returns the objects and prefixes of that page and the token of the
// next one ("" at the end).
func (f *FS) listPage(ctx context.Context, q *storage.Query, max int, token string) ([]*storage.ObjectAttrs, string, error) {
	if err := q.SetAttrSelection(listAttrs); err != nil {
		return nil, "", err
	}
	it := f.bucket.Objects(ctx, q)
	it.PageInfo().MaxSize = max
	it.PageInfo().Token = token
	var out []*storage.ObjectAttrs
	for {
		a, err := it.Next()
		if errors.Is(err, iterator.Done) {
			return out, "", nil
		}
		if err != nil {
			return nil, "", err
		}
		out = append(out, a)
		if it.PageInfo().Remaining() == 0 {
			// The page is used up; asking for more would fetch the next.
			return out, it.PageInfo().Token, nil
		}
	}
}

// Stat returns the metadata of name. A file's Version is its generation.
// One listing of the names that start with name answers it: the object,
// if there is one, and whether a name lies below it, which makes it a
// directory (see the package documentation).
func (f *FS) Stat(ctx context.Context, name string) (backend.FileInfo, error) {
	if err := f.keys.Check("stat", name); err != nil {
		return backend.FileInfo{}, err
	}
	return objstore.Stat(ctx, name, f.settle)
}

// settleKeys is how many names the listing of settle asks for: the
// object, then the names that sort between it and the directory below it
// ("f.txt.bak" between "f.txt" and "f.txt/"), which are rarely many.
const settleKeys = 100

// settle finds out what name is with one delimited listing of the names
// that start with its object name, and only when the names between the
// object and its directory fill that page, a second, one-name listing
// below name (see [objstore.Keys.Settle]).
func (f *FS) settle(ctx context.Context, name string) (objstore.Kind, backend.FileInfo, error) {
	return f.keys.Settle(ctx, name, f.lister(f.keys.Key(name), "/", settleKeys), f.hasChildren)
}

// OpenRead streams the object name. A directory gives backend.ErrIsDir
// and a missing object fs.ErrNotExist, each from the one listing of
// [FS.Stat], which also settles that no directory shadows the object.
// The download that follows is conditional on the listed generation
// (ifGenerationMatch), so it serves exactly the object the listing
// judged; a replacement in between makes the read list again (the last
// time, the download takes what is there). Under [backend.WithKnownFile]
// naming name with a version, the listing is skipped: the download asks
// for that generation, and only when the object has changed since does
// the read list. The stream's Info is the download's answer.
func (f *FS) OpenRead(ctx context.Context, name string) (backend.FileReader, error) {
	if err := f.keys.Check("open", name); err != nil {
		return nil, err
	}
	return objstore.OpenRead(ctx, name, f.settle, f.getVersion)
}

// getVersion downloads name, conditional on the generation of the listed
// version when there is one. A version this backend did not make matches
// no object.
func (f *FS) getVersion(ctx context.Context, name string, listed backend.FileInfo) (backend.FileReader, error) {
	if listed.Version == "" {
		return f.get(ctx, name, 0, time.Time{})
	}
	gen, ok := generation(listed.Version)
	if !ok {
		return nil, &fs.PathError{Op: "open", Path: name, Err: backend.ErrPrecondition}
	}
	return f.get(ctx, name, gen, listed.ModTime)
}

// get downloads name, conditional on generation gen when it is not 0.
// The answer's generation is checked too, since some servers (emulators)
// ignore the condition on downloads. mtime, the modification time the
// listing gave for that generation, replaces the download's, which HTTP
// gives to the second only.
func (f *FS) get(ctx context.Context, name string, gen int64, mtime time.Time) (backend.FileReader, error) {
	o := f.object(name)
	if gen != 0 {
		o = o.If(storage.Conditions{GenerationMatch: gen})
	}
	r, err := o.NewReader(ctx)
	if err != nil {
		return nil, pathError("open", name, err)
	}
	if gen != 0 && r.Attrs.Generation != gen {
		r.Close()
		return nil, &fs.PathError{Op: "open", Path: name, Err: backend.ErrPrecondition}
	}
	_, base := backend.Split(name)
	info := backend.FileInfo{
		Name:    base,
		Size:    r.Attrs.Size,
		ModTime: r.Attrs.LastModified,
		Version: version(r.Attrs.Generation),
	}
	if gen != 0 && !mtime.IsZero() {
		info.ModTime = mtime
	}
	return &objectReader{body: r, name: name, info: info}, nil
}

// objectReader is the body of a download, with read errors named by the
// storage path.
type objectReader struct {
	body io.ReadCloser
	name string
	info backend.FileInfo
}

// Info describes the object the download answered with.
func (r *objectReader) Info() backend.FileInfo { return r.info }

func (r *objectReader) Read(p []byte) (int, error) {
	n, err := r.body.Read(p)
	if err != nil && err != io.EOF {
		err = pathError("read", r.name, err)
	}
	return n, err
}

func (r *objectReader) Close() error { return r.body.Close() }

// hasChildren reports whether some name lies below the directory name,
// its marker included, with a one-name listing.
func (f *FS) hasChildren(ctx context.Context, name string) (bool, error) {
	page, err := f.lister(f.keys.DirPrefix(name), "", 1).NextPage(ctx)
	return len(page) > 0, err
}

// objectExists reports whether the object name exists, with one metadata
// request.
func (f *FS) objectExists(ctx context.Context, name string) (bool, error) {
	_, err := f.object(name).Attrs(ctx)
	switch {
	case err == nil:
		return true, nil
	case isNotFound(err):
		return false, nil
	}
	return false, err
}

// notDirError explains why the directory name has nothing below it: it
// is a file (backend.ErrNotDir) or missing (fs.ErrNotExist).
func (f *FS) notDirError(ctx context.Context, op, name string) error {
	if name == "." {
		return nil
	}
	isFile, err := f.objectExists(ctx, name)
	switch {
	case err != nil:
		return pathError(op, name, err)
	case isFile:
		return &fs.PathError{Op: op, Path: name, Err: backend.ErrNotDir}
	}
	return &fs.PathError{Op: op, Path: name, Err: fs.ErrNotExist}
}
