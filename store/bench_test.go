package store

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/dawn-go/dawn/stream"
	"github.com/dawn-go/dawn/thread"
)

// BenchmarkSaveStep saves one typical step (2 messages, 4 todos, 3 events)
// per op to a file database.
func BenchmarkSaveStep(b *testing.B) {
	ctx := context.Background()
	s := openTest(b, filepath.Join(b.TempDir(), "dawn.db"))
	newRun(b, s, "th", "run-1")
	b.ReportAllocs()
	defer reportCPU(b)()
	step := 0
	for b.Loop() {
		step++
		must(b, s.SaveStep(ctx, sampleStep("th", "run-1", step, int64(3*step-2))))
	}
}

// BenchmarkRunLifecycle is one whole run on a new thread: CreateThread,
// StartRun, 3 SaveStep and FinishRun. After the loop it reports the
// database size per thread.
func BenchmarkRunLifecycle(b *testing.B) {
	ctx := context.Background()
	s := openTest(b, filepath.Join(b.TempDir(), "dawn.db"))
	b.ReportAllocs()
	stopCPU := reportCPU(b)
	i := 0
	for b.Loop() {
		i++
		runLifecycle(b, s, i)
	}
	stopCPU()
	threads, bytes, err := s.Stats(ctx)
	must(b, err)
	b.ReportMetric(float64(bytes)/float64(threads), "dbbytes/thread")
}

// runLifecycle runs the i-th whole run: a user message, 3 steps and a done
// event, about 4 messages of history, a 4-todo state and 11 events.
func runLifecycle(b testing.TB, s *Store, i int) {
	ctx := context.Background()
	th, run := fmt.Sprintf("thread-%08d", i), fmt.Sprintf("run-%08d", i)
	_, err := s.CreateThread(ctx, th, nil)
	must(b, err)
	must(b, s.StartRun(ctx, Run{ID: run, ThreadID: th, Route: "/support/[tenant]"}))
	first := sampleStep(th, run, 1, 1)
	first.Append = []thread.Message{{Role: thread.RoleUser, Content: "My order #42 has not arrived. Can you help?"}}
	must(b, s.SaveStep(ctx, first))
	must(b, s.SaveStep(ctx, sampleStep(th, run, 2, 4)))
	last := sampleStep(th, run, 3, 7)
	last.Append = []thread.Message{{Role: thread.RoleAssistant, Content: "Your order ships today; tracking is on its way by email."}}
	must(b, s.SaveStep(ctx, last))
	done := []stream.Event{{ID: 10, Type: stream.TypeDone, Data: json.RawMessage(`{"output":{"answer":"Your order ships today."}}`)}}
	must(b, s.FinishRun(ctx, run, RunSuccess, "", json.RawMessage(`{"answer":"Your order ships today."}`), done))
}

// BenchmarkLatest reads back a thread of 4 messages and a 4-todo state.
func BenchmarkLatest(b *testing.B) {
	ctx := context.Background()
	s := openTest(b, filepath.Join(b.TempDir(), "dawn.db"))
	runLifecycle(b, s, 1)
	b.ReportAllocs()
	defer reportCPU(b)()
	for b.Loop() {
		cp, err := s.Latest(ctx, "thread-00000001")
		if err != nil || len(cp.Messages) != 4 {
			b.Fatal(err, len(cp.Messages))
		}
	}
}

// TestBytesPerThread reports the database size after 1,000 whole runs.
func TestBytesPerThread(t *testing.T) {
	if testing.Short() {
		t.Skip("writes 1,000 runs")
	}
	s := openTest(t, filepath.Join(t.TempDir(), "dawn.db"))
	for i := 1; i <= 1000; i++ {
		runLifecycle(t, s, i)
	}
	threads, bytes, err := s.Stats(context.Background())
	must(t, err)
	if threads != 1000 {
		t.Fatalf("%d threads, want 1000", threads)
	}
	t.Logf("%d threads: %d bytes, %d bytes per thread", threads, bytes, bytes/int64(threads))
}

// reportCPU starts measuring process CPU time; the function it returns
// reports it per op as "cpu-ns/op".
func reportCPU(b *testing.B) func() {
	start := processCPU()
	return func() {
		if used := processCPU() - start; used > 0 && b.N > 0 {
			b.ReportMetric(float64(used.Nanoseconds())/float64(b.N), "cpu-ns/op")
		}
	}
}
