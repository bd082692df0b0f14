package main

import (
	"context"
	"debug/buildinfo"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"
)

// vsSide is one of the two servers --vs-dawn-ts compares: how to start it
// on its app with a fresh store, and the route its requests name.
type vsSide struct {
	name  string // "ts" or "go"
	label string
	app   string
	route string
	port  int // 0: any free port
	// reset empties the app's store; launch starts the server on port.
	reset  func() error
	launch func(ctx context.Context, port int) (*proc, error)
}

// vsFigure is one row of the comparison: its value on each side, once a
// round.
type vsFigure struct {
	Key   string    `json:"key"`
	Name  string    `json:"name"`
	Unit  string    `json:"unit"`
	TS    []float64 `json:"ts"`
	Go    []float64 `json:"go"`
	Ratio float64   `json:"go_over_ts"` // median of the per-round ratios Go/TS
	// MedianTS and MedianGo are the medians of the rounds.
	MedianTS float64 `json:"median_ts"`
	MedianGo float64 `json:"median_go"`
}

// vsResult is what --vs-dawn-ts measured, as --json prints it.
type vsResult struct {
	Command  string            `json:"command"`
	Started  time.Time         `json:"started"`
	Rounds   int               `json:"rounds"`
	Config   map[string]any    `json:"config"`
	Versions map[string]string `json:"versions"`
	// Load is the load average (1, 5, 15 min) at the start, after each
	// round, and at the end.
	Load    []string    `json:"load_average"`
	Figures []*vsFigure `json:"figures"`
	byKey   map[string]*vsFigure
}

// vsRows are the comparison's rows, in the order the table prints them.
var vsRows = []struct{ key, name, unit string }{
	{"seq_rps", "runs/wait sequential", "runs/s"},
	{"conc_rps", "runs/wait %d concurrent", "runs/s"},
	{"seq_p50", "runs/wait sequential p50", "ms"},
	{"mock_pair", "the mock's own time for the run's two requests (p50)", "ms"},
	{"overhead", "server's own time per run (p50 − the mock's own time)", "ms"},
	{"cpu_seq", "server CPU per run, sequential", "ms"},
	{"cpu_conc", "server CPU per run, %d concurrent", "ms"},
	{"rss_idle", "RSS idle", "MiB"},
	{"rss_threads", "RSS after %d threads", "MiB"},
	{"cold_start", "cold start (exec to /healthz 200, fresh store)", "ms"},
	{"model_bytes", "bytes sent to the model per run", "B"},
}

func newVSResult(o options) *vsResult {
	r := &vsResult{Started: time.Now().UTC(), Rounds: o.rounds, byKey: map[string]*vsFigure{}}
	for _, row := range vsRows {
		name := row.name
		switch row.key {
		case "conc_rps", "cpu_conc":
			name = fmt.Sprintf(name, o.concurrency)
		case "rss_threads":
			name = fmt.Sprintf(name, o.threads)
		}
		f := &vsFigure{Key: row.key, Name: name, Unit: row.unit}
		r.Figures = append(r.Figures, f)
		r.byKey[row.key] = f
	}
	return r
}

func (r *vsResult) add(side, key string, v float64) {
	f := r.byKey[key]
	if side == "ts" {
		f.TS = append(f.TS, v)
	} else {
		f.Go = append(f.Go, v)
	}
}

// finish works out each figure's medians and its ratio Go/TS: the median
// of the ratios of the rounds, each of which measured both servers.
func (r *vsResult) finish() {
	for _, f := range r.Figures {
		f.MedianTS, f.MedianGo = median(f.TS), median(f.Go)
		var ratios []float64
		for i := range min(len(f.TS), len(f.Go)) {
			if f.TS[i] != 0 {
				ratios = append(ratios, f.Go[i]/f.TS[i])
			}
		}
		f.Ratio = median(ratios)
	}
}

