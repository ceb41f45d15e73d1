// Command scale-bench measures what tenants cost one `fencefs serve
// --http` replica: memory and descriptors per cached tenant, the CPU a
// cold tenant costs over a warm one, read_file and edit_file throughput
// and tails, and the same client against the Go SDK's own floor server.
// It starts the server with static tokens and `--tenant-mount
// ws=local:DIR/{tenant}`, drives it with the official Go SDK client from
// concurrent clients, and prints one table with a goal column and the
// machine's load beside each row.
//
//	scale-bench [-fencefs BIN] [-floor BIN] [-tenants 100,1000] [-clients 16] [-d 3s] [-rounds 6] [-phases throughput,churn,memory]
//	scale-bench -tenants 1000,10000,100000 -phases memory -memlimit 1800MiB   the memory curve of issue 25
//
// Without -fencefs and -floor it builds both (cmd/fencefs and
// bench/cmd/mcp-bench) from the module it runs in. The default run takes
// about a minute; go test never runs it.
package main

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/fencefs/fencefs/bench/internal/servebench"
)

func main() {
	if err := run(os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "scale-bench:", err)
		os.Exit(1)
	}
}

// config is what the flags choose.
type config struct {
	fencefs, floor string
	tenants        []int
	clients        int
	dur            time.Duration
	churnTenants   int
	churnCache     int
	// rounds is how many interleaved rounds the churn measurement makes.
	rounds int
	phases map[string]bool
	// memLimit is fencefs serve's GOMEMLIMIT ("" for none).
	memLimit string
}

