package sftpadapter

import (
	"encoding/binary"
	"errors"
	"io"
	"strings"
	"sync"
	"sync/atomic"
)

// SFTP version 3 packet types and attribute flags the filter needs
// (draft-ietf-secsh-filexfer-02).
const (
	fxpReaddir = 12
	fxpName    = 104

	attrSize        = 0x00000001
	attrUIDGID      = 0x00000002
	attrPermissions = 0x00000004
	attrACModTime   = 0x00000008
	attrExtended    = 0x80000000

	// maxPacket bounds the packets the filter buffers; pkg/sftp refuses
	// longer ones anyway.
	maxPacket = 256 * 1024
)

// The filter sits between pkg/sftp and the SSH channel. pkg/sftp reduces
// every name in a READDIR answer with path.Base, so a hostile server's
// "x/passwd" would be listed as "passwd". The filter rewrites such names
// to ".", which pkg/sftp drops, before pkg/sftp sees them. It must know
// which answers belong to READDIR requests, because READLINK and REALPATH
// answers use the same packet type for paths that do contain slashes.

// idSet records the ids of READDIR requests in flight.
type idSet struct {
	mu  sync.Mutex
	ids map[uint32]struct{}
}

func newIDSet() *idSet { return &idSet{ids: map[uint32]struct{}{}} }

func (s *idSet) add(id uint32) {
	s.mu.Lock()
	s.ids[id] = struct{}{}
	s.mu.Unlock()
}

// take reports whether id was recorded, and forgets it.
func (s *idSet) take(id uint32) bool {
	s.mu.Lock()
	_, ok := s.ids[id]
	delete(s.ids, id)
	s.mu.Unlock()
	return ok
}

// requestWatcher passes the client's packets through unchanged and
// records the id of every READDIR request before it is sent, so the
// answer cannot arrive before the record.
type requestWatcher struct {
	w    io.WriteCloser
	ids  *idSet
	hdr  [9]byte // length, type, id of the packet being written
	nhdr int
	skip uint32       // bytes of the current packet still to pass
	sent atomic.Int64 // requests sent, for benchmarks
	// onRequest, when set, is told each request's name as it is sent.
	onRequest func(op string)
}

// requestNames are the SFTP version 3 request types by number, as the
// protocol names them; the adapter sends no others.
var requestNames = [...]string{
	3: "OPEN", 4: "CLOSE", 5: "READ", 6: "WRITE", 7: "LSTAT", 8: "FSTAT",
	9: "SETSTAT", 10: "FSETSTAT", 11: "OPENDIR", 12: "READDIR", 13: "REMOVE",
	14: "MKDIR", 15: "RMDIR", 16: "REALPATH", 17: "STAT", 18: "RENAME",
	19: "READLINK", 20: "SYMLINK",
}

// requestName names the request of packet type typ; extensions
// (posix-rename, hardlink, statvfs) are all EXTENDED.
func requestName(typ byte) string {
	switch {
	case typ == 200:
		return "EXTENDED"
	case int(typ) < len(requestNames) && requestNames[typ] != "":
		return requestNames[typ]
	}
	return "OTHER"
}

// Write parses packet headers out of p and forwards p.
func (rw *requestWatcher) Write(p []byte) (int, error) {
	for q := p; len(q) > 0; {
		if rw.skip > 0 {
			n := min(uint32(len(q)), rw.skip)
			rw.skip -= n
			q = q[n:]
			continue
		}
		n := copy(rw.hdr[rw.nhdr:], q)
		rw.nhdr += n
		q = q[n:]
		if rw.nhdr < len(rw.hdr) {
			break
		}
		rw.nhdr = 0
		rw.sent.Add(1)
		if rw.onRequest != nil {
			rw.onRequest(requestName(rw.hdr[4]))
		}
		length := binary.BigEndian.Uint32(rw.hdr[:4])
		if rw.hdr[4] == fxpReaddir {
			rw.ids.add(binary.BigEndian.Uint32(rw.hdr[5:9]))
		}
		if length > 5 {
			rw.skip = length - 5
		}
	}
	return rw.w.Write(p)
}

// Close closes the underlying stream.
func (rw *requestWatcher) Close() error { return rw.w.Close() }

// nameFilter passes the server's packets through, rewriting the answers to
// recorded READDIR requests so that no unsafe name reaches pkg/sftp.
type nameFilter struct {
	r    io.Reader
	ids  *idSet
	buf  []byte // bytes ready to hand out
	pass uint32 // bytes of the current packet to copy straight from r
	err  error  // sticky read error
}

