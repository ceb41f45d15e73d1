// Package spec parses mount specs ("local:DIR", "s3://BUCKET/PREFIX",
// "sftp://USER@HOST/DIR") into comparable Specs, which hold no secret and
// print back with String, and names the Schemes that add other kinds.
//
// It opens nothing and links no storage SDK, so that a program can check
// specs without the clients of every kind; package mountspec opens them,
// and names the same types.
package spec

import (
	"errors"
	"fmt"
	"net/url"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/fencefs/fencefs/objstore"
)

// Kind names the storage a mount spec describes.
type Kind string

// The mount kinds this package opens itself; a Scheme adds others.
const (
	KindLocal Kind = "local"
	KindS3    Kind = "s3"
	KindSFTP  Kind = "sftp"
)

// Spec is a parsed mount specification. It is comparable, so two
// specs are equal when they describe the same mount.
type Spec struct {
	// Kind is the storage kind; it decides which of the fields below are
	// used.
	Kind Kind
	// ReadOnly mounts refuse every write.
	ReadOnly bool
	// Timeout bounds each request to the storage (S3 and SFTP) and the
	// mount's check at start-up; 0 leaves it to the opener's caller.
	Timeout time.Duration
	// Dir is the local directory (KindLocal), as written.
	Dir string
	// S3 describes a bucket and prefix (KindS3).
	S3 S3Spec
	// SFTP describes a server directory (KindSFTP).
	SFTP SFTPSpec
	// Opaque is what a Scheme's Parse kept of a spec of its kind, for its
	// Open; "" for the kinds of this package.
	Opaque string
}

// S3Spec is the S3 part of a mount spec. Credentials are never part of
// it: they come from the AWS SDK's default chain.
type S3Spec struct {
	// Bucket names the bucket.
	Bucket string
	// Prefix is the key prefix of the mount's root, a canonical storage
	// path without slashes at either end, or "" for the whole bucket.
	Prefix string
	// Endpoint is the server's base URL; "" for AWS.
	Endpoint string
	// Region is the signing region; "" leaves it to the SDK.
	Region string
	// PathStyle addresses buckets as endpoint/bucket.
	PathStyle bool
}

// SFTPSpec is the SFTP part of a mount spec. A password is never part of
// it, only the name of the environment variable holding it.
type SFTPSpec struct {
	// User is the SSH user name.
	User string
	// Host is the server's host name or IP address (without brackets).
	Host string
	// Port is the server's port; 0 means 22.
	Port int
	// Root is the server directory: absolute, relative to the login
	// directory, or "" for the login directory itself.
	Root string
	// PasswordEnv names the environment variable holding the password.
	PasswordEnv string
	// KeyFile names a file holding an unencrypted PEM private key.
	KeyFile string
	// KnownHostsFile names an OpenSSH known_hosts file.
	KnownHostsFile string
	// HostKey is a pinned host key in authorized_keys form
	// ("ssh-ed25519 AAAA...").
	HostKey string
	// Insecure accepts any host key (for tests only).
	Insecure bool
}

// Addr returns the server's "host:port".
func (s SFTPSpec) Addr() string {
	port := s.Port
	if port == 0 {
		port = 22
	}
	host := s.Host
	if strings.Contains(host, ":") {
		host = "[" + host + "]"
	}
	return host + ":" + strconv.Itoa(port)
}

// Parse parses one mount spec:
//
//	local:DIR                    a local directory (local:DIR:ro read-only)
//	s3://BUCKET[/PREFIX][?endpoint=URL&region=R&path_style=1&ro=1&timeout=D]
//	sftp://USER@HOST[:PORT][/DIR][?password_env=VAR&key=FILE&known_hosts=FILE&host_key=KEY&insecure=1&ro=1&timeout=D]
//
// Paths are taken literally; parameter values are percent-decoded ("+"
// stays "+", so a base64 host key needs no escaping). An SFTP DIR starting
// with "/~" is relative to the login directory, any other is absolute, and
// no DIR at all means the login directory. Secrets are refused in the spec
// itself: S3 credentials come from the SDK's chain and an SFTP password
// from the environment variable named by password_env.
func Parse(spec string) (Spec, error) {
	if strings.ContainsFunc(spec, isControl) {
		return Spec{}, errors.New("control character in mount spec")
	}
	switch {
	case strings.HasPrefix(spec, "local:"):
		return parseLocal(strings.TrimPrefix(spec, "local:"))
	case strings.HasPrefix(spec, "s3://"):
		return parseS3(strings.TrimPrefix(spec, "s3://"))
	case strings.HasPrefix(spec, "sftp://"):
		return parseSFTP(strings.TrimPrefix(spec, "sftp://"))
	}
	return Spec{}, fmt.Errorf("unknown mount spec %q: use local:DIR, s3://BUCKET/PREFIX or sftp://USER@HOST/DIR", spec)
}

