package gcsadapter

import (
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/fencefs/fencefs/objstore"
)

// Scheme is the scheme of a Cloud Storage mount spec, "gs" as in gsutil's
// and gcloud's URLs.
const Scheme = "gs"

// MountSpec is a parsed Cloud Storage mount spec: what is needed to open
// the backend. Credentials are never part of it; they come from the SDK's
// chain.
type MountSpec struct {
	// Bucket names the bucket.
	Bucket string
	// Prefix is the object-name prefix of the mount's root, without
	// slashes at either end ("" for the whole bucket).
	Prefix string
	// Endpoint is the base URL of an emulator; empty for Cloud Storage
	// (or the emulator STORAGE_EMULATOR_HOST names).
	Endpoint string
	// ReadOnly refuses every change.
	ReadOnly bool
	// Timeout, when not 0, bounds each request to the storage.
	Timeout time.Duration
}

// ParseMountSpec parses a Cloud Storage mount spec:
//
//	gs://BUCKET[/PREFIX][?endpoint=URL&ro=1&timeout=D]
//
// BUCKET is a bucket name (lower-case letters, digits, '-', '_' and '.');
// PREFIX, taken literally, is a canonical relative path (slashes at its
// ends are dropped). endpoint is the http:// or https:// base URL of an
// emulator ("http://127.0.0.1:4443"), whose requests carry no
// credentials; ro=1 makes the mount read-only; timeout bounds each request
// (a Go duration such as "30s"). Parameter values are percent-decoded
// ("+" stays "+"), each key may appear once, and unknown keys are
// refused, as are control characters and credentials ("user@bucket"):
// credentials come from the SDK's chain (GOOGLE_APPLICATION_CREDENTIALS,
// gcloud's application default credentials, the metadata server).
func ParseMountSpec(spec string) (MountSpec, error) {
	if strings.ContainsFunc(spec, isControl) {
		return MountSpec{}, errors.New("gs: control character in mount spec")
	}
	rest, ok := strings.CutPrefix(spec, Scheme+"://")
	if !ok {
		return MountSpec{}, fmt.Errorf("gs: mount spec %q does not start with gs://", spec)
	}
	rest, query, _ := strings.Cut(rest, "?")
	bucket, prefix, _ := strings.Cut(rest, "/")
	if err := checkBucket(bucket); err != nil {
		return MountSpec{}, err
	}
	prefix = strings.Trim(prefix, "/")
	if _, err := objstore.CheckPrefix(prefix, KeyLimits()); err != nil {
		return MountSpec{}, fmt.Errorf("gs: %w", err)
	}
	m := MountSpec{Bucket: bucket, Prefix: prefix}
	set := map[string]func(string) error{
		"endpoint": func(v string) error {
			u, err := url.Parse(v)
			if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil {
				return fmt.Errorf("endpoint: %q is not an http:// or https:// URL without credentials", v)
			}
			m.Endpoint = v
			return nil
		},
		"ro": func(v string) error {
			b, err := strconv.ParseBool(v)
			if err != nil {
				return fmt.Errorf("ro: %q is not a boolean (1 or 0)", v)
			}
			m.ReadOnly = b
			return nil
		},
		"timeout": func(v string) error {
			d, err := time.ParseDuration(v)
			if err != nil || d <= 0 {
				return fmt.Errorf("timeout: %q is not a positive duration (such as 30s)", v)
			}
			m.Timeout = d
			return nil
		},
	}
	if err := parseParams(query, set); err != nil {
		return MountSpec{}, err
	}
	return m, nil
}

// Config returns the configuration Open takes for the mount (its
// Timeout is the caller's to apply, to each request's context or the
// client's HTTP transport).
func (m MountSpec) Config() Config {
	return Config{Bucket: m.Bucket, Prefix: m.Prefix, Endpoint: m.Endpoint, Options: Options{ReadOnly: m.ReadOnly}}
}

// String returns the spec in its canonical form, which ParseMountSpec
// parses back to m.
func (m MountSpec) String() string {
	s := Scheme + "://" + m.Bucket
	if m.Prefix != "" {
		s += "/" + m.Prefix
	}
	var q []string
	if m.Endpoint != "" {
		q = append(q, "endpoint="+url.PathEscape(m.Endpoint))
	}
	if m.ReadOnly {
		q = append(q, "ro=1")
	}
	if m.Timeout != 0 {
		q = append(q, "timeout="+m.Timeout.String())
	}
	if len(q) > 0 {
		s += "?" + strings.Join(q, "&")
	}
	return s
}

func isControl(r rune) bool { return r < 0x20 || r == 0x7f }

// checkBucket accepts the characters Cloud Storage bucket names are made
// of (https://cloud.google.com/storage/docs/buckets#naming); the service
// judges the rest. Credentials ("key@bucket") are refused so that they
// never end up in shell histories or process lists.
func checkBucket(b string) error {
	if b == "" {
		return errors.New("gs: the bucket name is empty (gs://BUCKET/PREFIX)")
	}
	if strings.ContainsAny(b, "@:") {
		return errors.New("gs: credentials are not accepted in the spec; they come from the Google Cloud SDK's chain (GOOGLE_APPLICATION_CREDENTIALS, application default credentials, the metadata server)")
	}
	for _, c := range b {
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '.' || c == '-' || c == '_') {
			return fmt.Errorf("gs: bucket name %q holds %q; use lower-case letters, digits, '.', '-' and '_'", b, c)
		}
	}
	return nil
}

// parseParams parses "k=v&k=v", percent-decoding values without turning
// "+" into a space, and hands each value to the setter of its key. Every
// key must be known and appear once.
func parseParams(query string, set map[string]func(string) error) error {
	if query == "" {
		return nil
	}
	seen := map[string]bool{}
	for item := range strings.SplitSeq(query, "&") {
		k, raw, ok := strings.Cut(item, "=")
		if !ok {
			return fmt.Errorf("gs: parameter %q has no value (KEY=VALUE)", item)
		}
		fn, known := set[k]
		if !known {
			keys := make([]string, 0, len(set))
			for key := range set {
				keys = append(keys, key)
			}
			slices.Sort(keys)
			return fmt.Errorf("gs: unknown parameter %q; valid parameters: %s", k, strings.Join(keys, ", "))
		}
		if seen[k] {
			return fmt.Errorf("gs: parameter %q given twice", k)
		}
		seen[k] = true
		v, err := url.PathUnescape(raw)
		if err != nil {
			return fmt.Errorf("gs: %s: invalid percent-encoding in %q", k, raw)
		}
		if strings.ContainsFunc(v, isControl) {
			return fmt.Errorf("gs: %s: control character in value", k)
		}
		if err := fn(v); err != nil {
			return fmt.Errorf("gs: %w", err)
		}
	}
	return nil
}
