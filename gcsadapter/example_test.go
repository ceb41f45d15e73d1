package gcsadapter_test

import (
	"context"
	"fmt"
	"log"

	"github.com/fencefs/fencefs/backend"
	"github.com/fencefs/fencefs/gcsadapter"
)

// New wraps a client built once (NewClient, or storage.NewClient with
// options of your own) and shared by the backends of every tenant; it
// does no I/O. Each tenant gets its own name prefix.
func ExampleNew() {
	ctx := context.Background()
	client, err := gcsadapter.NewClient(ctx, gcsadapter.Config{Endpoint: "http://127.0.0.1:4443"})
	if err != nil {
		log.Fatal(err)
	}
	defer client.Close()
	var tenant *gcsadapter.FS
	for _, prefix := range []string{"tenant1", "tenant10"} {
		if tenant, err = gcsadapter.New(client, "agents", prefix, gcsadapter.Options{}); err != nil {
			log.Fatal(err)
		}
		key, _ := tenant.Key("notes/today.md")
		fmt.Println(key)
	}
	caps := tenant.Capabilities()
	fmt.Println(caps.Name, caps.Versions, caps.AtomicPreconditions, caps.AtomicRename)
	// Output:
	// tenant1/notes/today.md
	// tenant10/notes/today.md
	// gcs true true false
}

// ParseMountSpec reads a mount spec; its Config opens the mount.
func ExampleParseMountSpec() {
	m, err := gcsadapter.ParseMountSpec("gs://agents/tenant1?endpoint=http://127.0.0.1:4443&timeout=30s")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(m.Bucket, m.Prefix, m.Endpoint, m.Timeout, m.ReadOnly)
	_, err = gcsadapter.ParseMountSpec("gs://key:secret@agents")
	fmt.Println(err != nil)
	// Output:
	// agents tenant1 http://127.0.0.1:4443 30s false
	// true
}

// Open builds a client through the SDK's credential chain (or talks to an
// emulator without credentials), probes the bucket and returns the
// backend; writes take generation preconditions.
func ExampleOpen() {
	ctx := context.Background()
	fsys, err := gcsadapter.Open(ctx, gcsadapter.Config{Bucket: "agents", Prefix: "tenant1"})
	if err != nil {
		log.Fatal(err)
	}
	// Write only if nobody created the file meanwhile.
	err = backend.WriteFile(ctx, fsys, "notes/today.md", []byte("hello\n"),
		backend.WriteOptions{Precondition: backend.Precondition{CreateOnly: true}})
	if err != nil {
		log.Fatal(err)
	}
}
