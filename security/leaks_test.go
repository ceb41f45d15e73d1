package security

import (
	"context"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/fencefs/fencefs/backend"
	"github.com/fencefs/fencefs/internal/testserver"
	"github.com/fencefs/fencefs/mounted"
	"github.com/fencefs/fencefs/s3adapter"
	"github.com/fencefs/fencefs/tools"
)

// TestStorageFailuresLeakNothing opens S3 storage, plain and mounted,
// then takes its server away, and calls every tool: each call fails, and
// neither its error nor the text a host shows the model (tools.Message)
// names the endpoint (address, port, URL), the credentials, a storage key
// prefix or a package of the program; tools.Cause keeps all of it for the
// host's log.
func TestStorageFailuresLeakNothing(t *testing.T) {
	secrets := newSecrets()
	accessKey := "AKID" + secrets.nameTok
	srv := httptest.NewServer(testserver.NewS3("bucket", map[string]string{"tenant/a.txt": "hello\n", "tenant/sub/b.txt": "b\n"}))
	client := s3.New(s3.Options{
		BaseEndpoint: aws.String(srv.URL), Region: "us-east-1", UsePathStyle: true,
		RequestChecksumCalculation: aws.RequestChecksumCalculationWhenRequired,
		ResponseChecksumValidation: aws.ResponseChecksumValidationWhenRequired,
		Credentials: aws.CredentialsProviderFunc(func(context.Context) (aws.Credentials, error) {
			return aws.Credentials{AccessKeyID: accessKey, SecretAccessKey: secrets.tok}, nil
		}),
		RetryMaxAttempts: 1,
	})
	plain, err := s3adapter.New(client, "bucket", "tenant", s3adapter.Options{})
	if err != nil {
		t.Fatal(err)
	}
	rooted, err := mounted.New(map[string]backend.Backend{"ws": plain})
	if err != nil {
		t.Fatal(err)
	}
	srv.Close()
	addr := strings.TrimPrefix(srv.URL, "http://")
	_, port, _ := strings.Cut(addr, ":")
	leaks := []string{srv.URL, addr, ":" + port, "127.0.0.1", accessKey, secrets.tok, "bucket", "tenant/", "s3/",
		"tools:", "s3adapter", "dial tcp", "connection refused"}
	for _, ns := range []struct {
		name string
		b    backend.Backend
		cwd  string
	}{{"s3", plain, ""}, {"mounted", rooted, "/ws"}} {
		t.Run(ns.name, func(t *testing.T) {
			s, err := tools.New(ns.b, tools.Options{Cwd: ns.cwd, Tools: tools.AllTools()})
			if err != nil {
				t.Fatal(err)
			}
			for _, tool := range tools.AllTools() {
				for _, p := range []string{"a.txt", "sub", "missing.txt"} {
					out, err := call(t, s, tool, refusalArgs(tool, p)[0])
					if err == nil {
						t.Errorf("%s %s on unreachable storage: succeeded with %q", tool, p, clip(out))
						continue
					}
					for _, text := range []string{err.Error(), tools.Message(err)} {
						for _, bad := range leaks {
							if strings.Contains(text, bad) {
								t.Errorf("%s %s: %q shows %q", tool, p, text, bad)
							}
						}
					}
					if !tools.IsRetry(err) && !strings.Contains(tools.Cause(err).Error(), port) {
						t.Errorf("%s %s: Cause %q does not keep the storage's own error for the log", tool, p, tools.Cause(err))
					}
				}
			}
		})
	}
}
