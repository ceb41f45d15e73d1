package gcsadapter

import (
	"strings"
	"testing"
	"time"
)

func TestParseMountSpec(t *testing.T) {
	tests := []struct {
		spec string
		want MountSpec
	}{
		{"gs://agents", MountSpec{Bucket: "agents"}},
		{"gs://agents/", MountSpec{Bucket: "agents"}},
		{"gs://agents/tenant1", MountSpec{Bucket: "agents", Prefix: "tenant1"}},
		{"gs://agents/a/b/", MountSpec{Bucket: "agents", Prefix: "a/b"}},
		{"gs://my_bucket.example-1/p?ro=1", MountSpec{Bucket: "my_bucket.example-1", Prefix: "p", ReadOnly: true}},
		{"gs://b/p?endpoint=http://127.0.0.1:4443&timeout=500ms", MountSpec{Bucket: "b", Prefix: "p", Endpoint: "http://127.0.0.1:4443", Timeout: 500 * time.Millisecond}},
		{"gs://b?endpoint=http%3A%2F%2F127.0.0.1%3A4443", MountSpec{Bucket: "b", Endpoint: "http://127.0.0.1:4443"}},
	}
	for _, tt := range tests {
		got, err := ParseMountSpec(tt.spec)
		if err != nil || got != tt.want {
			t.Errorf("ParseMountSpec(%q) = %+v, %v; want %+v", tt.spec, got, err, tt.want)
			continue
		}
		if back, err := ParseMountSpec(got.String()); err != nil || back != got {
			t.Errorf("ParseMountSpec(%q) = %+v, %v; want %+v", got.String(), back, err, got)
		}
	}
}

func TestParseMountSpecRefusals(t *testing.T) {
	tests := []struct{ spec, want string }{
		{"s3://b", "does not start with gs://"},
		{"gs://", "bucket name is empty"},
		{"gs://key:secret@b/p", "credentials are not accepted"},
		{"gs://Upper", "lower-case"},
		{"gs://b/.", "not a canonical relative path"},
		{"gs://b/./", "not a canonical relative path"},
		{"gs://b/../x", "not a canonical relative path"},
		{"gs://b/a//c", "not a canonical relative path"},
		{"gs://b/~x", "not a canonical relative path"},
		{"gs://b/p\x00", "control character"},
		{"gs://b/p\n", "control character"},
		{"gs://b?region=x", `unknown parameter "region"; valid parameters: endpoint, ro, timeout`},
		{"gs://b?ro=1&ro=0", "given twice"},
		{"gs://b?ro", "has no value"},
		{"gs://b?ro=maybe", "not a boolean"},
		{"gs://b?timeout=-1s", "not a positive duration"},
		{"gs://b?timeout=soon", "not a positive duration"},
		{"gs://b?endpoint=ftp://h", "not an http:// or https:// URL"},
		{"gs://b?endpoint=http://u:p@h", "not an http:// or https:// URL"},
		{"gs://b?endpoint=%zz", "invalid percent-encoding"},
		{"gs://b?endpoint=http://h/%0a", "control character in value"},
		{"gs://b/" + strings.Repeat("p", MaxKeyBytes), "too long"},
	}
	for _, tt := range tests {
		_, err := ParseMountSpec(tt.spec)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("ParseMountSpec(%q) error = %v, want one containing %q", tt.spec, err, tt.want)
		}
	}
}

// FuzzParseMountSpec checks that a spec is refused or parses to one whose
// canonical form parses back to it, with a prefix New accepts.
func FuzzParseMountSpec(f *testing.F) {
	f.Add("gs://agents/tenant1?endpoint=http://127.0.0.1:4443&ro=1&timeout=30s")
	f.Add("gs://b/a/b/?ro=0")
	f.Add("gs://b?endpoint=http%3A%2F%2Fh")
	f.Fuzz(func(t *testing.T, spec string) {
		m, err := ParseMountSpec(spec)
		if err != nil {
			return
		}
		back, err := ParseMountSpec(m.String())
		if err != nil || back != m {
			t.Fatalf("ParseMountSpec(%q) = %+v; its form %q parses to %+v, %v", spec, m, m.String(), back, err)
		}
		if _, err := New(newTestClient(t), m.Bucket, m.Prefix, Options{}); err != nil {
			t.Fatalf("ParseMountSpec(%q) gave %+v, which New refuses: %v", spec, m, err)
		}
	})
}
