package tools

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"time"

	"github.com/fencefs/fencefs/policy"
)

// Names of the tools.
const (
	nameReadFile        = "read_file"
	nameWriteFile       = "write_file"
	nameEditFile        = "edit_file"
	nameListDirectory   = "list_directory"
	nameSearchFiles     = "search_files"
	nameFindFiles       = "find_files"
	nameCreateDirectory = "create_directory"
	nameFileInfo        = "file_info"
	nameListFiles       = "list_files"
	nameGrep            = "grep"
	nameApplyPatch      = "apply_patch"
	nameDeleteFile      = "delete_file"
	nameMoveFile        = "move_file"
	nameCopyFile        = "copy_file"
)

// AllTools returns the names of every tool, in the order a Set lists them.
func AllTools() []string {
	return []string{nameReadFile, nameWriteFile, nameEditFile, nameListDirectory, nameSearchFiles,
		nameFindFiles, nameCreateDirectory, nameFileInfo, nameListFiles, nameGrep, nameApplyPatch,
		nameDeleteFile, nameMoveFile, nameCopyFile}
}

// DefaultTools returns the names of the tools a Set has when Options.Tools
// is nil: all but the ripgrep-backed list_files and grep, the multi-file
// apply_patch, and delete_file, move_file and copy_file, which are opt-in.
func DefaultTools() []string {
	return []string{nameReadFile, nameWriteFile, nameEditFile, nameListDirectory, nameSearchFiles,
		nameFindFiles, nameCreateDirectory, nameFileInfo}
}

// ReadOnlyTools returns the names of the tools that never change storage;
// Options.ReadOnly keeps only these.
func ReadOnlyTools() []string {
	return []string{nameReadFile, nameListDirectory, nameSearchFiles, nameFindFiles, nameFileInfo, nameListFiles, nameGrep}
}

// Defaults of the Options limits.
const (
	DefaultMaxReadLines   = 2000
	DefaultMaxResults     = 1000
	DefaultRipgrepTimeout = 60 * time.Second
	DefaultCallTimeout    = 60 * time.Second
)

// MaxEditBytes is the size of the largest file edit_file edits. An edit
// holds the file in memory a few times over (old and new text, the
// diff's sources), so a larger file is refused with a retry that points
// to write_file, which streams the old content instead of holding it.
const MaxEditBytes = 64 << 20

// Options configure a Set. The zero value is a usable configuration: the
// eight default tools over the whole namespace, default protected
// patterns, content hashes on.
type Options struct {
	// Cwd is where relative tool paths resolve; "" is the namespace root.
	// It must lie inside the namespace and follows the same rules as a
	// tool path.
	Cwd string
	// Allowed, when not empty, limits access to matching paths.
	Allowed []string
	// Denied paths (and everything below them) are never accessible.
	Denied []string
	// Protected adds read-only patterns to the defaults.
	Protected []string
	// Logger, when set, receives debug-level notes on how the options
	// were read, such as a pattern rewritten to the spelling that matches
	// ("/ws/private" to "ws/private").
	Logger *slog.Logger
	// NoDefaultProtect drops policy.DefaultProtectedPatterns().
	NoDefaultProtect bool
	// MaxReadLines is read_file's default limit; 0 means 2000.
	MaxReadLines int
	// MaxReadChars caps a whole read_file result; 0 means no cap.
	MaxReadChars int
	// MaxListResults caps list_directory; 0 means 1000.
	MaxListResults int
	// MaxSearchResults caps search_files and grep; 0 means 1000.
	MaxSearchResults int
	// MaxFindResults caps find_files and list_files; 0 means 1000.
	MaxFindResults int
	// ReadOnly keeps only the read-only tools.
	ReadOnly bool
	// NoContentHashes removes hashes from read, write and edit results and
	// expected_hash from their schemas. Events still carry hashes.
	NoContentHashes bool
	// Tools names the tools to offer; nil means DefaultTools(), and an
	// empty list that is not nil means none (a caller that narrows a list
	// down to nothing must get nothing, not the default set).
	Tools []string
	// RequireRead refuses write_file and edit_file on an existing file the
	// Set has not read, or that changed since it was read, and any other
	// change that replaces or removes such a file: a delete, a move or
	// copy over it, and a recursive delete of a directory holding one.
	RequireRead bool
	// Permission, when set, is asked before every tool touches storage.
	Permission policy.Checker
	// OnChangeRequest, when set, is called before a write, edit or
	// directory creation touches storage; it may Cancel the change. An
	// error aborts the call as a fatal error.
	OnChangeRequest func(ctx context.Context, req *ChangeRequest) error
	// OnEvent, when set, is notified of every successful operation.
	OnEvent func(ctx context.Context, ev Event)
	// ListenersReadNoDiff tells that OnChangeRequest and OnEvent never
	// read a diff, as a listener added with [ReadsNoDiff] does: a change
	// heard by no other listener then carries none and none is built.
	ListenersReadNoDiff bool
	// CallTimeout bounds one tool call: when it passes, the call stops
	// and returns a retry saying so. 0 means DefaultCallTimeout; a
	// negative value sets no bound (the caller's context still applies).
	CallTimeout time.Duration
	// RipgrepPath is the rg executable; "" means "rg" from PATH.
	RipgrepPath string
	// RipgrepTimeout bounds one rg run; 0 means 60s.
	RipgrepTimeout time.Duration
	// RipgrepMaxMemory bounds the memory rg may use, its address space
	// on Linux; 0 means 1 GiB and a negative value sets no bound. rg
	// holds a whole line while it searches it: a grep that runs out (a
	// line of hundreds of megabytes) is done by the built-in engine,
	// which holds at most 16 MiB of a line.
	RipgrepMaxMemory int64
	// EditTolerance, when ToleranceWhitespace ("whitespace"), lets
	// edit_file and apply_patch apply an old text that occurs exactly once
	// only after ignoring indentation and trailing whitespace, keeping the
	// file's own indentation; "" (the default) matches exactly.
	EditTolerance string
	// RipgrepSlots bounds how many ripgrep processes run at once. Sets
	// given the same RipgrepSlots share the bound (a server with a Set
	// per session gives them one); nil means a bound of the Set's own,
	// of runtime.NumCPU() processes. A grep waits for a slot until its
	// context ends or RipgrepTimeout passes.
	RipgrepSlots *RipgrepSlots
	// NoUnicodePathMatch keeps a missing path missing: by default, when
	// its directory holds exactly one entry with the same name in another
	// Unicode normalization (NFC or NFD, as macOS names files), that entry
	// is used and the result says so.
	NoUnicodePathMatch bool
}

