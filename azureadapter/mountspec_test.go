package azureadapter_test

import (
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/container"

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
		{"azblob://agents/.", "not a canonical"},
		{"azblob://agents/../x", "not a canonical"},
		{"azblob://agents/a//b", "not a canonical"},
		{"azblob://agents/" + strings.Repeat("p", azureadapter.MaxKeyBytes), "too long"},
		{"azblob://agents/" + strings.Repeat("p/", azureadapter.MaxSegments), "too long"},
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
// spec, with a prefix New accepts.
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
		client, err := container.NewClientWithNoCredential("https://account.blob.core.windows.net/"+m.Container, nil)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := azureadapter.New(client, m.Prefix, azureadapter.Options{}); err != nil {
			t.Fatalf("ParseMountSpec(%q) gave %+v, which New refuses: %v", spec, m, err)
		}
	})
}
