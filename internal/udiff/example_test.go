package udiff_test

import (
	"fmt"

	"github.com/fencefs/fencefs/internal/udiff"
)

func ExampleUnified() {
	diff, truncated := udiff.Unified("notes.md", "one\ntwo\nthree\n", "one\n2\nthree")
	fmt.Println(diff)
	fmt.Println(truncated)
	// Output:
	// --- a/notes.md
	// +++ b/notes.md
	// @@ -1,3 +1,3 @@
	//  one
	// -two
	// -three
	// +2
	// +three
	// \ No newline at end of file
	// false
}