func run(args []string, out io.Writer) error {
	fl := flag.NewFlagSet("scale-bench", flag.ContinueOnError)
	var c config
	var tenants string
	fl.StringVar(&c.fencefs, "fencefs", "", "the fencefs binary (built from this module when empty)")
	fl.StringVar(&c.floor, "floor", "", "the mcp-bench binary whose floor server is the SDK's floor (built when empty; \"none\" skips the row)")
	fl.StringVar(&tenants, "tenants", "100,1000", "tenant counts of the memory curve, comma-separated")
	fl.IntVar(&c.clients, "clients", 16, "concurrent clients")
	fl.DurationVar(&c.dur, "d", 3*time.Second, "duration of each throughput measurement")
	fl.IntVar(&c.churnTenants, "churn", 1000, "tenants cycling through the churn measurement")
	fl.IntVar(&c.churnCache, "churn-cache", 100, "--tenant-cache of the churn measurement")
	fl.IntVar(&c.rounds, "rounds", 6, "interleaved rounds of the churn measurement (each server -d in all)")
	fl.StringVar(&c.memLimit, "memlimit", "", "run fencefs serve with this GOMEMLIMIT, such as 1800MiB (default: none)")
	phases := fl.String("phases", "throughput,churn,memory", "the measurements to make, comma-separated")
	if err := fl.Parse(args); err != nil {
		return err
	}
	if c.rounds < 1 {
		return fmt.Errorf("-rounds: %d is not a number of rounds", c.rounds)
	}
	c.phases = map[string]bool{}
	for _, p := range strings.Split(*phases, ",") {
		switch p = strings.TrimSpace(p); p {
		case "throughput", "churn", "memory":
			c.phases[p] = true
		default:
			return fmt.Errorf("-phases: unknown measurement %q", p)
		}
	}
	for _, f := range strings.Split(tenants, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 {
			return fmt.Errorf("-tenants: %q is not a tenant count", f)
		}
		c.tenants = append(c.tenants, n)
	}
	work, err := os.MkdirTemp("", "scale-bench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(work)
	if c.fencefs == "" {
		if c.fencefs, err = servebench.Build(work, "github.com/fencefs/fencefs/cmd/fencefs"); err != nil {
			return err
		}
	}
	if c.floor == "" {
		if c.floor, err = servebench.Build(work, "github.com/fencefs/fencefs/bench/cmd/mcp-bench"); err != nil {
			return err
		}
	}
	maxTenants := max(slices.Max(c.tenants), c.churnTenants, 100)
	fix, err := newFixture(work, maxTenants)
	if err != nil {
		return err
	}
	t := &table{out: out}
	t.header()
	if c.phases["throughput"] {
		if err := throughput(c, fix, t); err != nil {
			return err
		}
	}
	if c.phases["churn"] {
		if err := churn(c, fix, t); err != nil {
			return err
		}
	}
	for _, n := range c.tenants {
		if !c.phases["memory"] {
			break
		}
		if err := memory(c, fix, n, t); err != nil {
			return err
		}
	}
	return nil
}

// fixture is the tenants' directories and their token file.
type fixture struct {
	dir       string   // DIR of ws=local:DIR/{tenant}
	tokenFile string   // every tenant's token, scopes files:read and files:write
	tokens    []string // tenant i's bearer token
}

// newFixture makes n tenants: t<i>/r.txt, t<i>/e<w>.txt for 16 clients,
// and a token file.
func newFixture(work string, n int) (*fixture, error) {
	f := &fixture{dir: filepath.Join(work, "tenants"), tokenFile: filepath.Join(work, "tokens.yaml")}
	var tf strings.Builder
	tf.WriteString("tokens:\n")
	edit := servebench.EditContent()
	for i := range n {
		d := filepath.Join(f.dir, tenantID(i))
		if err := os.MkdirAll(d, 0o755); err != nil {
			return nil, err
		}
		if err := os.WriteFile(filepath.Join(d, "r.txt"), []byte(servebench.ReadContent), 0o644); err != nil {
			return nil, err
		}
		if i < 100 {
			for w := range 64 {
				if err := os.WriteFile(filepath.Join(d, fmt.Sprintf("e%d.txt", w)), []byte(edit), 0o644); err != nil {
					return nil, err
				}
			}
		}
		tok := servebench.NewToken()
		f.tokens = append(f.tokens, tok)
		tf.WriteString(servebench.TokenLine(tenantID(i), tok))
	}
	return f, os.WriteFile(f.tokenFile, []byte(tf.String()), 0o600)
}

func tenantID(i int) string { return "t" + strconv.Itoa(i) }

// server is a running fencefs serve or floor server.
type server struct {
	*servebench.Process
	url  string
	pid  int
	mu   sync.Mutex
	live []float64 // MB live after each collection (gctrace)
	gcs  atomic.Int64
	logs atomic.Int64 // log lines other than gctrace
}

// gcLine matches a gctrace line's heap sizes: start->end->live MB.
var gcLine = regexp.MustCompile(`^gc \d+ .* (\d+)->(\d+)->(\d+) MB`)

// start runs bin with args on a free loopback port and waits until it
// answers.
func start(bin string, args []string, env []string) (*server, error) {
	s := &server{}
	p, err := servebench.Start(bin, args, append([]string{"GODEBUG=gctrace=1"}, env...), s.readLog, time.Minute)
	if err != nil {
		return nil, err
	}
	s.Process, s.url, s.pid = p, p.URL(), p.Cmd.Process.Pid
	return s, nil
}

// readLog counts the server's log lines and keeps the live heap of each
// collection.
func (s *server) readLog(r io.Reader) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if m := gcLine.FindStringSubmatch(line); m != nil {
			live, _ := strconv.ParseFloat(m[3], 64)
			s.mu.Lock()
			s.live = append(s.live, live)
			s.mu.Unlock()
			s.gcs.Add(1)
			continue
		}
		s.logs.Add(1)
		if os.Getenv("SCALE_BENCH_LOG") != "" {
			fmt.Fprintln(os.Stderr, line)
		}
	}
}

// lastLive returns the live heap of the last collection, in MB.
func (s *server) lastLive() float64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.live) == 0 {
		return 0
	}
	return s.live[len(s.live)-1]
}

// rss returns the server's resident set in MB.
func (s *server) rss() float64 {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", s.pid))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(data), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, _ := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 64)
			return kb / 1024
		}
	}
	return 0
}

// fds returns how many descriptors the server holds.
func (s *server) fds() int {
	ents, _ := os.ReadDir(fmt.Sprintf("/proc/%d/fd", s.pid))
	return len(ents)
}

