package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/dawn-go/dawn/stream"
)

// inflightResult is what --inflight measured: N clients each running the
// workload over and over against one `dawn start` whose model answers each
// call after --model-latency.
type inflightResult struct {
	Binary        string  `json:"binary"`
	Mock          string  `json:"mock"` // its URL: https (HTTP/2) or http (HTTP/1.1)
	API           string  `json:"api"`  // "stream" or "wait"
	Clients       int     `json:"clients"`
	ModelLatency  string  `json:"model_latency"`
	Ramp          string  `json:"ramp"`
	Hold          string  `json:"hold"`
	MaxRuns       int     `json:"max_runs,omitempty"`
	LoadBefore    string  `json:"load_before"`
	LoadAfter     string  `json:"load_after"`
	Runs          int     `json:"runs"`        // completed, all phases
	SteadyRuns    int     `json:"steady_runs"` // started during the hold
	RunsPerSecond float64 `json:"runs_per_second_hold"`
	Errors        int     `json:"errors"`
	// ErrorKinds counts errors by kind: "http 503 overloaded",
	// "connect: connection refused", "stream ended before done", ...
	ErrorKinds map[string]int `json:"error_kinds,omitempty"`

	PeakInFlight   int64    `json:"peak_in_flight"`        // client side: requests sent, done not yet read
	MeanInFlight   float64  `json:"mean_in_flight"`        // during the hold
	PeakModelCalls int64    `json:"peak_model_calls"`      // calls waiting in the mock at once
	IdleRSSMiB     float64  `json:"idle_rss_mib"`          // after the warm-up
	PeakRSSMiB     float64  `json:"peak_rss_mib"`          // over the whole measure
	SteadyRSSMiB   float64  `json:"steady_rss_mib"`        // median during the hold
	RSSPerRunKiB   float64  `json:"rss_per_run_kib"`       // (steady − idle) / mean in flight
	Goroutines     int      `json:"goroutines"`            // mid-hold, from DAWN_DEBUG_ADDR; 0 when not served
	Threads        int      `json:"threads"`               // OS threads, mid-hold
	FDs            int      `json:"fds"`                   // open descriptors, mid-hold
	FDLimit        string   `json:"fd_limit"`              // the server's RLIMIT_NOFILE soft/hard
	CPUSeconds     float64  `json:"cpu_seconds_hold"`      // server utime+stime during the hold
	CPUPerRunMS    float64  `json:"cpu_per_run_ms"`        // over the runs completed during the hold
	ToolCPUSeconds float64  `json:"tool_cpu_seconds_hold"` // the load tool's own: its clients and the mock
	DurationP50MS  float64  `json:"duration_p50_ms"`       // steady runs
	DurationP99MS  float64  `json:"duration_p99_ms"`       //
	ModelP50MS     float64  `json:"model_p50_ms"`          // time the mock spent on the run's calls
	OverheadP50MS  float64  `json:"overhead_p50_ms"`       // duration − model time
	OverheadP99MS  float64  `json:"overhead_p99_ms"`       //
	OverheadMaxMS  float64  `json:"overhead_max_ms"`       //
	CallsPerRun    float64  `json:"model_calls_per_run"`
	BytesPerRun    float64  `json:"model_bytes_per_run"` // request bodies sent to the model
	PromptTokens   float64  `json:"prompt_tokens_per_run"`
	OutputTokens   float64  `json:"output_tokens_per_run"`
	TokensFrom     string   `json:"tokens_from"`
	Profiles       string   `json:"profiles,omitempty"`
	Notes          []string `json:"notes,omitempty"`
}

// inflightRun is one finished run.
type inflightRun struct {
	start    time.Time
	duration time.Duration
	model    mockUse
	in, out  int64 // usage from model_call events; -1 when not read
}

