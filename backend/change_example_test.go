package backend_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"

	"github.com/spf13/afero"

	"github.com/fencefs/fencefs/aferoadapter"
	"github.com/fencefs/fencefs/backend"
)

// hashOf is the form of Precondition.MatchHash.
func hashOf(data []byte) string {
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}

func ExampleRemove() {
	ctx := context.Background()
	b := aferoadapter.New(afero.NewMemMapFs())
	if err := backend.WriteFile(ctx, b, "notes.md", []byte("draft"), backend.WriteOptions{}); err != nil {
		panic(err)
	}

	// Remove only the content that was read: a stale hash changes nothing.
	err := backend.Remove(ctx, b, "notes.md", backend.RemoveOptions{
		Precondition: backend.Precondition{MatchHash: hashOf([]byte("an older draft"))},
	})
	fmt.Println(errors.Is(err, backend.ErrPrecondition))
	err = backend.Remove(ctx, b, "notes.md", backend.RemoveOptions{
		Precondition: backend.Precondition{MatchHash: hashOf([]byte("draft"))},
	})
	fmt.Println(err)
	_, err = backend.Stat(ctx, b, "notes.md")
	fmt.Println(errors.Is(err, fs.ErrNotExist))
	// Output:
	// true
	// <nil>
	// true
}

func ExampleRename() {
	ctx := context.Background()
	b := aferoadapter.New(afero.NewMemMapFs())
	for name, data := range map[string]string{"a.go": "package a", "b.go": "package b"} {
		if err := backend.WriteFile(ctx, b, name, []byte(data), backend.WriteOptions{}); err != nil {
			panic(err)
		}
	}

	// CreateOnly refuses to replace the existing b.go.
	noReplace := backend.RenameOptions{Precondition: backend.Precondition{CreateOnly: true}}
	err := backend.Rename(ctx, b, "a.go", "b.go", noReplace)
	fmt.Println(errors.Is(err, fs.ErrExist))
	// Missing parents of the target are created, as a write creates them.
	fmt.Println(backend.Rename(ctx, b, "a.go", "pkg/a/a.go", noReplace))
	data, _ := backend.ReadFile(ctx, b, "pkg/a/a.go")
	fmt.Println(string(data))
	// Output:
	// true
	// <nil>
	// package a
}

func ExampleCopy() {
	ctx := context.Background()
	b := aferoadapter.New(afero.NewMemMapFs())
	if err := backend.WriteFile(ctx, b, "template.txt", []byte("Dear {name},"), backend.WriteOptions{}); err != nil {
		panic(err)
	}

	// The copy lands only if the source still holds what was read; the
	// backend copies on its side where it can (S3 CopyObject) and streams
	// otherwise.
	err := backend.Copy(ctx, b, "template.txt", "letters/alice.txt", backend.CopyOptions{
		Source:       backend.Precondition{MatchHash: hashOf([]byte("Dear {name},"))},
		Precondition: backend.Precondition{CreateOnly: true},
	})
	fmt.Println(err)
	data, _ := backend.ReadFile(ctx, b, "letters/alice.txt")
	fmt.Println(string(data))
	// Output:
	// <nil>
	// Dear {name},
}

func ExampleRemoveAll() {
	ctx := context.Background()
	b := aferoadapter.New(afero.NewMemMapFs())
	for _, name := range []string{"build/a.o", "build/obj/b.o", "build/.env"} {
		if err := backend.WriteFile(ctx, b, name, nil, backend.WriteOptions{}); err != nil {
			panic(err)
		}
	}

	// The check sees every entry before anything is removed.
	err := backend.RemoveAll(ctx, b, "build", backend.RemoveAllOptions{Check: func(name string, _ backend.DirEntry) error {
		if name == "build/.env" {
			return fmt.Errorf("%s is protected", name)
		}
		return nil
	}})
	fmt.Println(err)
	names, _ := fs.Glob(backend.FS(ctx, b), "build/*")
	fmt.Println(names)
	// Output:
	// build/.env is protected
	// [build/.env build/a.o build/obj]
}
