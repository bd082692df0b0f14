package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"
)

// compareFigure is one figure measured on both servers, once a round.
type compareFigure struct {
	name, unit string
	a, b       []float64
}

// comparison is --url2's result: each figure per round on server A (--url)
// and server B (--url2).
type comparison struct {
	urlA, urlB string
	rounds     int
	load       [2]string // load average at start and end
	figures    []*compareFigure
	byName     map[string]*compareFigure
	// pairs replays, per server, the two model requests of its run
	// straight to its mock (captured in the first round).
	pairs [2]*pairTimer
}

func (c *comparison) add(name, unit string, second bool, v float64) {
	f := c.byName[name]
	if f == nil {
		f = &compareFigure{name: name, unit: unit}
		c.figures = append(c.figures, f)
		c.byName[name] = f
	}
	if second {
		f.b = append(f.b, v)
	} else {
		f.a = append(f.a, v)
	}
}

// runComparison measures two running servers side by side: --rounds
// rounds, each running the workload on A then B, or B then A on odd
// rounds, so that a machine that gets busier or quieter during the run
// weighs on both alike. Each round is --runs runs/wait one at a time,
// --runs with --concurrency clients and --stream-runs runs/stream; with
// --aimock-url, the first round also reads the bytes and tokens each
// server sent to the model for one run from aimock's journal.
//
// perTurn, when not nil, runs after each server's turn of a round and may
// add figures of its own (side by side adds the process figures).
func runComparison(ctx context.Context, o options, perTurn func(context.Context, *comparison, compareRound) error) (*comparison, error) {
	c := &comparison{urlA: o.url, urlB: o.url2, rounds: o.rounds, byName: map[string]*compareFigure{}}
	c.load[0] = loadAverage()
	defer func() { c.load[1] = loadAverage() }()
	tag := strconv.FormatInt(time.Now().UnixNano(), 36)
	servers := []compareServer{
		{newClient(o.url, o.route, o.concurrency), o.mock, 0},
		{newClient(o.url2, o.route, o.concurrency), o.mock2, 0},
	}
	for i := range servers {
		servers[i].pid, _ = listenerPID([]string{o.url, o.url2}[i])
	}
	for s, srv := range servers {
		for i := range o.warmup {
			if _, err := srv.client.wait(ctx, fmt.Sprintf("%s-warm%d-%d", tag, s, i)); err != nil {
				return nil, err
			}
		}
	}
	for round := range o.rounds {
		order := []int{0, 1}
		if round%2 == 1 {
			order = []int{1, 0}
		}
		for _, s := range order {
			r := compareRound{o: o, srv: servers[s], round: round, s: s, tag: tag}
			if err := c.measure(ctx, r); err != nil {
				return nil, err
			}
			if perTurn != nil {
				if err := perTurn(ctx, c, r); err != nil {
					return nil, err
				}
			}
		}
	}
	return c, nil
}

// compareServer is one of the two servers a comparison measures.
type compareServer struct {
	client *loadClient
	mock   string
	pid    int // the server's process, for its CPU time; 0 when not found
}

// compareRound is one server's turn in one round of a comparison.
type compareRound struct {
	o     options
	srv   compareServer
	round int
	s     int // 0 for A, 1 for B
	tag   string
}

// thread returns the workload's call for phase: one runs/wait on a new
// thread named after the round, the server and the phase.
func (r compareRound) thread(phase string) timed {
	return func(ctx context.Context, i int) error {
		_, err := r.srv.client.wait(ctx, fmt.Sprintf("%s-%d-%d-%s-%d", r.tag, r.round, r.s, phase, i))
		return err
	}
}

// measure runs one server's turn of a round and adds its figures: the
// bytes and tokens sent to the model (first round, with a mock), the
// runs/wait rates and CPU, and the time to the first plan_update.
func (c *comparison) measure(ctx context.Context, r compareRound) error {
	second := r.s == 1
	if r.round == 0 && r.srv.mock != "" {
		if err := c.measureModelInput(ctx, r); err != nil {
			return err
		}
	}
	if err := c.measureWaits(ctx, r); err != nil {
		return err
	}
	if err := c.measureServerTime(ctx, r); err != nil {
		return err
	}
	var firsts []time.Duration
	_, err := runBatch(ctx, r.o.streamRuns, 1, func(ctx context.Context, i int) error {
		d, _, err := r.srv.client.streamToPlan(ctx, fmt.Sprintf("%s-%d-%d-stream-%d", r.tag, r.round, r.s, i))
		firsts = append(firsts, d) // one worker: no lock needed
		return err
	})
	if err != nil {
		return err
	}
	c.add("runs/stream -> first plan_update p50", "ms", second, median(millis(firsts)))
	return nil
}