type inflighter struct {
	opts   options
	mock   *slowMock
	url    string
	pid    int
	debug  string // the server's DAWN_DEBUG_ADDR, http://...
	http   *http.Client
	tag    string
	body   func(ref string) []byte
	open   atomic.Int64
	mu     sync.Mutex
	runs   []inflightRun
	errors map[string]int
	res    *inflightResult
}

// inflightMain runs --inflight and prints its result; the exit code is 1
// when a run failed or the tool could not measure.
func inflightMain(ctx context.Context, opts options) int {
	res, err := runInflight(ctx, opts)
	if res != nil {
		if opts.json {
			enc := json.NewEncoder(os.Stdout)
			enc.SetIndent("", "  ")
			_ = enc.Encode(res)
		} else {
			writeInflight(os.Stdout, res)
		}
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench --inflight:", err)
		return 1
	}
	if res.Errors > 0 {
		return 1
	}
	return 0
}

func runInflight(ctx context.Context, opts options) (*inflightResult, error) {
	// Each run holds a connection from the tool and one from the server to
	// the mock, on both ends: make room for them.
	raiseFileLimit(uint64(4*opts.inflight + 4096))
	tmp, bin, err := scratch(ctx, opts, "dawninflight-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	app := filepath.Join(tmp, "app")
	if err := writeWorkloadApp(app, "openai:gpt-4o-mini"); err != nil {
		return nil, err
	}
	caFile := filepath.Join(tmp, "mock-ca.pem")
	if opts.mockHTTP1 {
		caFile = ""
	}
	mock, err := startSlowMock(opts.modelLatency, caFile)
	if err != nil {
		return nil, err
	}
	defer mock.close()
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	debug := "127.0.0.1:" + strconv.Itoa(port)
	args := []string{"start", "--app", app, "--host", "127.0.0.1", "--port", "0", "--max-conns", strconv.Itoa(2*opts.inflight + 256)}
	// Room for every client's run, and for a run whose slot is freed
	// just after its client has read the end and started the next.
	maxRuns := opts.maxRuns
	if maxRuns <= 0 {
		maxRuns = opts.inflight + 256
	}
	args = append(args, "--max-runs", strconv.Itoa(maxRuns))
	env := []string{"OPENAI_BASE_URL=" + mock.url, "OPENAI_API_KEY=test", "DAWN_DEBUG_ADDR=" + debug}
	if caFile != "" {
		env = append(env, "SSL_CERT_FILE="+caFile)
	}
	srv, err := start(ctx, "dawn start", bin, args, env, 30*time.Second)
	if err != nil {
		return nil, err
	}
	defer srv.stop(30 * time.Second)
	if err := waitHealthy(ctx, srv.url+"/healthz", 10*time.Second); err != nil {
		return nil, err
	}
	tr := &http.Transport{
		MaxIdleConns: opts.inflight + 64, MaxIdleConnsPerHost: opts.inflight + 64,
		IdleConnTimeout: time.Minute, DisableCompression: true,
		DialContext: (&net.Dialer{Timeout: 30 * time.Second}).DialContext,
	}
	defer tr.CloseIdleConnections()
	in := &inflighter{
		opts: opts, mock: mock, url: srv.url, pid: srv.pid(), debug: "http://" + debug,
		http: &http.Client{Transport: tr}, tag: strconv.FormatInt(time.Now().UnixNano(), 36),
		errors: map[string]int{},
		res: &inflightResult{
			Binary: bin, Mock: mock.url, API: opts.inflightAPI, Clients: opts.inflight, ModelLatency: opts.modelLatency.String(),
			Ramp: opts.ramp.String(), Hold: opts.hold.String(), MaxRuns: maxRuns, LoadBefore: loadAverage(),
		},
	}
	in.body = func(ref string) []byte {
		b, _ := json.Marshal(map[string]any{"route": opts.route, "input": map[string]any{"messages": []map[string]string{{"role": "user", "content": userMessage + refMarker + ref + ")"}}}})
		return b
	}
	if opts.dawn == "" {
		in.res.Binary = "./cmd/dawn (built)"
	}
	in.res.FDLimit = fdLimit(in.pid)
	err = in.measure(ctx)
	in.res.LoadAfter = loadAverage()
	return in.res, err
}

// measure warms the server up, ramps the clients up, holds them for the
// hold, lets the runs in flight finish and fills in the result.
func (in *inflighter) measure(ctx context.Context) error {
	o := in.opts
	if err := in.warmUp(ctx); err != nil {
		return err
	}
	start := time.Now()
	rampEnd := start.Add(o.ramp)
	holdEnd := rampEnd.Add(o.hold)
	stopCtx, stop := context.WithDeadline(ctx, holdEnd)
	defer stop()

	sm := &holdSampler{in: in, rampEnd: rampEnd, midHold: rampEnd.Add(o.hold / 2)}
	var sampleWG sync.WaitGroup
	sampleWG.Go(func() { sm.run(ctx, stopCtx) })
	in.runClients(ctx, stopCtx, start) // the runs in flight at the end of the hold finish
	stop()
	sampleWG.Wait()
	if ctx.Err() != nil {
		in.res.Notes = append(in.res.Notes, "cut short by --duration or a signal")
	}
	in.fillResult(sm, rampEnd, holdEnd)
	return nil
}

// warmUp runs one round of runs at once, not counted (a round lasts two
// model latencies), then resets the counts and reads the idle RSS.
func (in *inflighter) warmUp(ctx context.Context) error {
	var warm sync.WaitGroup
	for i := range 128 {
		warm.Go(func() { _ = in.one(ctx, fmt.Sprintf("%s-warm-%d", in.tag, i)) })
	}
	warm.Wait()
	in.mu.Lock()
	in.runs, in.errors = nil, map[string]int{}
	in.mu.Unlock()
	// The peaks are of the measured clients, not of the warm-up's 128.
	atomic.StoreInt64(&in.res.PeakInFlight, 0)
	atomic.StoreInt64(&in.mock.peak, 0)
	time.Sleep(200 * time.Millisecond)
	idle, err := processRSS(in.pid)
	if err != nil {
		return err
	}
	in.res.IdleRSSMiB = inMiB(idle)
	return nil
}

// runClients starts each client at its place in the ramp; each runs the
// workload until the hold ends (stopCtx). It returns when every client's
// last run has finished.
func (in *inflighter) runClients(ctx, stopCtx context.Context, start time.Time) {
	o := in.opts
	var clients sync.WaitGroup
	for i := range o.inflight {
		at := start.Add(time.Duration(int64(o.ramp) * int64(i) / int64(o.inflight)))
		clients.Go(func() {
			select {
			case <-time.After(time.Until(at)):
			case <-stopCtx.Done():
				return
			}
			for k := 0; stopCtx.Err() == nil; k++ {
				if err := in.one(ctx, fmt.Sprintf("%s-c%d-%d", in.tag, i, k)); err != nil {
					// Back off so that a refusing server is not flooded.
					select {
					case <-time.After(time.Second):
					case <-stopCtx.Done():
					}
				}
			}
		})
	}
	clients.Wait()
}

// holdSampler samples the server during a measurement: RSS and in-flight
// counts every 200 ms; CPU and runs at the end of the ramp and of the
// hold; the server's goroutines, threads and descriptors once, in the
// middle of the hold.
type holdSampler struct {
	in                  *inflighter
	rampEnd, midHold    time.Time
	holdRSS, holdOpen   []float64
	peakRSS             int64
	cpuAtRamp, cpuEnd   time.Duration
	toolAtRamp, toolEnd time.Duration
	runsAtRamp, runsAt  int
	rampDone, midDone   bool
}

// run samples until stopCtx ends.
func (sm *holdSampler) run(ctx, stopCtx context.Context) {
	tick := time.NewTicker(200 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-stopCtx.Done():
			sm.cpuEnd, _ = processCPU(sm.in.pid)
			sm.toolEnd, _ = processCPU(os.Getpid())
			sm.runsAt = sm.in.runCount()
			return
		case now := <-tick.C:
			sm.sample(ctx, now)
		}
	}
}

