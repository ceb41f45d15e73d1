package server

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/fencefs/fencefs/mountspec"
	"github.com/fencefs/fencefs/tenant"
)

// probeID stands for every tenant id while the templates are parsed for
// checkDisjoint: a valid id no template spells, replaced by
// tenant.Placeholder in the parsed location.
const probeID = "fencefs-disjoint-probe-0"

// probeSession stands for every session id as probeID does for tenants.
const probeSession = "fencefs-disjoint-session-0"

// checkDisjoint proves the tenant mounts disjoint as a set for every
// tenant id (tenant.Disjoint): no id reaches another tenant's storage or
// a shared mount's, and no local template is relative. A mount of a
// URL-like kind a Scheme opens ("gs://", "azblob://") is compared by its
// spec: the first segment (a bucket, an account) as the authority, the
// rest as the path. A mount of a Layered Scheme ("overlay:") is compared
// by each of its layers, as a mount of its own: an overlay's upper layer
// under another template's directory is refused as a local template
// there would be. A mount of another Scheme's kind is not compared, its
// spec being the Scheme's own.
func checkDisjoint(schemes mountspec.Schemes, mounts []TenantMount) error {
	var locs []tenant.Location
	for _, tm := range mounts {
		spec, err := tm.Template.ExpandSession(probeID, probeSession)
		if err != nil {
			return err
		}
		ms, err := schemes.Parse(spec)
		if err != nil {
			return fmt.Errorf("mount %q: %w", tm.Name, err)
		}
		ls, err := locations(schemes, tm.Name, ms, 0)
		if err != nil {
			return fmt.Errorf("mount %q: %w", tm.Name, err)
		}
		locs = append(locs, ls...)
	}
	return tenant.Disjoint(locs)
}

// maxLayerDepth bounds how deep locations follows layers of layers.
const maxLayerDepth = 8

// locations returns where the parsed spec ms of mount name puts its
// files: its own location, or those of its layers when its Scheme is
// Layered (each named after the mount and its place), none when its
// Scheme's spec is opaque.
func locations(schemes mountspec.Schemes, name string, ms mountspec.Spec, depth int) ([]tenant.Location, error) {
	if l, ok := location(name, ms); ok {
		return []tenant.Location{l}, nil
	}
	ly, ok := schemes[string(ms.Kind)].(mountspec.Layered)
	if !ok {
		return nil, nil
	}
	if depth >= maxLayerDepth {
		return nil, fmt.Errorf("layers nested more than %d deep", maxLayerDepth)
	}
	layers, err := ly.Layers(ms)
	if err != nil {
		return nil, err
	}
	var out []tenant.Location
	for i, l := range layers {
		ls, err := locations(schemes, fmt.Sprintf("%s (layer %d of %d)", name, i+1, len(layers)), l, depth+1)
		if err != nil {
			return nil, err
		}
		out = append(out, ls...)
	}
	return out, nil
}

// location returns where the parsed spec ms of mount name puts its files,
// with the probe id back to tenant.Placeholder.
func location(name string, ms mountspec.Spec) (tenant.Location, bool) {
	l := tenant.Location{Name: name, Scheme: string(ms.Kind)}
	switch ms.Kind {
	case mountspec.KindLocal:
		l.Path = filepath.ToSlash(ms.Dir)
	case mountspec.KindS3:
		l.Authority, l.Path = ms.S3.Bucket, ms.S3.Prefix
	case mountspec.KindSFTP:
		l.Authority, l.Path = ms.SFTP.Addr(), ms.SFTP.Root
		if !strings.HasPrefix(l.Path, "/") {
			// Relative to the login directory, which is the user's.
			l.Authority = ms.SFTP.User + "@" + l.Authority
		}
	default:
		if !strings.HasSuffix(string(ms.Kind), "://") {
			return l, false
		}
		rest, _, _ := strings.Cut(ms.Opaque, "?")
		l.Authority, l.Path, _ = strings.Cut(rest, "/")
	}
	l.Path = replaceSegments(replaceSegments(l.Path, probeID, tenant.Placeholder), probeSession, tenant.SessionPlaceholder)
	return l, true
}

// replaceSegments replaces every '/'-separated segment of p equal to old
// by new.
func replaceSegments(p, old, new string) string {
	segs := strings.Split(p, "/")
	for i, s := range segs {
		if s == old {
			segs[i] = new
		}
	}
	return strings.Join(segs, "/")
}