// startFencefs starts `fencefs serve --http` over the fixture with the
// given tenant cache.
func startFencefs(c config, fix *fixture, cache int) (*server, error) {
	var env []string
	if c.memLimit != "" {
		env = append(env, "GOMEMLIMIT="+c.memLimit)
	}
	return start(c.fencefs, []string{"serve", "--auth", "tokens", "--token-file", fix.tokenFile,
		"--tenant-mount", "ws=local:" + fix.dir + "/{tenant}", "--tenant-cache", strconv.Itoa(cache), "--http"}, env)
}

// transport is shared by every client: connections are reused, as an
// agent platform's would be.
var transport = &http.Transport{MaxIdleConnsPerHost: 64, MaxConnsPerHost: 0, IdleConnTimeout: time.Minute}

// connect opens an SDK client session to url with token ("" for none).
func connect(ctx context.Context, url, token string) (*mcp.ClientSession, error) {
	return servebench.Connect(ctx, "scale-bench", url, token, transport)
}

// call makes one tool call and fails on a tool error too.
func call(ctx context.Context, s *mcp.ClientSession, tool string, args map[string]any) error {
	res, err := s.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		return err
	}
	if res.IsError {
		text := ""
		if len(res.Content) > 0 {
			if tc, ok := res.Content[0].(*mcp.TextContent); ok {
				text = tc.Text
			}
		}
		return fmt.Errorf("%s: %s", tool, text)
	}
	return nil
}

// result is one throughput measurement.
type result struct {
	ops     int
	elapsed time.Duration
	lat     []time.Duration
	cpu     time.Duration // the server's
	logs    int64         // the server's log lines
}

func (r result) opsPerSec() float64 { return float64(r.ops) / r.elapsed.Seconds() }
func (r result) cpuPerOp() time.Duration {
	if r.ops == 0 {
		return 0
	}
	return r.cpu / time.Duration(r.ops)
}
func (r result) pct(p float64) time.Duration {
	if len(r.lat) == 0 {
		return 0
	}
	s := slices.Clone(r.lat)
	slices.Sort(s)
	return s[int(p*float64(len(s)-1))]
}

// drive runs c.clients clients for dur (or until each has made its calls
// when dur is 0); op makes client w's call number i with the session
// sessions(w, i) gives.
func drive(c config, srv *server, dur time.Duration, perClient int, op func(ctx context.Context, w, i int) error) (result, error) {
	ctx := context.Background()
	var mu sync.Mutex
	var lat []time.Duration
	var first error
	cpu0, logs0 := srv.CPU(), srv.logs.Load()
	start := time.Now()
	end := start.Add(dur)
	var wg sync.WaitGroup
	for w := range c.clients {
		wg.Go(func() {
			var mine []time.Duration
			for i := 0; ; i++ {
				if dur > 0 && time.Now().After(end) || dur == 0 && i >= perClient {
					break
				}
				t0 := time.Now()
				if err := op(ctx, w, i); err != nil {
					mu.Lock()
					if first == nil {
						first = err
					}
					mu.Unlock()
					return
				}
				mine = append(mine, time.Since(t0))
			}
			mu.Lock()
			lat = append(lat, mine...)
			mu.Unlock()
		})
	}
	wg.Wait()
	r := result{ops: len(lat), elapsed: time.Since(start), lat: lat, cpu: srv.CPU() - cpu0, logs: srv.logs.Load() - logs0}
	return r, first
}

// sessions keeps one client session per client and tenant.
type sessions struct {
	url string
	fix *fixture
	mu  sync.Mutex
	m   map[[2]int]*mcp.ClientSession
}

func (s *sessions) get(ctx context.Context, w, t int) (*mcp.ClientSession, error) {
	s.mu.Lock()
	cs := s.m[[2]int{w, t}]
	s.mu.Unlock()
	if cs != nil {
		return cs, nil
	}
	tok := ""
	if s.fix != nil {
		tok = s.fix.tokens[t]
	}
	cs, err := connect(ctx, s.url, tok)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	s.m[[2]int{w, t}] = cs
	s.mu.Unlock()
	return cs, nil
}

func (s *sessions) close() {
	for _, cs := range s.m {
		cs.Close()
	}
}