func isControl(r rune) bool { return r < 0x20 || r == 0x7f }

func parseLocal(rest string) (Spec, error) {
	m := Spec{Kind: KindLocal}
	if d, ok := strings.CutSuffix(rest, ":ro"); ok {
		m.ReadOnly, rest = true, d
	}
	if rest == "" {
		return Spec{}, errors.New("local: the directory is empty (local:DIR or local:DIR:ro)")
	}
	m.Dir = rest
	return m, nil
}

// s3Limits are S3's key limits, as s3adapter.KeyLimits gives them to
// s3adapter.New; this package does not link the AWS SDK, and package
// mountspec's tests hold the two to the same answers.
func s3Limits() objstore.Limits {
	return objstore.Limits{MaxKeyBytes: 1024, MaxNameBytes: 255}
}

func parseS3(rest string) (Spec, error) {
	rest, query, _ := strings.Cut(rest, "?")
	bucket, prefix, _ := strings.Cut(rest, "/")
	if err := checkBucket(bucket); err != nil {
		return Spec{}, err
	}
	prefix = strings.Trim(prefix, "/")
	if _, err := objstore.CheckPrefix(prefix, s3Limits()); err != nil {
		return Spec{}, fmt.Errorf("s3: %w", err)
	}
	m := Spec{Kind: KindS3, S3: S3Spec{Bucket: bucket, Prefix: prefix}}
	err := parseParams("s3", query, map[string]func(string) error{
		"endpoint":   func(v string) error { return setEndpoint(&m.S3.Endpoint, v) },
		"region":     func(v string) error { return setString(&m.S3.Region, "region", v) },
		"path_style": func(v string) error { return setBool(&m.S3.PathStyle, "path_style", v) },
		"ro":         func(v string) error { return setBool(&m.ReadOnly, "ro", v) },
		"timeout":    func(v string) error { return setTimeout(&m.Timeout, v) },
	})
	if err != nil {
		return Spec{}, err
	}
	return m, nil
}

// checkBucket accepts the characters bucket names are made of; the server
// judges the rest. Credentials in the URL ("key:secret@bucket") are
// refused so that they never end up in shell histories or process lists.
func checkBucket(b string) error {
	if b == "" {
		return errors.New("s3: the bucket name is empty (s3://BUCKET/PREFIX)")
	}
	if strings.Contains(b, "@") {
		return errors.New("s3: credentials are not accepted in the spec; they come from the AWS SDK's chain (environment, shared config, instance role)")
	}
	for _, c := range b {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '-' || c == '_') {
			return fmt.Errorf("s3: bucket name %q holds %q; use letters, digits, '.', '-' and '_'", b, c)
		}
	}
	return nil
}

func parseSFTP(rest string) (Spec, error) {
	rest, query, _ := strings.Cut(rest, "?")
	authority, dir := rest, ""
	if i := strings.IndexByte(rest, '/'); i >= 0 {
		authority, dir = rest[:i], rest[i:]
	}
	m := Spec{Kind: KindSFTP}
	if err := parseAuthority(&m.SFTP, authority); err != nil {
		return Spec{}, err
	}
	m.SFTP.Root = sftpRoot(dir)
	err := parseParams("sftp", query, map[string]func(string) error{
		"password_env": func(v string) error { return setEnvName(&m.SFTP.PasswordEnv, v) },
		"key":          func(v string) error { return setString(&m.SFTP.KeyFile, "key", v) },
		"known_hosts":  func(v string) error { return setString(&m.SFTP.KnownHostsFile, "known_hosts", v) },
		"host_key":     func(v string) error { return setHostKey(&m.SFTP.HostKey, v) },
		"insecure":     func(v string) error { return setBool(&m.SFTP.Insecure, "insecure", v) },
		"ro":           func(v string) error { return setBool(&m.ReadOnly, "ro", v) },
		"timeout":      func(v string) error { return setTimeout(&m.Timeout, v) },
	})
	if err != nil {
		return Spec{}, err
	}
	s := m.SFTP
	if s.PasswordEnv == "" && s.KeyFile == "" {
		return Spec{}, errors.New("sftp: no credentials: add password_env=VAR (the variable holding the password) or key=FILE")
	}
	if s.Insecure && (s.KnownHostsFile != "" || s.HostKey != "") {
		return Spec{}, errors.New("sftp: insecure=1 cannot be combined with known_hosts or host_key")
	}
	return m, nil
}

