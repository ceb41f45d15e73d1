//go:build fencefs_oneshot

package spec

// setHostKey keeps a host key as written: the one-shot build of the
// fencefs command (go install -tags fencefs_oneshot) refuses every
// sftp:// mount once parsed, so it leaves out x/crypto/ssh, whose key
// parsing brings crypto/x509 and the public-key algorithms (0.4-0.5 ms
// of its start). Every other build checks the key here (hostkey.go).
func setHostKey(dst *string, v string) error {
	*dst = v
	return nil
}
