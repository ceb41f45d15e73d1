package security

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/xml"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/fencefs/fencefs/s3adapter"
)

// kindS3Keys is an S3 world served by memS3, for keys no real server
// used here can hold.
const kindS3Keys = "s3keys"

// memS3 serves the read side of the S3 API (ListObjectsV2, HeadObject,
// GetObject; path-style, one bucket) from fixed objects. Writes are not
// served: the backends over it are read-only.
type memS3 struct {
	bucket  string
	objects map[string]string
}

type xmlList struct {
	XMLName               xml.Name    `xml:"ListBucketResult"`
	Name                  string      `xml:"Name"`
	Prefix                string      `xml:"Prefix"`
	KeyCount              int         `xml:"KeyCount"`
	MaxKeys               int         `xml:"MaxKeys"`
	IsTruncated           bool        `xml:"IsTruncated"`
	NextContinuationToken string      `xml:"NextContinuationToken,omitempty"`
	Contents              []xmlObject `xml:"Contents"`
	CommonPrefixes        []xmlPrefix `xml:"CommonPrefixes"`
}

type xmlObject struct {
	Key          string `xml:"Key"`
	LastModified string `xml:"LastModified"`
	ETag         string `xml:"ETag"`
	Size         int    `xml:"Size"`
}

type xmlPrefix struct {
	Prefix string `xml:"Prefix"`
}

func etag(data string) string {
	sum := sha256.Sum256([]byte(data))
	return `"` + hex.EncodeToString(sum[:16]) + `"`
}

func (m *memS3) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	rest, ok := strings.CutPrefix(r.URL.Path, "/"+m.bucket)
	switch {
	case !ok:
		http.Error(w, "no such bucket", http.StatusNotFound)
	case r.Method != http.MethodGet && r.Method != http.MethodHead:
		http.Error(w, "read-only", http.StatusForbidden)
	case rest == "" || rest == "/":
		m.list(w, r)
	default:
		m.object(w, r, strings.TrimPrefix(rest, "/"))
	}
}

func (m *memS3) object(w http.ResponseWriter, r *http.Request, key string) {
	data, ok := m.objects[key]
	if !ok {
		w.Header().Set("Content-Type", "application/xml")
		w.WriteHeader(http.StatusNotFound)
		if r.Method == http.MethodGet {
			fmt.Fprint(w, `<Error><Code>NoSuchKey</Code><Message>no such key</Message></Error>`)
		}
		return
	}
	w.Header().Set("ETag", etag(data))
	w.Header().Set("Last-Modified", time.Unix(0, 0).UTC().Format(http.TimeFormat))
	w.Header().Set("Content-Length", strconv.Itoa(len(data)))
	if r.Method == http.MethodGet {
		fmt.Fprint(w, data)
	}
}

// list answers ListObjectsV2 with up to max-keys entries per page; the
// continuation token is the last entry returned.
func (m *memS3) list(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	prefix, delim, token := q.Get("prefix"), q.Get("delimiter"), q.Get("continuation-token")
	maxKeys, err := strconv.Atoi(q.Get("max-keys"))
	if err != nil || maxKeys <= 0 || maxKeys > 1000 {
		maxKeys = 1000
	}
	keys := make([]string, 0, len(m.objects))
	for k := range m.objects {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	res := xmlList{Name: m.bucket, Prefix: prefix, MaxKeys: maxKeys}
	last := ""
	for _, k := range keys {
		if !strings.HasPrefix(k, prefix) {
			continue
		}
		entry, grouped := k, false
		if i := strings.Index(k[len(prefix):], delim); delim != "" && i >= 0 {
			entry, grouped = k[:len(prefix)+i+len(delim)], true
		}
		if entry == last || (token != "" && entry <= token) {
			continue
		}
		if res.KeyCount == maxKeys {
			res.IsTruncated, res.NextContinuationToken = true, last
			break
		}
		last = entry
		res.KeyCount++
		if grouped {
			res.CommonPrefixes = append(res.CommonPrefixes, xmlPrefix{entry})
		} else {
			res.Contents = append(res.Contents, xmlObject{k, "1970-01-01T00:00:00.000Z", etag(m.objects[k]), len(m.objects[k])})
		}
	}
	w.Header().Set("Content-Type", "application/xml")
	xml.NewEncoder(w).Encode(res)
}

// newMemS3World serves layout l (files and directory markers) from a
// memS3 and returns a read-only S3 world over its "ws".
func newMemS3World(t *testing.T, s secrets, l layout) *world {
	t.Helper()
	m := &memS3{bucket: "b", objects: map[string]string{}}
	for name, n := range l {
		switch n.kind {
		case nFile:
			m.objects[name] = n.data
		case nDir:
			m.objects[name+"/"] = ""
		default:
			t.Fatalf("memS3 cannot hold %s", name)
		}
	}
	srv := httptest.NewServer(m)
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
	b, err := s3adapter.New(client, "b", "ws", s3adapter.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	w := &world{kind: kindS3Keys, s: s, b: b, absParent: "", root: "ws/", cheapSnap: true}
	w.snap = func(t *testing.T) snapshot {
		out := snapshot{}
		for k, v := range m.objects {
			out[k] = etag(v)
		}
		return out
	}
	return w
}
