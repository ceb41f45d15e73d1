package testserver_test

import (
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/pkg/sftp"
	"golang.org/x/crypto/ssh"

	"github.com/fencefs/fencefs/internal/testserver"
)

// dialSFTP logs in to the server at addr and returns an SFTP client that
// is closed when t ends.
func dialSFTP(t *testing.T, addr string, hostKey ssh.PublicKey, user, password string) (*ssh.Client, *sftp.Client) {
	t.Helper()
	conn, err := ssh.Dial("tcp", addr, &ssh.ClientConfig{User: user, Auth: []ssh.AuthMethod{ssh.Password(password)},
		HostKeyCallback: ssh.FixedHostKey(hostKey), Timeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	c, err := sftp.NewClient(conn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return conn, c
}

// writeSFTP creates the file name holding data through c.
func writeSFTP(t *testing.T, c *sftp.Client, name, data string) {
	t.Helper()
	f, err := c.Create(name)
	if err != nil {
		t.Fatal(err)
	}
	_, err = io.WriteString(f, data)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		t.Fatalf("writing %s: %v", name, err)
	}
}

func TestSFTPRealFiles(t *testing.T) {
	t.Parallel()
	addr, hostKey := testserver.StartSFTP(t, testserver.SFTPConfig{User: "agent", Password: "pw"})
	if host, _, err := net.SplitHostPort(addr); err != nil || host != "127.0.0.1" {
		t.Errorf("address %q, want one on 127.0.0.1 (%v)", addr, err)
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "old.txt"), []byte("on disk\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, c := dialSFTP(t, addr, hostKey, "agent", "pw")
	f, err := c.Open(filepath.Join(dir, "old.txt"))
	if err != nil {
		t.Fatal(err)
	}
	got, err := io.ReadAll(f)
	f.Close()
	if err != nil || string(got) != "on disk\n" {
		t.Errorf("read old.txt = %q, %v", got, err)
	}
	writeSFTP(t, c, filepath.Join(dir, "new.txt"), "over sftp\n")
	if got, err := os.ReadFile(filepath.Join(dir, "new.txt")); err != nil || string(got) != "over sftp\n" {
		t.Errorf("new.txt on disk = %q, %v", got, err)
	}
}

func TestSFTPHandlers(t *testing.T) {
	t.Parallel()
	h := sftp.InMemHandler()
	addr, hostKey := testserver.StartSFTP(t, testserver.SFTPConfig{User: "u", Password: "p", Handlers: &h})
	_, c := dialSFTP(t, addr, hostKey, "u", "p")
	if err := c.MkdirAll("/ws/sub"); err != nil {
		t.Fatal(err)
	}
	writeSFTP(t, c, "/ws/a.txt", "in memory")
	infos, err := c.ReadDir("/ws")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, fi := range infos {
		names = append(names, fi.Name())
	}
	slices.Sort(names)
	if want := []string{"a.txt", "sub"}; !slices.Equal(names, want) {
		t.Errorf("ReadDir(/ws) = %q, want %q", names, want)
	}
	// The handlers answer, not the host: /ws is not the host's.
	if _, err := os.Stat("/ws/a.txt"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the host holds /ws/a.txt (%v)", err)
	}
}

func TestSFTPRefusals(t *testing.T) {
	t.Parallel()
	addr, hostKey := testserver.StartSFTP(t, testserver.SFTPConfig{User: "agent", Password: "pw"})
	otherAddr, _ := testserver.StartSFTP(t, testserver.SFTPConfig{User: "agent", Password: "pw"})
	tests := []struct {
		name, addr, user, password string
	}{
		{"wrong password", addr, "agent", "wrong"},
		{"wrong user", addr, "root", "pw"},
		{"empty password", addr, "agent", ""},
		{"other host key", otherAddr, "agent", "pw"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			conn, err := ssh.Dial("tcp", tt.addr, &ssh.ClientConfig{User: tt.user, Auth: []ssh.AuthMethod{ssh.Password(tt.password)},
				HostKeyCallback: ssh.FixedHostKey(hostKey), Timeout: 10 * time.Second})
			if err == nil {
				conn.Close()
				t.Fatal("logged in")
			}
		})
	}

	conn, _ := dialSFTP(t, addr, hostKey, "agent", "pw")
	if ch, _, err := conn.OpenChannel("direct-tcpip", nil); err == nil {
		ch.Close()
		t.Error("a direct-tcpip channel was accepted")
	}
	sess, err := conn.NewSession()
	if err != nil {
		t.Fatal(err)
	}
	defer sess.Close()
	if err := sess.RequestSubsystem("shell"); err == nil {
		t.Error(`the subsystem "shell" was granted`)
	}
}

// TestSFTPStopsWithOpenClient ends the test that started a server while
// a client is still logged in: the end does not wait for the client,
// whose connection is closed.
func TestSFTPStopsWithOpenClient(t *testing.T) {
	t.Parallel()
	var conn *ssh.Client
	t.Run("server", func(t *testing.T) {
		addr, hostKey := testserver.StartSFTP(t, testserver.SFTPConfig{User: "agent", Password: "pw"})
		var err error
		conn, err = ssh.Dial("tcp", addr, &ssh.ClientConfig{User: "agent", Auth: []ssh.AuthMethod{ssh.Password("pw")},
			HostKeyCallback: ssh.FixedHostKey(hostKey), Timeout: 10 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := sftp.NewClient(conn); err != nil {
			t.Fatal(err)
		}
	})
	if conn == nil {
		t.FailNow()
	}
	defer conn.Close()
	if err := conn.Wait(); err == nil {
		t.Error("the client's connection ended without an error")
	}
}

// listPage is the part of a ListObjectsV2 answer the tests read.
type listPage struct {
	KeyCount              int
	MaxKeys               int
	IsTruncated           bool
	NextContinuationToken string
	Contents              []struct{ Key, ETag string }
	CommonPrefixes        []struct{ Prefix string }
}

// entries returns the keys and common prefixes of p in order.
func (p listPage) entries() []string {
	var out []string
	for _, c := range p.Contents {
		out = append(out, c.Key)
	}
	for _, c := range p.CommonPrefixes {
		out = append(out, c.Prefix)
	}
	slices.Sort(out)
	return out
}

// get sends one request to h and returns the answer.
func get(h http.Handler, method, target string) *http.Response {
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(method, target, nil))
	return rec.Result()
}

func TestS3Objects(t *testing.T) {
	t.Parallel()
	objects := map[string]string{"a": "object a", "a/b": "ab", "x//y": "", "./p": "dot"}
	h := testserver.NewS3("b", objects)
	objects["a"] = "changed" // NewS3 keeps a copy
	tests := []struct {
		method, target string
		code           int
		body, etag     string
		ifMatch        string
	}{
		{http.MethodGet, "/b/a", http.StatusOK, "object a", testserver.ETag("object a"), ""},
		{http.MethodGet, "/b/a", http.StatusOK, "object a", testserver.ETag("object a"), testserver.ETag("object a")},
		{http.MethodGet, "/b/a", http.StatusOK, "object a", testserver.ETag("object a"), "*"},
		{http.MethodGet, "/b/a", http.StatusPreconditionFailed, "<Error><Code>PreconditionFailed</Code><Message>At least one of the pre-conditions you specified did not hold</Message></Error>", "", testserver.ETag("ab")},
		{http.MethodHead, "/b/a", http.StatusPreconditionFailed, "", "", testserver.ETag("ab")},
		{http.MethodGet, "/b/missing", http.StatusNotFound, "<Error><Code>NoSuchKey</Code><Message>no such key</Message></Error>", "", testserver.ETag("ab")},
		{http.MethodHead, "/b/a", http.StatusOK, "", testserver.ETag("object a"), ""},
		{http.MethodGet, "/b/a/b", http.StatusOK, "ab", testserver.ETag("ab"), ""},
		{http.MethodGet, "/b/x//y", http.StatusOK, "", testserver.ETag(""), ""},
		{http.MethodGet, "/b/./p", http.StatusOK, "dot", testserver.ETag("dot"), ""},
		{http.MethodGet, "/b/missing", http.StatusNotFound, "<Error><Code>NoSuchKey</Code><Message>no such key</Message></Error>", "", ""},
		{http.MethodHead, "/b/missing", http.StatusNotFound, "", "", ""},
		{http.MethodPut, "/b/a", http.StatusForbidden, "read-only\n", "", ""},
		{http.MethodDelete, "/b/a", http.StatusForbidden, "read-only\n", "", ""},
		{http.MethodGet, "/other/a", http.StatusNotFound, "no such bucket\n", "", ""},
		{http.MethodGet, "/bb/a", http.StatusNotFound, "no such bucket\n", "", ""},
	}
	for _, tt := range tests {
		req := httptest.NewRequest(tt.method, tt.target, nil)
		if tt.ifMatch != "" {
			req.Header.Set("If-Match", tt.ifMatch)
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		res := rec.Result()
		body, _ := io.ReadAll(res.Body)
		if res.StatusCode != tt.code || string(body) != tt.body || res.Header.Get("ETag") != tt.etag {
			t.Errorf("%s %s (If-Match %q) = %d %q (ETag %q), want %d %q (ETag %q)", tt.method, tt.target, tt.ifMatch,
				res.StatusCode, body, res.Header.Get("ETag"), tt.code, tt.body, tt.etag)
		}
		if tt.code != http.StatusOK {
			continue
		}
		if tt.method == http.MethodGet && res.Header.Get("Content-Length") != strconv.Itoa(len(body)) {
			t.Errorf("%s %s: Content-Length %q for %d bytes", tt.method, tt.target, res.Header.Get("Content-Length"), len(body))
		}
		if mod, err := http.ParseTime(res.Header.Get("Last-Modified")); err != nil || !mod.Equal(time.Unix(0, 0)) {
			t.Errorf("%s %s: Last-Modified %q (%v), want the Unix epoch", tt.method, tt.target, res.Header.Get("Last-Modified"), err)
		}
	}
	if testserver.ETag("x") == testserver.ETag("y") || !strings.HasPrefix(testserver.ETag("x"), `"`) {
		t.Errorf("ETag(x) = %s, ETag(y) = %s: want distinct quoted tags", testserver.ETag("x"), testserver.ETag("y"))
	}
}

func TestS3List(t *testing.T) {
	t.Parallel()
	h := testserver.NewS3("b", map[string]string{"a": "", "a/b": "", "a/c/d": "", "a-x": "", "d/": "", "e": "", "f/1": "", "f/2": ""})
	tests := []struct {
		query string
		want  []string
		next  string
	}{
		{"", []string{"a", "a-x", "a/b", "a/c/d", "d/", "e", "f/1", "f/2"}, ""},
		{"delimiter=/", []string{"a", "a-x", "a/", "d/", "e", "f/"}, ""},
		{"prefix=a/&delimiter=/", []string{"a/b", "a/c/"}, ""},
		{"prefix=a", []string{"a", "a-x", "a/b", "a/c/d"}, ""},
		{"prefix=zz&delimiter=/", nil, ""},
		{"delimiter=/&max-keys=2", []string{"a", "a-x"}, "a-x"},
		{"delimiter=/&max-keys=2&continuation-token=a-x", []string{"a/", "d/"}, "d/"},
		{"delimiter=/&max-keys=2&continuation-token=d/", []string{"e", "f/"}, ""},
		{"max-keys=-1", []string{"a", "a-x", "a/b", "a/c/d", "d/", "e", "f/1", "f/2"}, ""},
	}
	for _, tt := range tests {
		res := get(h, http.MethodGet, "/b?list-type=2&"+tt.query)
		var page listPage
		if err := xml.NewDecoder(res.Body).Decode(&page); err != nil {
			t.Fatalf("%s: %v", tt.query, err)
		}
		if got := page.entries(); !slices.Equal(got, tt.want) || page.KeyCount != len(tt.want) ||
			page.NextContinuationToken != tt.next || page.IsTruncated != (tt.next != "") {
			t.Errorf("list %s = %q (count %d, next %q, truncated %v), want %q (next %q)", tt.query,
				got, page.KeyCount, page.NextContinuationToken, page.IsTruncated, tt.want, tt.next)
		}
	}
}

// TestStartS3 reads through the client StartS3 returns, across the
// 1000-entry pages of a listing.
func TestStartS3(t *testing.T) {
	t.Parallel()
	objects := map[string]string{}
	for i := range 2500 {
		objects["m/f"+strconv.Itoa(i)] = strconv.Itoa(i)
	}
	client := testserver.StartS3(t, "b", objects)
	ctx := t.Context()
	pages, keys := 0, 0
	for p := s3.NewListObjectsV2Paginator(client, &s3.ListObjectsV2Input{Bucket: aws.String("b"), Prefix: aws.String("m/")}); p.HasMorePages(); {
		out, err := p.NextPage(ctx)
		if err != nil {
			t.Fatal(err)
		}
		pages++
		keys += len(out.Contents)
	}
	if pages != 3 || keys != 2500 {
		t.Errorf("listed %d keys in %d pages, want 2500 in 3", keys, pages)
	}
	out, err := client.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String("b"), Key: aws.String("m/f42")})
	if err != nil {
		t.Fatal(err)
	}
	body, err := io.ReadAll(out.Body)
	out.Body.Close()
	if err != nil || string(body) != "42" || aws.ToString(out.ETag) != testserver.ETag("42") {
		t.Errorf("GetObject(m/f42) = %q (ETag %s), %v", body, aws.ToString(out.ETag), err)
	}
	if _, err := client.HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String("b"), Key: aws.String("m/none")}); err == nil {
		t.Error("HeadObject(m/none) found an object")
	}
	if _, err := client.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("b"), Key: aws.String("new"), Body: strings.NewReader("x")}); err == nil {
		t.Error("PutObject succeeded on a read-only server")
	}
}

// ExampleS3 lists the top level of a bucket the way a directory listing
// does, with "/" as the delimiter.
func ExampleS3() {
	h := testserver.NewS3("b", map[string]string{"a": "x", "a/b": "y", "c.txt": "z"})
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/b?list-type=2&delimiter=/", nil))
	var page listPage
	if err := xml.NewDecoder(rec.Body).Decode(&page); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(page.entries())
	// Output: [a a/ c.txt]
}