// readOp reads r.txt with client w's session to tenant tenantOf(w, i).
func readOp(ss *sessions, tenantOf func(w, i int) int) func(ctx context.Context, w, i int) error {
	return func(ctx context.Context, w, i int) error {
		cs, err := ss.get(ctx, w, tenantOf(w, i))
		if err != nil {
			return err
		}
		return call(ctx, cs, "read_file", map[string]any{"path": "/ws/r.txt"})
	}
}

// editOp toggles line 40 of e<w>.txt in tenant tenantOf(w, i); only
// client w edits that file, so toggled knows its state.
func editOp(ss *sessions, toggled *sync.Map, tenantOf func(w, i int) int) func(ctx context.Context, w, i int) error {
	return func(ctx context.Context, w, i int) error {
		t := tenantOf(w, i)
		cs, err := ss.get(ctx, w, t)
		if err != nil {
			return err
		}
		from, to := "line 40 x", "line 40 y"
		key := [2]int{t, w}
		if v, _ := toggled.Load(key); v == true {
			from, to = to, from
		}
		if err := call(ctx, cs, "edit_file", map[string]any{"path": fmt.Sprintf("/ws/e%d.txt", w), "old_text": from, "new_text": to}); err != nil {
			return err
		}
		toggled.Store(key, from == "line 40 x")
		return nil
	}
}

// throughput measures read_file over 1, 100 and 1,000 tenants, the same
// client against the SDK's floor server, and edit_file in one tenant
// against 100.
func throughput(c config, fix *fixture, t *table) error {
	srv, err := startFencefs(c, fix, 1000)
	if err != nil {
		return err
	}
	defer srv.Stop()
	ss := &sessions{url: srv.url, fix: fix, m: map[[2]int]*mcp.ClientSession{}}
	defer ss.close()
	var warm result
	for _, n := range []int{1, 100, 1000} {
		if n > len(fix.tokens) {
			continue
		}
		of := func(w, i int) int { return (w + i*c.clients) % n }
		// Every session opened, every tenant cached: the steady state.
		if _, err := drive(c, srv, 0, (n+c.clients-1)/c.clients, readOp(ss, of)); err != nil {
			return err
		}
		r, err := drive(c, srv, c.dur, 0, readOp(ss, of))
		if err != nil {
			return err
		}
		if n == 1 {
			warm = r
		}
		t.row(fmt.Sprintf("read_file 4 KiB, %d tenants", n), r.rate(), "", "")
		t.row("  server CPU per call", us(r.cpuPerOp()), "", "")
		if n == 100 {
			t.row("  server log lines per call", fmt.Sprintf("%.2f", float64(r.logs)/float64(r.ops)), "0", okIf(r.logs == 0))
		}
	}
	if c.floor != "none" {
		if err := floorRow(c, warm, t); err != nil {
			return err
		}
	}
	var toggled sync.Map
	one, err := drive(c, srv, c.dur, 0, editOp(ss, &toggled, func(w, i int) int { return 0 }))
	if err != nil {
		return err
	}
	spread, err := drive(c, srv, c.dur, 0, editOp(ss, &toggled, func(w, i int) int { return 1 + (w+i*c.clients)%99 }))
	if err != nil {
		return err
	}
	t.row("edit_file, 16 clients in one tenant", one.rate(), "", "")
	t.row("edit_file, spread over 99 tenants", spread.rate(), "", "")
	ratio := float64(one.pct(0.99)) / float64(spread.pct(0.99))
	t.row("  edit_file p99 one tenant / spread", fmt.Sprintf("%.2fx", ratio), "<= 2x", okIf(ratio <= 2))
	return nil
}

// floorRow measures read_file's text from the SDK's floor server with
// the same client, and compares fencefs's warm read_file with it by the
// server CPU each call costs.
func floorRow(c config, warm result, t *table) error {
	srv, err := start(c.floor, []string{"floor", "-stateless", "-http"}, nil)
	if err != nil {
		return err
	}
	defer srv.Stop()
	ss := &sessions{url: srv.url, m: map[[2]int]*mcp.ClientSession{}}
	defer ss.close()
	op := func(ctx context.Context, w, i int) error {
		cs, err := ss.get(ctx, w, 0)
		if err != nil {
			return err
		}
		return call(ctx, cs, "read_file", map[string]any{"path": "r.txt"})
	}
	if _, err := drive(c, srv, 0, 1, op); err != nil {
		return err
	}
	r, err := drive(c, srv, c.dur, 0, op)
	if err != nil {
		return err
	}
	t.row("read_file, the SDK's floor server (stateless)", r.rate(), "", "")
	t.row("  floor server CPU per call", us(r.cpuPerOp()), "", "")
	// Server CPU per call, not throughput: on a shared machine the
	// throughput of two runs one after the other says more about the
	// load than about the servers.
	ratio := float64(warm.cpuPerOp()) / float64(r.cpuPerOp())
	t.row("  fencefs / floor server CPU per read_file (1 tenant)", fmt.Sprintf("%.2fx", ratio), "<= 1.2x", okIf(ratio <= 1.2))
	return nil
}