// parseAuthority parses "USER@HOST[:PORT]"; USER may be percent-encoded.
func parseAuthority(s *SFTPSpec, a string) error {
	i := strings.LastIndexByte(a, '@')
	if i < 0 {
		return errors.New("sftp: the user is missing (sftp://USER@HOST:PORT/DIR)")
	}
	rawUser, hostport := a[:i], a[i+1:]
	if strings.Contains(rawUser, ":") {
		return errors.New("sftp: passwords are not accepted in the spec; put the password in an environment variable and add password_env=VAR")
	}
	user, err := url.PathUnescape(rawUser)
	if err != nil || user == "" || strings.ContainsFunc(user, isControl) {
		return fmt.Errorf("sftp: invalid user %q", rawUser)
	}
	s.User = user
	host, port, err := splitHostPort(hostport)
	if err != nil {
		return err
	}
	s.Host, s.Port = host, port
	return nil
}

// splitHostPort splits "host", "host:port", "[v6]" or "[v6]:port".
func splitHostPort(hp string) (string, int, error) {
	host, portStr := hp, ""
	if strings.HasPrefix(hp, "[") {
		end := strings.IndexByte(hp, ']')
		if end < 0 {
			return "", 0, fmt.Errorf("sftp: invalid host %q: missing ']'", hp)
		}
		host = hp[1:end]
		after := hp[end+1:]
		if after != "" {
			p, ok := strings.CutPrefix(after, ":")
			if !ok {
				return "", 0, fmt.Errorf("sftp: invalid host %q", hp)
			}
			portStr = p
		}
	} else if i := strings.LastIndexByte(hp, ':'); i >= 0 {
		host, portStr = hp[:i], hp[i+1:]
		if strings.Contains(host, ":") {
			return "", 0, fmt.Errorf("sftp: invalid host %q: write IPv6 addresses in brackets", hp)
		}
	}
	if host == "" {
		return "", 0, errors.New("sftp: the host is empty (sftp://USER@HOST:PORT/DIR)")
	}
	if strings.ContainsAny(host, "@[]/% ") {
		return "", 0, fmt.Errorf("sftp: invalid host %q", host)
	}
	if hp[len(hp)-1] == ':' || portStr != "" {
		n, err := strconv.Atoi(portStr)
		if err != nil || n < 1 || n > 65535 || portStr[0] == '+' || portStr[0] == '0' {
			return "", 0, fmt.Errorf("sftp: invalid port %q", portStr)
		}
		return host, n, nil
	}
	return host, 0, nil
}

// sftpRoot turns the spec's path into SFTPSpec.Root: "" and "/~..." are
// relative to the login directory, anything else absolute.
func sftpRoot(dir string) string {
	if dir == "/~" || strings.HasPrefix(dir, "/~/") {
		return strings.TrimLeft(strings.TrimPrefix(dir, "/~"), "/")
	}
	return dir
}

// parseParams parses "k=v&k=v", percent-decoding values without turning
// "+" into a space, and hands each value to the setter of its key. Every
// key must be known and appear once.
func parseParams(kind, query string, set map[string]func(string) error) error {
	if query == "" {
		return nil
	}
	seen := map[string]bool{}
	for _, item := range strings.Split(query, "&") {
		k, raw, ok := strings.Cut(item, "=")
		if !ok {
			return fmt.Errorf("%s: parameter %q has no value (KEY=VALUE)", kind, item)
		}
		fn, known := set[k]
		if !known {
			return fmt.Errorf("%s: unknown parameter %q; valid parameters: %s", kind, k, strings.Join(sortedKeys(set), ", "))
		}
		if seen[k] {
			return fmt.Errorf("%s: parameter %q given twice", kind, k)
		}
		seen[k] = true
		v, err := url.PathUnescape(raw)
		if err != nil {
			return fmt.Errorf("%s: %s: invalid percent-encoding in %q", kind, k, raw)
		}
		if strings.ContainsFunc(v, isControl) {
			return fmt.Errorf("%s: %s: control character in value", kind, k)
		}
		if err := fn(v); err != nil {
			return fmt.Errorf("%s: %w", kind, err)
		}
	}
	return nil
}

func sortedKeys(m map[string]func(string) error) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

func setString(dst *string, key, v string) error {
	if v == "" {
		return fmt.Errorf("%s is empty", key)
	}
	*dst = v
	return nil
}

