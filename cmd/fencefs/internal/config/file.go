package config

import (
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"
)

// applyFile applies the settings of a YAML document to the FlagSet, as if
// each had been given as a flag. Errors name the file, the line and the
// key.
func (p *parser) applyFile(file string, data []byte) error {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return &Error{Where: file, Err: errors.New(strings.TrimPrefix(err.Error(), "yaml: "))}
	}
	if len(doc.Content) == 0 {
		return nil // an empty file
	}
	top := resolve(doc.Content[0])
	if top.Kind == yaml.ScalarNode && top.Tag == "!!null" {
		return nil
	}
	if top.Kind != yaml.MappingNode {
		return &Error{Where: at(file, top), Err: errors.New("expected a mapping of settings (key: value)")}
	}
	seen := map[string]bool{}
	for i := 0; i+1 < len(top.Content); i += 2 {
		k, v := resolve(top.Content[i]), resolve(top.Content[i+1])
		if k.Kind != yaml.ScalarNode {
			return &Error{Where: at(file, k), Err: errors.New("a setting's key must be a name")}
		}
		if seen[k.Value] {
			return &Error{Where: at(file, k), Setting: k.Value, Err: errors.New("given twice")}
		}
		seen[k.Value] = true
		if err := p.applyKey(file, k, v); err != nil {
			return err
		}
	}
	return nil
}

// applyKey applies one top-level key.
func (p *parser) applyKey(file string, k, v *yaml.Node) error {
	key := k.Value
	if key == "mounts" {
		return p.applyMounts(file, v)
	}
	switch key {
	case "quota_tenants":
		return p.applyQuotaTenants(file, v)
	case "scopes":
		return p.applyScopes(file, v)
	case "tenant_policy":
		return p.applyTenantPolicy(file, v)
	}
	name := strings.ReplaceAll(key, "_", "-")
	f := p.fs.Lookup(name)
	switch {
	case strings.Contains(key, "-") || key == "config" || key == "mount" || f == nil && !isSetting(name):
		return &Error{Where: at(file, k), Setting: key, Err: fmt.Errorf("unknown setting; valid settings: %s", strings.Join(p.fileKeys(), ", "))}
	case f == nil:
		return nil // another command's setting: the file serves all of them
	case v.Kind == yaml.ScalarNode && v.Tag == "!!null":
		return nil
	}
	values, err := scalars(v, isList(name))
	if err != nil {
		return &Error{Where: at(file, v), Setting: key, Err: err}
	}
	switch name {
	case "root", "token-file", "tls-cert", "tls-key", "approval-key-file":
		values[0] = fromFile(file, values[0])
	case "audit":
		if values[0] != "-" {
			values[0] = fromFile(file, values[0])
		}
	}
	if name == "tools" {
		values = []string{strings.Join(values, ",")}
	}
	for i, val := range values {
		if err := p.fs.Set(name, val); err != nil {
			where := v
			if v.Kind == yaml.SequenceNode {
				where = resolve(v.Content[i])
			}
			return &Error{Where: at(file, where), Setting: key, Err: err}
		}
	}
	return nil
}

// decodeKey decodes the value of a key that is no flag (a mapping) into
// a T, refusing unknown fields; expect says what the key holds.
func decodeKey[T any](file string, v *yaml.Node, key, expect string) (T, error) {
	var m T
	dec := yaml.NewDecoder(strings.NewReader(nodeText(v)))
	dec.KnownFields(true)
	if err := dec.Decode(&m); err != nil {
		return m, &Error{Where: at(file, v), Setting: key, Err: fmt.Errorf("expected %s: %v", expect, err)}
	}
	return m, nil
}

// nodeText renders a YAML node back to text, for a strict decode.
func nodeText(n *yaml.Node) string {
	b, _ := yaml.Marshal(n)
	return string(b)
}

// applyMounts applies the "mounts" map of name to spec.
func (p *parser) applyMounts(file string, v *yaml.Node) error {
	if v.Kind == yaml.ScalarNode && v.Tag == "!!null" {
		return nil
	}
	if v.Kind != yaml.MappingNode {
		return &Error{Where: at(file, v), Setting: "mounts", Err: errors.New("expected a mapping of mount name to spec")}
	}
	mounts := p.fs.Lookup("mount").Value.(recorder).Value.(mountsValue)
	for i := 0; i+1 < len(v.Content); i += 2 {
		name, spec := resolve(v.Content[i]), resolve(v.Content[i+1])
		if name.Kind != yaml.ScalarNode || spec.Kind != yaml.ScalarNode {
			return &Error{Where: at(file, name), Setting: "mounts", Err: errors.New("expected NAME: SPEC")}
		}
		if err := mounts.addFromFile(name.Value, spec.Value, fileDir(file)); err != nil {
			var n *namedError
			if errors.As(err, &n) {
				return &Error{Where: at(file, spec), Setting: n.label, Err: n.err}
			}
			return &Error{Where: at(file, spec), Setting: "mounts", Err: err}
		}
	}
	return nil
}

// fromFile resolves a host path written in the config file against the
// file's directory, as tools that read configuration files do, so that
// the file works from any working directory.
func fromFile(file, p string) string {
	if p == "" || filepath.IsAbs(p) {
		return p
	}
	return filepath.Join(fileDir(file), p)
}

// fileDir is the absolute directory of the config file, so that the
// paths taken from it stay right in logs and after a change of directory.
func fileDir(file string) string {
	dir, err := filepath.Abs(filepath.Dir(file))
	if err != nil {
		return filepath.Dir(file)
	}
	return dir
}

// scalars returns the values of a scalar node, or of a sequence of
// scalars when list is set.
func scalars(v *yaml.Node, list bool) ([]string, error) {
	switch {
	case v.Kind == yaml.ScalarNode:
		return []string{v.Value}, nil
	case v.Kind == yaml.SequenceNode && list:
		out := make([]string, 0, len(v.Content))
		for _, item := range v.Content {
			item = resolve(item)
			if item.Kind != yaml.ScalarNode {
				return nil, errors.New("expected a list of strings")
			}
			out = append(out, item.Value)
		}
		return out, nil
	case list:
		return nil, errors.New("expected a string or a list of strings")
	}
	return nil, errors.New("expected a single value")
}

// resolve follows an alias to the node it names.
func resolve(n *yaml.Node) *yaml.Node {
	for n.Kind == yaml.AliasNode && n.Alias != nil {
		n = n.Alias
	}
	return n
}

// isList reports whether the setting takes a YAML list.
func isList(name string) bool {
	return slices.Contains([]string{"allow", "deny", "protect", "tools", "skills", "oidc-alg", "tenant-mount"}, name)
}

func at(file string, n *yaml.Node) string { return fmt.Sprintf("%s:%d", file, n.Line) }

// isSetting reports whether name is the flag of a setting of any command.
func isSetting(name string) bool {
	for _, d := range definitions(&Settings{}, func() *bool { return new(bool) }) {
		if d.name == name {
			return true
		}
	}
	return false
}

// fileKeys lists the keys a config file may hold.
func (p *parser) fileKeys() []string {
	var keys []string
	for _, d := range definitions(&Settings{}, func() *bool { return new(bool) }) {
		switch d.name {
		case "config":
		case "mount":
			keys = append(keys, "mounts")
		default:
			keys = append(keys, strings.ReplaceAll(d.name, "-", "_"))
		}
	}
	if p.cmd == "serve" {
		keys = append(keys, "quota_tenants", "scopes", "tenant_policy")
	}
	return keys
}
