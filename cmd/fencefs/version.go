package main

import (
	"fmt"
	"runtime"
	"runtime/debug"
	"strings"
)

// buildVersion is what the binary knows of its own build.
type buildVersion struct {
	module, version string
	// revision, time and modified come from the VCS when the binary was
	// built from a clone (go build records them unless -buildvcs=false).
	revision, time string
	modified       bool
	goVersion      string
}

// readVersion returns the build information of the running binary.
func readVersion() buildVersion {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return buildVersion{version: "(unknown)", goVersion: runtime.Version()}
	}
	return versionOf(info)
}

// versionOf extracts a buildVersion from build information.
func versionOf(info *debug.BuildInfo) buildVersion {
	v := buildVersion{module: info.Main.Path, version: info.Main.Version, goVersion: info.GoVersion}
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			v.revision = s.Value
		case "vcs.time":
			v.time = s.Value
		case "vcs.modified":
			v.modified = s.Value == "true"
		}
	}
	return v
}

// short is the version MCP clients see: the module version, or for a
// build from a clone "devel-" and the commit's first 12 digits.
func (v buildVersion) short() string {
	if v.version != "" && v.version != "(devel)" {
		return v.version
	}
	if v.revision == "" {
		return "devel"
	}
	s := "devel-" + v.revision[:min(12, len(v.revision))]
	if v.modified {
		s += "-dirty"
	}
	return s
}

// String is what `fencefs version` prints.
func (v buildVersion) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "fencefs %s\n", v.short())
	if v.module != "" {
		fmt.Fprintf(&b, "module: %s %s\n", v.module, v.version)
	}
	switch {
	case v.revision != "":
		fmt.Fprintf(&b, "commit: %s", v.revision)
		var notes []string
		if v.time != "" {
			notes = append(notes, v.time)
		}
		if v.modified {
			notes = append(notes, "with uncommitted changes")
		}
		if len(notes) > 0 {
			fmt.Fprintf(&b, " (%s)", strings.Join(notes, ", "))
		}
		b.WriteString("\n")
	case v.version == "(devel)":
		b.WriteString("commit: unknown (built with -buildvcs=false or outside a clone)\n")
	}
	fmt.Fprintf(&b, "go: %s %s/%s\n", v.goVersion, runtime.GOOS, runtime.GOARCH)
	return b.String()
}
