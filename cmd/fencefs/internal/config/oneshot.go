//go:build fencefs_oneshot

package config

import (
	"context"
	"fmt"
	"io"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/fencefs/fencefs/backend"
	"github.com/fencefs/fencefs/mountspec/spec"
)

// The one-shot build (go install -tags fencefs_oneshot): the command
// without serve, so without the tenant layer, the MCP server and the
// adapters of other modules; what needs them is refused with
// NotInBuild. serve.go and schemes.go are the default build's.

// NotInBuild is the error for what the one-shot build does not have:
// what names it, as the subject of "are" ("serve is", "gs:// mounts
// are").
func NotInBuild(what string) error {
	return fmt.Errorf("%s not in this build of fencefs (built with -tags fencefs_oneshot, for quick one-shot calls: version, help, completion, and call on --root and local: mounts); the default build has every command and mount kind: go install github.com/fencefs/fencefs/cmd/fencefs@latest", what)
}

// tenantPolicy stands for tenant.Policy, which only serve reads.
type tenantPolicy = struct{}

// defaultSkillsRefresh is mcpserver.DefaultSkillsInterval, which
// `fencefs help serve` prints in both builds (compared by the one-shot
// build's test in scripts/test.sh).
const defaultSkillsRefresh = 30 * time.Second

// applyQuotaTenants, applyScopes and applyTenantPolicy read keys only
// serve uses, and serve is not in this build.
func (p *parser) applyQuotaTenants(string, *yaml.Node) error { return nil }
func (p *parser) applyScopes(string, *yaml.Node) error       { return nil }
func (p *parser) applyTenantPolicy(string, *yaml.Node) error { return nil }

// checkTenantMount checks serve's --tenant-mount; serve is not in this
// build.
func checkTenantMount(spec.Schemes, string) error { return nil }

// checkAddr checks serve's --http; serve is not in this build, and its
// check would link package net.
func checkAddr(string) error { return nil }

// CommandSchemes are the prefixes of the default build's other mount
// kinds, whose specs are refused here with NotInBuild.
func CommandSchemes() spec.Schemes {
	return spec.Schemes{"gs://": refused("gs://"), "azblob://": refused("azblob://"), "overlay:": refused("overlay:")}
}

// refused is a mount kind of the default build that this one lacks.
type refused string

func (r refused) Parse(string) (spec.Spec, error) {
	return spec.Spec{}, NotInBuild(string(r) + " mounts are")
}

func (r refused) Open(context.Context, spec.Spec, time.Duration) (backend.Backend, io.Closer, error) {
	return nil, nil, NotInBuild(string(r) + " mounts are")
}