// write prints the comparison as a table: each figure's median on Dawn
// (TypeScript) and on Dawn for Go with the min–max of the rounds, and Go/TS.
func (r *vsResult) write(w io.Writer) {
	fmt.Fprintf(w, "Dawn (TypeScript) %s vs Dawn for Go, rounds: %d, alternating which goes first; medians (min–max of the rounds)\n", r.Versions["dawn_ts"], r.Rounds)
	fmt.Fprintf(w, "load average: %s\n\n", strings.Join(r.Load, " → "))
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "figure\tDawn (TS)\tDawn for Go\tGo/TS")
	for _, f := range r.Figures {
		if len(f.TS) == 0 && len(f.Go) == 0 {
			continue
		}
		fmt.Fprintf(tw, "%s\t%s (%s)\t%s (%s)\t%s\n", f.Name, valueText(f.MedianTS, f.Unit), spread(f.TS),
			valueText(f.MedianGo, f.Unit), spread(f.Go), ratioText(f.Ratio))
	}
	_ = tw.Flush()
}

// ratioText prints a ratio with three significant digits.
func ratioText(v float64) string {
	switch {
	case v == 0:
		return "-"
	case v >= 10:
		return fmt.Sprintf("%.1f", v)
	case v >= 1:
		return fmt.Sprintf("%.2f", v)
	}
	return strconv.FormatFloat(v, 'g', 3, 64)
}

// dawnTSMain runs --vs-dawn-ts: Dawn (TypeScript) from the checkout at
// --dawn-ts-src and Dawn for Go (--dawn, or built from ./cmd/dawn) on the
// same workload, one aimock, --rounds rounds alternating which goes first,
// and prints the comparison.
func dawnTSMain(ctx context.Context, o options) int {
	res, err := runVsDawnTS(ctx, o)
	if res != nil {
		res.finish()
		if o.json {
			enc := json.NewEncoder(os.Stdout)
			enc.SetIndent("", "  ")
			_ = enc.Encode(res)
			res.write(os.Stderr)
		} else {
			res.write(os.Stdout)
		}
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench --vs-dawn-ts:", err)
		return 1
	}
	return 0
}

// runVsDawnTS sets up both servers and measures them round by round.
func runVsDawnTS(ctx context.Context, o options) (*vsResult, error) {
	sides, mock, cleanup, versions, err := setupVsDawnTS(ctx, o)
	defer cleanup()
	if err != nil {
		return nil, err
	}
	res := newVSResult(o)
	res.Command = "go run ./bench " + strings.Join(os.Args[1:], " ")
	res.Versions = versions
	res.Config = map[string]any{
		"runs": o.runs, "concurrency": o.concurrency, "warmup": o.warmup, "pairs": o.pairs,
		"threads": o.threads, "samples": o.samples, "rounds": o.rounds,
		"route_go": sides[1].route, "route_ts": sides[0].route,
	}
	res.Load = append(res.Load, loadAverage())
	for round := range o.rounds {
		order := []*vsSide{sides[0], sides[1]}
		if round%2 == 1 {
			order[0], order[1] = order[1], order[0]
		}
		for _, s := range order {
			logf("round %d/%d: %s", round+1, o.rounds, s.label)
			t := vsTurn{o: o, side: s, mock: mock, res: res, tag: fmt.Sprintf("%s-%d-%s", strconv.FormatInt(time.Now().UnixNano(), 36), round, s.name)}
			if err := t.run(ctx); err != nil {
				return res, fmt.Errorf("round %d, %s: %w", round+1, s.label, err)
			}
		}
		res.Load = append(res.Load, loadAverage())
	}
	return res, nil
}