// sample takes one tick's samples.
func (sm *holdSampler) sample(ctx context.Context, now time.Time) {
	in := sm.in
	rss, err := processRSS(in.pid)
	if err != nil {
		return
	}
	sm.peakRSS = max(sm.peakRSS, rss)
	if now.After(sm.rampEnd) {
		if !sm.rampDone {
			sm.rampDone = true
			sm.cpuAtRamp, _ = processCPU(in.pid)
			sm.toolAtRamp, _ = processCPU(os.Getpid())
			sm.runsAtRamp = in.runCount()
		}
		sm.holdRSS = append(sm.holdRSS, inMiB(rss))
		sm.holdOpen = append(sm.holdOpen, float64(in.open.Load()))
	}
	if now.After(sm.midHold) && !sm.midDone {
		sm.midDone = true
		in.res.Goroutines = in.goroutines(ctx)
		in.res.Threads, in.res.FDs = threadsAndFDs(in.pid)
		if in.opts.profileDir != "" {
			in.profile(ctx, in.opts.profileDir, min(10*time.Second, in.opts.hold/3))
		}
	}
}

// runCount is the number of runs recorded so far.
func (in *inflighter) runCount() int {
	in.mu.Lock()
	defer in.mu.Unlock()
	return len(in.runs)
}

