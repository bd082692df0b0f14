package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// bench is one invocation of the tool: its options, its report, and the
// processes and files it made.
type bench struct {
	opts options
	rep  *report
	// tag makes thread ids unique to this invocation, so --url can point
	// at a server that has seen earlier runs.
	tag    string
	repeat int // the repeat being run, from 0

	tmp  string
	repo string
	dawn string
	mock *proc // nil when aimock is not installed
	// noMock says why there is no aimock.
	noMock string
}

// run measures everything the options ask for, opts.repeat times.
func (b *bench) run(ctx context.Context) error {
	if b.opts.url != "" {
		return b.runAgainstURL(ctx)
	}
	var err error
	if b.repo, err = repoRoot(); err != nil {
		return err
	}
	if b.tmp, err = os.MkdirTemp("", "dawnbench-"); err != nil {
		return err
	}
	if b.dawn = b.opts.dawn; b.dawn == "" {
		if b.dawn, err = buildDawn(ctx, b.repo, b.tmp); err != nil {
			return err
		}
	}
	if err := b.startMock(ctx); err != nil {
		return err
	}
	for b.repeat = 0; b.repeat < b.opts.repeat; b.repeat++ {
		phases := []struct {
			name string
			fn   func(context.Context) error
		}{
			{"aimock workload", b.aimockPhase},
			{"memory", b.memoryPhase},
			{"instant model", b.instantPhase},
			{"process timings", b.processPhase},
		}
		for _, p := range phases {
			if ctx.Err() != nil {
				return nil
			}
			if err := p.fn(ctx); err != nil {
				if ctx.Err() != nil {
					return nil // cut short by --duration; the report says so
				}
				return fmt.Errorf("%s phase (repeat %d): %w", p.name, b.repeat+1, err)
			}
		}
	}
	return nil
}

// runAgainstURL measures the HTTP figures of a server someone else started.
func (b *bench) runAgainstURL(ctx context.Context) error {
	for _, key := range []string{"cpu_seq", "cpu_conc", "cold_example", "cold_many", "dev_reload", "routes_json", "check", "rss_idle", "rss_threads", "thread_mem", "sqlite_thread"} {
		b.rep.skip(key, "not with --url")
	}
	for _, f := range b.rep.Figures {
		if f.Section == secInstant {
			b.rep.skip(f.Key, "not with --url")
		}
	}
	if b.opts.mock == "" {
		b.rep.skip("mock_pair", "needs --aimock-url")
		b.rep.skip("overhead", "needs --aimock-url")
	}
	b.rep.note("measured %s on %s; the section header names the workload the tool would set up, check that the server matches", b.opts.route, b.opts.url)
	for b.repeat = 0; b.repeat < b.opts.repeat && ctx.Err() == nil; b.repeat++ {
		c := newClient(b.opts.url, b.opts.route, b.opts.concurrency)
		if err := b.serverFigures(ctx, "", c, b.opts.mock, 0); err != nil && ctx.Err() == nil {
			return err
		}
	}
	return nil
}

// startMock starts aimock on the bench fixture, or records why it cannot.
func (b *bench) startMock(ctx context.Context) error {
	bin := b.opts.aimock
	if bin == "" {
		bin = filepath.Join(b.repo, "tools", "aimock", "node_modules", ".bin", "llmock")
		if _, err := os.Stat(bin); err != nil {
			b.noMock = "aimock missing: npm ci --prefix tools/aimock"
			b.rep.note("aimock is not installed (%s); run `npm ci --prefix tools/aimock` for the aimock workload figures", bin)
			return nil
		}
	}
	fixtures := filepath.Join(b.tmp, "aimock.json")
	if err := os.WriteFile(fixtures, aimockFixture, 0o644); err != nil {
		return err
	}
	var err error
	b.mock, err = startAimock(ctx, bin, fixtures)
	return err
}

// close stops aimock and removes the tool's temp folder.
func (b *bench) close() {
	if b.mock != nil {
		b.mock.stop(2 * time.Second)
	}
	if b.tmp != "" {
		_ = os.RemoveAll(b.tmp)
	}
}

