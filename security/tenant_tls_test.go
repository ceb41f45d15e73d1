package security

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fencefs/fencefs/tenant/tenanttest"
)

// selfSigned writes a certificate for 127.0.0.1 and its key to dir and
// returns their files and a pool that trusts the certificate.
func selfSigned(t *testing.T, dir string) (certFile, keyFile string, pool *x509.CertPool) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1),
		Subject:      pkix.Name{CommonName: "fencefs test"},
		IPAddresses:  []net.IP{net.ParseIP("127.0.0.1")},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, key.Public(), key)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	pool = x509.NewCertPool()
	pool.AddCert(cert)
	kder, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	certFile, keyFile = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	if err := os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: kder}), 0o600); err != nil {
		t.Fatal(err)
	}
	return certFile, keyFile, pool
}

// TestTenantTLS serves --tls-cert/--tls-key with a certificate made here:
// an SDK client that trusts it works with its token, a client that does
// not trust it is refused before any token is sent, and plain HTTP on the
// port gets no MCP answer.
func TestTenantTLS(t *testing.T) {
	t.Parallel()
	iss := tenanttest.NewIssuer(t)
	base := t.TempDir()
	certFile, keyFile, pool := selfSigned(t, base)
	srv := startJWTServe(t, iss, base, "--tls-cert", certFile, "--tls-key", keyFile)
	if !strings.HasPrefix(srv.url, "https://") {
		t.Fatalf("the server serves %s, want https", srv.url)
	}
	token := iss.Sign(t, tenanttest.Claims{Subject: "t1"})

	// The handshake fails before the request, so the token is never sent.
	untrusting := &http.Transport{TLSClientConfig: &tls.Config{}}
	if _, err := connectTenant(t, srv.url, token, "", untrusting); err == nil || !strings.Contains(err.Error(), "certificate") {
		t.Errorf("a client that does not trust the certificate: %v", err)
	}

	trusting := &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}}
	cs, err := connectTenant(t, srv.url, token, "2026-07-28", trusting)
	if err != nil {
		t.Fatalf("a client that trusts the certificate: %v\n%s", err, srv.log())
	}
	if text, isErr := callTenantTool(t, cs, "read_file", map[string]any{"path": "/ws/secret.txt"}); isErr || !strings.Contains(text, "secret of t1") {
		t.Errorf("read_file over TLS: %q", text)
	}
	if _, err := connectTenant(t, srv.url, "", "", trusting); err == nil {
		t.Error("over TLS without a token: connected")
	}

	plain := "http://" + strings.TrimPrefix(srv.url, "https://")
	resp, err := http.Post(plain, "application/json", strings.NewReader(initializeBody))
	if err == nil {
		defer resp.Body.Close()
		if resp.StatusCode != http.StatusBadRequest {
			t.Errorf("plain HTTP to the TLS port: %s", resp.Status)
		}
	}
}