// fillResult fills in the result from the samples and the runs started
// during the hold.
func (in *inflighter) fillResult(sm *holdSampler, rampEnd, holdEnd time.Time) {
	o, r := in.opts, in.res
	r.PeakRSSMiB = inMiB(sm.peakRSS)
	r.SteadyRSSMiB = median(sm.holdRSS)
	r.MeanInFlight = mean(sm.holdOpen)
	if r.MeanInFlight > 0 {
		r.RSSPerRunKiB = (r.SteadyRSSMiB - r.IdleRSSMiB) * 1024 / r.MeanInFlight
	}
	r.PeakModelCalls = atomic.LoadInt64(&in.mock.peak)
	in.mu.Lock()
	defer in.mu.Unlock()
	r.Runs = len(in.runs)
	r.ErrorKinds = in.errors
	for _, n := range in.errors {
		r.Errors += n
	}
	if held := sm.runsAt - sm.runsAtRamp; held > 0 && o.hold > 0 {
		r.RunsPerSecond = float64(held) / o.hold.Seconds()
		r.CPUSeconds = (sm.cpuEnd - sm.cpuAtRamp).Seconds()
		r.ToolCPUSeconds = (sm.toolEnd - sm.toolAtRamp).Seconds()
		r.CPUPerRunMS = r.CPUSeconds * 1000 / float64(held)
	}
	in.fillRunFigures(rampEnd, holdEnd)
}

// fillRunFigures fills in the durations, overheads, model calls and tokens
// of the runs started during the hold; in.mu is held.
func (in *inflighter) fillRunFigures(rampEnd, holdEnd time.Time) {
	r := in.res
	var dur, model, over []float64
	var calls, bytesSent, promptTok, outTok []float64
	fromEvents := true
	for _, run := range in.runs {
		if run.start.Before(rampEnd) || !run.start.Before(holdEnd) {
			continue
		}
		dur = append(dur, ms(run.duration))
		model = append(model, ms(run.model.Time))
		over = append(over, ms(run.duration-run.model.Time))
		calls = append(calls, float64(run.model.Calls))
		bytesSent = append(bytesSent, float64(run.model.Bytes))
		if run.in < 0 {
			fromEvents = false
			promptTok = append(promptTok, float64(run.model.Prompt))
			outTok = append(outTok, float64(run.model.Completion))
		} else {
			promptTok = append(promptTok, float64(run.in))
			outTok = append(outTok, float64(run.out))
		}
	}
	r.SteadyRuns = len(dur)
	r.DurationP50MS, r.DurationP99MS = median(dur), percentile(dur, 99)
	r.ModelP50MS = median(model)
	r.OverheadP50MS, r.OverheadP99MS, r.OverheadMaxMS = median(over), percentile(over, 99), percentile(over, 100)
	r.CallsPerRun, r.BytesPerRun = mean(calls), mean(bytesSent)
	r.PromptTokens, r.OutputTokens = mean(promptTok), mean(outTok)
	r.TokensFrom = "the usage in the runs' model_call events"
	if !fromEvents {
		r.TokensFrom = "the usage the mock reported (runs/wait has no events)"
	}
	if len(dur) == 0 {
		r.Notes = append(r.Notes, "no run started during the hold finished: lengthen --hold")
	}
}

