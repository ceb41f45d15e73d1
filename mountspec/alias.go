package mountspec

import "github.com/fencefs/fencefs/mountspec/spec"

// The types of a spec are package spec's, which parses specs without
// opening them; they are named here too, so that a spec parsed by either
// package opens with an Opener.
type (
	// Kind names the storage a mount spec describes.
	Kind = spec.Kind
	// Spec is a parsed mount specification; see [spec.Spec].
	Spec = spec.Spec
	// S3Spec is the S3 part of a mount spec; see [spec.S3Spec].
	S3Spec = spec.S3Spec
	// SFTPSpec is the SFTP part of a mount spec; see [spec.SFTPSpec].
	SFTPSpec = spec.SFTPSpec
	// A Scheme parses and opens the specs of a kind of storage this
	// package does not know; see [spec.Scheme].
	Scheme = spec.Scheme
	// Schemes are the Schemes a server opens besides its own kinds, by
	// the prefix that starts their specs; see [spec.Schemes].
	Schemes = spec.Schemes
	// A Layered Scheme makes its mounts of other mounts (overlay:); see
	// [spec.Layered].
	Layered = spec.Layered
)

// The mount kinds this package opens itself; a Scheme adds others.
const (
	KindLocal = spec.KindLocal
	KindS3    = spec.KindS3
	KindSFTP  = spec.KindSFTP
)

// Parse parses one mount spec, as [spec.Parse]:
//
//	local:DIR                    a local directory (local:DIR:ro read-only)
//	s3://BUCKET[/PREFIX][?endpoint=URL&region=R&path_style=1&ro=1&timeout=D]
//	sftp://USER@HOST[:PORT][/DIR][?password_env=VAR&key=FILE&known_hosts=FILE&host_key=KEY&insecure=1&ro=1&timeout=D]
func Parse(s string) (Spec, error) { return spec.Parse(s) }