// normalize validates o and fills in the defaults.
func (o Options) normalize() (Options, error) {
	limits := []struct {
		name string
		v    *int
		def  int
	}{
		{"MaxReadLines", &o.MaxReadLines, DefaultMaxReadLines},
		{"MaxReadChars", &o.MaxReadChars, 0},
		{"MaxListResults", &o.MaxListResults, DefaultMaxResults},
		{"MaxSearchResults", &o.MaxSearchResults, DefaultMaxResults},
		{"MaxFindResults", &o.MaxFindResults, DefaultMaxResults},
	}
	for _, l := range limits {
		if *l.v < 0 {
			return o, fmt.Errorf("tools: %s must be > 0, got %d", l.name, *l.v)
		}
		if *l.v == 0 {
			*l.v = l.def
		}
	}
	if o.RipgrepTimeout < 0 {
		return o, fmt.Errorf("tools: RipgrepTimeout must be > 0, got %v", o.RipgrepTimeout)
	}
	if o.RipgrepTimeout == 0 {
		o.RipgrepTimeout = DefaultRipgrepTimeout
	}
	if o.CallTimeout == 0 {
		o.CallTimeout = DefaultCallTimeout
	}
	if o.RipgrepPath == "" {
		o.RipgrepPath = "rg"
	}
	if o.EditTolerance != "" && o.EditTolerance != ToleranceWhitespace {
		return o, fmt.Errorf("tools: EditTolerance must be %q or empty, got %q", ToleranceWhitespace, o.EditTolerance)
	}
	if o.RipgrepSlots == nil {
		o.RipgrepSlots = NewRipgrepSlots(0)
	}
	names, err := selectTools(o.Tools, o.ReadOnly)
	if err != nil {
		return o, err
	}
	o.Tools = names
	return o, nil
}

// selectTools validates the requested names and returns them in
// AllTools order, without duplicates, keeping only read-only tools when
// readOnly is set.
func selectTools(requested []string, readOnly bool) ([]string, error) {
	if requested == nil {
		requested = DefaultTools()
	}
	all := AllTools()
	for _, n := range requested {
		if !slices.Contains(all, n) {
			return nil, fmt.Errorf("tools: unknown tool %q; valid tools are %s", n, strings.Join(all, ", "))
		}
	}
	ro := ReadOnlyTools()
	// Never nil: the normalized list is the answer, and nil would read
	// as the default set to whoever passes it on.
	out := make([]string, 0, min(len(requested), len(all)))
	for _, n := range all {
		if slices.Contains(requested, n) && (!readOnly || slices.Contains(ro, n)) {
			out = append(out, n)
		}
	}
	return out, nil
}
