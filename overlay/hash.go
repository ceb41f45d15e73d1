package overlay

import (
	"crypto/sha256"
	"encoding/hex"
	"hash"
	"io"
)

// hasher hashes what is written to it with SHA-256.
type hasher struct{ hash.Hash }

func newHasher() hasher { return hasher{sha256.New()} }

// hex returns the lowercase hex digest.
func (h hasher) hex() string { return hex.EncodeToString(h.Sum(nil)) }

// copyTee copies r to w, hashing what passes with h.
func copyTee(w io.Writer, r io.Reader, h hasher) (int64, error) {
	return io.Copy(w, io.TeeReader(r, h))
}
