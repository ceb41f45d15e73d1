package azureadapter

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azidentity"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/service"
)

// Environment variables NewClient reads for shared-key credentials, as
// the Azure CLI and tools do.
const (
	// EnvConnectionString holds a storage connection string
	// ("DefaultEndpointsProtocol=...;AccountName=...;AccountKey=...;
	// BlobEndpoint=...").
	EnvConnectionString = "AZURE_STORAGE_CONNECTION_STRING"
	// EnvAccount and EnvKey hold an account name and its shared key.
	EnvAccount = "AZURE_STORAGE_ACCOUNT"
	EnvKey     = "AZURE_STORAGE_KEY"
)

// Config describes a container to open with [Open].
type Config struct {
	// Container names the container; required.
	Container string
	// Prefix is the blob name prefix of the backend's root ("" for the
	// whole container).
	Prefix string
	// Account is the storage account name. With no Endpoint, the
	// endpoint is https://ACCOUNT.blob.core.windows.net/.
	Account string
	// Endpoint is the account's blob service URL
	// ("http://127.0.0.1:10000/devstoreaccount1" for Azurite); empty for
	// the public cloud's endpoint of Account.
	Endpoint string
	// ConnectionString and AccountKey, when set, are shared-key
	// credentials (the connection string also names the endpoint, unless
	// Endpoint is set). Otherwise NewClient takes them from the
	// environment (see EnvConnectionString, EnvAccount, EnvKey) and then
	// from azidentity's DefaultAzureCredential (environment, workload
	// identity, managed identity, Azure CLI).
	ConnectionString string
	AccountKey       string
	// Credential, when set, is the token credential to use instead of
	// DefaultAzureCredential.
	Credential azcore.TokenCredential
	// ClientOptions adjust the client (HTTP transport, retries,
	// per-call policies).
	ClientOptions *service.ClientOptions
	// Client, when set, is the account client Open uses (one NewClient
	// built, shared with the backends of other containers and prefixes);
	// the fields above about the client are then not read.
	Client *service.Client
	// Options tune the backend.
	Options Options
}

// Open builds an account client from cfg (or takes cfg.Client), checks
// that the container can be reached and that the account has no
// hierarchical namespace (ErrHierarchicalNamespace), and returns the
// backend over the container.
func Open(ctx context.Context, cfg Config) (*FS, error) {
	if cfg.Container == "" {
		return nil, errors.New("azureadapter: Config.Container is empty")
	}
	client := cfg.Client
	if client == nil {
		var err error
		if client, err = NewClient(cfg); err != nil {
			return nil, err
		}
	}
	cc := client.NewContainerClient(cfg.Container)
	f, err := New(cc, cfg.Prefix, cfg.Options)
	if err != nil {
		return nil, err
	}
	if _, err := cc.GetProperties(ctx, nil); err != nil {
		return nil, fmt.Errorf("azureadapter: container %q: %w", cfg.Container, mapError(err))
	}
	if err := checkNamespace(ctx, client, cfg.Container); err != nil {
		return nil, err
	}
	return f, nil
}

// flatAccounts remembers the account clients whose account was found to
// have no hierarchical namespace, so that the backends of many tenants
// over one shared client ask once.
var flatAccounts sync.Map // *service.Client -> struct{}

// checkNamespace fails with ErrHierarchicalNamespace when the account of
// client has a hierarchical namespace (Get Account Information, asked
// through the container, which a container-scoped SAS may do).
func checkNamespace(ctx context.Context, client *service.Client, cont string) error {
	if _, ok := flatAccounts.Load(client); ok {
		return nil
	}
	info, err := client.NewContainerClient(cont).GetAccountInfo(ctx, nil)
	if err != nil {
		return fmt.Errorf("azureadapter: account information of container %q: %w", cont, mapError(err))
	}
	if info.IsHierarchicalNamespaceEnabled != nil && *info.IsHierarchicalNamespaceEnabled {
		return ErrHierarchicalNamespace
	}
	flatAccounts.Store(client, struct{}{})
	return nil
}

// NewClient builds the account client Open would build from cfg, for a
// caller that shares one client among the backends of many prefixes or
// containers (through Config.Client). Only the fields about the client are
// read: Account, Endpoint, ConnectionString, AccountKey, Credential and
// ClientOptions. Credentials are taken in this order: cfg.ConnectionString;
// cfg.AccountKey (with cfg.Account); $AZURE_STORAGE_CONNECTION_STRING;
// $AZURE_STORAGE_ACCOUNT with $AZURE_STORAGE_KEY (when it names cfg.Account
// or cfg names none); cfg.Credential; DefaultAzureCredential.
func NewClient(cfg Config) (*service.Client, error) {
	connStr := cfg.ConnectionString
	if connStr == "" && cfg.AccountKey == "" && cfg.Credential == nil {
		connStr = os.Getenv(EnvConnectionString)
	}
	account, key := cfg.Account, cfg.AccountKey
	if connStr != "" {
		cs := parseConnectionString(connStr)
		if cs["AccountName"] != "" && cs["AccountKey"] != "" && (account == "" || account == cs["AccountName"]) {
			account, key = cs["AccountName"], cs["AccountKey"]
		}
		if cfg.Endpoint == "" {
			c, err := service.NewClientFromConnectionString(connStr, cfg.ClientOptions)
			if err != nil {
				return nil, fmt.Errorf("azureadapter: connection string: %w", err)
			}
			return c, nil
		}
	}
	if key == "" && cfg.Credential == nil {
		if envAccount, envKey := os.Getenv(EnvAccount), os.Getenv(EnvKey); envAccount != "" && envKey != "" && (account == "" || account == envAccount) {
			account, key = envAccount, envKey
		}
	}
	endpoint := cfg.Endpoint
	if endpoint == "" {
		if account == "" {
			return nil, errors.New("azureadapter: no endpoint: set Config.Account or Config.Endpoint (or AZURE_STORAGE_CONNECTION_STRING)")
		}
		endpoint = "https://" + account + ".blob.core.windows.net/"
	}
	if !strings.HasSuffix(endpoint, "/") {
		endpoint += "/"
	}
	if key != "" {
		if account == "" {
			return nil, errors.New("azureadapter: a shared key needs the account name (Config.Account)")
		}
		cred, err := service.NewSharedKeyCredential(account, key)
		if err != nil {
			return nil, fmt.Errorf("azureadapter: shared key: %w", err)
		}
		return service.NewClientWithSharedKeyCredential(endpoint, cred, cfg.ClientOptions)
	}
	cred := cfg.Credential
	if cred == nil {
		var err error
		if cred, err = azidentity.NewDefaultAzureCredential(nil); err != nil {
			return nil, fmt.Errorf("azureadapter: DefaultAzureCredential: %w", err)
		}
	}
	return service.NewClient(endpoint, cred, cfg.ClientOptions)
}

// parseConnectionString splits "k=v;k=v" into its fields.
func parseConnectionString(s string) map[string]string {
	out := map[string]string{}
	for part := range strings.SplitSeq(s, ";") {
		if k, v, ok := strings.Cut(part, "="); ok {
			out[strings.TrimSpace(k)] = strings.TrimSpace(v)
		}
	}
	return out
}