func setBool(dst *bool, key, v string) error {
	b, err := strconv.ParseBool(v)
	if err != nil {
		return fmt.Errorf("%s: %q is not a boolean (1 or 0)", key, v)
	}
	*dst = b
	return nil
}

func setTimeout(dst *time.Duration, v string) error {
	d, err := parseDuration(v)
	if err != nil {
		return fmt.Errorf("timeout: %w", err)
	}
	*dst = d
	return nil
}

func setEndpoint(dst *string, v string) error {
	u, err := url.Parse(v)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("endpoint: %q is not an http:// or https:// URL", v)
	}
	*dst = v
	return nil
}

func setEnvName(dst *string, v string) error {
	for i, c := range v {
		if !(c == '_' || c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || i > 0 && c >= '0' && c <= '9') {
			return fmt.Errorf("password_env: %q is not an environment variable name", v)
		}
	}
	return setString(dst, "password_env", v)
}

// ResolveAgainst makes m's relative host paths (a local directory, an
// SFTP key or known_hosts file) relative to dir, as a config file's are
// to its folder.
func (m *Spec) ResolveAgainst(dir string) {
	abs := func(p *string) {
		if *p != "" && !filepath.IsAbs(*p) {
			*p = filepath.Join(dir, *p)
		}
	}
	switch m.Kind {
	case KindLocal:
		abs(&m.Dir)
	case KindSFTP:
		abs(&m.SFTP.KeyFile)
		abs(&m.SFTP.KnownHostsFile)
	}
}

// String renders m as a spec that Parse parses back to m. It
// holds no secret, so it may be logged.
func (m Spec) String() string {
	switch m.Kind {
	case KindLocal:
		if m.ReadOnly {
			return "local:" + m.Dir + ":ro"
		}
		return "local:" + m.Dir
	case KindS3:
		return m.s3String()
	case KindSFTP:
		return m.sftpString()
	case "":
		return "invalid mount spec"
	}
	return string(m.Kind) + m.Opaque
}

func (m Spec) s3String() string {
	s := m.S3
	out := "s3://" + s.Bucket
	if s.Prefix != "" {
		out += "/" + s.Prefix
	}
	var q params
	q.add("endpoint", s.Endpoint)
	q.add("region", s.Region)
	q.flag("path_style", s.PathStyle)
	q.flag("ro", m.ReadOnly)
	q.duration("timeout", m.Timeout)
	return out + q.String()
}

func (m Spec) sftpString() string {
	s := m.SFTP
	host := s.Host
	if strings.Contains(host, ":") {
		host = "[" + host + "]"
	}
	out := "sftp://" + escape(s.User, "%:@/?") + "@" + host
	if s.Port != 0 {
		out += ":" + strconv.Itoa(s.Port)
	}
	switch {
	case strings.HasPrefix(s.Root, "/"):
		out += s.Root
	case s.Root != "":
		out += "/~/" + s.Root
	}
	var q params
	q.add("password_env", s.PasswordEnv)
	q.add("key", s.KeyFile)
	q.add("known_hosts", s.KnownHostsFile)
	q.add("host_key", s.HostKey)
	q.flag("insecure", s.Insecure)
	q.flag("ro", m.ReadOnly)
	q.duration("timeout", m.Timeout)
	return out + q.String()
}

// params renders the parameters of a spec in a fixed order.
type params []string

func (p *params) add(k, v string) {
	if v != "" {
		*p = append(*p, k+"="+escape(v, "%& "))
	}
}

func (p *params) flag(k string, on bool) {
	if on {
		*p = append(*p, k+"=1")
	}
}

func (p *params) duration(k string, d time.Duration) {
	if d != 0 {
		*p = append(*p, k+"="+d.String())
	}
}

func (p params) String() string {
	if len(p) == 0 {
		return ""
	}
	return "?" + strings.Join(p, "&")
}

// escape percent-encodes the bytes of s that are in chars.
func escape(s, chars string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if strings.IndexByte(chars, s[i]) >= 0 {
			fmt.Fprintf(&b, "%%%02X", s[i])
			continue
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// parseDuration parses a positive duration with its unit.
func parseDuration(s string) (time.Duration, error) {
	d, err := time.ParseDuration(strings.TrimSpace(s))
	if err != nil {
		return 0, fmt.Errorf("%q is not a duration (such as 30s or 2m)", s)
	}
	if d <= 0 {
		return 0, fmt.Errorf("must be > 0, got %s", s)
	}
	return d, nil
}
