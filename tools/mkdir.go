package tools

import (
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"strings"

	"github.com/fencefs/fencefs/backend"
)

func (s *Set) createDirectoryTool() *Tool {
	return &Tool{
		Name: nameCreateDirectory,
		Description: "Create a directory, and any missing parent directories. " +
			"An existing directory is left as it is.",
		InputSchema: objectSchema([]string{"path"},
			prop{"path", `{"type":"string","description":"The directory to create, relative to the working directory, or starting with '/'."}`},
		),
		Annotations: Annotations{Title: "Create directory", Idempotent: true},
		call:        s.createDirectory,
	}
}

func (s *Set) createDirectory(ctx context.Context, raw json.RawMessage) (string, error) {
	var p string
	if err := decodeArgs(raw, arg{"path", &p, true}); err != nil {
		return "", err
	}
	t, err := s.resolve(ctx, nameCreateDirectory, p, levelWrite)
	if err != nil {
		return "", err
	}
	unlock, err := s.locks.lock(ctx, t.resolved)
	if err != nil {
		return "", err
	}
	defer unlock()
	done := "Created directory: " + p
	exists, err := s.dirExists(ctx, t)
	if err != nil || exists {
		return done, err
	}
	if err := s.checkMount(ctx, t); err != nil {
		return "", err
	}
	if msg, err := s.announce(ctx, t, OpCreateDirectory, "", false, "created", nil); err != nil || msg != "" {
		return msg, err
	}
	if err := backend.MkdirAll(ctx, s.b, t.resolved); err != nil {
		return "", s.mkdirErr(err, p)
	}
	s.emit(ctx, DirectoryCreated{Path: s.canonical(t.resolved)})
	return done, nil
}

// dirExists reports whether t is an existing directory, and refuses a
// path taken by something else or below a file.
func (s *Set) dirExists(ctx context.Context, t target) (bool, error) {
	info, err := backend.Stat(ctx, s.b, t.resolved)
	switch {
	case err == nil && info.IsDir():
		return true, nil
	case err == nil:
		return false, retryf(KindExists, "Path '%s' exists and is not a directory.", t.display)
	case errors.Is(err, backend.ErrNotDir):
		return false, parentNotDir(t.display)
	case !errors.Is(err, fs.ErrNotExist):
		return false, s.storageErr(err, t.display)
	}
	for dir, _ := backend.Split(t.resolved); dir != "."; dir, _ = backend.Split(dir) {
		info, err := backend.Stat(ctx, s.b, dir)
		switch {
		case err == nil && info.IsDir():
			return false, nil
		case err == nil, errors.Is(err, backend.ErrNotDir):
			return false, parentNotDir(t.display)
		case !errors.Is(err, fs.ErrNotExist):
			return false, s.storageErr(err, t.display)
		}
	}
	return false, nil
}

// checkMount refuses a directory at the top of a rooted namespace that
// names no mount: only mounts live there, so nothing could create it.
func (s *Set) checkMount(ctx context.Context, t target) error {
	if !s.rooted || t.resolved == "." {
		return nil
	}
	mount, _, _ := strings.Cut(t.resolved, "/")
	if _, err := backend.Stat(ctx, s.b, mount); !errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	return retryf(KindReadOnly, "Path '%s' cannot be created: '%s' is not a mount. Create directories inside a mount; list_directory '/' shows them.",
		t.display, s.canonical(mount))
}

// mkdirErr maps the errors of creating a directory.
func (s *Set) mkdirErr(err error, display string) error {
	switch {
	case errors.Is(err, fs.ErrExist):
		return retryf(KindExists, "Path '%s' exists and is not a directory.", display)
	case errors.Is(err, backend.ErrNotDir):
		return parentNotDir(display)
	}
	return s.storageErr(err, display)
}
