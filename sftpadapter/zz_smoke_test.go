package sftpadapter

import (
	"context"
	"os"
	"testing"

	"github.com/fencefs/fencefs/backend"
	"golang.org/x/crypto/ssh"
)

func TestZZSmoke(t *testing.T) {
	if os.Getenv("ZZSMOKE") == "" {
		t.Skip("smoke")
	}
	ctx := context.Background()
	hk, _ := os.ReadFile("/tmp/smoke/hostkey.pub")
	pk, _, _, _, err := ssh.ParseAuthorizedKey(hk)
	if err != nil {
		t.Fatal(err)
	}
	key, _ := os.ReadFile("/tmp/smoke/key")
	f, err := Dial(ctx, Config{Addr: "127.0.0.1:2222", User: "fencefs", PrivateKey: key, HostKey: pk, Root: ""})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	t.Log("root", f.root)
	if err := f.MkdirAll(ctx, "a/b/c"); err != nil {
		t.Fatal(err)
	}
	if err := backend.WriteFile(ctx, f, "a/b/x.txt", []byte("hello"), backend.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	data, err := backend.ReadFile(ctx, f, "a/b/x.txt")
	t.Log(string(data), err)
	ents, err := f.List(ctx, "a/b")
	t.Log(ents, err)
	fi, err := f.Stat(ctx, "a/b/x.txt")
	t.Log(fi, err)
	_, err = f.Stat(ctx, "a/b/x.txt/y")
	t.Log(err)
	err = backend.WriteFile(ctx, f, "a/b/x.txt", []byte("hello2"), backend.WriteOptions{Precondition: backend.Precondition{CreateOnly: true}})
	t.Log("createonly:", err)
	err = backend.WriteFile(ctx, f, "a/b/new.txt", []byte("hello2"), backend.WriteOptions{Precondition: backend.Precondition{CreateOnly: true}})
	t.Log("createonly new:", err)
	ents, err = f.List(ctx, "a/b")
	t.Log(ents, err)
	err = f.Walk(ctx, ".", func(name string, e backend.DirEntry) error { t.Log("walk", name, e.Type); return nil })
	t.Log(err)
}
