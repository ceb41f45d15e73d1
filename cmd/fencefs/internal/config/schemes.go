//go:build !fencefs_oneshot

package config

import (
	"github.com/fencefs/fencefs/azureadapter"
	"github.com/fencefs/fencefs/gcsadapter"
	"github.com/fencefs/fencefs/mountspec"
	"github.com/fencefs/fencefs/overlay/overlayspec"
)

// CommandSchemes are the mount kinds the command opens besides
// mountspec's own: Cloud Storage and Azure Blob Storage, whose adapters
// are modules of their own (the library's root module does not inherit
// their SDKs), and overlay mounts (overlay:BASE+UPPER) whose layers may
// be of any of those kinds.
func CommandSchemes() mountspec.Schemes {
	ss := mountspec.Schemes{
		gcsadapter.Scheme + "://":   gcsadapter.NewMountScheme(),
		azureadapter.Scheme + "://": &azureadapter.MountScheme{},
	}
	ss[overlayspec.Prefix] = overlayspec.New(mountspec.Options{Schemes: ss})
	return ss
}
