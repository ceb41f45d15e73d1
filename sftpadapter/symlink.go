package sftpadapter

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"strings"

	"github.com/fencefs/fencefs/backend"
	"github.com/pkg/sftp"
)

// maxLinks is how many symlinks one resolution follows before it calls
// the path a loop, as Linux does.
const maxLinks = 40

// ResolveSymlinks returns the storage path name leads to, following every
// symlink component by component with READLINK and keeping the walk inside
// the root: a link that leads outside gives ErrOutside, and more than 40
// links ErrLoop. Components that do not exist are kept as written.
func (f *FS) ResolveSymlinks(ctx context.Context, name string) (string, error) {
	return f.TraceSymlinks(ctx, name, nil)
}

// TraceSymlinks resolves name as ResolveSymlinks does and calls visit with
// every component it looks up, before the lookup (see
// [backend.SymlinkResolver]); an error from visit is returned as it is.
func (f *FS) TraceSymlinks(ctx context.Context, name string, visit func(string) error) (string, error) {
	if err := checkPath("resolve", name); err != nil {
		return "", err
	}
	if name == "." {
		return ".", nil
	}
	ctx, cancel := f.opContext(ctx)
	defer cancel()
	var out string
	err := f.do(ctx, true, func(s *session) error {
		var err error
		out, err = f.resolve(s.client, name, visit)
		return err
	})
	var v visitError
	if errors.As(err, &v) {
		return "", v.err
	}
	if err != nil {
		return "", pathErr("resolve", name, err)
	}
	return out, nil
}

// resolve walks name's components, replacing each symlink by its target.
// done holds the physical components resolved so far (each an existing
// non-link, until missing is set); todo the components still to walk.
func (f *FS) resolve(c *sftp.Client, name string, visit func(string) error) (string, error) {
	todo := strings.Split(name, "/")
	var done []string
	missing := false
	links := 0
	for len(todo) > 0 {
		comp := todo[0]
		todo = todo[1:]
		switch comp {
		case "", ".":
			continue
		case "..":
			if len(done) == 0 {
				return "", backend.ErrOutside
			}
			done = done[:len(done)-1]
			continue
		}
		done = append(done, comp)
		if missing {
			continue
		}
		cur := strings.Join(done, "/")
		if visit != nil {
			if err := visit(cur); err != nil {
				return "", visitError{err}
			}
		}
		fi, err := c.Lstat(f.remote(cur))
		switch {
		case errors.Is(err, os.ErrNotExist):
			missing = true
			continue
		case err != nil:
			return "", err
		case fi.Mode()&fs.ModeSymlink == 0:
			continue
		}
		if links++; links > maxLinks {
			return "", backend.ErrLoop
		}
		target, err := c.ReadLink(f.remote(cur))
		if err != nil {
			return "", err
		}
		done = done[:len(done)-1]
		if strings.HasPrefix(target, "/") {
			rest, ok := f.underRoot(target)
			if !ok {
				return "", backend.ErrOutside
			}
			done = done[:0]
			target = rest
		}
		todo = append(strings.Split(target, "/"), todo...)
	}
	if len(done) == 0 {
		return ".", nil
	}
	return strings.Join(done, "/"), nil
}

// visitError carries an error of a resolution's visit out of resolve
// unchanged, apart from the server's own errors.
type visitError struct{ err error }

func (e visitError) Error() string { return e.err.Error() }

// underRoot returns the part of the absolute server path p below the
// root, comparing whole components. A ".." within the root's part of p
// counts as outside, since it could lead anywhere.
func (f *FS) underRoot(p string) (string, bool) {
	comps := splitAbs(p)
	root := splitAbs(f.root)
	if len(comps) < len(root) {
		return "", false
	}
	for i, r := range root {
		if comps[i] != r {
			return "", false
		}
	}
	rest := comps[len(root):]
	if len(rest) == 0 {
		return ".", true
	}
	return strings.Join(rest, "/"), true
}

// splitAbs splits an absolute server path into its components, dropping
// empty and "." components (which change nothing) but keeping "..".
func splitAbs(p string) []string {
	var out []string
	for _, c := range strings.Split(p, "/") {
		if c != "" && c != "." {
			out = append(out, c)
		}
	}
	return out
}

// Readlink returns the target of the symlink name as stored; an absolute
// target inside the root is returned relative to the root, and one
// outside gives ErrOutside.
func (f *FS) Readlink(ctx context.Context, name string) (string, error) {
	if err := checkPath("readlink", name); err != nil {
		return "", err
	}
	ctx, cancel := f.opContext(ctx)
	defer cancel()
	var target string
	err := f.do(ctx, true, func(s *session) error {
		fi, err := f.lstatPath(s.client, name)
		if err != nil {
			return err
		}
		if fi.Mode()&fs.ModeSymlink == 0 {
			return errNotSymlink
		}
		target, err = s.client.ReadLink(f.remote(name))
		return err
	})
	if err != nil {
		return "", pathErr("readlink", name, err)
	}
	if !strings.HasPrefix(target, "/") {
		return target, nil
	}
	rest, ok := f.underRoot(target)
	if ok {
		rest, ok = cleanBelow(rest)
	}
	if !ok {
		return "", backend.PathError("readlink", name, backend.ErrOutside)
	}
	return rest, nil
}

// cleanBelow applies the ".." components of a root-relative path
// lexically and reports false when it climbs above the root.
func cleanBelow(p string) (string, bool) {
	if p == "." {
		return p, true
	}
	var out []string
	for _, c := range strings.Split(p, "/") {
		if c != ".." {
			out = append(out, c)
			continue
		}
		if len(out) == 0 {
			return "", false
		}
		out = out[:len(out)-1]
	}
	if len(out) == 0 {
		return ".", true
	}
	return strings.Join(out, "/"), true
}
