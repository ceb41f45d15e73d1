package s3adapter_test

import (
	"context"
	"encoding/xml"
	"errors"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/fencefs/fencefs/backend"
	"github.com/fencefs/fencefs/s3adapter"
)

// keyServer answers the read side of the S3 API (ListObjectsV2,
// HeadObject, GetObject, path-style) from a fixed set of keys. It exists
// for key sets a POSIX-backed server such as versitygw cannot hold: an
// object next to a prefix of the same name ("a" and "a/b"), and keys
// with empty or dot segments. Everything else is tested against the real
// server.
type keyServer struct {
	bucket string
	keys   []string // sorted
}

type listResult struct {
	XMLName               xml.Name       `xml:"ListBucketResult"`
	Name                  string         `xml:"Name"`
	Prefix                string         `xml:"Prefix"`
	KeyCount              int            `xml:"KeyCount"`
	MaxKeys               int            `xml:"MaxKeys"`
	IsTruncated           bool           `xml:"IsTruncated"`
	NextContinuationToken string         `xml:"NextContinuationToken,omitempty"`
	Contents              []listObject   `xml:"Contents"`
	CommonPrefixes        []commonPrefix `xml:"CommonPrefixes"`
}

type listObject struct {
	Key          string `xml:"Key"`
	LastModified string `xml:"LastModified"`
	ETag         string `xml:"ETag"`
	Size         int    `xml:"Size"`
}

type commonPrefix struct {
	Prefix string `xml:"Prefix"`
}

func (s *keyServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	path := strings.TrimPrefix(r.URL.Path, "/"+s.bucket)
	if path == "" || path == "/" {
		s.list(w, r)
		return
	}
	key := strings.TrimPrefix(path, "/")
	if _, found := slices.BinarySearch(s.keys, key); !found {
		w.Header().Set("Content-Type", "application/xml")
		w.WriteHeader(http.StatusNotFound)
		if r.Method == http.MethodGet {
			w.Write([]byte(`<Error><Code>NoSuchKey</Code><Message>no such key</Message></Error>`))
		}
		return
	}
	w.Header().Set("ETag", `"`+strconv.Itoa(len(key))+`"`)
	w.Header().Set("Content-Length", strconv.Itoa(len(key)))
	w.Header().Set("Last-Modified", time.Unix(0, 0).UTC().Format(http.TimeFormat))
	if r.Method == http.MethodGet {
		w.Write([]byte(key))
	}
}

// list pages through the keys below prefix, 1000 entries (objects and
// common prefixes) per page, the token being the last entry returned.
func (s *keyServer) list(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	prefix, delim, token := q.Get("prefix"), q.Get("delimiter"), q.Get("continuation-token")
	maxKeys, err := strconv.Atoi(q.Get("max-keys"))
	if err != nil || maxKeys <= 0 || maxKeys > 1000 {
		maxKeys = 1000
	}
	res := listResult{Name: s.bucket, Prefix: prefix, MaxKeys: maxKeys}
	last := ""
	for _, k := range s.keys {
		if !strings.HasPrefix(k, prefix) || (token != "" && k <= token) {
			continue
		}
		entry, grouped := k, false
		if delim != "" {
			if i := strings.Index(k[len(prefix):], delim); i >= 0 {
				entry, grouped = k[:len(prefix)+i+len(delim)], true
			}
		}
		if entry == last || (token != "" && entry <= token) {
			continue
		}
		if res.KeyCount == maxKeys {
			res.IsTruncated = true
			res.NextContinuationToken = last
			break
		}
		last = entry
		res.KeyCount++
		if grouped {
			res.CommonPrefixes = append(res.CommonPrefixes, commonPrefix{entry})
		} else {
			res.Contents = append(res.Contents, listObject{k, "1970-01-01T00:00:00.000Z", `"` + strconv.Itoa(len(k)) + `"`, len(k)})
		}
	}
	w.Header().Set("Content-Type", "application/xml")
	xml.NewEncoder(w).Encode(res)
}

