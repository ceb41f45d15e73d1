package tools

import "context"

// Event is a notification of a successful operation, delivered to
// Options.OnEvent. Paths in events are canonical: rooted ("/tenant/x") in
// a rooted namespace, relative to the namespace root ("x/y", "." for the
// root) in a plain one, and symlink-resolved. A denied or failed call
// emits nothing.
type Event interface {
	// Kind names the event type ("file_read", "file_written", ...).
	Kind() string
}

// FileRead reports a read_file call.
type FileRead struct {
	Path string
	// ContentHash is the lowercase hex SHA-256 of the whole file; empty
	// for a binary file that was not read to the end.
	ContentHash string
}

// Kind returns "file_read".
func (FileRead) Kind() string { return "file_read" }

// DirectoryListed reports a list_directory call.
type DirectoryListed struct {
	Path string
	// EntryCount is the number of entries shown.
	EntryCount int
}

// Kind returns "directory_listed".
func (DirectoryListed) Kind() string { return "directory_listed" }

// FileWritten reports a write_file call.
type FileWritten struct {
	Path string
	// ContentHash is the lowercase hex SHA-256 of the new content.
	ContentHash string
}

// Kind returns "file_written".
func (FileWritten) Kind() string { return "file_written" }

// FileEdited reports an edit_file call. It embeds FileWritten, so a
// listener for writes can treat edits alike.
type FileEdited struct {
	FileWritten
	// Diff is the unified diff of the change (see ChangeRequest.Diff).
	Diff string
	// Truncated reports that Diff was cut or left out.
	Truncated bool
}

// Kind returns "file_edited".
func (FileEdited) Kind() string { return "file_edited" }

// FileDeleted reports a file that delete_file or apply_patch deleted.
type FileDeleted struct {
	Path string
	// ContentHash is the lowercase hex SHA-256 of the content deleted,
	// where the tool read it (delete_file of a regular file); empty
	// otherwise.
	ContentHash string
}

// Kind returns "file_deleted".
func (FileDeleted) Kind() string { return "file_deleted" }

// FileMoved reports a file or directory that move_file or apply_patch
// moved; a content apply_patch changed is reported by a FileEdited on To
// as well.
type FileMoved struct {
	From, To string
	// ContentHash is the lowercase hex SHA-256 of the file move_file
	// moved; empty for a directory and for apply_patch.
	ContentHash string
}

// Kind returns "file_moved".
func (FileMoved) Kind() string { return "file_moved" }

// DirectoryCreated reports a create_directory call that created something.
type DirectoryCreated struct {
	Path string
}

// Kind returns "directory_created".
func (DirectoryCreated) Kind() string { return "directory_created" }

// FilesSearched reports a search_files, find_files, list_files or grep call.
type FilesSearched struct {
	// Path is the walk root.
	Path    string
	Pattern string
	// Search is "grep" for content searches and "find" for name searches.
	Search string
	// MatchCount is the number of results the model received.
	MatchCount int
	// Truncated reports that the results stopped at the cap.
	Truncated bool
}

// Kind returns "files_searched".
func (FilesSearched) Kind() string { return "files_searched" }

// Operations of a ChangeRequest.
const (
	OpWrite           = "write"
	OpEdit            = "edit"
	OpCreateDirectory = "create_directory"
	OpApplyPatch      = "apply_patch"
)

// ChangeRequest announces a change to Options.OnChangeRequest after every
// check passed and before storage is touched. The listener may Cancel it.
type ChangeRequest struct {
	// Path is the canonical, symlink-resolved path to change: for OpMove
	// and OpCopy the destination; for OpApplyPatch the first file of the
	// patch, whose Diff has a section per file naming each.
	Path string
	// Source is, for OpMove and OpCopy, the canonical path moved or copied
	// from; empty otherwise.
	Source string
	// Operation is OpWrite, OpEdit, OpCreateDirectory, OpApplyPatch,
	// OpDelete, OpMove or OpCopy.
	Operation string
	// Diff is the unified diff from the current to the proposed content
	// of Path (to empty for a deletion; empty for a directory).
	Diff string
	// Truncated reports that Diff was cut, or left out because a side was
	// too large or could not be shown.
	Truncated bool
	// Sizes are the regular files the change creates, replaces or removes
	// (for OpMove both paths, for OpApplyPatch every file of the patch),
	// with their sizes, and the directories it creates (Dir: those of
	// create_directory, and the parents apply_patch makes for new files),
	// so that a quota can be checked before the change commits. It is nil
	// for the delete or move of a directory, whose size is not read (a
	// move stays within one mount, to a path that does not exist, so it
	// grows nothing).
	Sizes []SizeChange
	// Entries are, for the delete or move of a directory, every entry
	// below it that the tool walked and takes along, hidden ones included
	// (dot-named, names with control characters, special files): paths
	// written as Path is, a directory's ending with '/', sorted, and
	// empty, not nil, for an empty directory. An approver binds its
	// answer to them. A delete removes only these: an entry that appears
	// after the walk makes it refuse with nothing removed (a move renames
	// the directory whole, with what it holds then). Nil for a change of
	// files, and when the tree holds more than MaxChangeEntries
	// (EntriesOver).
	Entries []string
	// EntriesOver reports that the directory held more than
	// MaxChangeEntries entries, so Entries is nil and the change is not
	// bound to them.
	EntriesOver bool

	cancelled bool
	reason    string
}

// SizeChange is what a change does to the stored size of one file.
type SizeChange struct {
	// Path is the canonical path of the file.
	Path string
	// Before is the file's size in bytes before the change, After its size
	// once the change commits; -1 stands for no file (one the change
	// creates, or removes).
	Before, After int64
	// BeforeHash is the full hex SHA-256 of the file's content before
	// the change, empty for no file, so that an approver can bind what it
	// approved to the content the change replaces (a diff shows none of a
	// binary file, and only the start of a large one).
	BeforeHash string
	// Dir marks a directory the change creates: Before is -1 and After 0,
	// so a quota counting entries (quota.Resize) counts it as one.
	Dir bool
}

// Cancel stops the change; the model is told reason (or "cancelled by a
// listener" when it is empty).
func (r *ChangeRequest) Cancel(reason string) {
	r.cancelled = true
	r.reason = reason
}

// Cancelled reports whether Cancel was called, and with which reason.
func (r *ChangeRequest) Cancelled() (reason string, ok bool) {
	return r.reason, r.cancelled
}

// listened reports whether emit under ctx reaches a listener, so that
// an event is built only then (whether its diff is: eventDiffs).
func (s *Set) listened(ctx context.Context) bool {
	return s.ownEvents(ctx) || len(listenersOf(ctx).event) > 0
}

// ownEvents reports whether emit under ctx reaches Options.OnEvent: it is
// set and the call is not quiet.
func (s *Set) ownEvents(ctx context.Context) bool {
	return s.opts.OnEvent != nil && ctx.Value(quietCall{}) == nil
}

// emit delivers ev to the OnEvent listener, unless the call is quiet, and
// to the context's event listeners.
func (s *Set) emit(ctx context.Context, ev Event) {
	if s.ownEvents(ctx) {
		s.opts.OnEvent(ctx, ev)
	}
	for _, fn := range listenersOf(ctx).event {
		fn(ctx, ev)
	}
}
