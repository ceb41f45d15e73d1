package testserver

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/xml"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
)

// maxKeys is the most entries one ListObjectsV2 page holds, as on AWS.
const maxKeys = 1000

// Every object was last modified at the Unix epoch, written as HTTP
// headers (Last-Modified) and as listings (ISO 8601) write it.
const (
	epochHTTP = "Thu, 01 Jan 1970 00:00:00 GMT"
	epochISO  = "1970-01-01T00:00:00.000Z"
)

// S3 is an http.Handler answering the read side of the S3 API
// (ListObjectsV2, HeadObject, GetObject with If-Match; path-style, one
// bucket) from fixed objects. It holds any key, including those a POSIX-backed server
// refuses or normalizes: "a" next to "a/b", empty and dot segments.
// Every other method is refused with 403 Forbidden.
type S3 struct {
	bucket  string
	objects map[string]string
	keys    []string // the keys of objects, sorted
}

// NewS3 returns a server of bucket holding objects (key to content).
// It keeps a copy of objects, so the caller may change the map later.
func NewS3(bucket string, objects map[string]string) *S3 {
	m := maps.Clone(objects)
	return &S3{bucket: bucket, objects: m, keys: slices.Sorted(maps.Keys(m))}
}

// ETag returns the ETag S3 serves for an object holding content: a
// quoted hex digest, so that equal contents have equal ETags.
func ETag(content string) string {
	sum := sha256.Sum256([]byte(content))
	return `"` + hex.EncodeToString(sum[:16]) + `"`
}

// StartS3 serves objects of bucket (see S3) over HTTP on 127.0.0.1 until
// t ends and returns a path-style client for it with static credentials
// and checksums only where required.
func StartS3(t testing.TB, bucket string, objects map[string]string) *s3.Client {
	t.Helper()
	srv := httptest.NewServer(NewS3(bucket, objects))
	t.Cleanup(srv.Close)
	return s3.New(s3.Options{
		BaseEndpoint:               aws.String(srv.URL),
		Region:                     "us-east-1",
		UsePathStyle:               true,
		RequestChecksumCalculation: aws.RequestChecksumCalculationWhenRequired,
		ResponseChecksumValidation: aws.ResponseChecksumValidationWhenRequired,
		Credentials: aws.CredentialsProviderFunc(func(context.Context) (aws.Credentials, error) {
			return aws.Credentials{AccessKeyID: "k", SecretAccessKey: "s"}, nil
		}),
	})
}

// ServeHTTP answers one request: a GET of the bucket lists it, a GET or
// HEAD of a key serves that object.
func (s *S3) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	rest, ok := strings.CutPrefix(r.URL.Path, "/"+s.bucket)
	switch {
	case !ok || (rest != "" && rest[0] != '/'):
		http.Error(w, "no such bucket", http.StatusNotFound)
	case r.Method != http.MethodGet && r.Method != http.MethodHead:
		http.Error(w, "read-only", http.StatusForbidden)
	case rest == "" || rest == "/":
		s.list(w, r)
	default:
		s.object(w, r, rest[1:])
	}
}

func (s *S3) object(w http.ResponseWriter, r *http.Request, key string) {
	data, ok := s.objects[key]
	if !ok {
		w.Header().Set("Content-Type", "application/xml")
		w.WriteHeader(http.StatusNotFound)
		if r.Method == http.MethodGet {
			io.WriteString(w, `<Error><Code>NoSuchKey</Code><Message>no such key</Message></Error>`)
		}
		return
	}
	if m := r.Header.Get("If-Match"); m != "" && m != "*" && m != ETag(data) {
		// As S3 does, so that a client's conditional read is checked.
		w.Header().Set("Content-Type", "application/xml")
		w.WriteHeader(http.StatusPreconditionFailed)
		if r.Method == http.MethodGet {
			io.WriteString(w, `<Error><Code>PreconditionFailed</Code><Message>At least one of the pre-conditions you specified did not hold</Message></Error>`)
		}
		return
	}
	w.Header().Set("ETag", ETag(data))
	w.Header().Set("Last-Modified", epochHTTP)
	w.Header().Set("Content-Length", strconv.Itoa(len(data)))
	if r.Method == http.MethodGet {
		io.WriteString(w, data)
	}
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

// list answers ListObjectsV2 with up to max-keys entries (objects and
// common prefixes) per page. The continuation token is the last entry
// returned, which needs no state on the server.
func (s *S3) list(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	prefix, delim, token := q.Get("prefix"), q.Get("delimiter"), q.Get("continuation-token")
	limit, err := strconv.Atoi(q.Get("max-keys"))
	if err != nil || limit <= 0 || limit > maxKeys {
		limit = maxKeys
	}
	res := listResult{Name: s.bucket, Prefix: prefix, MaxKeys: limit}
	last := ""
	for _, k := range s.keys {
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
		if res.KeyCount == limit {
			res.IsTruncated, res.NextContinuationToken = true, last
			break
		}
		last = entry
		res.KeyCount++
		if grouped {
			res.CommonPrefixes = append(res.CommonPrefixes, commonPrefix{entry})
		} else {
			res.Contents = append(res.Contents, listObject{k, epochISO, ETag(s.objects[k]), len(s.objects[k])})
		}
	}
	w.Header().Set("Content-Type", "application/xml")
	xml.NewEncoder(w).Encode(res)
}
