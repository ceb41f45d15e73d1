package s3adapter_test

import (
	"context"
	"fmt"
	"log"

	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/fencefs/fencefs/backend"
	"github.com/fencefs/fencefs/s3adapter"
)

// New wraps an S3 client you configured yourself; it does no I/O. Each
// tenant gets its own key prefix.
func ExampleNew() {
	client := s3.New(s3.Options{Region: "us-east-1"})
	tenant, err := s3adapter.New(client, "agents", "tenant1", s3adapter.Options{})
	if err != nil {
		log.Fatal(err)
	}
	key, _ := tenant.Key("notes/today.md")
	fmt.Println(key)
	caps := tenant.Capabilities()
	fmt.Println(caps.Name, caps.AtomicPreconditions, caps.Symlinks)
	// Output:
	// tenant1/notes/today.md
	// s3 true false
}

// Open configures the client through the SDK's default chain; static
// keys, an endpoint and path-style addressing suit self-hosted servers.
func ExampleOpen() {
	ctx := context.Background()
	fsys, err := s3adapter.Open(ctx, s3adapter.Config{
		Bucket:               "agents",
		Prefix:               "tenant1",
		Endpoint:             "http://127.0.0.1:7070",
		Region:               "us-east-1",
		PathStyle:            true,
		ChecksumWhenRequired: true,
		AccessKeyID:          "access",
		SecretAccessKey:      "secret",
	})
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
