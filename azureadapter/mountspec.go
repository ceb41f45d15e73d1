package azureadapter

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/service"

	"github.com/fencefs/fencefs/objstore"
)

// Scheme is the mount spec scheme of Azure Blob Storage: specs start
// with "azblob://".
const Scheme = "azblob"

// MountSpec is a parsed azblob mount spec. It is comparable, so two specs
// are equal when they describe the same mount. Credentials are never part
// of it: they come from the environment (EnvConnectionString, or
// EnvAccount with EnvKey) or from azidentity's DefaultAzureCredential, as
// NewClient says.
type MountSpec struct {
	// Container names the container.
	Container string
	// Prefix is the blob name prefix of the mount's root, a canonical
	// storage path without slashes at either end, or "" for the whole
	// container.
	Prefix string
	// Account is the storage account; "" leaves it to the environment
	// (the connection string, or AZURE_STORAGE_ACCOUNT).
	Account string
	// Endpoint is the account's blob service URL; "" for the public
	// cloud's https://ACCOUNT.blob.core.windows.net/.
	Endpoint string
	// ReadOnly mounts refuse every write.
	ReadOnly bool
	// Timeout bounds each request to the service (each try of it) and
	// the mount's start-up probe; 0 leaves both to the caller.
	Timeout time.Duration
}

// ParseMountSpec parses one Azure Blob Storage mount spec:
//
//	azblob://CONTAINER[/PREFIX][?account=NAME&endpoint=URL&ro=1&timeout=D]
//
// CONTAINER follows the service's rules (3 to 63 lower-case letters,
// digits and single hyphens, starting and ending with a letter or digit);
// PREFIX is a canonical storage path, taken literally (slashes at either
// end are dropped). account is the storage account (3 to 24 lower-case
// letters and digits); endpoint the account's blob service URL, http:// or
// https:// (for Azurite, "http://127.0.0.1:10000/devstoreaccount1");
// ro=1 mounts read-only; timeout bounds each request and the start-up
// probe (a Go duration such as "30s", or whole seconds). Parameter values
// are percent-decoded; every parameter may appear once. Secrets are
// refused in the spec itself (an "@" in the authority, or a key, sas or
// connection_string parameter): they come from
// AZURE_STORAGE_CONNECTION_STRING, AZURE_STORAGE_ACCOUNT with
// AZURE_STORAGE_KEY, or DefaultAzureCredential.
func ParseMountSpec(spec string) (MountSpec, error) {
	if strings.ContainsFunc(spec, isControl) {
		return MountSpec{}, errors.New("azblob: control character in mount spec")
	}
	rest, ok := strings.CutPrefix(spec, Scheme+"://")
	if !ok {
		return MountSpec{}, fmt.Errorf("azblob: mount spec %q does not start with %s://", spec, Scheme)
	}
	rest, query, _ := strings.Cut(rest, "?")
	cont, prefix, _ := strings.Cut(rest, "/")
	if strings.Contains(cont, "@") {
		return MountSpec{}, errors.New(secretsRefused)
	}
	if err := checkContainer(cont); err != nil {
		return MountSpec{}, err
	}
	prefix = strings.Trim(prefix, "/")
	if _, err := objstore.CheckPrefix(prefix, KeyLimits()); err != nil {
		return MountSpec{}, fmt.Errorf("azblob: %w", err)
	}
	m := MountSpec{Container: cont, Prefix: prefix}
	if err := parseParams(query, &m); err != nil {
		return MountSpec{}, err
	}
	return m, nil
}

// secretsRefused explains where credentials come from instead.
const secretsRefused = "azblob: credentials are not accepted in the spec; they come from " +
	EnvConnectionString + ", " + EnvAccount + " with " + EnvKey + ", or DefaultAzureCredential (environment, workload or managed identity, Azure CLI)"

func isControl(r rune) bool { return r < 0x20 || r == 0x7f }

// checkContainer applies the service's container naming rules, see
// https://learn.microsoft.com/en-us/rest/api/storageservices/naming-and-referencing-containers--blobs--and-metadata#container-names.
func checkContainer(c string) error {
	if c == "" {
		return errors.New("azblob: the container name is empty (azblob://CONTAINER/PREFIX)")
	}
	if len(c) < 3 || len(c) > 63 {
		return fmt.Errorf("azblob: container name %q must be 3 to 63 characters long", c)
	}
	for i, r := range c {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9':
		case r == '-' && i > 0 && i < len(c)-1 && c[i-1] != '-':
		default:
			return fmt.Errorf("azblob: container name %q: use lower-case letters, digits and single hyphens, starting and ending with a letter or digit", c)
		}
	}
	return nil
}

