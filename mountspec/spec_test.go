package mountspec

import (
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/fencefs/fencefs/s3adapter"
)

// An ed25519 public key whose base64 holds "+" and "/", which must survive parsing.
const testHostKey = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIClyJJRF008ev6AMTZ4SF+hXEOXnCI/n6FsO9FQIjWPk"

func TestParse(t *testing.T) {
	tests := []struct {
		spec string
		want Spec
	}{
		{"local:/srv/ws", Spec{Kind: KindLocal, Dir: "/srv/ws"}},
		{"local:./ws:ro", Spec{Kind: KindLocal, Dir: "./ws", ReadOnly: true}},
		{"local:C:\\x", Spec{Kind: KindLocal, Dir: "C:\\x"}},
		{"local:a:ro:ro", Spec{Kind: KindLocal, Dir: "a:ro", ReadOnly: true}},
		{"s3://bucket", Spec{Kind: KindS3, S3: S3Spec{Bucket: "bucket"}}},
		{"s3://bucket/", Spec{Kind: KindS3, S3: S3Spec{Bucket: "bucket"}}},
		{"s3://bucket/tenants/t1/", Spec{Kind: KindS3, S3: S3Spec{Bucket: "bucket", Prefix: "tenants/t1"}}},
		{"s3://my.bucket-1/p?endpoint=http://127.0.0.1:7070&region=eu-west-1&path_style=1&ro=1",
			Spec{Kind: KindS3, ReadOnly: true, S3: S3Spec{Bucket: "my.bucket-1", Prefix: "p", Endpoint: "http://127.0.0.1:7070", Region: "eu-west-1", PathStyle: true}}},
		{"s3://b?ro=0&path_style=true", Spec{Kind: KindS3, S3: S3Spec{Bucket: "b", PathStyle: true}}},
		{"s3://b?timeout=5s", Spec{Kind: KindS3, Timeout: 5 * time.Second, S3: S3Spec{Bucket: "b"}}},
		{"sftp://a@h?key=k&timeout=1m30s", Spec{Kind: KindSFTP, Timeout: 90 * time.Second, SFTP: SFTPSpec{User: "a", Host: "h", KeyFile: "k"}}},
		{"sftp://alice@files.example.com/srv/data?key=/home/a/.ssh/id_ed25519&known_hosts=/home/a/.ssh/known_hosts",
			Spec{Kind: KindSFTP, SFTP: SFTPSpec{User: "alice", Host: "files.example.com", Root: "/srv/data", KeyFile: "/home/a/.ssh/id_ed25519", KnownHostsFile: "/home/a/.ssh/known_hosts"}}},
		{"sftp://bob@127.0.0.1:2222?password_env=SFTP_PASS&insecure=1&ro=1",
			Spec{Kind: KindSFTP, ReadOnly: true, SFTP: SFTPSpec{User: "bob", Host: "127.0.0.1", Port: 2222, PasswordEnv: "SFTP_PASS", Insecure: true}}},
		{"sftp://bob@[::1]:22/~/work?password_env=P", Spec{Kind: KindSFTP, SFTP: SFTPSpec{User: "bob", Host: "::1", Port: 22, Root: "work", PasswordEnv: "P"}}},
		{"sftp://bob@h/~?password_env=P", Spec{Kind: KindSFTP, SFTP: SFTPSpec{User: "bob", Host: "h", Root: "", PasswordEnv: "P"}}},
		{"sftp://me%40corp@h/?key=k", Spec{Kind: KindSFTP, SFTP: SFTPSpec{User: "me@corp", Host: "h", Root: "/", KeyFile: "k"}}},
		{"sftp://a@h?key=k&host_key=" + strings.ReplaceAll(testHostKey, " ", "%20"),
			Spec{Kind: KindSFTP, SFTP: SFTPSpec{User: "a", Host: "h", KeyFile: "k", HostKey: testHostKey}}},
		{"sftp://a@h?key=k&host_key=" + strings.Fields(testHostKey)[1],
			Spec{Kind: KindSFTP, SFTP: SFTPSpec{User: "a", Host: "h", KeyFile: "k", HostKey: testHostKey}}},
		{"sftp://a@h?key=k&host_key=" + testHostKey + " comment",
			Spec{Kind: KindSFTP, SFTP: SFTPSpec{User: "a", Host: "h", KeyFile: "k", HostKey: testHostKey}}},
	}
	for _, tt := range tests {
		t.Run(tt.spec, func(t *testing.T) {
			got, err := Parse(tt.spec)
			if err != nil {
				t.Fatalf("Parse(%q): %v", tt.spec, err)
			}
			if got != tt.want {
				t.Fatalf("Parse(%q) =\n%+v, want\n%+v", tt.spec, got, tt.want)
			}
			again, err := Parse(got.String())
			if err != nil || again != got {
				t.Fatalf("String() = %q parses to %+v, %v; want %+v", got.String(), again, err, got)
			}
		})
	}
}

