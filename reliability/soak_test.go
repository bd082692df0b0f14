package reliability

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/dawn-go/dawn/internal/apptest"
	"github.com/dawn-go/dawn/internal/models"
	"github.com/tmc/langchaingo/llms"
)

// Soak sizes for CI: rounds (DAWN_SOAK_ROUNDS, default 10) of soakRuns
// runs at once, with soakSubscribers SSE streams connected at the peak of
// each round.
const (
	soakRuns        = 32
	soakSubscribers = 200
	soakPlanItems   = 6
)

var (
	benchOnce sync.Once
	benchBin  string
	benchErr  error
)

// buildBench builds the load tool (./bench) once.
func buildBench(t *testing.T) string {
	t.Helper()
	benchOnce.Do(func() {
		benchBin = filepath.Join(buildDir, "bench")
		benchErr = goBuild(benchBin, "./bench")
	})
	if benchErr != nil {
		t.Fatal(benchErr)
	}
	return benchBin
}

// streamGate holds every model call until soakSubscribers streams are
// connected at once, so the soak's peak does not depend on timing. It
// counts requests to .../stream endpoints while they are served.
type streamGate struct {
	want     int64
	active   atomic.Int64
	peak     atomic.Int64
	armed    atomic.Bool
	open     chan struct{}
	once     sync.Once
	deadline time.Time
}

func newStreamGate(want int64) *streamGate {
	return &streamGate{want: want, open: make(chan struct{}), deadline: time.Now().Add(2 * time.Minute)}
}

// handler counts stream requests on their way to h.
func (g *streamGate) handler(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, "/stream") {
			n := g.active.Add(1)
			defer g.active.Add(-1)
			for p := g.peak.Load(); n > p && !g.peak.CompareAndSwap(p, n); p = g.peak.Load() {
			}
			if n >= g.want {
				g.once.Do(func() { close(g.open) })
			}
		}
		h.ServeHTTP(w, r)
	})
}

// wait blocks an armed model call until the gate opens (or its deadline,
// after which the soak's peak check fails instead of the test hanging).
func (g *streamGate) wait(ctx context.Context) error {
	if !g.armed.Load() {
		return nil
	}
	select {
	case <-g.open:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(time.Until(g.deadline)):
		return nil
	}
}

// gatedModel is the offline model behind a streamGate.
type gatedModel struct {
	inner llms.Model
	gate  *streamGate
}

func (m gatedModel) GenerateContent(ctx context.Context, msgs []llms.MessageContent, opts ...llms.CallOption) (*llms.ContentResponse, error) {
	if err := m.gate.wait(ctx); err != nil {
		return nil, err
	}
	return m.inner.GenerateContent(ctx, msgs, opts...)
}

func (m gatedModel) Call(ctx context.Context, prompt string, opts ...llms.CallOption) (string, error) {
	return llms.GenerateFromSinglePrompt(ctx, m, prompt, opts...)
}

// soakReport is the part of `bench --soak --json` the test checks.
type soakReport struct {
	Runs            int      `json:"runs"`
	Subscribers     int      `json:"subscribers"`
	PeakSubscribers int64    `json:"peak_subscribers"`
	PeakRuns        int64    `json:"peak_runs"`
	Events          int64    `json:"events"`
	Lost            int      `json:"lost"`
	Mismatched      int      `json:"mismatched"`
	PlanMismatch    int      `json:"plan_mismatch"`
	Failed          int      `json:"failed"`
	Problems        []string `json:"problems"`
	Seconds         float64  `json:"seconds"`
}

