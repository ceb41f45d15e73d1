package quota_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/fencefs/fencefs/backend"
	"github.com/fencefs/fencefs/local"
	"github.com/fencefs/fencefs/quota"
)

func ExampleManager() {
	root, err := os.MkdirTemp("", "tenants")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(root)
	if err := os.MkdirAll(filepath.Join(root, "t1"), 0o755); err != nil {
		log.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "t1", "notes.md"), make([]byte, 900), 0o644); err != nil {
		log.Fatal(err)
	}

	// Usage is scanned from the tenant's namespace through the backend.
	usage := quota.UsageFunc(func(ctx context.Context, tenant string) (quota.Usage, error) {
		fsys, err := local.New(filepath.Join(root, tenant))
		if err != nil {
			return quota.Usage{}, err
		}
		defer fsys.Close()
		return quota.ScanFS(ctx, backend.FS(ctx, fsys))
	})
	m, err := quota.New(quota.Options{
		Default: quota.Limits{MaxBytes: 1000, MaxFiles: 100, CallsPerSecond: 20, MaxConcurrent: 4},
		Usage:   usage,
	})
	if err != nil {
		log.Fatal(err)
	}

	// Every call: Admit, and release when it ends.
	release, err := m.Admit("t1")
	if err != nil {
		log.Fatal(err)
	}
	defer release()

	// A write of a new 200-byte file: Reserve before it commits.
	_, err = m.Reserve(context.Background(), "t1", quota.Write(0, false, 200))
	fmt.Println(errors.Is(err, quota.ErrLimit), err)

	// Deleting notes.md gives its bytes back.
	del, err := m.Reserve(context.Background(), "t1", quota.Remove(900))
	if err != nil {
		log.Fatal(err)
	}
	del.Commit() // after the delete succeeded; Cancel if it failed
	w, err := m.Reserve(context.Background(), "t1", quota.Write(0, false, 200))
	fmt.Println(err)
	w.Commit()
	// Output:
	// true quota: tenant t1: limit of 1000 stored bytes: 900 stored, the change adds 200; free space and retry
	// <nil>
}
