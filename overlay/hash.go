package overlay

import (
	"crypto/sha256"
	"encoding/hex"
	"hash"
)

// hasher hashes what is written to it with SHA-256.
type hasher struct{ hash.Hash }

func newHasher() hasher { return hasher{sha256.New()} }

// hex returns the lowercase hex digest.
func (h hasher) hex() string { return hex.EncodeToString(h.Sum(nil)) }
