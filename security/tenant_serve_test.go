package security

import (
	"bufio"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/fencefs/fencefs/tenant/tenanttest"
)

// The tenant tests attack `fencefs serve --http --auth` as a client on the
// network would: the command is built once per test process (or taken
// from $FENCEFS_TEST_BINARY, to run these tests against another build),
// token issuers are real HTTP servers on 127.0.0.1 with a JWKS, and the
// client is the MCP SDK's.

// serveBinary is the fencefs command the tenant tests start.
var serveBinary = &builtCommand{}

// builtCommand builds cmd/fencefs on first use. Its directory is
// removed by remove, which TestMain calls.
type builtCommand struct {
	once sync.Once
	dir  string
	path string
	err  error
}

func (b *builtCommand) get(t *testing.T) string {
	t.Helper()
	b.once.Do(func() {
		if p := os.Getenv("FENCEFS_TEST_BINARY"); p != "" {
			b.path = p
			return
		}
		b.dir, b.err = os.MkdirTemp("", "fencefs-security-")
		if b.err != nil {
			return
		}
		b.path = filepath.Join(b.dir, "fencefs")
		out, err := exec.Command("go", "build", "-o", b.path, "github.com/fencefs/fencefs/cmd/fencefs").CombinedOutput()
		if err != nil {
			b.err = fmt.Errorf("building fencefs: %v\n%s", err, out)
		}
	})
	if b.err != nil {
		t.Fatal(b.err)
	}
	return b.path
}

func (b *builtCommand) remove() {
	if b.dir != "" {
		os.RemoveAll(b.dir)
	}
}

// serveStartDeadline bounds the wait for the server to log its endpoint;
// a deadline against hangs, not a measure of speed.
const serveStartDeadline = 30 * time.Second

var serveURLPattern = regexp.MustCompile(`url=(https?://\S+/mcp)`)

// tenantServe is a running `fencefs serve --http`.
type tenantServe struct {
	url    string
	cmd    *exec.Cmd
	stderr logBuffer
	// lines receives the stderr lines, as far as waitLog keeps up.
	lines chan string
}

// waitLog waits until the server logs a line containing want.
func (s *tenantServe) waitLog(t *testing.T, want string) {
	t.Helper()
	s.waitLogWithin(t, want, serveStartDeadline)
}

// waitLogWithin waits at most d until the server logs a line containing
// want.
func (s *tenantServe) waitLogWithin(t *testing.T, want string, d time.Duration) {
	t.Helper()
	timer := time.NewTimer(d)
	defer timer.Stop()
	for {
		select {
		case l := <-s.lines:
			if strings.Contains(l, want) {
				return
			}
		case <-timer.C:
			t.Fatalf("the server did not log %q within %v:\n%s", want, d, s.log())
		}
	}
}

func (s *tenantServe) log() string { return s.stderr.String() }

// startTenantServe starts fencefs with args and waits for its endpoint;
// the process is killed when the test ends.
func startTenantServe(t *testing.T, args ...string) *tenantServe {
	t.Helper()
	cmd := exec.Command(serveBinary.get(t), args...)
	pipe, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	s := &tenantServe{cmd: cmd, lines: make(chan string, 4096)}
	exited := make(chan struct{})
	t.Cleanup(func() {
		cmd.Process.Kill()
		<-exited
	})
	found := make(chan string, 1)
	go func() {
		defer close(exited)
		sc := bufio.NewScanner(pipe)
		for sc.Scan() {
			fmt.Fprintln(&s.stderr, sc.Text())
			select {
			case s.lines <- sc.Text():
			default:
			}
			if m := serveURLPattern.FindStringSubmatch(sc.Text()); m != nil {
				select {
				case found <- m[1]:
				default:
				}
			}
		}
		cmd.Wait()
	}()
	select {
	case s.url = <-found:
	case <-exited:
		t.Fatalf("fencefs %s exited before serving:\n%s", strings.Join(args, " "), s.log())
	case <-time.After(serveStartDeadline):
		t.Fatalf("fencefs did not log its URL within %v:\n%s", serveStartDeadline, s.log())
	}
	return s
}

// withBearer sends token on every request through next.
type withBearer struct {
	token string
	next  http.RoundTripper
}

func (b withBearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	if b.token != "" {
		r.Header.Set("Authorization", "Bearer "+b.token)
	}
	return b.next.RoundTrip(r)
}

// connectTenant opens an MCP session to url with token at the protocol
// version ("" for the SDK's), over base (http.DefaultTransport when nil).
func connectTenant(t *testing.T, url, token, version string, base http.RoundTripper) (*mcp.ClientSession, error) {
	t.Helper()
	if base == nil {
		base = http.DefaultTransport
	}
	tr := &mcp.StreamableClientTransport{Endpoint: url, MaxRetries: -1, HTTPClient: &http.Client{Transport: withBearer{token, base}}}
	c := mcp.NewClient(&mcp.Implementation{Name: "security", Version: "1"}, nil)
	cs, err := c.Connect(t.Context(), tr, &mcp.ClientSessionOptions{ProtocolVersion: version})
	if err == nil {
		t.Cleanup(func() { cs.Close() })
	}
	return cs, err
}

// callTenantTool calls tool and returns its text and whether it is an
// error result; a protocol error fails the test.
func callTenantTool(t *testing.T, cs *mcp.ClientSession, tool string, args map[string]any) (string, bool) {
	t.Helper()
	res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		t.Fatalf("%s %v: %v", tool, args, err)
	}
	var texts []string
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			texts = append(texts, tc.Text)
		}
	}
	return strings.Join(texts, "\n"), res.IsError
}

// tenantDirs makes base/tenants/{t1,t2,t10}, each with secret.txt,
// sub/deep.txt and only-<tenant>.txt holding "secret of <tenant>", and
// returns the --tenant-mount template over them.
func tenantDirs(t *testing.T, base string) string {
	t.Helper()
	for _, tn := range []string{"t1", "t2", "t10"} {
		dir := filepath.Join(base, "tenants", tn, "sub")
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		for _, f := range []string{filepath.Join(dir, "..", "secret.txt"), filepath.Join(dir, "deep.txt"), filepath.Join(dir, "..", "only-"+tn+".txt")} {
			if err := os.WriteFile(f, []byte("secret of "+tn+"\n"), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	return "ws=local:" + filepath.Join(base, "tenants", "{tenant}")
}

// startJWTServe serves the tenants of tenantDirs with JWT auth from iss
// and every tool.
func startJWTServe(t *testing.T, iss *tenanttest.Issuer, base string, args ...string) *tenantServe {
	t.Helper()
	return startTenantServe(t, append([]string{"serve", "--http", "127.0.0.1:0", "--tools", "all",
		"--auth", "jwt", "--oidc-issuer", iss.URL, "--oidc-audience", iss.Audience,
		"--tenant-mount", tenantDirs(t, base)}, args...)...)
}