// one runs the workload once on a fresh thread and records it.
func (in *inflighter) one(ctx context.Context, thread string) error {
	ref := thread
	path := "/threads/" + thread + "/runs/" + in.opts.inflightAPI
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, in.url+path, bytes.NewReader(in.body(ref)))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	raise(&in.res.PeakInFlight, in.open.Add(1))
	t0 := time.Now()
	run, kind := in.send(req)
	d := time.Since(t0)
	in.open.Add(-1)
	use := in.mock.use(ref)
	in.mu.Lock()
	defer in.mu.Unlock()
	if kind != "" {
		in.errors[kind]++
		return errors.New(kind)
	}
	run.start, run.duration, run.model = t0, d, use
	in.runs = append(in.runs, run)
	return nil
}

// send sends req and reads its answer to the end: the stream to its done
// event, or the wait's JSON. It returns the kind of the error, or "".
func (in *inflighter) send(req *http.Request) (inflightRun, string) {
	run := inflightRun{in: -1, out: -1}
	resp, err := in.http.Do(req)
	if err != nil {
		return run, transportKind(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		var body struct {
			Error struct{ Kind string } `json:"error"`
		}
		_ = json.NewDecoder(io.LimitReader(resp.Body, 64<<10)).Decode(&body)
		kind := fmt.Sprintf("http %d %s", resp.StatusCode, body.Error.Kind)
		if ra := resp.Header.Get("Retry-After"); ra != "" {
			kind += " (Retry-After " + ra + ")"
		}
		return run, kind
	}
	if in.opts.inflightAPI == "wait" {
		if _, err := io.Copy(io.Discard, resp.Body); err != nil {
			return run, transportKind(err)
		}
		return run, ""
	}
	run.in, run.out = 0, 0
	rd := stream.NewReader(resp.Body)
	for {
		e, err := rd.Next()
		if err != nil {
			if errors.Is(err, io.EOF) {
				return run, "stream ended before done"
			}
			return run, transportKind(err)
		}
		switch e.Type {
		case stream.TypeModelCall:
			var u struct {
				In  int64 `json:"input_tokens"`
				Out int64 `json:"output_tokens"`
			}
			_ = json.Unmarshal(e.Data, &u)
			run.in += u.In
			run.out += u.Out
		case stream.TypeDone:
			var done struct {
				Output struct {
					Error string `json:"error"`
				} `json:"output"`
			}
			_ = json.Unmarshal(e.Data, &done)
			_, _ = io.Copy(io.Discard, resp.Body) // to reuse the connection
			if done.Output.Error != "" {
				return run, "run failed: " + firstWords(done.Output.Error, 8)
			}
			return run, ""
		}
	}
}

// transportKind names a transport error by what went wrong, not by the
// addresses in its text.
func transportKind(err error) string {
	var errno syscall.Errno
	switch {
	case errors.As(err, &errno):
		return "transport: " + errno.Error()
	case errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, io.EOF):
		return "transport: connection closed early"
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, os.ErrDeadlineExceeded):
		return "transport: timeout"
	case errors.Is(err, context.Canceled):
		return "transport: cancelled"
	}
	return "transport: " + firstWords(err.Error(), 6)
}

