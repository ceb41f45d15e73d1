// Package integration holds, one directory per package, the tests of the
// root module's library packages that need a server in a container
// (s3adapter, sftpadapter, mounted, skills). They live in this module, with
// the harnesses, so that no test of those packages imports anything
// outside the root go.mod: `go mod tidy` in a module that uses fencefs
// loads the tests of the packages it imports, and would otherwise look
// for this module in the proxy. scripts/consumer-tidy.sh checks that.
package integration
