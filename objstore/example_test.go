package objstore_test

import (
	"context"
	"fmt"
	"slices"

	"github.com/fencefs/fencefs/backend"
	"github.com/fencefs/fencefs/objstore"
)

// keyList is a Lister over keys held in memory, pageSize keys a page, as
// an adapter would page through an SDK's listing.
type keyList struct {
	keys     []string // sorted
	pageSize int
	next     int
}

func (l *keyList) More() bool { return l.next < len(l.keys) }

func (l *keyList) NextPage(context.Context) ([]objstore.Object, error) {
	var page []objstore.Object
	for _, k := range l.keys[l.next:min(l.next+l.pageSize, len(l.keys))] {
		page = append(page, objstore.Object{Key: k, Entry: backend.DirEntry{Size: int64(len(k))}})
	}
	l.next += len(page)
	return page, nil
}

// A walk of a flat listing: "a" is both an object and a prefix, so it is a
// directory; "~tmp/y", which no storage path names, is skipped, and the
// directory marker "t/e/" makes an empty directory.
func ExampleKeys_Walk() {
	keys, err := objstore.NewKeys("tenant1", objstore.Limits{MaxKeyBytes: 1024, MaxNameBytes: 255})
	if err != nil {
		panic(err)
	}
	l := &keyList{pageSize: 2, keys: slices.Sorted(slices.Values([]string{
		"tenant1/a", "tenant1/a/b.txt", "tenant1/a.txt", "tenant1/t/e/", "tenant1/~tmp/y",
	}))}
	found, err := keys.Walk(context.Background(), l, ".", func(name string, e backend.DirEntry) error {
		fmt.Println(name, e.IsDir())
		return nil
	})
	fmt.Println(found, err)
	// Output:
	// a.txt false
	// a true
	// a/b.txt false
	// t true
	// t/e true
	// true <nil>
}

// The prefix a mount spec names is checked by the same function as the
// constructor's.
func ExampleCheckPrefix() {
	l := objstore.Limits{MaxKeyBytes: 1024, MaxNameBytes: 255}
	for _, p := range []string{"", "tenant1", "tenant1/", ".", "a/../b"} {
		key, err := objstore.CheckPrefix(p, l)
		fmt.Printf("%q %q %v\n", p, key, err)
	}
	// Output:
	// "" "" <nil>
	// "tenant1" "tenant1/" <nil>
	// "tenant1/" "tenant1/" <nil>
	// "." "" prefix "." is not a canonical relative path
	// "a/../b" "" prefix "a/../b" is not a canonical relative path
}
