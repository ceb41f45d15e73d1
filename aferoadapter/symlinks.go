package aferoadapter

import (
	"context"
	"fmt"
	"io/fs"
	"path"
	"strings"

	"github.com/fencefs/fencefs/backend"
)

// maxLinks bounds the symlinks followed in one resolution, as the kernel
// does (40 on Linux), to detect loops.
const maxLinks = 40

// errNotLink is returned by Readlink for anything but a symlink.
var errNotLink = fmt.Errorf("%w: not a symlink", fs.ErrInvalid)

// ResolveSymlinks returns the canonical storage path name leads to. When
// the Fs holds no symlinks this is name itself.
func (a *FS) ResolveSymlinks(ctx context.Context, name string) (string, error) {
	return a.TraceSymlinks(ctx, name, nil)
}

// TraceSymlinks resolves name as ResolveSymlinks does and calls visit with
// every component it looks up, before the lookup (see
// [backend.SymlinkResolver]); an error from visit is returned as it is.
// An Fs without symlinks visits nothing.
func (a *FS) TraceSymlinks(ctx context.Context, name string, visit func(string) error) (string, error) {
	const op = "resolve"
	if err := a.begin(ctx, op, name); err != nil {
		return "", err
	}
	if a.lstat == nil {
		return name, nil
	}
	todo := splitPath(name)
	var done []string
	for follows := 0; len(todo) > 0; {
		c := todo[0]
		todo = todo[1:]
		cand := backend.Join(strings.Join(done, "/"), c)
		if visit != nil {
			if err := visit(cand); err != nil {
				return "", err
			}
		}
		fi, err := a.lstatReal(cand)
		if err != nil {
			if m := mapErr(err); m != fs.ErrNotExist && m != backend.ErrNotDir {
				return "", pathErr(op, name, err)
			}
			// Missing components are kept as written.
			done = append(append(done, c), todo...)
			break
		}
		if fi.Mode()&fs.ModeSymlink == 0 {
			done = append(done, c)
			continue
		}
		if follows++; follows > maxLinks {
			return "", &fs.PathError{Op: op, Path: name, Err: backend.ErrLoop}
		}
		target, err := a.readlink.ReadlinkIfPossible(aferoPath(cand))
		if err != nil {
			return "", pathErr(op, name, err)
		}
		next, err := a.linkTarget(done, target)
		if err != nil {
			return "", &fs.PathError{Op: op, Path: name, Err: err}
		}
		// Start again from the root with the target's components.
		todo = append(next, todo...)
		done = nil
	}
	out := strings.Join(done, "/")
	if out == "" {
		out = "."
	}
	if err := backend.CheckPath(op, out); err != nil {
		return "", &fs.PathError{Op: op, Path: name, Err: backend.ErrInvalidPath}
	}
	return out, nil
}

// linkTarget returns the root-relative components that a link in the
// directory dir pointing at target leads to, lexically, or ErrOutside.
func (a *FS) linkTarget(dir []string, target string) ([]string, error) {
	base := dir
	if strings.HasPrefix(target, "/") {
		rel, ok := a.rootRelative(target)
		if !ok {
			return nil, backend.ErrOutside
		}
		base, target = nil, rel
	}
	out := append([]string(nil), base...)
	for _, c := range strings.Split(target, "/") {
		switch c {
		case "", ".":
		case "..":
			if len(out) == 0 {
				return nil, backend.ErrOutside
			}
			out = out[:len(out)-1]
		default:
			out = append(out, c)
		}
	}
	return out, nil
}

// rootRelative maps an absolute link target onto the namespace: relative
// to the host directory of a BasePathFs, or to the Fs's own "/".
func (a *FS) rootRelative(target string) (string, bool) {
	target = path.Clean(target)
	root := a.hostRoot
	switch {
	case root == "" || root == "/":
		return strings.TrimPrefix(target, "/"), true
	case target == root:
		return ".", true
	case strings.HasPrefix(target, root+"/"):
		return target[len(root)+1:], true
	}
	return "", false
}

// Readlink returns the target of the symlink name as stored, an absolute
// target inside the root made relative to the root.
func (a *FS) Readlink(ctx context.Context, name string) (string, error) {
	const op = "readlink"
	if err := a.begin(ctx, op, name); err != nil {
		return "", err
	}
	fi, err := a.lookup(name, false)
	if err != nil {
		return "", pathErr(op, name, err)
	}
	if fi.Mode()&fs.ModeSymlink == 0 || a.readlink == nil {
		return "", &fs.PathError{Op: op, Path: name, Err: errNotLink}
	}
	target, err := a.readlink.ReadlinkIfPossible(aferoPath(name))
	if err != nil {
		return "", pathErr(op, name, err)
	}
	if !strings.HasPrefix(target, "/") {
		return target, nil
	}
	rel, ok := a.rootRelative(target)
	if !ok {
		return "", &fs.PathError{Op: op, Path: name, Err: backend.ErrOutside}
	}
	if rel == "" {
		rel = "."
	}
	return rel, nil
}
