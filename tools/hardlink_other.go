//go:build !unix

package tools

// otherLinks returns 0: hard links are only counted on Unix.
func (s *Set) otherLinks(string) int { return 0 }
