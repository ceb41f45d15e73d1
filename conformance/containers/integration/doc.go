// Package integration holds, one directory per package, the tests of the
// library packages that need a server in a container or an emulator: of
// the root module (s3adapter, sftpadapter, mounted, skills) and of the
// gcsadapter and azureadapter modules (fake-gcs-server, Azurite). They
// live in this module, with the harnesses, so that no test of those
// packages imports anything outside its module's go.mod: `go mod tidy` in
// a module that uses fencefs loads the tests of the packages it imports,
// and would otherwise look for this module in the proxy.
// scripts/consumer-tidy.sh checks that for every module of the workspace.
package integration
