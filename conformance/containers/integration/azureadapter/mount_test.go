package azureadapter_test

import (
	"errors"
	"io/fs"
	"net/http"
	"net/http/httputil"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/fencefs/fencefs/azureadapter"
)

// TestOpenMount opens mounts from specs against Azurite with the
// credentials the environment gives, as a server does for its tenants:
// two tenants whose prefixes are neighbours share one client and see only
// their own blobs, a missing container is fs.ErrNotExist, and the
// account and key variables work as the connection string does.
func TestOpenMount(t *testing.T) {
	srv := azurite.Get(t)
	cont := newContainer(t, srv)
	t.Setenv(azureadapter.EnvConnectionString, srv.ConnectionString())
	t.Setenv(azureadapter.EnvAccount, "")
	t.Setenv(azureadapter.EnvKey, "")
	ctx := t.Context()
	var clients azureadapter.Clients
	mount := func(spec string) *azureadapter.FS {
		t.Helper()
		m, err := azureadapter.ParseMountSpec(spec)
		if err != nil {
			t.Fatal(err)
		}
		f, err := azureadapter.OpenMount(ctx, m, &clients)
		if err != nil {
			t.Fatalf("OpenMount(%s): %v", spec, err)
		}
		return f
	}
	t1 := mount("azblob://" + cont + "/t1?timeout=20s")
	t10 := mount("azblob://" + cont + "/t10?timeout=20s")
	mustWrite(t, t1, "a.txt", "one")
	mustWrite(t, t10, "b.txt", "ten")
	if got := listNames(t, t1, "."); !slices.Equal(got, []string{"a.txt"}) {
		t.Errorf("t1 lists %q", got)
	}
	if got := listNames(t, t10, "."); !slices.Equal(got, []string{"b.txt"}) {
		t.Errorf("t10 lists %q", got)
	}
	m, _ := azureadapter.ParseMountSpec("azblob://" + cont + "/t1?timeout=20s")
	c1, _ := clients.Client(m)
	m.Prefix = "t10"
	if c10, _ := clients.Client(m); c1 != c10 {
		t.Error("two prefixes of one account got two clients")
	}
	missing, _ := azureadapter.ParseMountSpec("azblob://no-such-container?timeout=20s")
	if _, err := azureadapter.OpenMount(ctx, missing, &clients); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("OpenMount of a missing container: error = %v, want fs.ErrNotExist", err)
	}

	t.Setenv(azureadapter.EnvConnectionString, "")
	t.Setenv(azureadapter.EnvAccount, srv.Account)
	t.Setenv(azureadapter.EnvKey, srv.Key)
	ro, err := azureadapter.OpenMount(ctx, azureadapter.MountSpec{Container: cont, Prefix: "t1", Endpoint: srv.Endpoint, ReadOnly: true}, nil)
	if err != nil {
		t.Fatalf("OpenMount with AZURE_STORAGE_ACCOUNT and AZURE_STORAGE_KEY: %v", err)
	}
	if got := listNames(t, ro, "."); !slices.Equal(got, []string{"a.txt"}) {
		t.Errorf("the read-only mount of t1 lists %q", got)
	}
	if !ro.Capabilities().ReadOnly {
		t.Error("ro=1 mount is not read-only")
	}
}

// TestHierarchicalNamespaceRefused opens a container through a proxy
// that makes Azurite's Get Account Information answer as an account with
// a hierarchical namespace does (x-ms-is-hns-enabled: true; Azurite has
// none): Open refuses it with ErrHierarchicalNamespace.
func TestHierarchicalNamespaceRefused(t *testing.T) {
	srv := azurite.Get(t)
	cont := newContainer(t, srv)
	base, _, _ := strings.Cut(strings.TrimPrefix(srv.Endpoint, "http://"), "/")
	target, _ := url.Parse("http://" + base)
	rp := &httputil.ReverseProxy{
		Rewrite: func(r *httputil.ProxyRequest) { r.SetURL(target) },
		ModifyResponse: func(resp *http.Response) error {
			q := resp.Request.URL.Query()
			if q.Get("restype") == "account" && q.Get("comp") == "properties" {
				resp.Header.Set("x-ms-is-hns-enabled", "true")
			}
			return nil
		},
	}
	proxy := startProxy(t, rp)
	cfg := config(srv, cont, "")
	cfg.Endpoint = proxy + "/" + srv.Account
	_, err := azureadapter.Open(t.Context(), cfg)
	if !errors.Is(err, azureadapter.ErrHierarchicalNamespace) {
		t.Fatalf("Open of an account with a hierarchical namespace: error = %v, want ErrHierarchicalNamespace", err)
	}
	// The same container without the header opens.
	open(t, config(srv, cont, ""))
}