// dir returns a new folder for one phase of the current repeat.
func (b *bench) dir(name string) string {
	return filepath.Join(b.tmp, fmt.Sprintf("r%d-%s", b.repeat+1, name))
}

// threadID names the i-th thread of a phase.
func (b *bench) threadID(phase string, i int) string {
	return fmt.Sprintf("%s-r%d-%s-%d", b.tag, b.repeat+1, phase, i)
}

// mockEnv points the openai provider at aimock.
func (b *bench) mockEnv() []string {
	return []string{"OPENAI_BASE_URL=" + b.mock.url + "/v1", "OPENAI_API_KEY=test"}
}

// startServer runs the bench's `dawn start` on app with env (see
// startDawn).
func (b *bench) startServer(ctx context.Context, app string, env []string) (*proc, error) {
	return startDawn(ctx, b.dawn, app, env)
}

// startDawn runs `bin start` on app with env, on a free loopback port,
// and waits for /healthz; a server that never gets healthy is stopped.
func startDawn(ctx context.Context, bin, app string, env []string) (*proc, error) {
	p, err := start(ctx, "dawn start", bin, []string{"start", "--app", app, "--host", "127.0.0.1", "--port", "0"}, env, 30*time.Second)
	if err != nil {
		return nil, err
	}
	if err := waitHealthy(ctx, p.url+"/healthz", 10*time.Second); err != nil {
		p.stop(5 * time.Second)
		return nil, err
	}
	return p, nil
}

// aimockPhase serves the app on openai:gpt-4o-mini through aimock
// and measures the HTTP figures, the mock itself, and the server's CPU.
func (b *bench) aimockPhase(ctx context.Context) error {
	if b.mock == nil {
		for _, f := range b.rep.Figures {
			if f.Section == secAimock {
				b.rep.skip(f.Key, b.noMock)
			}
		}
		return nil
	}
	app := b.dir("aimock")
	if err := writeWorkloadApp(app, "openai:gpt-4o-mini"); err != nil {
		return err
	}
	srv, err := b.startServer(ctx, app, b.mockEnv())
	if err != nil {
		return err
	}
	defer srv.stop(15 * time.Second)
	c := newClient(srv.url, b.opts.route, b.opts.concurrency)
	return b.serverFigures(ctx, "", c, b.mock.url, srv.pid())
}

// instantPhase serves the same app on the built-in offline model.
func (b *bench) instantPhase(ctx context.Context) error {
	app := b.dir("instant")
	if err := writeWorkloadApp(app, ""); err != nil {
		return err
	}
	srv, err := b.startServer(ctx, app, nil)
	if err != nil {
		return err
	}
	defer srv.stop(15 * time.Second)
	c := newClient(srv.url, b.opts.route, b.opts.concurrency)
	if b.repeat == 0 {
		_, counts, err := c.streamToPlan(ctx, b.threadID("inst-shape", 0))
		if err != nil {
			return err
		}
		b.rep.note("the offline model's run on the 4-item plan streams %d events: %d tool_call, %d plan_update, %d chunk (the aimock workload: 1 writeTodos call, 1 plan_update)",
			total(counts), counts["tool_call"], counts["plan_update"], counts["chunk"])
	}
	return b.serverFigures(ctx, "inst_", c, "", srv.pid())
}

func total(counts map[string]int) int {
	n := 0
	for _, v := range counts {
		n += v
	}
	return n
}