// checkAccount applies the service's account naming rules: 3 to 24
// lower-case letters and digits.
func checkAccount(a string) error {
	if len(a) < 3 || len(a) > 24 || strings.ContainsFunc(a, func(r rune) bool { return !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9') }) {
		return fmt.Errorf("account: %q is not a storage account name (3 to 24 lower-case letters and digits)", a)
	}
	return nil
}

// parseParams parses "k=v&k=v" into m.
func parseParams(query string, m *MountSpec) error {
	if query == "" {
		return nil
	}
	set := map[string]func(string) error{
		"account": func(v string) error {
			if err := checkAccount(v); err != nil {
				return err
			}
			m.Account = v
			return nil
		},
		"endpoint": func(v string) error {
			u, err := url.Parse(v)
			if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil || u.RawQuery != "" || u.Fragment != "" {
				return fmt.Errorf("endpoint: %q is not an http:// or https:// URL without credentials, query or fragment", v)
			}
			m.Endpoint = v
			return nil
		},
		"ro": func(v string) error {
			b, err := strconv.ParseBool(v)
			if err != nil {
				return fmt.Errorf("ro: %q is not a boolean (1 or 0)", v)
			}
			m.ReadOnly = b
			return nil
		},
		"timeout": func(v string) error {
			d, err := parseTimeout(v)
			if err != nil {
				return fmt.Errorf("timeout: %w", err)
			}
			m.Timeout = d
			return nil
		},
	}
	seen := map[string]bool{}
	for item := range strings.SplitSeq(query, "&") {
		k, raw, ok := strings.Cut(item, "=")
		if !ok {
			return fmt.Errorf("azblob: parameter %q has no value (KEY=VALUE)", item)
		}
		switch strings.ToLower(k) {
		case "key", "account_key", "accountkey", "sas", "sig", "connection_string", "connectionstring", "password", "secret":
			return errors.New(secretsRefused)
		}
		fn, known := set[k]
		if !known {
			keys := make([]string, 0, len(set))
			for k := range set {
				keys = append(keys, k)
			}
			slices.Sort(keys)
			return fmt.Errorf("azblob: unknown parameter %q; valid parameters: %s", k, strings.Join(keys, ", "))
		}
		if seen[k] {
			return fmt.Errorf("azblob: parameter %q given twice", k)
		}
		seen[k] = true
		v, err := url.PathUnescape(raw)
		if err != nil {
			return fmt.Errorf("azblob: %s: invalid percent-encoding in %q", k, raw)
		}
		if v == "" {
			return fmt.Errorf("azblob: %s is empty", k)
		}
		if strings.ContainsFunc(v, isControl) {
			return fmt.Errorf("azblob: %s: control character in value", k)
		}
		if err := fn(v); err != nil {
			return fmt.Errorf("azblob: %w", err)
		}
	}
	return nil
}

// parseTimeout takes a Go duration ("30s", "1m30s") or whole seconds,
// between 1 ms and 24 hours.
func parseTimeout(v string) (time.Duration, error) {
	d, err := time.ParseDuration(v)
	if err != nil {
		n, nerr := strconv.Atoi(v)
		if nerr != nil {
			return 0, fmt.Errorf("%q is not a duration (\"30s\") or whole seconds", v)
		}
		d = time.Duration(n) * time.Second
	}
	if d < time.Millisecond || d > 24*time.Hour {
		return 0, fmt.Errorf("%q is outside 1ms to 24h", v)
	}
	return d, nil
}

// String returns the spec in the canonical form ParseMountSpec reads
// back to an equal MountSpec.
func (m MountSpec) String() string {
	var b strings.Builder
	b.WriteString(Scheme + "://" + m.Container)
	if m.Prefix != "" {
		b.WriteString("/" + m.Prefix)
	}
	var params []string
	if m.Account != "" {
		params = append(params, "account="+m.Account)
	}
	if m.Endpoint != "" {
		// PathEscape leaves '&' alone, which would end the value.
		params = append(params, "endpoint="+strings.ReplaceAll(url.PathEscape(m.Endpoint), "&", "%26"))
	}
	if m.ReadOnly {
		params = append(params, "ro=1")
	}
	if m.Timeout != 0 {
		params = append(params, "timeout="+m.Timeout.String())
	}
	if len(params) > 0 {
		b.WriteString("?" + strings.Join(params, "&"))
	}
	return b.String()
}

// Config returns the configuration Open takes for the spec: the
// container, prefix, account, endpoint and read-only flag, with each try
// of a request bounded by the timeout. Credentials come from the
// environment or DefaultAzureCredential (see NewClient).
func (m MountSpec) Config() Config {
	cfg := Config{
		Container: m.Container,
		Prefix:    m.Prefix,
		Account:   m.Account,
		Endpoint:  m.Endpoint,
		Options:   Options{ReadOnly: m.ReadOnly},
	}
	if m.Timeout != 0 {
		cfg.ClientOptions = &service.ClientOptions{ClientOptions: policy.ClientOptions{
			Retry: policy.RetryOptions{TryTimeout: m.Timeout},
		}}
	}
	return cfg
}

// Clients shares one account client among the mounts of many tenants:
// mounts of one account, endpoint and timeout get the same client (and
// its connections). The zero value is ready to use and safe for
// concurrent use.
type Clients struct {
	mu sync.Mutex
	m  map[clientKey]*service.Client
}

// clientKey is what a shared client is chosen by.
type clientKey struct {
	account, endpoint string
	timeout           time.Duration
}

// Client returns the shared client of the spec's account, endpoint and
// timeout, building it with NewClient on first use.
func (c *Clients) Client(m MountSpec) (*service.Client, error) {
	key := clientKey{m.Account, m.Endpoint, m.Timeout}
	c.mu.Lock()
	defer c.mu.Unlock()
	if cl, ok := c.m[key]; ok {
		return cl, nil
	}
	cl, err := NewClient(m.Config())
	if err != nil {
		return nil, err
	}
	if c.m == nil {
		c.m = map[clientKey]*service.Client{}
	}
	c.m[key] = cl
	return cl, nil
}

// OpenMount opens the backend a mount spec describes over the shared
// client of clients (a fresh one when clients is nil), with the start-up
// probe of Open (the container exists, the account has no hierarchical
// namespace) bounded by the spec's timeout.
func OpenMount(ctx context.Context, m MountSpec, clients *Clients) (*FS, error) {
	if clients == nil {
		clients = &Clients{}
	}
	client, err := clients.Client(m)
	if err != nil {
		return nil, err
	}
	cfg := m.Config()
	cfg.Client = client
	if m.Timeout != 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, m.Timeout)
		defer cancel()
	}
	return Open(ctx, cfg)
}
