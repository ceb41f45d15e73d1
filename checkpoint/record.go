package checkpoint

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io/fs"
	"strconv"
	"strings"
	"time"

	"github.com/fencefs/fencefs/backend"
)

// Kind is what a path is in a recorded state.
type Kind string

// The kinds of a State.
const (
	// Missing: nothing is at the path.
	Missing Kind = "missing"
	// File: a regular file, whose content is stored by hash.
	File Kind = "file"
	// Dir: a directory.
	Dir Kind = "dir"
	// Symlink: a symbolic link, recorded with its target; a restore
	// cannot re-create one (no backend operation creates links).
	Symlink Kind = "symlink"
	// Other: a FIFO, socket or device, recorded but never re-created.
	Other Kind = "other"
)

// State is what one path was at one moment.
type State struct {
	// Kind is what the path was.
	Kind Kind `json:"k"`
	// Hash is the lowercase hex SHA-256 of a file's content; empty for
	// other kinds, and for a file whose content is not known (the
	// after-state of a change whose events did not say it).
	Hash string `json:"h,omitempty"`
	// Size is a file's size in bytes.
	Size int64 `json:"s,omitempty"`
	// Mode holds a file's permission bits where the backend stores them
	// (Capabilities.ModeBits), 0 where they are not known.
	Mode fs.FileMode `json:"m,omitempty"`
	// Link is a symlink's target, as stored.
	Link string `json:"l,omitempty"`
}

// String renders s for messages: "missing", "dir", "file 1a2b3c4d
// (12 bytes)", "symlink -> t".
func (s State) String() string {
	switch s.Kind {
	case File:
		h := s.Hash
		if len(h) > 8 {
			h = h[:8]
		}
		if h == "" {
			h = "(content unknown)"
		}
		return fmt.Sprintf("file %s (%d bytes)", h, s.Size)
	case Symlink:
		return "symlink -> " + s.Link
	case "":
		return "unknown"
	}
	return string(s.Kind)
}

// same reports whether two states hold the same thing: kind and content
// (a file's hash, a link's target). Modes are not compared: a change's
// after-state does not know them. On storage without empty directories
// (S3) a directory and nothing are the same.
func (s State) same(o State, emptyDirs bool) bool {
	if !emptyDirs && s.Kind != o.Kind && (s.Kind == Dir || s.Kind == Missing) && (o.Kind == Dir || o.Kind == Missing) {
		return true
	}
	if s.Kind != o.Kind {
		return false
	}
	switch s.Kind {
	case File:
		return s.Hash != "" && s.Hash == o.Hash
	case Symlink:
		return s.Link == o.Link
	}
	return true
}

// PathChange is what one recorded change did to one path.
type PathChange struct {
	// Path is the storage path (relative, canonical; see backend.ValidPath).
	Path string `json:"p"`
	// Before is the path's state before the change.
	Before State `json:"b"`
	// After is its state once the change committed, nil while not known
	// (the change has not committed, failed, or the process that made it
	// ended before recording it).
	After *State `json:"a,omitempty"`
}

// Record types. Every record is one object of the journal, named by its
// sequence number and written create-only, or one frame of a segment (on
// a local directory, see segment.go); a record is never rewritten.
const (
	typeChange  = "change"  // a tool call's change: pre-images of every path
	typeRestore = "restore" // a restore's intent: every path's current and target state
	typeDone    = "done"    // a restore (Ref) applied completely
	typeAfter   = "after"   // after-states of earlier changes (Afters)
	typePrune   = "prune"   // records up to Ref are dropped
)

// recordVersion is the format version of records this package writes.
const recordVersion = 1

// record is one journal object.
type record struct {
	V      int          `json:"v"`
	Seq    uint64       `json:"seq"`
	Type   string       `json:"type"`
	Time   time.Time    `json:"time"`
	Label  string       `json:"label,omitempty"`
	Call   string       `json:"call,omitempty"`
	Op     string       `json:"op,omitempty"`
	Path   string       `json:"path,omitempty"`
	Source string       `json:"source,omitempty"`
	Paths  []PathChange `json:"paths,omitempty"`
	// Afters are after-states of earlier changes, carried by the next
	// record written so that recording them costs no request of its own.
	Afters []afterState `json:"afters,omitempty"`
	// Ref is, for a restore, the checkpoint restored to; for done, the
	// restore applied; for prune, the last record dropped.
	Ref   uint64 `json:"ref,omitempty"`
	Force bool   `json:"force,omitempty"`
	// Inline holds pre-images new to the store and small enough
	// (Options.InlineBytes) by hash, so that such a change costs one
	// object, not two.
	Inline map[string][]byte `json:"inline,omitempty"`
}

// afterState is the after-state of one path of the change Seq.
type afterState struct {
	Seq   uint64 `json:"seq"`
	Path  string `json:"p"`
	State State  `json:"a"`
}

// recordName is the object name of record seq: fixed width, so names sort
// as numbers do.
func recordName(seq uint64) string { return fmt.Sprintf("%020d.json", seq) }