// serverFigures runs the HTTP workload against c's server: warm-up, then
// runs/wait sequential and concurrent, then runs/stream to the first
// plan_update. With mock, it also times aimock alone on the same two
// requests. With pid, it reads the server's CPU time around each phase.
// Figures are recorded under prefix+key.
func (b *bench) serverFigures(ctx context.Context, prefix string, c *loadClient, mock string, pid int) error {
	o := b.opts
	phase := strings.TrimSuffix(prefix, "_")
	if _, err := runBatch(ctx, o.warmup/2, 1, b.waitOp(c, phase+"warm-s")); err != nil {
		return err
	}
	if _, err := runBatch(ctx, o.warmup-o.warmup/2, o.concurrency, b.waitOp(c, phase+"warm-c")); err != nil {
		return err
	}
	var pair modelPair
	if mock != "" {
		if _, err := c.wait(ctx, b.threadID(phase+"capture", 0)); err != nil {
			return err
		}
		var err error
		if pair, err = capturePair(ctx, mock); err != nil {
			return err
		}
		b.rep.add("model_bytes_first", float64(len(pair.plan)))
		b.rep.add("model_bytes", float64(len(pair.plan)+len(pair.answer)))
		b.rep.add("model_tokens", float64(promptTokens(pair.plan)+promptTokens(pair.answer)))
	}

	seq, err := b.measured(ctx, prefix+"cpu_seq", pid, o.runs, 1, b.waitOp(c, phase+"seq"))
	if err != nil {
		return err
	}
	b.recordBatch(prefix+"seq", seq)
	if mock != "" {
		mb, err := runBatch(ctx, o.pairs, 1, newPairTimer(mock, pair).once)
		if err != nil {
			return fmt.Errorf("timing aimock alone: %w", err)
		}
		pairMS := median(millis(mb.Latencies))
		b.rep.add("mock_pair", pairMS)
		b.rep.add("overhead", median(millis(seq.Latencies))-pairMS)
	}

	conc, err := b.measured(ctx, prefix+"cpu_conc", pid, o.runs, o.concurrency, b.waitOp(c, phase+"conc"))
	if err != nil {
		return err
	}
	b.recordBatch(prefix+"conc", conc)

	var firsts []time.Duration
	streamOp := func(ctx context.Context, i int) error {
		d, _, err := c.streamToPlan(ctx, b.threadID(phase+"stream", i))
		if err == nil {
			firsts = append(firsts, d) // one worker: no lock needed
		}
		return err
	}
	sb, err := runBatch(ctx, o.streamRuns, 1, streamOp)
	if err != nil {
		return err
	}
	b.noteCut(prefix+"stream", sb)
	if len(firsts) > 0 {
		b.rep.add(prefix+"stream_plan", median(millis(firsts)))
	}
	return nil
}

// waitOp is a runs/wait on the i-th fresh thread of phase.
func (b *bench) waitOp(c *loadClient, phase string) timed {
	return func(ctx context.Context, i int) error {
		_, err := c.wait(ctx, b.threadID(phase, i))
		return err
	}
}

// measured runs a batch and, with a pid, records the server CPU time per
// operation under cpuKey.
func (b *bench) measured(ctx context.Context, cpuKey string, pid, n, workers int, op timed) (batch, error) {
	var before time.Duration
	var cpuErr error
	if pid > 0 {
		before, cpuErr = processCPU(pid)
	}
	bt, err := runBatch(ctx, n, workers, op)
	if err != nil {
		return bt, err
	}
	switch {
	case pid == 0:
	case cpuErr != nil:
		b.rep.skip(cpuKey, cpuErr.Error())
	case len(bt.Latencies) > 0:
		after, err := processCPU(pid)
		if err != nil {
			b.rep.skip(cpuKey, err.Error())
			break
		}
		b.rep.add(cpuKey, float64(after-before)/float64(time.Millisecond)/float64(len(bt.Latencies)))
	}
	return bt, nil
}

// recordBatch records throughput and latency figures key_rps, key_p50 and
// key_p99.
func (b *bench) recordBatch(key string, bt batch) {
	b.noteCut(key, bt)
	if len(bt.Latencies) == 0 {
		return
	}
	ms := millis(bt.Latencies)
	b.rep.add(key+"_rps", bt.rate())
	b.rep.add(key+"_p50", median(ms))
	b.rep.add(key+"_p99", percentile(ms, 99))
}

func (b *bench) noteCut(what string, bt batch) {
	if bt.CutShort {
		b.rep.note("%s (repeat %d) was cut short after %d operations", what, b.repeat+1, len(bt.Latencies))
	}
}
