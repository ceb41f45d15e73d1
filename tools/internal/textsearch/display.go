package textsearch

import (
	"strings"
	"unicode/utf8"
)

// DisplayBytes returns how many leading bytes of a line Display needs to
// show maxCols characters (0 meaning DefaultMaxColumns) and to know that
// there are more: a character takes at most utf8.UTFMax bytes, or one
// byte when invalid. It is negative when maxCols is, as Display then
// never cuts.
func DisplayBytes(maxCols int) int {
	if maxCols == 0 {
		maxCols = DefaultMaxColumns
	}
	if maxCols < 0 {
		return -1
	}
	return (maxCols + 1) * utf8.UTFMax
}

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