func firstWords(s string, n int) string {
	f := strings.Fields(s)
	return strings.Join(f[:min(n, len(f))], " ")
}

// goroutines reads the server's goroutine count from its debug address
// (DAWN_DEBUG_ADDR), or 0 when it serves none.
func (in *inflighter) goroutines(ctx context.Context) int {
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, in.debug+"/debug/pprof/goroutine?debug=1", nil)
	resp, err := (&http.Client{Timeout: 30 * time.Second}).Do(req)
	if err != nil {
		return 0
	}
	defer resp.Body.Close()
	line, _ := bufio.NewReader(resp.Body).ReadString('\n')
	_, total, _ := strings.Cut(line, "total ")
	n, _ := strconv.Atoi(strings.TrimSpace(total))
	return n
}

// profile saves a CPU profile of d and a heap profile of the server,
// taken while the clients are held, into dir.
func (in *inflighter) profile(ctx context.Context, dir string, d time.Duration) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		in.res.Notes = append(in.res.Notes, "profiles: "+err.Error())
		return
	}
	save := func(name, path string) {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, in.debug+path, nil)
		resp, err := (&http.Client{Timeout: d + time.Minute}).Do(req)
		if err != nil {
			in.res.Notes = append(in.res.Notes, "profile "+name+": "+err.Error())
			return
		}
		defer resp.Body.Close()
		f, err := os.Create(filepath.Join(dir, name))
		if err == nil {
			_, _ = io.Copy(f, resp.Body)
			f.Close()
		}
	}
	save("goroutine.txt", "/debug/pprof/goroutine?debug=1")
	save("heap.pprof", "/debug/pprof/heap?gc=1")
	save("memstats.txt", "/debug/pprof/heap?debug=1")
	save("cpu.pprof", fmt.Sprintf("/debug/pprof/profile?seconds=%d", max(1, int(d.Seconds()))))
	in.res.Profiles = dir
}

// raiseFileLimit raises the tool's RLIMIT_NOFILE soft limit to at least
// want (and the hard limit too, when the tool may), so that it can hold
// its connections; the servers it starts inherit it.
func raiseFileLimit(want uint64) {
	var l syscall.Rlimit
	if syscall.Getrlimit(syscall.RLIMIT_NOFILE, &l) != nil {
		return
	}
	if l.Max < want {
		n := l
		n.Max, n.Cur = want, want
		if syscall.Setrlimit(syscall.RLIMIT_NOFILE, &n) == nil {
			return
		}
	}
	l.Cur = max(l.Cur, min(want, l.Max))
	_ = syscall.Setrlimit(syscall.RLIMIT_NOFILE, &l)
}

// fdLimit is process pid's "Max open files" soft/hard, from /proc.
func fdLimit(pid int) string {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/limits", pid))
	if err != nil {
		return ""
	}
	for line := range strings.Lines(string(data)) {
		if rest, ok := strings.CutPrefix(line, "Max open files"); ok {
			f := strings.Fields(rest)
			if len(f) >= 2 {
				return f[0] + "/" + f[1]
			}
		}
	}
	return ""
}

// threadsAndFDs returns pid's OS threads and open descriptors.
func threadsAndFDs(pid int) (int, int) {
	threads := 0
	if data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid)); err == nil {
		for line := range strings.Lines(string(data)) {
			if rest, ok := strings.CutPrefix(line, "Threads:"); ok {
				threads, _ = strconv.Atoi(strings.TrimSpace(rest))
			}
		}
	}
	fds, _ := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
	return threads, len(fds)
}

func inMiB(b int64) float64      { return float64(b) / (1 << 20) }
func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
func mean(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := 0.0
	for _, x := range xs {
		s += x
	}
	return s / float64(len(xs))
}

