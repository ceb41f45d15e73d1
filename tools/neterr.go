//go:build !fencefs_oneshot

package tools

import (
	"net"
	"net/url"
)

// netFailure reports whether e itself (not what it wraps) is a failure
// of the network, and whether it was a timeout: an error of package net
// or net/url, or a use of a closed connection.
func netFailure(e error) (timeout, ok bool) {
	var ne net.Error
	switch e := e.(type) {
	case *net.OpError, *net.DNSError, *url.Error, *net.AddrError, *net.ParseError:
		ne, _ = e.(net.Error)
	}
	if e == net.ErrClosed {
		return false, true
	}
	if ne != nil {
		return ne.Timeout(), true
	}
	return false, false
}
