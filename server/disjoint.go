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

// checkDisjoint proves the tenant mounts disjoint as a set for every
// tenant id (tenant.Disjoint): no id reaches another tenant's storage or
// a shared mount's, and no local template is relative. A mount of a
// URL-like kind a Scheme opens ("gs://", "azblob://") is compared by its
// spec: the first segment (a bucket, an account) as the authority, the
// rest as the path; a mount of another Scheme's kind ("overlay:") is not
// compared, its spec being the Scheme's own.
func checkDisjoint(schemes mountspec.Schemes, mounts []TenantMount) error {
	var locs []tenant.Location
	for _, tm := range mounts {
		spec, err := tm.Template.Expand(probeID)
		if err != nil {
			return err
		}
		ms, err := schemes.Parse(spec)
		if err != nil {
			return fmt.Errorf("mount %q: %w", tm.Name, err)
		}
		loc, ok := location(tm.Name, ms)
		if ok {
			locs = append(locs, loc)
		}
	}
	return tenant.Disjoint(locs)
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
	l.Path = replaceSegments(l.Path, probeID, tenant.Placeholder)
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