// measureModelInput runs one run and reads from the mock's journal what
// the server sent to the model for it.
func (c *comparison) measureModelInput(ctx context.Context, r compareRound) error {
	second := r.s == 1
	if err := r.thread("capture")(ctx, 0); err != nil {
		return err
	}
	pair, err := capturePair(ctx, r.srv.mock)
	if err != nil {
		return err
	}
	c.add("bytes sent to the model per run", "B", second, float64(len(pair.plan)+len(pair.answer)))
	c.add("bytes of the first model request", "B", second, float64(len(pair.plan)))
	c.add("prompt tokens per run (o200k)", "tok", second, float64(promptTokens(pair.plan)+promptTokens(pair.answer)))
	c.pairs[r.s] = newPairTimer(r.srv.mock, pair)
	return nil
}

// measureServerTime sends the server's captured model requests straight
// to its mock --pairs times, right after its sequential runs, and adds
// the server's own time per run: the sequential p50 minus the mock's p50
// for the pair.
func (c *comparison) measureServerTime(ctx context.Context, r compareRound) error {
	p, seq := c.pairs[r.s], c.byName["runs/wait sequential p50"]
	if p == nil || r.o.pairs <= 0 || seq == nil {
		return nil
	}
	second := r.s == 1
	mb, err := runBatch(ctx, r.o.pairs, 1, p.once)
	if err != nil {
		return err
	}
	pairP50 := median(millis(mb.Latencies))
	runP50 := seq.a
	if second {
		runP50 = seq.b
	}
	c.add("mock pair p50 (aimock alone)", "ms", second, pairP50)
	c.add("server time per run (p50 - mock pair)", "ms", second, runP50[len(runP50)-1]-pairP50)
	return nil
}

// measureWaits runs --runs runs/wait one at a time, then with
// --concurrency clients, and adds their rates and the server's CPU per
// run.
func (c *comparison) measureWaits(ctx context.Context, r compareRound) error {
	second, o, pid := r.s == 1, r.o, r.srv.pid
	cpu0, cpuErr := processCPU(pid)
	seq, err := runBatch(ctx, o.runs, 1, r.thread("seq"))
	if err != nil {
		return err
	}
	cpu1, _ := processCPU(pid)
	c.add("runs/wait sequential p50", "ms", second, median(millis(seq.Latencies)))
	c.add("runs/wait sequential", "runs/s", second, seq.rate())
	conc, err := runBatch(ctx, o.runs, o.concurrency, r.thread("conc"))
	if err != nil {
		return err
	}
	c.add(fmt.Sprintf("runs/wait %d concurrent", o.concurrency), "runs/s", second, conc.rate())
	if cpu2, err := processCPU(pid); cpuErr == nil && err == nil && pid != 0 {
		perRun := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) / float64(o.runs) }
		c.add("server CPU per run, sequential", "ms", second, perRun(cpu1-cpu0))
		c.add(fmt.Sprintf("server CPU per run, %d concurrent", o.concurrency), "ms", second, perRun(cpu2-cpu1))
	}
	return nil
}

// write prints each figure's median on A and on B and the median of the
// per-round ratios B/A (each round measured both servers back to back).
func (c *comparison) write(w io.Writer) {
	fmt.Fprintf(w, "A = %s\nB = %s\n%d rounds, alternating A,B / B,A; medians over rounds; load average %s at start, %s at end\n\n", c.urlA, c.urlB, c.rounds, c.load[0], c.load[1])
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "figure\tA\tA min–max\tB\tB min–max\tB/A")
	for _, f := range c.figures {
		var ratios []float64
		for i := range min(len(f.a), len(f.b)) {
			if f.a[i] != 0 {
				ratios = append(ratios, f.b[i]/f.a[i])
			}
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%.2f\n", f.name, valueText(median(f.a), f.unit), spread(f.a),
			valueText(median(f.b), f.unit), spread(f.b), median(ratios))
	}
	_ = tw.Flush()
}

// loadAverage is the 1, 5 and 15 minute load average, or "?".
func loadAverage() string {
	data, err := os.ReadFile("/proc/loadavg")
	if f := strings.Fields(string(data)); err == nil && len(f) >= 3 {
		return strings.Join(f[:3], " ")
	}
	return "?"
}

// spread is the min–max of a figure's rounds.
func spread(v []float64) string {
	if len(v) == 0 {
		return "-"
	}
	lo, hi := slices.Min(v), slices.Max(v)
	return strings.TrimSuffix(valueText(lo, ""), " ") + "–" + strings.TrimSuffix(valueText(hi, ""), " ")
}
