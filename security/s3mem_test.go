package security

import (
	"testing"

	"github.com/fencefs/fencefs/internal/testserver"
	"github.com/fencefs/fencefs/s3adapter"
)

// kindS3Keys is an S3 world served by an in-memory S3 server
// (testserver.S3), for keys no real server used here can hold.
const kindS3Keys = "s3keys"

// newMemS3World serves layout l (files and directory markers) from an
// in-memory S3 server and returns a read-only S3 world over its "ws".
// Writes are not served, so the objects never change.
func newMemS3World(t *testing.T, s secrets, l layout) *world {
	t.Helper()
	objects := map[string]string{}
	for name, n := range l {
		switch n.kind {
		case nFile:
			objects[name] = n.data
		case nDir:
			objects[name+"/"] = ""
		default:
			t.Fatalf("the in-memory S3 server cannot hold %s", name)
		}
	}
	b, err := s3adapter.New(testserver.StartS3(t, "b", objects), "b", "ws", s3adapter.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	w := &world{kind: kindS3Keys, s: s, b: b, absParent: "", root: "ws/", cheapSnap: true}
	w.snap = func(t *testing.T) snapshot {
		out := snapshot{}
		for k, v := range objects {
			out[k] = testserver.ETag(v)
		}
		return out
	}
	return w
}
