//go:build !fencefs_oneshot

package spec

import (
	"encoding/base64"
	"fmt"
	"strings"

	"golang.org/x/crypto/ssh"
)

// setHostKey accepts an authorized_keys line ("ssh-ed25519 AAAA...") or
// the bare base64 of the key's wire format, and stores the key in
// authorized_keys form.
func setHostKey(dst *string, v string) error {
	var key ssh.PublicKey
	var err error
	if strings.Contains(v, " ") {
		key, _, _, _, err = ssh.ParseAuthorizedKey([]byte(v))
	} else {
		var wire []byte
		if wire, err = base64.StdEncoding.DecodeString(v); err == nil {
			key, err = ssh.ParsePublicKey(wire)
		}
	}
	if err != nil {
		return fmt.Errorf("host_key: not a public key (use \"ssh-ed25519 AAAA...\" or its base64 part): %v", err)
	}
	*dst = strings.TrimSpace(string(ssh.MarshalAuthorizedKey(key)))
	return nil
}
