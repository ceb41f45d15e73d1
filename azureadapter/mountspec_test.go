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
	"time"

	"github.com/fencefs/fencefs/azureadapter"
)

func TestParseMountSpec(t *testing.T) {
	good := []struct {
		spec string
		want azureadapter.MountSpec
	}{
		{"azblob://agents", azureadapter.MountSpec{Container: "agents"}},
		{"azblob://agents/", azureadapter.MountSpec{Container: "agents"}},
		{"azblob://agents/tenant1/", azureadapter.MountSpec{Container: "agents", Prefix: "tenant1"}},
		{"azblob://a-b-c/t/x y?account=acct01&ro=1&timeout=30s", azureadapter.MountSpec{Container: "a-b-c", Prefix: "t/x y", Account: "acct01", ReadOnly: true, Timeout: 30 * time.Second}},
		{"azblob://abc?endpoint=http://127.0.0.1:10000/devstoreaccount1&timeout=5", azureadapter.MountSpec{Container: "abc", Endpoint: "http://127.0.0.1:10000/devstoreaccount1", Timeout: 5 * time.Second}},
		{"azblob://abc?endpoint=https%3A%2F%2Fx.blob.core.windows.net%2F", azureadapter.MountSpec{Container: "abc", Endpoint: "https://x.blob.core.windows.net/"}},
		{"azblob://abc?ro=0", azureadapter.MountSpec{Container: "abc"}},
	}
	for _, c := range good {
		got, err := azureadapter.ParseMountSpec(c.spec)
		if err != nil || got != c.want {
			t.Errorf("ParseMountSpec(%q) = %+v, %v; want %+v", c.spec, got, err, c.want)
			continue
		}
		again, err := azureadapter.ParseMountSpec(got.String())
		if err != nil || again != got {
			t.Errorf("ParseMountSpec(%q.String() = %q) = %+v, %v; want %+v", c.spec, got.String(), again, err, got)
		}
	}
	bad := []struct{ spec, want string }{
		{"s3://agents", "does not start with azblob://"},
		{"azblob://", "container name is empty"},
		{"azblob://ab", "3 to 63"},
		{"azblob://Agents", "lower-case"},
		{"azblob://-agents", "lower-case"},
		{"azblob://ag--ents", "lower-case"},
		{"azblob://agents-", "lower-case"},
		{"azblob://ag_ents", "lower-case"},
		{"azblob://acct:key@agents", "credentials are not accepted"},
		{"azblob://agents?key=abc", "credentials are not accepted"},
		{"azblob://agents?sas=sv%3D1", "credentials are not accepted"},
		{"azblob://agents?connection_string=x", "credentials are not accepted"},
		{"azblob://agents/../x", "not a canonical"},
		{"azblob://agents/a//b", "not a canonical"},
		{"azblob://agents?account=Acct", "not a storage account name"},
		{"azblob://agents?account=ab", "not a storage account name"},
		{"azblob://agents?endpoint=ftp://x", "not an http"},
		{"azblob://agents?endpoint=http://u:p@x/", "not an http"},
		{"azblob://agents?endpoint=http://x/?a=b", "not an http"},
		{"azblob://agents?timeout=soon", "not a duration"},
		{"azblob://agents?timeout=0s", "outside"},
		{"azblob://agents?ro=maybe", "not a boolean"},
		{"azblob://agents?ro=1&ro=1", "given twice"},
		{"azblob://agents?region=x", "unknown parameter"},
		{"azblob://agents?ro", "no value"},
		{"azblob://agents?account=", "empty"},
		{"azblob://agents?account=%zz", "percent-encoding"},
		{"azblob://agents/a\nb", "control character"},
	}
	for _, c := range bad {
		_, err := azureadapter.ParseMountSpec(c.spec)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("ParseMountSpec(%q) error = %v, want one saying %q", c.spec, err, c.want)
		}
	}
}

// FuzzParseMountSpec checks that the parser never panics and that every
// spec it accepts prints to a canonical form that parses to the same
// spec, with a valid prefix.
func FuzzParseMountSpec(f *testing.F) {
	for _, s := range []string{
		"azblob://agents/tenant1?account=acct01&endpoint=http://127.0.0.1:10000/devstoreaccount1&ro=1&timeout=30s",
		"azblob://abc", "azblob://abc/a/b/", "azblob://abc?endpoint=http%3A%2F%2Fh%2Fa%26b", "azblob://a-b?timeout=5",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, spec string) {
		m, err := azureadapter.ParseMountSpec(spec)
		if err != nil {
			return
		}
		again, err := azureadapter.ParseMountSpec(m.String())
		if err != nil || again != m {
			t.Fatalf("ParseMountSpec(%q) = %+v; its String %q parses to %+v, %v", spec, m, m.String(), again, err)
		}
		if _, err := azureadapter.New(nil, m.Prefix, azureadapter.Options{}); err == nil {
			t.Fatal("New accepted a nil client")
		}
	})
}

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