// TestSoak serves the app in this process and drives it with the load
// tool's soak mode (go run ./bench --soak) over loopback: 10 rounds of 32
// concurrent runs with 200 SSE subscribers connected at each peak. Every
// subscriber must get ids 1..N ending in done, the same events as the
// run's own stream, and the last plan_update must equal the final state.
// Afterwards the server's goroutines return to their baseline: no
// connection, subscription or run leaks.
func TestSoak(t *testing.T) {
	if testing.Short() {
		t.Skip("soak: not in -short")
	}
	bin := buildBench(t)
	soakRounds := envInt(t, "DAWN_SOAK_ROUNDS", 10)
	var plan strings.Builder
	for i := 1; i <= soakPlanItems; i++ {
		fmt.Fprintf(&plan, "- [ ] Soak step %d\n", i)
	}
	dir := writeApp(t, map[string]string{
		"support/[tenant]/agent.md": "---\ndescription: Soak.\n---\nWork through the plan.",
		"support/[tenant]/plan.md":  plan.String(),
	})
	gate := newStreamGate(soakSubscribers)
	h := apptest.New(t, dir, gatedModel{inner: models.NewOffline(), gate: gate}, apptest.Options{StorePath: filepath.Join(t.TempDir(), "dawn.db")})
	srv := httptest.NewServer(gate.handler(h.API))
	t.Cleanup(srv.Close)

	warm := newClient(srv.URL)
	for i := range 4 {
		if r := warm.must(t, http.MethodPost, fmt.Sprintf("/threads/warm-%d/runs/stream", i), runBody("/support/acme", "warm up")); r.status != http.StatusOK {
			t.Fatalf("warm-up run: %d %s", r.status, r.body)
		}
	}
	warm.close()
	baseGoroutines := settledGoroutines(0, 2*time.Second)
	heapBefore := heapInUse()

	gate.armed.Store(true)
	ctx, cancel := context.WithTimeout(context.Background(), time.Duration(soakRounds)*10*time.Second+time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "--soak", "--url", srv.URL, "--route", "/support/acme", "--json", "--duration", fmt.Sprint(time.Duration(soakRounds)*10*time.Second),
		"--soak-runs", fmt.Sprint(soakRuns), "--soak-rounds", fmt.Sprint(soakRounds), "--subscribers", fmt.Sprint(soakSubscribers))
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	runErr := cmd.Run()
	var rep soakReport
	if err := json.Unmarshal(stdout.Bytes(), &rep); err != nil {
		t.Fatalf("bench --soak: %v, output not JSON (%v):\n%s\n%s", runErr, err, stdout.String(), stderr.String())
	}
	if runErr != nil || rep.Lost+rep.Mismatched+rep.PlanMismatch+rep.Failed != 0 || len(rep.Problems) > 0 {
		t.Errorf("bench --soak found problems (%v):\n%s\n%s", runErr, stdout.String(), stderr.String())
	}
	// The server's count is the one that matters: the tool counts a
	// subscriber from its response headers, by when the first runs may be
	// done.
	if rep.Runs != soakRuns*soakRounds || gate.peak.Load() < soakSubscribers {
		t.Errorf("soak held %d runs and a peak of %d streams at the server, want %d runs and %d", rep.Runs, gate.peak.Load(), soakRuns*soakRounds, soakSubscribers)
	}

	after := settledGoroutines(baseGoroutines+3, 10*time.Second)
	heapAfter := heapInUse()
	t.Logf("soak: %d runs, %d subscriber streams (peak %d streams at once at the server, %d seen by the tool; %d runs streaming), %d events, %d lost; %.1fs; goroutines %d before, %d after; heap in use %.1f MiB before, %.1f MiB after",
		rep.Runs, rep.Subscribers, gate.peak.Load(), rep.PeakSubscribers, rep.PeakRuns, rep.Events, rep.Lost, rep.Seconds, baseGoroutines, after, mib(heapBefore), mib(heapAfter))
	if after > baseGoroutines+3 {
		var dump strings.Builder
		_ = pprof.Lookup("goroutine").WriteTo(&dump, 1)
		t.Errorf("goroutines did not return to the baseline: %d before the soak, %d after\n%s", baseGoroutines, after, dump.String())
	}
	if heapAfter > 2*heapBefore+(32<<20) {
		t.Errorf("heap in use grew from %.1f MiB to %.1f MiB over the soak", mib(heapBefore), mib(heapAfter))
	}
}

// settledGoroutines polls the goroutine count until it is at most target
// (0: until it stops falling) or timeout passes, and returns it.
func settledGoroutines(target int, timeout time.Duration) int {
	deadline := time.Now().Add(timeout)
	last := runtime.NumGoroutine()
	for time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
		n := runtime.NumGoroutine()
		if target > 0 && n <= target || target == 0 && n == last {
			return n
		}
		last = n
	}
	return last
}

func heapInUse() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapInuse
}

func mib(b uint64) float64 { return float64(b) / (1 << 20) }
