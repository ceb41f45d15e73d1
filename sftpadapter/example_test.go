package sftpadapter_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"time"

	"github.com/fencefs/fencefs/backend"
	"github.com/fencefs/fencefs/sftpadapter"
)

// A backend on the directory "workspace" of an SFTP server, checking the
// server against the user's known_hosts file.
func ExampleDial() {
	ctx := context.Background()
	fsys, err := sftpadapter.Dial(ctx, sftpadapter.Config{
		Addr:           "sftp.example.com:22",
		User:           "agent",
		KeyFile:        "/home/agent/.ssh/id_ed25519",
		KnownHostsFile: "/home/agent/.ssh/known_hosts",
		Root:           "workspace",
		OpTimeout:      30 * time.Second,
	})
	if err != nil {
		log.Fatal(err)
	}
	defer fsys.Close()
	err = backend.WriteFile(ctx, fsys, "notes/today.md", []byte("# Today\n"), backend.WriteOptions{})
	if err != nil {
		log.Fatal(err)
	}
}

// Dial refuses to connect without a way to check the server's host key;
// skipping the check has to be asked for by name.
func ExampleDial_hostKeyRequired() {
	_, err := sftpadapter.Dial(context.Background(), sftpadapter.Config{
		Addr:     "sftp.example.com",
		User:     "agent",
		Password: "secret",
	})
	fmt.Println(errors.Is(err, sftpadapter.ErrNoHostKeyCheck))
	// Output: true
}

// Two tenants' directories on one server over one SSH connection: each
// backend is rooted at its tenant's directory and cannot leave it.
func ExamplePool() {
	ctx := context.Background()
	pool, err := sftpadapter.NewPool(sftpadapter.Config{
		Addr:           "sftp.example.com:22",
		User:           "platform",
		KeyFile:        "/etc/platform/id_ed25519",
		KnownHostsFile: "/etc/platform/known_hosts",
		OpTimeout:      30 * time.Second,
	})
	if err != nil {
		log.Fatal(err)
	}
	defer pool.Close()
	for _, tenant := range []string{"t1", "t2"} {
		fsys, err := pool.Open(ctx, "/srv/tenants/"+tenant)
		if err != nil {
			log.Fatal(err)
		}
		defer fsys.Close()
	}
}

// NewPool checks the configuration as Dial does, before any connection.
func ExampleNewPool_hostKeyRequired() {
	_, err := sftpadapter.NewPool(sftpadapter.Config{Addr: "sftp.example.com", User: "agent", Password: "secret"})
	fmt.Println(errors.Is(err, sftpadapter.ErrNoHostKeyCheck))
	// Output: true
}
