package mounted_test

import (
	"context"
	"fmt"

	"github.com/spf13/afero"

	"github.com/fencefs/fencefs/aferoadapter"
	"github.com/fencefs/fencefs/backend"
	"github.com/fencefs/fencefs/mounted"
)

func ExampleNew() {
	ctx := context.Background()
	workspace := aferoadapter.New(afero.NewMemMapFs())
	tenant := aferoadapter.New(afero.NewMemMapFs())
	if err := backend.WriteFile(ctx, tenant, "reports/q1.txt", []byte("revenue up"), backend.WriteOptions{}); err != nil {
		panic(err)
	}
	ns, err := mounted.New(map[string]backend.Backend{
		"workspace": workspace,
		"tenant":    backend.ReadOnly(tenant),
	})
	if err != nil {
		panic(err)
	}

	// Listing "/" shows the mounts.
	entries, err := ns.List(ctx, backend.VirtualToStorage("/"))
	if err != nil {
		panic(err)
	}
	for _, e := range entries {
		fmt.Println(e.Name, e.IsDir())
	}

	// Rooted tool paths resolve lexically, even across mounts.
	p, err := backend.CleanVirtual("../tenant/reports/q1.txt", "/workspace")
	if err != nil {
		panic(err)
	}
	data, err := backend.ReadFile(ctx, ns, backend.VirtualToStorage(p))
	if err != nil {
		panic(err)
	}
	fmt.Println(p, string(data))

	// The read-only mount refuses writes; nothing falls through.
	err = backend.WriteFile(ctx, ns, "tenant/reports/q2.txt", []byte("?"), backend.WriteOptions{})
	fmt.Println(err)
	// Output:
	// tenant true
	// workspace true
	// /tenant/reports/q1.txt revenue up
	// write tenant/reports/q2.txt: read-only
}

func ExampleReadOnly() {
	ctx := context.Background()
	b := backend.ReadOnly(aferoadapter.New(afero.NewMemMapFs()))
	fmt.Println(backend.CapabilitiesOf(b).ReadOnly)
	fmt.Println(backend.MkdirAll(ctx, b, "new"))
	// Output:
	// true
	// mkdir new: read-only
}