// writeInflight prints r as a short report.
func writeInflight(w io.Writer, r *inflightResult) {
	status := "PASS"
	if r.Errors > 0 {
		status = "ERRORS"
	}
	fmt.Fprintf(w, "inflight: %d clients on runs/%s, model latency %s per call, ramp %s, hold %s: %s\n", r.Clients, r.API, r.ModelLatency, r.Ramp, r.Hold, status)
	fmt.Fprintf(w, "  server %s (max-runs %s), fd limit %s, model at %s; load average %s before, %s after\n", r.Binary, orDefault(r.MaxRuns), r.FDLimit, r.Mock, r.LoadBefore, r.LoadAfter)
	fmt.Fprintf(w, "  runs %d completed (%d started during the hold), %.0f runs/s during the hold; errors %d\n", r.Runs, r.SteadyRuns, r.RunsPerSecond, r.Errors)
	kinds := make([]string, 0, len(r.ErrorKinds))
	for k := range r.ErrorKinds {
		kinds = append(kinds, k)
	}
	sort.Slice(kinds, func(i, j int) bool { return r.ErrorKinds[kinds[i]] > r.ErrorKinds[kinds[j]] })
	for _, k := range kinds {
		fmt.Fprintf(w, "    %6d  %s\n", r.ErrorKinds[k], k)
	}
	fmt.Fprintf(w, "  in flight: peak %d, mean %.0f during the hold; model calls waiting at once: peak %d\n", r.PeakInFlight, r.MeanInFlight, r.PeakModelCalls)
	fmt.Fprintf(w, "  server RSS: idle %.1f MiB, steady %.1f MiB (median during the hold), peak %.1f MiB; %.1f KiB per run in flight\n", r.IdleRSSMiB, r.SteadyRSSMiB, r.PeakRSSMiB, r.RSSPerRunKiB)
	g := "not served (no DAWN_DEBUG_ADDR)"
	if r.Goroutines > 0 {
		g = strconv.Itoa(r.Goroutines)
	}
	fmt.Fprintf(w, "  server mid-hold: goroutines %s, OS threads %d, open descriptors %d; CPU %.1f s during the hold, %.2f ms per run (the load tool, clients and mock: %.1f s)\n", g, r.Threads, r.FDs, r.CPUSeconds, r.CPUPerRunMS, r.ToolCPUSeconds)
	fmt.Fprintf(w, "  run duration p50 %.1f ms, p99 %.1f ms; model time p50 %.1f ms\n", r.DurationP50MS, r.DurationP99MS, r.ModelP50MS)
	fmt.Fprintf(w, "  server overhead per run (duration - model time): p50 %.1f ms, p99 %.1f ms, max %.1f ms\n", r.OverheadP50MS, r.OverheadP99MS, r.OverheadMaxMS)
	fmt.Fprintf(w, "  per run: %.2f model calls, %.0f bytes sent to the model, %.0f prompt + %.0f output tokens (%s)\n", r.CallsPerRun, r.BytesPerRun, r.PromptTokens, r.OutputTokens, r.TokensFrom)
	if r.Profiles != "" {
		fmt.Fprintf(w, "  profiles taken mid-hold in %s: cpu.pprof, heap.pprof, goroutine.txt\n", r.Profiles)
	}
	for _, n := range r.Notes {
		fmt.Fprintf(w, "  note: %s\n", n)
	}
}

func orDefault(n int) string {
	if n <= 0 {
		return "default"
	}
	return strconv.Itoa(n)
}

// scratch makes a temporary folder for one of the tool's modes and the
// dawn binary to run there: --dawn, or one built from the repository into
// the folder. The caller removes the folder.
func scratch(ctx context.Context, opts options, prefix string) (tmp, bin string, err error) {
	repo, err := repoRoot()
	if err != nil {
		return "", "", err
	}
	if tmp, err = os.MkdirTemp("", prefix); err != nil {
		return "", "", err
	}
	bin = opts.dawn
	if bin == "" {
		if bin, err = buildDawn(ctx, repo, tmp); err != nil {
			os.RemoveAll(tmp)
			return "", "", err
		}
	}
	return tmp, bin, nil
}