// churn measures what a cold tenant costs over a warm one with the same
// access pattern: c.churnTenants tenants cycling, against a server whose
// cache holds c.churnCache of them (nearly every call opens its tenant's
// namespace again) and a server whose cache holds them all. Both see the
// same clients, the same calls and the same tenants' directories, in
// interleaved rounds (the order turning each round, so that a drift of
// the machine's load falls on both); CPU per call is each server
// process's own (/proc). A second all-cached server is the control: its
// difference from the first is the method's noise.
func churn(c config, fix *fixture, t *table) error {
	n := min(c.churnTenants, len(fix.tokens))
	type side struct {
		name string
		srv  *server
		ss   *sessions
		sum  result
		per  []time.Duration // CPU per call of each round
	}
	var sides []*side
	defer func() {
		for _, sd := range sides {
			sd.ss.close()
			sd.srv.Stop()
		}
	}()
	for _, sc := range []struct {
		name  string
		cache int
	}{{"cold", c.churnCache}, {"warm", 2 * n}, {"control", 2 * n}} {
		srv, err := startFencefs(c, fix, sc.cache)
		if err != nil {
			return err
		}
		sides = append(sides, &side{name: sc.name, srv: srv, ss: &sessions{url: srv.url, fix: fix, m: map[[2]int]*mcp.ClientSession{}}})
	}
	cycle := func(w, i int) int { return (w + i*c.clients) % n }
	for _, sd := range sides {
		// Every client session opened; the warm servers cache every
		// tenant.
		if _, err := drive(c, sd.srv, 0, (n+c.clients-1)/c.clients, readOp(sd.ss, cycle)); err != nil {
			return err
		}
	}
	round := c.dur / time.Duration(c.rounds)
	for k := range c.rounds {
		for j := range sides {
			sd := sides[(j+k)%len(sides)]
			r, err := drive(c, sd.srv, round, 0, readOp(sd.ss, cycle))
			if err != nil {
				return err
			}
			sd.sum.ops += r.ops
			sd.sum.elapsed += r.elapsed
			sd.sum.cpu += r.cpu
			sd.sum.lat = append(sd.sum.lat, r.lat...)
			sd.per = append(sd.per, r.cpuPerOp())
		}
	}
	cold, warm, control := sides[0], sides[1], sides[2]
	// spread gives the least and greatest difference of a round.
	spread := func(a, b *side) string {
		d := make([]time.Duration, len(a.per))
		for k := range d {
			d[k] = a.per[k] - b.per[k]
		}
		return fmt.Sprintf("rounds %d to %d µs", slices.Min(d).Microseconds(), slices.Max(d).Microseconds())
	}
	t.row(fmt.Sprintf("read_file, %d tenants cycling, --tenant-cache %d (cold)", n, c.churnCache), cold.sum.rate(), "", "")
	t.row("  server CPU per call", us(cold.sum.cpuPerOp()), "", "")
	t.row(fmt.Sprintf("read_file, the same, --tenant-cache %d (warm)", 2*n), warm.sum.rate(), "", "")
	t.row("  server CPU per call", us(warm.sum.cpuPerOp()), "", "")
	extra := cold.sum.cpuPerOp() - warm.sum.cpuPerOp()
	t.row("  server CPU per call, cold - warm", us(extra)+", "+spread(cold, warm), "<= 50 µs", okIf(extra <= 50*time.Microsecond))
	noise := control.sum.cpuPerOp() - warm.sum.cpuPerOp()
	t.row("  control: a second warm server - warm", us(noise)+", "+spread(control, warm), "", "")
	return nil
}

