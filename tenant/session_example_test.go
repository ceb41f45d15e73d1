package tenant_test

import (
	"fmt"

	"github.com/fencefs/fencefs/tenant"
)

// A template with {session} gives each MCP session of a tenant its own
// upper layer over a shared base; the session id is one the server drew
// (tenant.NewSessionID), and one that could climb out of its directory is
// refused.
func ExampleTemplate_ExpandSession() {
	t, err := tenant.ParseTemplate("overlay:local:/srv/repo:ro+local:/srv/up/{tenant}/{session}")
	if err != nil {
		panic(err)
	}
	fmt.Println(t.PerSession())
	spec, _ := t.ExpandSession("t1", "K7Q2ZJ4WLXMNV3HC5RT6YBDPAE")
	fmt.Println(spec)
	_, err = t.ExpandSession("t1", "../t2")
	fmt.Println(err)
	_, err = tenant.ParseTemplate("local:/srv/up/{session}")
	fmt.Println(err != nil)
	// Output:
	// true
	// overlay:local:/srv/repo:ro+local:/srv/up/t1/K7Q2ZJ4WLXMNV3HC5RT6YBDPAE
	// tenant: template "overlay:local:/srv/repo:ro+local:/srv/up/{tenant}/{session}": not a safe session id: "../t2" starts with '.'
	// true
}