// setupVsDawnTS installs Node and pnpm, builds the checkout, builds or
// takes the Go binary, writes both apps and starts aimock. The returned
// cleanup stops aimock and removes the temp folder; sides are TS, then Go.
func setupVsDawnTS(ctx context.Context, o options) ([]*vsSide, string, func(), map[string]string, error) {
	tmp, err := os.MkdirTemp("", "dawnbench-ts-")
	if err != nil {
		return nil, "", func() {}, nil, err
	}
	var mock *proc
	cleanup := func() {
		if mock != nil {
			mock.stop(2 * time.Second)
		}
		_ = os.RemoveAll(tmp)
	}
	fail := func(err error) ([]*vsSide, string, func(), map[string]string, error) {
		return nil, "", cleanup, nil, err
	}
	checkout, err := readCheckout(ctx, o.dawnTSSrc)
	if err != nil {
		return fail(err)
	}
	if checkout.cliVersion != dawnTSVersion {
		logf("note: the checkout's @dawn-ai/cli is %s, the comparison is written for %s", checkout.cliVersion, dawnTSVersion)
	}
	cache := o.toolsCache
	if cache == "" {
		if cache, err = toolsCache(); err != nil {
			return fail(err)
		}
	}
	tc, err := installToolchain(ctx, cache, o.nodeVersion, checkout.pnpmVersion)
	if err != nil {
		return fail(err)
	}
	if err := buildCheckout(ctx, tc, checkout); err != nil {
		return fail(err)
	}
	goBin, err := goBinary(ctx, o, tmp)
	if err != nil {
		return fail(err)
	}
	aimockBin, err := aimockCLI(o)
	if err != nil {
		return fail(err)
	}
	fixtures := filepath.Join(tmp, "aimock.json")
	if err := os.WriteFile(fixtures, aimockFixture, 0o644); err != nil {
		return fail(err)
	}
	if mock, err = startAimockOn(ctx, aimockBin, fixtures, o.port); err != nil {
		return fail(err)
	}
	mockEnv := []string{"OPENAI_BASE_URL=" + mock.url + "/v1", "OPENAI_API_KEY=test"}
	ts, goSide, err := vsSides(tmp, checkout, tc, goBin, mockEnv, o)
	if err != nil {
		return fail(err)
	}
	versions := map[string]string{
		"dawn_ts":        "@dawn-ai/cli " + checkout.cliVersion,
		"dawn_ts_commit": checkout.commit,
		"node":           tc.nodeVersion,
		"pnpm":           tc.pnpmVersion,
		"dawn_ts_src":    checkout.dir,
		"dawn_go":        goBin,
		"dawn_go_commit": goCommit(ctx, o, goBin),
	}
	return []*vsSide{ts, goSide}, mock.url, cleanup, versions, nil
}

// vsSides writes the two apps under tmp and says how to start each
// server.
func vsSides(tmp string, c tsCheckout, tc tsToolchain, goBin string, mockEnv []string, o options) (*vsSide, *vsSide, error) {
	tsApp, goApp := filepath.Join(tmp, "ts-app"), filepath.Join(tmp, "go-app")
	if err := writeTSApp(tsApp, c); err != nil {
		return nil, nil, err
	}
	if err := writeWorkloadApp(goApp, "openai:gpt-4o-mini"); err != nil {
		return nil, nil, err
	}
	tsEnv := append(tc.env(), mockEnv...)
	cli := filepath.Join(c.dir, "packages", "cli", "dist", "index.js")
	ts := &vsSide{
		name: "ts", label: "Dawn (TypeScript)", app: tsApp, route: dawnTSRoute, port: portOf(o.port, 2),
		reset: func() error { return resetTSStore(tsApp) },
		launch: func(ctx context.Context, port int) (*proc, error) {
			args := []string{cli, "start", "--host", "127.0.0.1", "--port", strconv.Itoa(port)}
			return startIn(ctx, tsApp, "Dawn (TypeScript) dawn start", tc.node, args, tsEnv, 60*time.Second)
		},
	}
	goSide := &vsSide{
		name: "go", label: "Dawn for Go", app: goApp, route: o.route, port: portOf(o.port, 1),
		reset: func() error { return os.RemoveAll(filepath.Join(goApp, ".dawn")) },
		launch: func(ctx context.Context, port int) (*proc, error) {
			args := []string{"start", "--app", goApp, "--host", "127.0.0.1", "--port", strconv.Itoa(port)}
			return start(ctx, "dawn start", goBin, args, mockEnv, 30*time.Second)
		},
	}
	return ts, goSide, nil
}

