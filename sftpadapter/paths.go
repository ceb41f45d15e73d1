package sftpadapter

import (
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"
	"sync"

	"github.com/fencefs/fencefs/backend"
	"github.com/pkg/sftp"
)

// errNotSymlink is the answer of Readlink on a path that is no symlink.
var errNotSymlink = fmt.Errorf("%w: not a symlink", fs.ErrInvalid)

// errChanged reports a file that changed between its check and its open.
var errChanged = fmt.Errorf("%w: file changed while it was opened", backend.ErrNotRegular)

// maxNameBytes is the longest name component the adapter sends; longer
// names are refused before they reach the server, which would answer
// with a bare "bad message".
const maxNameBytes = 255

// checkPath refuses non-canonical paths, over-long components and names
// of pending writes' temporary files (which another write owns), naming
// the operation op.
func checkPath(op, name string) error {
	if err := backend.CheckPath(op, name); err != nil {
		return err
	}
	for c := range strings.SplitSeq(name, "/") {
		if len(c) > maxNameBytes {
			return backend.PathError(op, name, backend.ErrNameTooLong)
		}
	}
	return backend.CheckReserved(op, name, isTempName)
}

// stagingPattern is what isTempName recognises, as
// Capabilities.StagingPattern declares it.
const stagingPattern = `^\.fencefs-[0-9a-fA-F]{16}\.tmp$`

// isTempName reports whether name is one of the adapter's temporary
// files, which listings leave out while their write is pending.
func isTempName(name string) bool {
	const n = len(tempPrefix) + 16 + len(".tmp")
	if len(name) != n || !strings.HasPrefix(name, tempPrefix) || !strings.HasSuffix(name, ".tmp") {
		return false
	}
	_, err := hex.DecodeString(name[len(tempPrefix) : len(tempPrefix)+16])
	return err == nil
}

// remote returns the server path of the canonical storage path name.
func (f *FS) remote(name string) string {
	switch {
	case name == ".":
		return f.root
	case f.root == "/":
		return "/" + name
	default:
		return f.root + "/" + name
	}
}

// lstatChain returns the LSTAT answers for every prefix of name ("a",
// "a/b", ..., name), asked concurrently so that a deep path costs one
// round trip.
func (f *FS) lstatChain(c *sftp.Client, name string) ([]os.FileInfo, []error) {
	parts := strings.Split(name, "/")
	infos := make([]os.FileInfo, len(parts))
	errs := make([]error, len(parts))
	var wg sync.WaitGroup
	for i := range parts {
		wg.Go(func() {
			infos[i], errs[i] = c.Lstat(f.remote(strings.Join(parts[:i+1], "/")))
		})
	}
	wg.Wait()
	return infos, errs
}

// lstatPath returns the LSTAT of name after checking that every ancestor
// is a real directory: a symlink on the way gives ErrSymlink, a file
// ErrNotDir and a missing ancestor fs.ErrNotExist. The final component is
// not followed.
func (f *FS) lstatPath(c *sftp.Client, name string) (os.FileInfo, error) {
	if name == "." {
		return c.Lstat(f.root)
	}
	infos, errs := f.lstatChain(c, name)
	last := len(infos) - 1
	if err := checkAncestors(infos[:last], errs[:last]); err != nil {
		return nil, err
	}
	return infos[last], errs[last]
}

// checkAncestors turns the first problem among the answers for a path's
// ancestors into an error.
func checkAncestors(infos []os.FileInfo, errs []error) error {
	for i, err := range errs {
		switch {
		case err != nil:
			return err
		case infos[i].Mode()&fs.ModeSymlink != 0:
			return backend.ErrSymlink
		case !infos[i].IsDir():
			return backend.ErrNotDir
		}
	}
	return nil
}

// mapErr turns what pkg/sftp returns into the io/fs and backend sentinels,
// dropping any server path it carries.
func mapErr(err error) error {
	for {
		var pe *fs.PathError
		var le *os.LinkError
		switch {
		case errors.As(err, &pe) && pe.Err != err:
			err = pe.Err
			continue
		case errors.As(err, &le):
			err = le.Err
			continue
		}
		break
	}
	var st *sftp.StatusError
	if errors.As(err, &st) {
		switch st.FxCode() {
		case sftp.ErrSSHFxNoSuchFile:
			return fs.ErrNotExist
		case sftp.ErrSSHFxPermissionDenied:
			return fs.ErrPermission
		case sftp.ErrSSHFxBadMessage:
			// OpenSSH's answer to EINVAL and ENAMETOOLONG.
			return fmt.Errorf("%w: %v", fs.ErrInvalid, st)
		case sftp.ErrSSHFxOpUnsupported:
			return fmt.Errorf("%w: %v", errors.ErrUnsupported, st)
		}
	}
	return err
}

// pathErr wraps err for op on the storage path name.
func pathErr(op, name string, err error) error {
	if err == nil {
		return nil
	}
	return backend.PathError(op, name, mapErr(err))
}

// validEntry reports whether a name listed in dir can be shown as a
// child: a single component that makes a canonical storage path, and not
// a pending write's temporary file.
func validEntry(dir, name string) bool {
	return safeName([]byte(name)) && !isTempName(name) && backend.ValidPath(backend.Join(dir, name))
}

// toFileInfo converts the server's answer for name.
func toFileInfo(name string, fi os.FileInfo) backend.FileInfo {
	_, base := backend.Split(name)
	return backend.FileInfo{
		Name:    base,
		Size:    fi.Size(),
		Mode:    fi.Mode(),
		ModTime: fi.ModTime(),
	}
}

// toDirEntry converts one entry of a listing.
func toDirEntry(fi os.FileInfo) backend.DirEntry {
	return backend.DirEntry{
		Name:    fi.Name(),
		Type:    fi.Mode().Type(),
		Size:    fi.Size(),
		ModTime: fi.ModTime(),
	}
}
