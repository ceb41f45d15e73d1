// Package skills discovers and activates agent skills kept on any fencefs
// backend: local disk, an object store, an SFTP server, or a mounted
// namespace combining them.
//
// # Skills and roots
//
// A Loader is given an ordered list of roots. A skill is a directory
// directly under a root that holds a SKILL.md file; the other files in the
// directory are its resources. SKILL.md starts with YAML front matter
// between two lines of three dashes, followed by the instructions:
//
//	---
//	name: pdf-forms
//	description: Fill in PDF forms from structured data.
//	---
//	Read forms.md first, then ...
//
// The front matter is a YAML mapping. name and description are required
// and must be strings; every other key is kept, decoded, in Skill.Fields.
// The rules (see [ParseManifest]):
//   - name is 1 to 64 characters of lowercase ASCII letters, digits and
//     hyphens, with no hyphen at either end and no two in a row
//     ("pdf-forms", "k8s"), and it must equal the directory's name. A
//     mismatch is a problem, not a renaming: activation finds a skill by
//     its name as a directory, so the two cannot differ.
//   - description is non-empty (after trimming spaces) and at most 1024
//     characters.
//   - SKILL.md is at most Options.MaxManifestBytes (64 KiB by default).
//
// # Discovery
//
// [Loader.Discover] lists every root in order. When several roots hold a
// valid skill of the same name, the one in the earliest root is used and
// the others are recorded as shadowed. A skill that cannot be loaded (a
// directory without SKILL.md, a manifest without front matter, with bad
// YAML, a missing or wrongly typed key, an oversized file) is recorded as a
// [Problem] naming its path and the reason, and discovery goes on with the
// others; an invalid copy never shadows a valid one in a later root. A root
// that does not exist or is not a directory is a problem too, so a
// workspace without a skills folder is not an error. Entries whose name
// starts with "." and files directly under a root are ignored.
//
// Discovery examines at most Options.MaxSkills skill directories (1000 by
// default) over all roots; past that it fails with an error wrapping
// [ErrTooManySkills] rather than serving an arbitrary subset.
//
// # Activation
//
// [Loader.Activate] looks a skill up by name with the same precedence,
// reading only the few paths it needs, and returns its instructions (the
// text after the front matter) and ReadPath, the skill's directory as a
// path the file tools accept. Activation changes nothing: not the tools'
// working directory, not any other state. ReadPath is, by default:
//   - in a rooted namespace (a backend whose Capabilities say Rooted, such
//     as package mounted): the rooted path "/tenant/skills/pdf-forms",
//     which works from any working directory;
//   - in a plain namespace on local disk (a backend.HostPathMapper, where
//     the tools read a leading "/" as a host path): the path relative to
//     Options.Cwd, the tools' working directory, such as
//     "skills/pdf-forms" or "../skills/pdf-forms". Host paths are never
//     shown to a model;
//   - in any other plain namespace: "/skills/pdf-forms", since the tools
//     read a leading "/" there as the namespace root, from any working
//     directory.
//
// Options.ToolPath replaces the rule for callers with other needs.
//
// # Access
//
// The loader reads through the backend it is given, directly: it does not
// go through the file tools, so the tools' allowed, denied and protected
// patterns and permission hooks do not apply to it. What it can read is
// bounded by the roots it was given and by the backend itself (its root
// directory, prefix, mounts and read-only wrapping). It reads only the
// listing of each root and, for each skill directory, that directory's
// status and its SKILL.md; it never writes. A root is resolved like a tool
// path, so a symlinked root inside the namespace is followed and one that
// leads outside is a problem; below a root no link is followed: a skill
// directory or SKILL.md that is a symbolic link is reported as a problem
// and skipped.
package skills