func TestParseErrors(t *testing.T) {
	tests := []struct{ spec, want string }{
		{"", "unknown mount spec"},
		{"/srv/ws", "unknown mount spec"},
		{"file:///x", "unknown mount spec"},
		{"local:", "directory is empty"},
		{"local::ro", "directory is empty"},
		{"local:a\nb", "control character"},
		{"s3://", "bucket name is empty"},
		{"s3:///p", "bucket name is empty"},
		{"s3://key:secret@bucket/p", "credentials are not accepted"},
		{"s3://bu cket", "bucket name"},
		{"s3://b/.", "not a canonical relative path"},
		{"s3://b/a/../c", "not a canonical relative path"},
		{"s3://b/a//c", "not a canonical relative path"},
		{"s3://b/~x", "not a canonical relative path"},
		{"s3://b/" + strings.Repeat("p", s3adapter.MaxKeyBytes), "too long"},
		{"s3://b?endpoint=ftp://x", "endpoint"},
		{"s3://b?endpoint=", "endpoint"},
		{"s3://b?region=", "region is empty"},
		{"s3://b?ro=maybe", "ro: \"maybe\" is not a boolean"},
		{"s3://b?ro", "has no value"},
		{"s3://b?ro=1&", "has no value"},
		{"s3://b?bogus=1", `unknown parameter "bogus"; valid parameters: endpoint, path_style, region, ro, timeout`},
		{"s3://b?timeout=5", `timeout: "5" is not a duration`},
		{"s3://b?timeout=-1s", "timeout: must be > 0"},
		{"sftp://a@h/d?key=k&timeout=0s", "timeout: must be > 0"},
		{"s3://b?ro=1&ro=0", "given twice"},
		{"s3://b?region=%zz", "invalid percent-encoding"},
		{"sftp://host/dir?key=k", "user is missing"},
		{"sftp://a:pw@host/dir?key=k", "passwords are not accepted"},
		{"sftp://@host?key=k", "invalid user"},
		{"sftp://a@?key=k", "host is empty"},
		{"sftp://a@:22?key=k", "host is empty"},
		{"sftp://a@h:?key=k", "invalid port"},
		{"sftp://a@h:0?key=k", "invalid port"},
		{"sftp://a@h:65536?key=k", "invalid port"},
		{"sftp://a@h:x?key=k", "invalid port"},
		{"sftp://a@::1?key=k", "brackets"},
		{"sftp://a@[::1?key=k", "missing ']'"},
		{"sftp://a@[::1]x?key=k", "invalid host"},
		{"sftp://a@h/d", "no credentials"},
		{"sftp://a@h/d?password_env=1X", "not an environment variable name"},
		{"sftp://a@h/d?password_env=A-B", "not an environment variable name"},
		{"sftp://a@h/d?key=k&host_key=AAAA", "host_key: not a public key"},
		{"sftp://a@h/d?key=k&insecure=1&known_hosts=f", "cannot be combined"},
		{"sftp://a@h/d?key=k&password=x", `unknown parameter "password"`},
	}
	for _, tt := range tests {
		t.Run(tt.spec, func(t *testing.T) {
			got, err := Parse(tt.spec)
			if err == nil {
				t.Fatalf("Parse(%q) = %+v, want an error containing %q", tt.spec, got, tt.want)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Parse(%q) error %q, want it to contain %q", tt.spec, err, tt.want)
			}
		})
	}
}

