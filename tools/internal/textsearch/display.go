package textsearch

import (
	"strings"
	"unicode/utf8"
)

// Display returns a line as shown to a model: each invalid UTF-8 byte
// becomes one U+FFFD, and a line longer than maxCols characters is cut
// after maxCols characters and ends with [LongLineMarker]. A negative
// maxCols never cuts; 0 means [DefaultMaxColumns].
func Display(raw []byte, maxCols int) string {
	if maxCols == 0 {
		maxCols = DefaultMaxColumns
	}
	if (maxCols < 0 || len(raw) <= maxCols) && utf8.Valid(raw) {
		return string(raw)
	}
	var b strings.Builder
	b.Grow(min(len(raw), max(maxCols, 0)*utf8.UTFMax) + len(LongLineMarker))
	cols := 0
	for i := 0; i < len(raw); {
		if maxCols >= 0 && cols == maxCols {
			b.WriteString(LongLineMarker)
			return b.String()
		}
		r, size := utf8.DecodeRune(raw[i:])
		if r == utf8.RuneError && size <= 1 {
			b.WriteRune(utf8.RuneError)
			i++
		} else {
			b.Write(raw[i : i+size])
			i += size
		}
		cols++
	}
	return b.String()
}
