package overlay

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"slices"

	"github.com/fencefs/fencefs/backend"
)

// indexFormat is the version of the index file's format.
const indexFormat = 1

// maxIndexRetries bounds the compare-and-swap loop of an index update.
const maxIndexRetries = 64

// Kinds of what the base held at a path.
const (
	kindNone = "none"
	kindFile = "file"
	kindDir  = "dir"
	// kindOther is a symlink or special file, which has no hash.
	kindOther = "other"
)

// record is what the overlay knows of one path beyond the layers: what
// the base held there when the overlay first changed it, and whether the
// base's entry (and everything below it) is whited out.
type record struct {
	Path string `json:"path"`
	// Deleted hides the base's entry at Path and below it. When the upper
	// layer has a directory at Path, that directory is opaque.
	Deleted bool `json:"deleted,omitempty"`
	// Base is the base's entry at Path when it was copied up or whited
	// out: the version and hash a commit presents to the base.
	Base baseState `json:"base"`
	// From is the base path a file was renamed from, for review.
	From string `json:"from,omitempty"`
}

// baseState describes the base's entry at a path.
type baseState struct {
	Kind    string `json:"kind"`
	Version string `json:"version,omitempty"`
	Hash    string `json:"hash,omitempty"`
}

// indexFile is the index as stored.
type indexFile struct {
	Format  int      `json:"format"`
	Records []record `json:"records"`
}

// index is the parsed index: records by path.
type index struct {
	records map[string]*record
}

func newIndex() *index { return &index{records: map[string]*record{}} }

// parseIndex parses and checks a stored index: every path canonical and
// not the root, listed once, every kind known, every hash hex SHA-256.
func parseIndex(data []byte) (*index, error) {
	var f indexFile
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&f); err != nil {
		return nil, fmt.Errorf("overlay index: %w", err)
	}
	if dec.More() {
		return nil, errors.New("overlay index: data after the index")
	}
	if f.Format != indexFormat {
		return nil, fmt.Errorf("overlay index: format %d, want %d", f.Format, indexFormat)
	}
	ix := newIndex()
	for i := range f.Records {
		r := f.Records[i]
		if err := r.check(); err != nil {
			return nil, err
		}
		if _, dup := ix.records[r.Path]; dup {
			return nil, fmt.Errorf("overlay index: %q listed twice", r.Path)
		}
		ix.records[r.Path] = &r
	}
	return ix, nil
}

// check validates one record.
func (r *record) check() error {
	if !backend.ValidPath(r.Path) || r.Path == "." {
		return fmt.Errorf("overlay index: invalid path %q", r.Path)
	}
	if r.From != "" && (!backend.ValidPath(r.From) || r.From == "." || r.From == r.Path) {
		return fmt.Errorf("overlay index: %q: invalid origin %q", r.Path, r.From)
	}
	switch r.Base.Kind {
	case kindNone, kindDir, kindOther:
		if r.Base.Version != "" || r.Base.Hash != "" {
			return fmt.Errorf("overlay index: %q: a %s has no version or hash", r.Path, r.Base.Kind)
		}
	case kindFile:
		if !validHash(r.Base.Hash) {
			return fmt.Errorf("overlay index: %q: invalid hash %q", r.Path, r.Base.Hash)
		}
	default:
		return fmt.Errorf("overlay index: %q: unknown kind %q", r.Path, r.Base.Kind)
	}
	if r.Deleted && r.Base.Kind == kindNone {
		return fmt.Errorf("overlay index: %q: a whiteout of nothing", r.Path)
	}
	return nil
}

// validHash reports whether h is a lowercase hex SHA-256.
func validHash(h string) bool {
	if len(h) != 2*sha256.Size {
		return false
	}
	for _, c := range []byte(h) {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}

// encode returns the index as stored, records sorted by path.
func (ix *index) encode() []byte {
	f := indexFile{Format: indexFormat, Records: []record{}}
	for _, r := range ix.records {
		f.Records = append(f.Records, *r)
	}
	slices.SortFunc(f.Records, func(a, b record) int { return compareStrings(a.Path, b.Path) })
	data, err := json.Marshal(f)
	if err != nil {
		panic(err) // plain strings and bools always marshal
	}
	return append(data, '\n')
}

func compareStrings(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// hidden reports whether the base's entry at name is whited out: name or
// one of its parents is deleted.
func (ix *index) hidden(name string) bool {
	for p := name; p != "."; p, _ = backend.Split(p) {
		if r := ix.records[p]; r != nil && r.Deleted {
			return true
		}
	}
	return false
}

// load reads the index; a missing index is an empty one. hash is the
// SHA-256 of what was read, "" when there was nothing.
func (o *FS) load(ctx context.Context) (*index, string, error) {
	data, err := backend.ReadFile(ctx, o.index, o.indexPath)
	if errors.Is(err, fs.ErrNotExist) {
		o.remember(newIndex(), "")
		return newIndex(), "", nil
	}
	if err != nil {
		return nil, "", err
	}
	hash := hashBytes(data)
	o.mu.Lock()
	if o.cached.ix != nil && o.cached.hash == hash {
		ix := o.cached.ix.clone()
		o.mu.Unlock()
		return ix, hash, nil
	}
	o.mu.Unlock()
	ix, err := parseIndex(data)
	if err != nil {
		return nil, "", &fs.PathError{Op: "read", Path: o.indexPath, Err: fmt.Errorf("%w: %w", backend.ErrIO, err)}
	}
	o.remember(ix, hash)
	return ix, hash, nil
}

// remember keeps ix, stored with hash ("" when there is no index), as
// the index last seen.
func (o *FS) remember(ix *index, hash string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.cached.hash, o.cached.ix = hash, ix.clone()
}

// lastSeen returns the index last seen and its hash, or false when none
// was.
func (o *FS) lastSeen() (*index, string, bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.cached.ix == nil {
		return nil, "", false
	}
	return o.cached.ix.clone(), o.cached.hash, true
}

// clone returns a deep copy of ix.
func (ix *index) clone() *index {
	c := newIndex()
	for p, r := range ix.records {
		cp := *r
		c.records[p] = &cp
	}
	return c
}

// update changes the index with fn under compare-and-swap: it takes the
// index last seen (reading it where none was), lets fn change it (fn
// reports whether it did), and writes it only if nobody wrote it since,
// reading it again and retrying otherwise. fn may run more than once.
// Starting from the index last seen saves a read per change; a stale one
// costs one refused write.
func (o *FS) update(ctx context.Context, fn func(ix *index) (bool, error)) error {
	for attempt := range maxIndexRetries {
		ix, hash, ok := o.lastSeen()
		if attempt > 0 || !ok {
			var err error
			if ix, hash, err = o.load(ctx); err != nil {
				return err
			}
		}
		changed, err := fn(ix)
		if err != nil || !changed {
			return err
		}
		pre := backend.Precondition{MatchHash: hash}
		if hash == "" {
			pre = backend.Precondition{CreateOnly: true}
		}
		data := ix.encode()
		err = backend.WriteFile(ctx, o.index, o.indexPath, data, backend.WriteOptions{Precondition: pre})
		if errors.Is(err, backend.ErrPrecondition) || errors.Is(err, fs.ErrExist) {
			continue
		}
		if err == nil {
			o.remember(ix, hashBytes(data))
		}
		return err
	}
	return &fs.PathError{Op: "write", Path: o.indexPath, Err: fmt.Errorf("%w: the index kept changing under %d attempts", backend.ErrIO, maxIndexRetries)}
}

// hashBytes returns the lowercase hex SHA-256 of data.
func hashBytes(data []byte) string {
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}