func TestSFTPAddr(t *testing.T) {
	tests := []struct {
		s    SFTPSpec
		want string
	}{
		{SFTPSpec{Host: "h"}, "h:22"},
		{SFTPSpec{Host: "h", Port: 2222}, "h:2222"},
		{SFTPSpec{Host: "::1", Port: 2222}, "[::1]:2222"},
	}
	for _, tt := range tests {
		if got := tt.s.Addr(); got != tt.want {
			t.Errorf("%+v.Addr() = %q, want %q", tt.s, got, tt.want)
		}
	}
}

// FuzzParse checks that the parser never panics, that what it
// accepts is well formed, and that String renders a spec that parses
// back to the same value.
func FuzzParse(f *testing.F) {
	for _, s := range []string{
		"local:/srv/ws", "local:ws:ro", "s3://b/p?endpoint=http://h:1&region=r&path_style=1&ro=1",
		"sftp://u@h:22/~/d?password_env=P&insecure=1&timeout=3s", "sftp://u%3Ax@[::1]/abs?key=k%26&known_hosts=%25",
		"sftp://a@h?key=k&host_key=" + strings.Fields(testHostKey)[1], "s3://b/a b?region=a%20b",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, spec string) {
		m, err := Parse(spec)
		if err != nil {
			return
		}
		switch m.Kind {
		case KindLocal:
			if m.Dir == "" {
				t.Fatalf("%q: empty local dir", spec)
			}
		case KindS3:
			if m.S3.Bucket == "" {
				t.Fatalf("%q: empty bucket", spec)
			}
			// The constructor takes every prefix the parser does.
			if _, err := s3adapter.New(s3.New(s3.Options{Region: "us-east-1"}), m.S3.Bucket, m.S3.Prefix, s3adapter.Options{}); err != nil {
				t.Fatalf("%q parsed to %+v, which s3adapter.New refuses: %v", spec, m.S3, err)
			}
		case KindSFTP:
			if m.SFTP.User == "" || m.SFTP.Host == "" || m.SFTP.PasswordEnv == "" && m.SFTP.KeyFile == "" {
				t.Fatalf("%q: incomplete sftp spec %+v", spec, m.SFTP)
			}
		default:
			t.Fatalf("%q: kind %q", spec, m.Kind)
		}
		again, err := Parse(m.String())
		if err != nil {
			t.Fatalf("%q -> %+v -> %q: %v", spec, m, m.String(), err)
		}
		if again != m {
			t.Fatalf("%q -> %+v -> %q -> %+v", spec, m, m.String(), again)
		}
	})
}

// TestParseS3PrefixAsNew holds the parser, which links no AWS SDK and so
// spells S3's key limits itself, to s3adapter.New's answers at the limits.
func TestParseS3PrefixAsNew(t *testing.T) {
	client := s3.New(s3.Options{Region: "us-east-1"})
	var prefixes []string
	for n := s3adapter.MaxKeyBytes - 4; n <= s3adapter.MaxKeyBytes+1; n++ {
		prefixes = append(prefixes, strings.Repeat("p", n), "a/"+strings.Repeat("p", n-2))
	}
	prefixes = append(prefixes, strings.Repeat("n", s3adapter.MaxNameBytes+1), ".", "a/../b", "~x")
	for _, p := range prefixes {
		_, perr := Parse("s3://b/" + p)
		_, nerr := s3adapter.New(client, "b", p, s3adapter.Options{})
		if (perr == nil) != (nerr == nil) {
			t.Errorf("prefix of %d bytes: Parse error %v, New error %v", len(p), perr, nerr)
		}
	}
}
