package textsearch

import "bytes"

// finder looks for one literal in a buffer. Instead of scanning for the
// literal's first byte, as bytes.Index does, it scans for its rarest byte
// (by the byte frequencies of source code and prose) with the vectorised
// bytes.IndexByte, and checks the literal around each hit: an identifier
// such as "parseManifest" is found by its "M", which is far rarer than
// its "p". When the rare byte turns out common in this text, the finder
// falls back to bytes.Index for the rest of the buffer.
type finder struct {
	lit  []byte
	rare byte // the literal's rarest byte
	at   int  // its index in lit
}

func newFinder(lit []byte) finder {
	f := finder{lit: lit}
	for i, c := range lit {
		if byteRank(c) < byteRank(lit[f.at]) {
			f.at = i
		}
	}
	if len(lit) > 0 {
		f.rare = lit[f.at]
	}
	return f
}

// index returns the index of the first instance of the literal in hay, or
// -1.
func (f finder) index(hay []byte) int {
	n := len(f.lit)
	if n <= 1 {
		return bytes.Index(hay, f.lit)
	}
	misses := 0
	for off := 0; off+n <= len(hay); {
		i := bytes.IndexByte(hay[off+f.at:len(hay)-n+f.at+1], f.rare)
		if i < 0 {
			return -1
		}
		start := off + i
		if bytes.Equal(hay[start:start+n], f.lit) {
			return start
		}
		off = start + 1
		// A false hit costs a call; past a few per kilobyte scanned the
		// byte is not rare here, and bytes.Index's own strategy wins.
		if misses++; misses > 8+off>>7 {
			if j := bytes.Index(hay[off:], f.lit); j >= 0 {
				return off + j
			}
			return -1
		}
	}
	return -1
}

// byteRank ranks how common a byte is in source code and prose: 0 is the
// rarest. Letters follow English letter frequency, upper case well below
// lower case; space, newline and the punctuation of code are common;
// control bytes and bytes above 0x7F are rare.
func byteRank(c byte) int {
	const lower = "zqjxkvbpygfwmucldrhsnioate" // rarest first
	switch {
	case c == ' ':
		return 255
	case c == '\n' || c == '\t':
		return 230
	case 'a' <= c && c <= 'z':
		return 150 + 4*bytes.IndexByte([]byte(lower), c)
	case 'A' <= c && c <= 'Z':
		return 40 + 2*bytes.IndexByte([]byte(lower), c+'a'-'A')
	case '0' <= c && c <= '9':
		return 120
	case bytes.IndexByte([]byte(`(),.;:=_"'/*-{}[]<>`), c) >= 0:
		return 140
	case c < 0x80:
		return 30
	}
	return 10
}
