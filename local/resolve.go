//go:build linux

package local

import (
	"context"
	"errors"
	"io/fs"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/fencefs/fencefs/backend"
)

// maxHops is the most symlinks one resolution follows, as Linux allows.
const maxHops = 40

// ResolveSymlinks returns the canonical storage path name leads to,
// following every symlink on the way, the final one included, one
// component at a time inside the root. Relative targets resolve from the
// link's directory; absolute targets inside the root (named as given to
// New or by its real path) are mapped onto it. Components that do not
// exist are kept as written (so are those after a file), and a dangling
// final link resolves to its target. Leaving the root gives ErrOutside,
// more than 40 links ErrLoop, an over-long name or result ErrNameTooLong,
// and a result that is no canonical storage path (a component starting
// with "~") ErrInvalidPath.
func (f *FS) ResolveSymlinks(ctx context.Context, name string) (string, error) {
	return f.TraceSymlinks(ctx, name, nil)
}

// TraceSymlinks resolves name as ResolveSymlinks does and calls visit with
// every component it looks up (see [backend.SymlinkResolver]). A path
// holding no symlink, which one open proves, visits nothing.
func (f *FS) TraceSymlinks(ctx context.Context, name string, visit func(string) error) (string, error) {
	const op = "resolve"
	if err := begin(ctx, op, name); err != nil {
		return "", err
	}
	// Most paths hold no symlink at all: one open proves it.
	if fd, err := f.open(name, unix.O_PATH); err == nil {
		unix.Close(fd)
		return name, nil
	}
	resolved, err := f.resolve(name, visit)
	var v visitError
	if errors.As(err, &v) {
		return "", v.err
	}
	if err != nil {
		return "", pathError(op, name, err)
	}
	if len(resolved) > maxPathBytes {
		return "", &fs.PathError{Op: op, Path: name, Err: backend.ErrNameTooLong}
	}
	if !backend.ValidPath(resolved) {
		return "", &fs.PathError{Op: op, Path: name, Err: backend.ErrInvalidPath}
	}
	return resolved, nil
}

// resolve walks name component by component, as the kernel would, and
// returns the canonical path it leads to.
func (f *FS) resolve(name string, visit func(string) error) (string, error) {
	var done []string                // resolved: existing directories, none a symlink
	todo := strings.Split(name, "/") // still to resolve, in order
	hops := 0
	for len(todo) > 0 {
		c := todo[0]
		todo = todo[1:]
		switch c {
		case "", ".":
			continue
		case "..":
			if len(done) == 0 {
				return "", backend.ErrOutside
			}
			done = done[:len(done)-1]
			continue
		}
		if len(c) > maxNameBytes {
			return "", backend.ErrNameTooLong
		}
		if visit != nil {
			if err := visit(joinParts(append(done, c))); err != nil {
				return "", visitError{err}
			}
		}
		kind, target, err := f.lookup(joinParts(done), c)
		if err != nil {
			return "", err
		}
		switch kind {
		case isDir:
			done = append(done, c)
		case isOther, isMissing:
			// Nothing below a missing component or a file can be a link:
			// the rest is kept as written.
			return lexical(append(done, c), todo)
		case isLink:
			if hops++; hops > maxHops {
				return "", backend.ErrLoop
			}
			if filepath.IsAbs(target) {
				rel, ok := f.hostRel(target)
				if !ok {
					return "", backend.ErrOutside
				}
				done, target = done[:0], rel
			}
			todo = append(strings.Split(target, "/"), todo...)
		}
	}
	return joinParts(done), nil
}

// visitError carries an error of a resolution's visit out of resolve
// unchanged, apart from the storage's own errors.
type visitError struct{ err error }

func (e visitError) Error() string { return e.err.Error() }

// Kinds of a path component met while resolving.
const (
	isDir = iota
	isLink
	isOther
	isMissing
)

// lookup lstats the component c of the directory dir and reads its target
// when it is a symlink.
func (f *FS) lookup(dir, c string) (kind int, target string, err error) {
	pfd, err := f.open(dir, unix.O_PATH|unix.O_DIRECTORY)
	if err != nil {
		return 0, "", err
	}
	defer unix.Close(pfd)
	for i := 0; ; i++ {
		var st unix.Stat_t
		switch err := fstatat(pfd, c, &st); {
		case err == unix.ENOENT:
			return isMissing, "", nil
		case err != nil:
			return 0, "", err
		}
		switch st.Mode & unix.S_IFMT {
		case unix.S_IFDIR:
			return isDir, "", nil
		case unix.S_IFLNK:
			target, err := readlinkat(pfd, c)
			if err == unix.EINVAL && i < maxRetries {
				continue // no longer a symlink: replaced since the lstat
			}
			return isLink, target, err
		}
		return isOther, "", nil
	}
}

// lexical appends the components rest to done without touching storage,
// applying "." and "..".
func lexical(done, rest []string) (string, error) {
	for _, c := range rest {
		switch c {
		case "", ".":
		case "..":
			if len(done) == 0 {
				return "", backend.ErrOutside
			}
			done = done[:len(done)-1]
		default:
			if len(c) > maxNameBytes {
				return "", backend.ErrNameTooLong
			}
			done = append(done, c)
		}
	}
	return joinParts(done), nil
}

// joinParts joins storage path components; no components make the root.
func joinParts(parts []string) string {
	if len(parts) == 0 {
		return "."
	}
	return strings.Join(parts, "/")
}

// Readlink returns the target of the symlink name as it is stored. An
// absolute target inside the root is returned as the storage path it
// names ("." for the root); an absolute target outside gives ErrOutside.
// A name that is not a symlink gives fs.ErrInvalid.
func (f *FS) Readlink(ctx context.Context, name string) (string, error) {
	const op = "readlink"
	if err := begin(ctx, op, name); err != nil {
		return "", err
	}
	if name == "." {
		return "", &fs.PathError{Op: op, Path: name, Err: fs.ErrInvalid}
	}
	dir, base := backend.Split(name)
	pfd, err := f.open(dir, unix.O_PATH|unix.O_DIRECTORY)
	if err != nil {
		return "", pathError(op, name, err)
	}
	defer unix.Close(pfd)
	target, err := readlinkat(pfd, base)
	if err == unix.EINVAL {
		return "", &fs.PathError{Op: op, Path: name, Err: fs.ErrInvalid}
	}
	if err != nil {
		return "", pathError(op, name, err)
	}
	if !filepath.IsAbs(target) {
		return target, nil
	}
	rel, ok := f.hostRel(target)
	if !ok {
		return "", &fs.PathError{Op: op, Path: name, Err: backend.ErrOutside}
	}
	return rel, nil
}

// readlinkat reads the target of the symlink c in dirfd.
func readlinkat(dirfd int, c string) (string, error) {
	buf := make([]byte, unix.PathMax)
	n, err := unix.Readlinkat(dirfd, c, buf)
	if err != nil {
		return "", err
	}
	if n >= len(buf) {
		return "", unix.ENAMETOOLONG
	}
	return string(buf[:n]), nil
}
