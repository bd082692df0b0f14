package server_test

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"runtime"
	"runtime/pprof"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/dawn-go/dawn/internal/store"
	"github.com/dawn-go/dawn/stream"
	"github.com/tmc/langchaingo/llms"
)

// heldModel is benchModel whose answer turn waits until open is closed,
// counting the calls waiting.
type heldModel struct {
	benchModel
	waiting atomic.Int64
	open    chan struct{}
}

func (m *heldModel) GenerateContent(ctx context.Context, msgs []llms.MessageContent, options ...llms.CallOption) (*llms.ContentResponse, error) {
	for _, msg := range msgs {
		if isToolResult(msg) {
			m.waiting.Add(1)
			<-m.open
			m.waiting.Add(-1)
			break
		}
	}
	return m.benchModel.GenerateContent(ctx, msgs, options...)
}

// awaitWaiting waits (up to a minute) until n model calls wait.
func (m *heldModel) awaitWaiting(t *testing.T, n int64) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for m.waiting.Load() < n {
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d runs reached their model call within a minute", m.waiting.Load(), n)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestHeldRunGoroutines holds runs over loopback HTTP while their model
// call waits, and counts the server's goroutines per held run by what
// their stacks run: the HTTP server's connection (which serves the
// request), its background read (net/http's, to notice the client
// leaving) and the runner's. A runs/stream run has its own goroutine, so
// that a slow client never holds it up; a runs/wait run executes on the
// handler's, which only waits for it.
func TestHeldRunGoroutines(t *testing.T) {
	for _, c := range []struct {
		api  string
		most int
	}{{"stream", 3}, {"wait", 2}} {
		t.Run(c.api, func(t *testing.T) {
			got := heldRunGoroutines(t, c.api, 50)
			if got > c.most {
				t.Errorf("runs/%s: %d server goroutines per held run, want at most %d", c.api, got, c.most)
			}
		})
	}
}

// heldRunGoroutines holds n runs on api (stream or wait) and returns the
// server's goroutines per held run.
func heldRunGoroutines(t *testing.T, api string, n int) int {
	model := &heldModel{open: make(chan struct{})}
	_, url := benchServe(t, model)
	tr := &http.Transport{MaxIdleConnsPerHost: n}
	t.Cleanup(tr.CloseIdleConnections)
	client := &http.Client{Transport: tr}
	var wg sync.WaitGroup
	defer wg.Wait()
	defer close(model.open)
	var ms runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&ms)
	stack0 := ms.StackInuse
	for i := range n {
		wg.Go(func() {
			resp, err := benchPost(client, url, "/threads/held-"+strconv.Itoa(i)+"/runs/"+api)
			if err != nil {
				t.Error(err)
				return
			}
			defer resp.Body.Close()
			if api == "wait" {
				_, _ = io.Copy(io.Discard, resp.Body)
				return
			}
			r := stream.NewReader(resp.Body)
			for {
				e, err := r.Next()
				if err != nil || e.Type == stream.TypeDone {
					return
				}
			}
		})
	}
	model.awaitWaiting(t, int64(n))
	runtime.GC()
	runtime.ReadMemStats(&ms)
	t.Logf("runs/%s: goroutine stacks per held run, the test's client included: %d B", api, (int64(ms.StackInuse)-int64(stack0))/int64(n))
	total, kinds := serverGoroutines(t)
	t.Logf("runs/%s: %d held runs: %v", api, n, kinds)
	return (total + n - 1) / n
}

// serverGoroutines counts the goroutines whose stacks are the HTTP
// server's or the runner's, by their first such frame.
func serverGoroutines(t *testing.T) (int, map[string]int) {
	var buf bytes.Buffer
	if err := pprof.Lookup("goroutine").WriteTo(&buf, 2); err != nil {
		t.Fatal(err)
	}
	kinds := map[string]int{}
	total := 0
	for g := range strings.SplitSeq(buf.String(), "\n\n") {
		for _, k := range []string{"net/http.(*connReader).backgroundRead", "internal/runner.(*Manager).start.", "net/http.(*conn).serve"} {
			if strings.Contains(g, k) {
				kinds[k]++
				total++
				break
			}
		}
	}
	return total, kinds
}

// TestWaitRunOutlivesItsClient checks that a runs/wait run, which executes
// on its request's goroutine, goes on to its end when the client leaves
// while the model works, and is recorded as succeeded.
func TestWaitRunOutlivesItsClient(t *testing.T) {
	model := &heldModel{open: make(chan struct{})}
	h, url := benchServe(t, model)
	ctx, leave := context.WithCancel(context.Background())
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url+"/threads/left/runs/wait", strings.NewReader(benchRunBody))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	errc := make(chan error, 1)
	go func() {
		resp, err := http.DefaultClient.Do(req)
		if err == nil {
			resp.Body.Close()
		}
		errc <- err
	}()
	model.awaitWaiting(t, 1)
	run := h.Runs.Active("left")
	if run == nil {
		t.Fatal("no run in flight on the thread while its model call waits")
	}
	leave()
	if err := <-errc; err == nil {
		t.Fatal("the client's request ended without an error after it left")
	}
	close(model.open)
	select {
	case <-run.Done():
	case <-time.After(time.Minute):
		t.Fatal("the run did not finish within a minute of its client leaving")
	}
	if err := run.Err(); err != nil || run.Cancelled() {
		t.Fatalf("the run ended with %v (cancelled %v) after its client left", err, run.Cancelled())
	}
	got, err := h.Store.GetRun(context.Background(), run.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.Status != store.RunSuccess {
		t.Fatalf("the stored run's status is %q, want %q", got.Status, store.RunSuccess)
	}
}