// memory makes n tenants each call read_file once against a fresh server
// whose cache holds them all, then measures its memory and descriptors.
func memory(c config, fix *fixture, n int, t *table) error {
	if n > len(fix.tokens) {
		return fmt.Errorf("%d tenants, the fixture has %d", n, len(fix.tokens))
	}
	srv, err := startFencefs(c, fix, n)
	if err != nil {
		return err
	}
	defer srv.Stop()
	idleRSS, idleFDs := srv.rss(), srv.fds()
	idleLive := settle(c, fix, srv)
	var next atomic.Int64
	once := func(ctx context.Context, w, i int) error {
		k := int(next.Add(1) - 1)
		if k >= n {
			return nil
		}
		cs, err := connect(ctx, srv.url, fix.tokens[k])
		if err != nil {
			return err
		}
		defer cs.Close()
		return call(ctx, cs, "read_file", map[string]any{"path": "/ws/r.txt"})
	}
	r, err := drive(c, srv, 0, (n+c.clients-1)/c.clients, once)
	if err != nil {
		return err
	}
	live := settle(c, fix, srv)
	rss := srv.rss()
	perTenant := (live - idleLive) * 1024 / float64(n)
	t.row(fmt.Sprintf("%d tenants, one read_file each (connect, call, close)", n), r.rate(), "", "")
	t.row(fmt.Sprintf("  RSS idle -> after %d tenants", n), fmt.Sprintf("%.0f -> %.0f MB", idleRSS, rss), "", "")
	t.row("  live heap per cached tenant", fmt.Sprintf("%.1f KB", perTenant), "<= 16 KB", okIf(perTenant <= 16))
	// The goal is of the whole process at 100,000 tenants: under a
	// memory limit (-memlimit) RSS grows slower than the first tenants'
	// slope says, as the collector gives up its headroom.
	t.row("  RSS per cached tenant", fmt.Sprintf("%.1f KB", (rss-idleRSS)*1024/float64(n)), "", "")
	goal, verdict := "", ""
	if n >= 100000 {
		goal, verdict = "< 2 GB at 100,000", okIf(rss < 2048)
	}
	t.row(fmt.Sprintf("  RSS after %d tenants", n), fmt.Sprintf("%.0f MB", rss), goal, verdict)
	fds := srv.fds() - idleFDs
	t.row("  descriptors held after the calls", fmt.Sprintf("%d more than idle", fds), "bounded, not per tenant", okIf(fds < 1100))
	return nil
}

// settle makes cheap calls on tenant 0, one at a time (so that little
// is allocated while a collection marks), until the server has collected
// twice more, and returns the live heap of its last collection in MB.
func settle(c config, fix *fixture, srv *server) float64 {
	ctx := context.Background()
	cs, err := connect(ctx, srv.url, fix.tokens[0])
	if err != nil {
		return srv.lastLive()
	}
	defer cs.Close()
	want := srv.gcs.Load() + 2
	for end := time.Now().Add(3 * time.Minute); srv.gcs.Load() < want && time.Now().Before(end); {
		call(ctx, cs, "read_file", map[string]any{"path": "/ws/r.txt"})
	}
	return srv.lastLive()
}

// rate formats a result's throughput and latency.
func (r result) rate() string {
	return fmt.Sprintf("%.0f ops/s, p50 %.1f ms, p99 %.1f ms", r.opsPerSec(), ms(r.pct(0.5)), ms(r.pct(0.99)))
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
func us(d time.Duration) string  { return fmt.Sprintf("%d µs", d.Microseconds()) }

func okIf(ok bool) string {
	if ok {
		return "ok"
	}
	return "MISSED"
}

// table prints rows as they are measured, each with the machine's load.
type table struct{ out io.Writer }

func (t *table) header() {
	fmt.Fprintf(t.out, "%-58s %-40s %-24s %-6s %s\n", "measure", "result", "goal", "", "load (1 min)")
}

func (t *table) row(name, result, goal, verdict string) {
	fmt.Fprintf(t.out, "%-58s %-40s %-24s %-6s %s\n", name, result, goal, verdict, servebench.LoadAvg())
}
