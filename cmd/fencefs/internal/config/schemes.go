package config

import (
	"github.com/fencefs/fencefs/azureadapter"
	"github.com/fencefs/fencefs/gcsadapter"
	"github.com/fencefs/fencefs/mountspec"
)

// commandSchemes are the mount kinds the command opens besides mountspec's
// own: Cloud Storage and Azure Blob Storage, whose adapters are modules of
// their own (the library's root module does not inherit their SDKs).
func commandSchemes() mountspec.Schemes {
	return mountspec.Schemes{
		gcsadapter.Scheme + "://":   gcsadapter.NewMountScheme(),
		azureadapter.Scheme + "://": &azureadapter.MountScheme{},
	}
}
