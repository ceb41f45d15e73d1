// Package security holds fencefs's adversarial test suite and nothing
// else: its tests attack every path-taking tool on every backend (local
// disk, mounted namespaces, afero, S3 and SFTP servers in containers)
// with hostile paths, symlinks, races, special files, oversized inputs
// and hostile storage contents, and check that no byte outside the root
// is read or written and that every refusal is a retryable error.
//
// SECURITY.md at the repository root states the guarantees these tests
// prove, naming the test behind each one. Run the suite with
//
//	go test ./security/
//
// and the remote cases with Docker and the test images (see package
// conformance/containers); without Docker they are skipped loudly, and
// with FENCEFS_REQUIRE_CONTAINERS=1 they fail instead.
package security