// portOf is the port base+offset, or 0 (any free port) when base is 0.
func portOf(base, offset int) int {
	if base == 0 {
		return 0
	}
	return base + offset
}

// goBinary is --dawn, or ./cmd/dawn built from the repository into dir.
func goBinary(ctx context.Context, o options, dir string) (string, error) {
	if o.dawn != "" {
		return filepath.Abs(o.dawn)
	}
	repo, err := repoRoot()
	if err != nil {
		return "", err
	}
	logf("building ./cmd/dawn in %s", repo)
	return buildDawn(ctx, repo, dir)
}

// aimockCLI is --aimock, or tools/aimock's llmock.
func aimockCLI(o options) (string, error) {
	if o.aimock != "" {
		return o.aimock, nil
	}
	repo, err := repoRoot()
	if err != nil {
		return "", err
	}
	bin := filepath.Join(repo, "tools", "aimock", "node_modules", ".bin", "llmock")
	if !fileExists(bin) {
		return "", fmt.Errorf("aimock is not installed at %s: run npm ci --prefix tools/aimock, or pass --aimock", bin)
	}
	return bin, nil
}

// startAimockOn is startAimock on port (0: any free port).
func startAimockOn(ctx context.Context, bin, fixtures string, port int) (*proc, error) {
	if port == 0 {
		return startAimock(ctx, bin, fixtures)
	}
	args := []string{"-p", strconv.Itoa(port), "-h", "127.0.0.1", "-f", fixtures, "-l", "0", "-c", "4096", "--log-level", "info", "--journal-max", "16"}
	p, err := start(ctx, "aimock", bin, args, nil, 20*time.Second)
	if err != nil {
		return nil, err
	}
	p.url = "http://127.0.0.1:" + strconv.Itoa(port)
	if err := waitHealthy(ctx, p.url+"/health", 10*time.Second); err != nil {
		p.stop(time.Second)
		return nil, err
	}
	return p, nil
}

// goCommit is the commit the Go binary was built from: the repository's
// HEAD when the tool built it, else the revision the binary records (empty
// when it records none).
func goCommit(ctx context.Context, o options, bin string) string {
	if o.dawn == "" {
		if repo, err := repoRoot(); err == nil {
			if out, err := exec.CommandContext(ctx, "git", "-C", repo, "rev-parse", "HEAD").Output(); err == nil {
				return strings.TrimSpace(string(out))
			}
		}
	}
	info, err := buildinfo.ReadFile(bin)
	if err != nil {
		return ""
	}
	for _, s := range info.Settings {
		if s.Key == "vcs.revision" {
			return s.Value
		}
	}
	return ""
}

// vsTurn is one server's turn in one round.
type vsTurn struct {
	o    options
	side *vsSide
	mock string
	res  *vsResult
	tag  string
}

// run measures one turn: --samples cold starts on a fresh store (the last
// server stays up), its RSS idle and after --threads runs on fresh threads,
// the run's two model requests timed on aimock alone, then --runs
// runs/wait sequential and with --concurrency clients, with the server's
// CPU (its process and its children) around each.
func (t vsTurn) run(ctx context.Context) error {
	srv, err := t.coldStarts(ctx)
	if err != nil {
		return err
	}
	defer srv.stop(15 * time.Second)
	if err := t.measure(ctx, srv); err != nil {
		return fmt.Errorf("%w; the server's last output:\n%s", err, srv.logs)
	}
	return nil
}

