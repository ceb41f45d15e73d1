package tenant_test

import (
	"fmt"

	"github.com/fencefs/fencefs/tenant"
)

// Disjoint refuses a set of mounts in which some tenant id reaches
// storage another tenant or a shared mount holds: here the tenant named
// "notes" would hold every tenant's notes.
func ExampleDisjoint() {
	err := tenant.Disjoint([]tenant.Location{
		{Name: "ws", Scheme: "local", Path: "/srv/fencefs/{tenant}"},
		{Name: "notes", Scheme: "local", Path: "/srv/fencefs/notes/{tenant}"},
	})
	fmt.Println(err)
	err = tenant.Disjoint([]tenant.Location{
		{Name: "ws", Scheme: "local", Path: "/srv/fencefs/ws/{tenant}"},
		{Name: "notes", Scheme: "local", Path: "/srv/fencefs/notes/{tenant}"},
		{Name: "shared", Scheme: "local", Path: "/srv/fencefs/shared"},
	})
	fmt.Println(err)
	// Output:
	// tenant: mount ws (local:/srv/fencefs/{tenant}) of tenant "notes" and mount notes (local:/srv/fencefs/notes/{tenant}) of tenant "t2" reach the same storage: a tenant id must never reach a mount the operator did not give it
	// <nil>
}