// Read hands out the filtered stream.
func (nf *nameFilter) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	if len(nf.buf) == 0 && nf.pass == 0 {
		if nf.err != nil {
			return 0, nf.err
		}
		if err := nf.next(); err != nil {
			nf.err = err
			return 0, err
		}
	}
	if len(nf.buf) > 0 {
		n := copy(p, nf.buf)
		nf.buf = nf.buf[n:]
		return n, nil
	}
	n, err := nf.r.Read(p[:min(uint32(len(p)), nf.pass)])
	nf.pass -= uint32(n)
	if err == io.EOF && nf.pass > 0 {
		err = io.ErrUnexpectedEOF
	}
	if err != nil {
		nf.err = err
		if n > 0 {
			err = nil
		}
	}
	return n, err
}

// next reads the next packet header and decides whether the packet is
// passed through or buffered and rewritten.
func (nf *nameFilter) next() error {
	var hdr [9]byte
	if _, err := io.ReadFull(nf.r, hdr[:]); err != nil {
		return err
	}
	length := binary.BigEndian.Uint32(hdr[:4])
	id := binary.BigEndian.Uint32(hdr[5:9])
	if length < 5 || !nf.ids.take(id) || hdr[4] != fxpName {
		// Not an answer to READDIR (a short packet is passed on for
		// pkg/sftp to refuse).
		nf.buf = append(nf.buf[:0], hdr[:]...)
		if length > 5 {
			nf.pass = length - 5
		}
		return nil
	}
	if length > maxPacket {
		return errors.New("sftpadapter: directory listing packet too long")
	}
	pkt := make([]byte, 4+length)
	copy(pkt, hdr[:])
	if _, err := io.ReadFull(nf.r, pkt[9:]); err != nil {
		if err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		return err
	}
	nf.buf = filterNamePacket(pkt)
	return nil
}

// filterNamePacket returns the NAME packet pkt (with its length prefix)
// with every unsafe file name replaced by ".". A malformed packet is
// returned unchanged, for pkg/sftp to refuse.
func filterNamePacket(pkt []byte) []byte {
	if len(pkt) < 13 {
		return pkt
	}
	count := binary.BigEndian.Uint32(pkt[9:13])
	out := make([]byte, 13, len(pkt))
	copy(out, pkt[:13])
	rest := pkt[13:]
	for range count {
		name, after, ok := readString(rest)
		if !ok {
			return pkt
		}
		long, after, ok := readString(after)
		if !ok {
			return pkt
		}
		attrLen, ok := attrsLen(after)
		if !ok {
			return pkt
		}
		if !safeName(name) {
			name = []byte(".")
		}
		out = appendString(out, name)
		out = appendString(out, long)
		out = append(out, after[:attrLen]...)
		rest = after[attrLen:]
	}
	out = append(out, rest...)
	binary.BigEndian.PutUint32(out[:4], uint32(len(out)-4))
	return out
}

// safeName reports whether a name from the server is a single path
// component that cannot be mistaken for another name.
func safeName(name []byte) bool {
	s := string(name)
	return s != "" && s != "." && s != ".." && !strings.ContainsAny(s, "/\x00")
}

// readString splits an SSH string (uint32 length, bytes) off b.
func readString(b []byte) (s, rest []byte, ok bool) {
	if len(b) < 4 {
		return nil, nil, false
	}
	n := binary.BigEndian.Uint32(b)
	if uint64(n) > uint64(len(b)-4) {
		return nil, nil, false
	}
	return b[4 : 4+n], b[4+n:], true
}

func appendString(b, s []byte) []byte {
	b = binary.BigEndian.AppendUint32(b, uint32(len(s)))
	return append(b, s...)
}

// attrsLen returns the length of the ATTRS structure at the start of b.
func attrsLen(b []byte) (int, bool) {
	if len(b) < 4 {
		return 0, false
	}
	flags := binary.BigEndian.Uint32(b)
	n := 4
	if flags&attrSize != 0 {
		n += 8
	}
	if flags&attrUIDGID != 0 {
		n += 8
	}
	if flags&attrPermissions != 0 {
		n += 4
	}
	if flags&attrACModTime != 0 {
		n += 8
	}
	if flags&attrExtended == 0 {
		return n, n <= len(b)
	}
	if n+4 > len(b) {
		return 0, false
	}
	ext := binary.BigEndian.Uint32(b[n:])
	n += 4
	for range ext {
		for range 2 {
			_, rest, ok := readString(b[n:])
			if !ok {
				return 0, false
			}
			n = len(b) - len(rest)
		}
	}
	return n, true
}