// parseRecordName returns the sequence number a record's object name
// holds, or false for any other name.
func parseRecordName(name string) (uint64, bool) {
	num, ok := strings.CutSuffix(name, ".json")
	if !ok || len(num) != 20 {
		return 0, false
	}
	seq, err := strconv.ParseUint(num, 10, 64)
	if err != nil || seq == 0 {
		return 0, false
	}
	return seq, true
}

// maxRecordBytes bounds a record read back: a recursive delete of a
// large tree makes a large record, but not larger than this.
const maxRecordBytes = 256 << 20

// decodeRecord parses and validates a record read from the object of
// sequence number seq. A record is trusted no further than it is checked:
// paths must be canonical storage paths, hashes full lowercase hex, kinds
// known, and the sequence number the one its name says.
func decodeRecord(data []byte, seq uint64) (*record, error) {
	r, err := unmarshalRecord(data)
	if err != nil {
		return nil, fmt.Errorf("record %d: %w", seq, err)
	}
	if err := validateRecord(r, seq); err != nil {
		return nil, err
	}
	return r, nil
}

// unmarshalRecord parses a record, unvalidated.
func unmarshalRecord(data []byte) (*record, error) {
	if len(data) > maxRecordBytes {
		return nil, fmt.Errorf("%d bytes, more than a record holds", len(data))
	}
	var r record
	if err := json.Unmarshal(data, &r); err != nil {
		return nil, err
	}
	return &r, nil
}

// validateRecord checks r, read from where record seq is kept (see
// decodeRecord).
func validateRecord(r *record, seq uint64) error {
	if r.V != recordVersion {
		return fmt.Errorf("record %d: format version %d, this build reads %d", seq, r.V, recordVersion)
	}
	if r.Seq != seq {
		return fmt.Errorf("record %d: holds sequence number %d", seq, r.Seq)
	}
	switch r.Type {
	case typeChange, typeRestore:
		if len(r.Paths) == 0 {
			return fmt.Errorf("record %d: a %s without paths", seq, r.Type)
		}
	case typeDone, typePrune:
		if r.Ref == 0 || r.Ref >= seq {
			return fmt.Errorf("record %d: %s refers to %d", seq, r.Type, r.Ref)
		}
	case typeAfter:
	default:
		return fmt.Errorf("record %d: unknown type %q", seq, r.Type)
	}
	if r.Type == typeRestore && r.Ref >= seq {
		return fmt.Errorf("record %d: restores to %d", seq, r.Ref)
	}
	seen := make(map[string]bool, len(r.Paths))
	for _, p := range r.Paths {
		if !backend.ValidPath(p.Path) || p.Path == "." {
			return fmt.Errorf("record %d: invalid path %q", seq, p.Path)
		}
		if seen[p.Path] {
			return fmt.Errorf("record %d: path %q twice", seq, p.Path)
		}
		seen[p.Path] = true
		if err := checkState(p.Before); err != nil {
			return fmt.Errorf("record %d: %s: %w", seq, p.Path, err)
		}
		if p.After != nil {
			if err := checkState(*p.After); err != nil {
				return fmt.Errorf("record %d: %s: %w", seq, p.Path, err)
			}
		}
		if p.Before.Kind == File && p.Before.Hash == "" {
			return fmt.Errorf("record %d: %s: a pre-image without a hash", seq, p.Path)
		}
	}
	for h, data := range r.Inline {
		if !validHash(h) || sha256Hex(data) != h {
			return fmt.Errorf("record %d: inline content that is not what its hash %q says", seq, h)
		}
	}
	for _, a := range r.Afters {
		if a.Seq == 0 || a.Seq >= seq || !backend.ValidPath(a.Path) || a.Path == "." {
			return fmt.Errorf("record %d: after-state of %d %q", seq, a.Seq, a.Path)
		}
		if err := checkState(a.State); err != nil {
			return fmt.Errorf("record %d: %s: %w", seq, a.Path, err)
		}
	}
	return nil
}

// checkState validates one recorded state.
func checkState(s State) error {
	switch s.Kind {
	case Missing, Dir, Other:
		if s.Hash != "" || s.Link != "" {
			return fmt.Errorf("a %s with content", s.Kind)
		}
	case File:
		if s.Hash != "" && !validHash(s.Hash) {
			return fmt.Errorf("invalid hash %q", s.Hash)
		}
		if s.Size < 0 {
			return fmt.Errorf("size %d", s.Size)
		}
	case Symlink:
		if s.Hash != "" {
			return fmt.Errorf("a symlink with a hash")
		}
	default:
		return fmt.Errorf("unknown kind %q", s.Kind)
	}
	if s.Mode&^fs.ModePerm != 0 {
		return fmt.Errorf("mode %v holds more than permission bits", s.Mode)
	}
	return nil
}

// validHash reports whether h is a lowercase hex SHA-256.
func validHash(h string) bool {
	if len(h) != 64 {
		return false
	}
	for i := 0; i < len(h); i++ {
		c := h[i]
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

// encodeRecord renders r as it is stored.
func encodeRecord(r *record) ([]byte, error) {
	r.V = recordVersion
	return json.Marshal(r)
}

// sha256Hex returns the lowercase hex SHA-256 of data.
func sha256Hex(data []byte) string {
	h := sha256.Sum256(data)
	return hex.EncodeToString(h[:])
}
