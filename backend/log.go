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
// for concurrent use, except that at most one caller appends at a time.
type LogFile interface {
	io.ReaderAt
	io.WriterAt
	// Append writes p at the end of the file, as it was when opened plus
	// what this LogFile appended since, in one write, and returns the
	// offset it starts at. A short write returns an error; what it wrote
	// stays. Only one LogFile appends to a file at a time: Lock or
	// TryLock it first where others could.
	Append(p []byte) (int64, error)
	// Sync makes the data written so far durable (fdatasync): it
	// suffices for appends to a file that exists durably, since the
	// file's size is metadata a data sync includes.
	Sync() error
	// Size returns the file's current size.
	Size() (int64, error)
	// Removed reports whether the file no longer has a name (it was
	// removed or its directory replaced): writes to it are lost.
	Removed() (bool, error)
	// Lock takes an exclusive advisory lock on the file, shared with
	// every process (and every other LogFile of the same file), waiting
	// until it is free; Unlock releases it. TryLock takes it only if it
	// is free at once and reports whether it did. Close releases it too,
	// as does the end of the process.
	Lock() error
	TryLock() (bool, error)
	Unlock() error
	// Close closes the file.
	Close() error
}
