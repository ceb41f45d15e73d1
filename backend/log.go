package backend

import (
	"context"
	"io"
)

// LogOpener is implemented by a backend whose files can be appended to in
// place and made durable without a rename: a local directory. A journal
// keeps its records in such append-only files (one write and one data
// sync per record, no file created, no directory synced), and falls back
// to one create-only object per record on every other backend.
type LogOpener interface {
	// OpenLog opens the regular file name for reading and writing in
	// place, without following a symlink anywhere on the way. With
	// create, the file must not exist (fs.ErrExist otherwise): it is
	// created empty with its missing parent directories, and the file
	// and the directories holding it are synced before OpenLog returns,
	// so that once it returns the file survives a crash.
	OpenLog(ctx context.Context, name string, create bool) (LogFile, error)
}

// LogFile is a file opened by [LogOpener.OpenLog]. Its methods are safe
// for concurrent use; writers of one file agree among themselves where
// each writes (Lock).
//
// A log that writes its records over bytes written (and synced) before,
// within the file's size, needs only a data sync per record on most file
// systems: neither the file's size nor its block map changes, so no
// metadata has to reach the disk with it (on ext4, no journal commit).
// That is why a log fills its file with zeros ahead of its records.
type LogFile interface {
	io.ReaderAt
	// WriteAt writes all of p at off; a short write returns an error,
	// and what it wrote stays.
	io.WriterAt
	// Sync makes the data written so far durable, and the file's size
	// with it (fdatasync).
	Sync() error
	// Size returns the file's current size.
	Size() (int64, error)
	// Removed reports whether the file no longer has a name (it was
	// removed, or its directory was): what is written to it is lost.
	Removed() (bool, error)
	// Lock takes an exclusive advisory lock on the file, shared with
	// every process (and every other LogFile of the same file), waiting
	// until it is free; Unlock releases it. TryLock takes it only if it
	// is free at once and reports whether it did. Close releases it too,
	// as does the end of the process. A Close while Lock waits does not
	// wait for it, and that Lock then fails with fs.ErrClosed; a caller
	// bound by a deadline loops on TryLock.
	Lock() error
	TryLock() (bool, error)
	Unlock() error
	// Close closes the file.
	Close() error
}
