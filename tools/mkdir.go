package tools

import (
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"slices"
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
	exists, missing, err := s.dirExists(ctx, t)
	if err != nil || exists {
		return done, err
	}
	if err := s.checkMount(ctx, t); err != nil {
		return "", err
	}
	sizes := make([]SizeChange, len(missing))
	for i, d := range missing {
		sizes[i] = SizeChange{Path: s.canonical(d), Before: -1, After: 0, Dir: true}
	}
	if msg, err := s.announce(ctx, t, OpCreateDirectory, "", false, "created", sizes); err != nil || msg != "" {
		return msg, err
	}
	if err := backend.MkdirAll(ctx, s.b, t.resolved); err != nil {
		return "", s.mkdirErr(err, p)
	}
	s.emit(ctx, DirectoryCreated{Path: s.canonical(t.resolved)})
	return done, nil
}

// dirExists reports whether t is an existing directory, and refuses a
// path taken by something else or below a file. For a missing t it
// returns the directories creating it makes, the nearest to the root
// first (t last).
func (s *Set) dirExists(ctx context.Context, t target) (bool, []string, error) {
	info, err := backend.Stat(ctx, s.b, t.resolved)
	switch {
	case err == nil && info.IsDir():
		return true, nil, nil
	case err == nil:
		return false, nil, retryf(KindExists, "Path '%s' exists and is not a directory.", t.display)
	case errors.Is(err, backend.ErrNotDir):
		return false, nil, parentNotDir(t.display)
	case !errors.Is(err, fs.ErrNotExist):
		return false, nil, s.storageErr(err, t.display)
	}
	missing := []string{t.resolved}
	for dir, _ := backend.Split(t.resolved); dir != "."; dir, _ = backend.Split(dir) {
		info, err := backend.Stat(ctx, s.b, dir)
		switch {
		case err == nil && info.IsDir():
			slices.Reverse(missing)
			return false, missing, nil
		case err == nil, errors.Is(err, backend.ErrNotDir):
			return false, nil, parentNotDir(t.display)
		case !errors.Is(err, fs.ErrNotExist):
			return false, nil, s.storageErr(err, t.display)
		}
		missing = append(missing, dir)
	}
	slices.Reverse(missing)
	return false, missing, nil
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