// measure takes the turn's figures from the running server srv.
func (t vsTurn) measure(ctx context.Context, srv *proc) error {
	pid := srv.pid()
	time.Sleep(time.Second) // let start-up work that does not block /healthz settle
	idle, err := treeRSS(pid)
	if err != nil {
		return err
	}
	t.res.add(t.side.name, "rss_idle", float64(idle)/(1<<20))
	c := newClient(srv.url, t.side.route, t.o.concurrency)
	if _, err := runBatch(ctx, t.o.threads, 1, t.op(c, "threads")); err != nil {
		return err
	}
	after, err := treeRSS(pid)
	if err != nil {
		return err
	}
	t.res.add(t.side.name, "rss_threads", float64(after)/(1<<20))
	if _, err := runBatch(ctx, t.o.warmup, t.o.concurrency, t.op(c, "warm")); err != nil {
		return err
	}
	return t.timed(ctx, c, pid)
}

// coldStarts starts the server --samples times on a fresh store, records
// the median time from exec to /healthz 200, and returns the last server,
// still running.
func (t vsTurn) coldStarts(ctx context.Context) (*proc, error) {
	var times []time.Duration
	var srv *proc
	for i := range t.o.samples {
		if srv != nil {
			srv.stop(15 * time.Second)
		}
		if err := t.side.reset(); err != nil {
			return nil, err
		}
		port := t.side.port
		if port == 0 {
			var err error
			if port, err = freePort(); err != nil {
				return nil, err
			}
		}
		t0 := time.Now()
		p, err := t.side.launch(ctx, port)
		if err != nil {
			return nil, fmt.Errorf("cold start %d: %w", i+1, err)
		}
		p.url = "http://127.0.0.1:" + strconv.Itoa(port)
		if err := waitHealthy(ctx, p.url+"/healthz", 30*time.Second); err != nil {
			p.stop(5 * time.Second)
			return nil, err
		}
		times = append(times, time.Since(t0))
		srv = p
	}
	t.res.add(t.side.name, "cold_start", median(millis(times)))
	return srv, nil
}

// timed runs the throughput batches and the mock's own timing.
func (t vsTurn) timed(ctx context.Context, c *loadClient, pid int) error {
	if err := t.op(c, "capture")(ctx, 0); err != nil {
		return err
	}
	pair, err := capturePair(ctx, t.mock)
	if err != nil {
		return err
	}
	t.res.add(t.side.name, "model_bytes", float64(len(pair.plan)+len(pair.answer)))
	cpu0, err := treeCPU(pid)
	if err != nil {
		return err
	}
	seq, err := runBatch(ctx, t.o.runs, 1, t.op(c, "seq"))
	if err != nil {
		return err
	}
	cpu1, _ := treeCPU(pid)
	conc, err := runBatch(ctx, t.o.runs, t.o.concurrency, t.op(c, "conc"))
	if err != nil {
		return err
	}
	cpu2, _ := treeCPU(pid)
	mb, err := runBatch(ctx, t.o.pairs, 1, newPairTimer(t.mock, pair).once)
	if err != nil {
		return fmt.Errorf("timing aimock alone: %w", err)
	}
	perRun := func(d time.Duration, b batch) float64 {
		return float64(d) / float64(time.Millisecond) / float64(max(len(b.Latencies), 1))
	}
	seqP50, pairP50 := median(millis(seq.Latencies)), median(millis(mb.Latencies))
	for key, v := range map[string]float64{
		"seq_rps": seq.rate(), "conc_rps": conc.rate(), "seq_p50": seqP50, "mock_pair": pairP50,
		"overhead": seqP50 - pairP50, "cpu_seq": perRun(cpu1-cpu0, seq), "cpu_conc": perRun(cpu2-cpu1, conc),
	} {
		t.res.add(t.side.name, key, v)
	}
	return nil
}

// op is a runs/wait on the i-th fresh thread of phase.
func (t vsTurn) op(c *loadClient, phase string) timed {
	return func(ctx context.Context, i int) error {
		_, err := c.wait(ctx, fmt.Sprintf("%s-%s-%d", t.tag, phase, i))
		return err
	}
}
