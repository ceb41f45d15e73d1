package containers

import (
	"fmt"
	"os"
	"strings"
	"testing"
)

// recorder is a testing.TB that records Skip and Fatal instead of
// stopping the test.
type recorder struct {
	testing.TB
	skipped, failed string
}

func (r *recorder) Helper() {}

func (r *recorder) Skipf(format string, args ...any) { r.skipped = fmt.Sprintf(format, args...) }

func (r *recorder) Fatalf(format string, args ...any) { r.failed = fmt.Sprintf(format, args...) }

func TestUnavailable(t *testing.T) {
	tests := []struct {
		require  string
		wantSkip bool
	}{
		{"", true},
		{"0", true},
		{"1", false},
	}
	for _, tt := range tests {
		t.Run("require="+tt.require, func(t *testing.T) {
			t.Setenv(EnvRequire, tt.require)
			r := &recorder{TB: t}
			unavailable(r, "Docker is not reachable: %s", "no socket")
			msg := r.failed
			if tt.wantSkip {
				msg = r.skipped
			}
			if (r.skipped != "") != tt.wantSkip || (r.failed != "") == tt.wantSkip {
				t.Fatalf("skipped %q, failed %q; want skip=%v", r.skipped, r.failed, tt.wantSkip)
			}
			for _, want := range []string{"Docker is not reachable: no socket", EnvRequire} {
				if !strings.Contains(msg, want) {
					t.Errorf("message %q does not mention %q", msg, want)
				}
			}
			if msg != strings.ToUpper(msg[:10])+msg[10:] {
				t.Errorf("message %q does not start loudly", msg)
			}
		})
	}
}

func TestImages(t *testing.T) {
	t.Setenv(EnvS3Image, "")
	t.Setenv(EnvSFTPImage, "")
	if S3Image() != DefaultS3Image || SFTPImage() != DefaultSFTPImage {
		t.Errorf("defaults: %q, %q", S3Image(), SFTPImage())
	}
	t.Setenv(EnvS3Image, "example/minio:1")
	t.Setenv(EnvSFTPImage, "example/sshd:2")
	if S3Image() != "example/minio:1" || SFTPImage() != "example/sshd:2" {
		t.Errorf("from the environment: %q, %q", S3Image(), SFTPImage())
	}
}

func TestSetTestcontainersDefaults(t *testing.T) {
	t.Setenv("TESTCONTAINERS_RYUK_DISABLED", "false")
	t.Setenv("TESTCONTAINERS_HOST_OVERRIDE", "")
	SetTestcontainersDefaults()
	if got := os.Getenv("TESTCONTAINERS_RYUK_DISABLED"); got != "false" {
		t.Errorf("TESTCONTAINERS_RYUK_DISABLED = %q; an exported value must win", got)
	}
	if got := os.Getenv("TESTCONTAINERS_HOST_OVERRIDE"); got != "" {
		t.Errorf("TESTCONTAINERS_HOST_OVERRIDE = %q; an exported (empty) value must win", got)
	}
}

func TestFreePort(t *testing.T) {
	p, err := FreePort()
	if err != nil || p <= 0 || p > 65535 {
		t.Errorf("FreePort() = %d, %v", p, err)
	}
}