// keysBackend serves keys from a keyServer and returns a backend over
// them.
func keysBackend(t *testing.T, keys ...string) *s3adapter.FS {
	t.Helper()
	ks := &keyServer{bucket: "b", keys: slices.Clone(keys)}
	sort.Strings(ks.keys)
	srv := httptest.NewServer(ks)
	t.Cleanup(srv.Close)
	client := s3.New(s3.Options{
		BaseEndpoint:               aws.String(srv.URL),
		Region:                     "us-east-1",
		UsePathStyle:               true,
		RequestChecksumCalculation: aws.RequestChecksumCalculationWhenRequired,
		ResponseChecksumValidation: aws.ResponseChecksumValidationWhenRequired,
		Credentials: aws.CredentialsProviderFunc(func(context.Context) (aws.Credentials, error) {
			return aws.Credentials{AccessKeyID: "k", SecretAccessKey: "s"}, nil
		}),
	})
	f, err := s3adapter.New(client, "b", "", s3adapter.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// TestObjectAndPrefix pins the meaning of a key that is both an object
// and a prefix: the directory wins everywhere, and the object cannot be
// reached (never aliased).
func TestObjectAndPrefix(t *testing.T) {
	ctx := t.Context()
	f := keysBackend(t, "a", "a/b", "a-x", "a.txt", "d", "d/", "e")

	if got, want := listNames(t, f, "."), []string{"a-x", "a.txt", "a/", "d/", "e"}; !slices.Equal(got, want) {
		t.Errorf("List(.) = %q, want %q", got, want)
	}
	if got, want := listNames(t, f, "a"), []string{"b"}; !slices.Equal(got, want) {
		t.Errorf("List(a) = %q, want %q", got, want)
	}
	for _, name := range []string{"a", "d"} {
		fi, err := f.Stat(ctx, name)
		if err != nil || !fi.IsDir() {
			t.Errorf("Stat(%q) = %+v, %v; want a directory", name, fi, err)
		}
		r, err := f.OpenRead(ctx, name)
		if err == nil {
			r.Close()
		}
		if !errors.Is(err, backend.ErrIsDir) {
			t.Errorf("OpenRead(%q) error = %v, want backend.ErrIsDir", name, err)
		}
	}
	if got, err := backend.ReadFile(ctx, f, "a/b"); err != nil || string(got) != "a/b" {
		t.Errorf("ReadFile(a/b) = %q, %v", got, err)
	}
	if fi, err := f.Stat(ctx, "e"); err != nil || fi.IsDir() || fi.Size != 1 {
		t.Errorf("Stat(e) = %+v, %v; want a 1-byte file", fi, err)
	}
	if got, want := walkNames(t, f, "."), []string{"a-x", "a.txt", "a/", "a/b", "d/", "e"}; !slices.Equal(got, want) {
		t.Errorf("Walk(.) = %q, want %q", got, want)
	}
}

// TestNonCanonicalKeys checks keys with empty and dot segments, which
// versitygw normalizes away: they are skipped, never shown as another
// path.
func TestNonCanonicalKeys(t *testing.T) {
	f := keysBackend(t, "/lead", "//x", "x//y", "x/./z", "x/../w", "x/ok", "x/.", "..", "./p", "q/")
	if got, want := listNames(t, f, "."), []string{"q/", "x/"}; !slices.Equal(got, want) {
		t.Errorf("List(.) = %q, want %q", got, want)
	}
	if got, want := listNames(t, f, "x"), []string{"ok"}; !slices.Equal(got, want) {
		t.Errorf("List(x) = %q, want %q", got, want)
	}
	if got, want := walkNames(t, f, "."), []string{"q/", "x/", "x/ok"}; !slices.Equal(got, want) {
		t.Errorf("Walk(.) = %q, want %q", got, want)
	}
	if _, err := f.Stat(t.Context(), "lead"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Stat(lead) error = %v, want fs.ErrNotExist (the key is /lead)", err)
	}
}

// TestListPagesOfMixedEntries lists a directory whose 2500 entries are
// files and directories interleaved across page boundaries.
func TestListPagesOfMixedEntries(t *testing.T) {
	var keys []string
	for i := range 1250 {
		keys = append(keys, "m/f"+strconv.Itoa(i), "m/g"+strconv.Itoa(i)+"/x")
	}
	f := keysBackend(t, keys...)
	entries, err := f.List(t.Context(), "m")
	if err != nil {
		t.Fatal(err)
	}
	dirs := 0
	for _, e := range entries {
		if e.IsDir() {
			dirs++
		}
	}
	if len(entries) != 2500 || dirs != 1250 {
		t.Errorf("List(m) gave %d entries (%d directories), want 2500 (1250)", len(entries), dirs)
	}
}

func walkNames(t *testing.T, f *s3adapter.FS, dir string) []string {
	t.Helper()
	var names []string
	err := f.Walk(t.Context(), dir, func(name string, e backend.DirEntry) error {
		if e.IsDir() {
			name += "/"
		}
		names = append(names, name)
		return nil
	})
	if err != nil {
		t.Fatalf("Walk(%q): %v", dir, err)
	}
	slices.Sort(names)
	return names
}
