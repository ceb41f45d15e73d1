package main

import (
	"crypto/ed25519"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/pkg/sftp"
	"golang.org/x/crypto/ssh"
)

// sshServer is an in-process SSH server with the SFTP subsystem over the
// real file system, accepting one user and password.
type sshServer struct {
	addr    string
	hostKey ssh.PublicKey
}

func startSSHServer(t *testing.T, user, password string) sshServer {
	t.Helper()
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	signer, err := ssh.NewSignerFromKey(priv)
	if err != nil {
		t.Fatal(err)
	}
	cfg := &ssh.ServerConfig{
		PasswordCallback: func(c ssh.ConnMetadata, pw []byte) (*ssh.Permissions, error) {
			if c.User() == user && string(pw) == password {
				return nil, nil
			}
			return nil, errors.New("denied")
		},
	}
	cfg.AddHostKey(signer)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	t.Cleanup(func() {
		ln.Close()
		wg.Wait()
	})
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				serveSSH(conn, cfg)
			}()
		}
	}()
	return sshServer{addr: ln.Addr().String(), hostKey: signer.PublicKey()}
}

// serveSSH serves the SFTP subsystem on every session of one connection
// until the client goes away.
func serveSSH(conn net.Conn, cfg *ssh.ServerConfig) {
	defer conn.Close()
	_, chans, reqs, err := ssh.NewServerConn(conn, cfg)
	if err != nil {
		return
	}
	go ssh.DiscardRequests(reqs)
	for nc := range chans {
		if nc.ChannelType() != "session" {
			nc.Reject(ssh.UnknownChannelType, "session only")
			continue
		}
		ch, requests, err := nc.Accept()
		if err != nil {
			return
		}
		go func() {
			for req := range requests {
				ok := req.Type == "subsystem" && len(req.Payload) > 4 && string(req.Payload[4:]) == "sftp"
				req.Reply(ok, nil)
				if ok {
					go func() {
						defer ch.Close()
						if srv, err := sftp.NewServer(ch); err == nil {
							srv.Serve()
						}
					}()
				}
			}
		}()
	}
}

func TestCallSFTPMount(t *testing.T) {
	t.Parallel()
	srv := startSSHServer(t, "agent", "s3cret")
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "hello.txt"), "hi\n")
	pin := base64.StdEncoding.EncodeToString(srv.hostKey.Marshal())
	spec := "sftp://agent@" + srv.addr + dir + "?password_env=FENCEFS_TEST_SFTP_PASSWORD&host_key=" + pin
	env := []string{"FENCEFS_TEST_SFTP_PASSWORD=s3cret"}

	got := runFencefs(t, dir, "", env, "call", "--mount", "remote="+spec, "write_file", `{"path":"/remote/new.txt","content":"over sftp\n"}`)
	if got.code != 0 || !strings.HasPrefix(got.stdout, "Wrote 10 chars (1 lines) to /remote/new.txt.") {
		t.Fatalf("write over sftp: %+v", got)
	}
	if s := readFile(t, filepath.Join(dir, "new.txt")); s != "over sftp\n" {
		t.Fatalf("new.txt holds %q", s)
	}
	got = runFencefs(t, dir, "", env, "call", "--mount", "remote="+spec+"&ro=1", "edit_file", `{"path":"/remote/hello.txt","old_text":"hi","new_text":"bye"}`)
	if got.code != 2 || !strings.Contains(got.stdout, "read-only") {
		t.Fatalf("edit on a read-only sftp mount: %+v", got)
	}
	if s := readFile(t, filepath.Join(dir, "hello.txt")); s != "hi\n" {
		t.Fatalf("hello.txt holds %q", s)
	}

	// A host key other than the pinned one is refused at start-up.
	other := startSSHServer(t, "agent", "s3cret")
	wrong := strings.Replace(spec, srv.addr, other.addr, 1)
	got = runFencefs(t, dir, "", env, "call", "--mount", "remote="+wrong, "list_directory", `{"path":"/remote"}`)
	if got.code != 1 || !strings.HasPrefix(got.stderr, `fencefs: mount "remote": `) || got.stdout != "" {
		t.Fatalf("wrong host key: %+v", got)
	}
	t.Logf("wrong host key: %s", got.stderr)
	got = runFencefs(t, dir, "", []string{"FENCEFS_TEST_SFTP_PASSWORD=wrong"}, "call", "--mount", "remote="+spec, "list_directory")
	if got.code != 1 || !strings.HasPrefix(got.stderr, `fencefs: mount "remote": `) {
		t.Fatalf("wrong password: %+v", got)
	}
	t.Logf("wrong password: %s", got.stderr)
	if _, err := os.Stat(filepath.Join(dir, "new.txt")); err != nil {
		t.Fatal(err)
	}
}
