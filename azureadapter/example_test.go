package azureadapter_test

import (
	"context"
	"fmt"
	"log"

	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/container"

	"github.com/fencefs/fencefs/azureadapter"
	"github.com/fencefs/fencefs/backend"
)

// New wraps a container client you configured yourself; it does no I/O.
// Each tenant gets its own blob name prefix.
func ExampleNew() {
	client, err := container.NewClientWithNoCredential("https://account.blob.core.windows.net/agents", nil)
	if err != nil {
		log.Fatal(err)
	}
	tenant, err := azureadapter.New(client, "tenant1", azureadapter.Options{})
	if err != nil {
		log.Fatal(err)
	}
	key, _ := tenant.Key("notes/today.md")
	fmt.Println(key)
	caps := tenant.Capabilities()
	fmt.Println(caps.Name, caps.AtomicPreconditions, caps.AtomicRename)
	// Output:
	// tenant1/notes/today.md
	// azblob true false
}

// ParseMountSpec reads the azblob:// mount spec; credentials come from
// the environment, never from the spec.
func ExampleParseMountSpec() {
	m, err := azureadapter.ParseMountSpec("azblob://agents/tenant1?endpoint=http://127.0.0.1:10000/devstoreaccount1&timeout=30s")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(m.Container, m.Prefix, m.Endpoint, m.Timeout)
	_, err = azureadapter.ParseMountSpec("azblob://agents?key=secret")
	fmt.Println(err != nil)
	// Output:
	// agents tenant1 http://127.0.0.1:10000/devstoreaccount1 30s
	// true
}

// OpenMount opens a mount over a client shared by every mount of the
// same account, with the start-up probe; here against Azurite, whose
// connection string is in AZURE_STORAGE_CONNECTION_STRING.
func ExampleOpenMount() {
	ctx := context.Background()
	var clients azureadapter.Clients
	for _, spec := range []string{"azblob://agents/tenant1?timeout=30s", "azblob://agents/tenant2?timeout=30s"} {
		m, err := azureadapter.ParseMountSpec(spec)
		if err != nil {
			log.Fatal(err)
		}
		fsys, err := azureadapter.OpenMount(ctx, m, &clients)
		if err != nil {
			log.Fatal(err)
		}
		// Write only if nobody created the file meanwhile.
		err = backend.WriteFile(ctx, fsys, "notes/today.md", []byte("hello\n"),
			backend.WriteOptions{Precondition: backend.Precondition{CreateOnly: true}})
		if err != nil {
			log.Fatal(err)
		}
	}
}
