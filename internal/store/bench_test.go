package store

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sync/atomic"
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
	defer reportWrites(b)()
	defer reportCPU(b)()
	step := 0
	for b.Loop() {
		step++
		must(b, s.SaveStep(ctx, sampleStep("th", "run-1", step, int64(3*step-2))))
	}
}

// BenchmarkRunLifecycle is one whole run of the load tool's workload on a
// new thread, as the runner writes it (see workloadRun). After the loop it
// reports the database size per thread.
func BenchmarkRunLifecycle(b *testing.B) {
	ctx := context.Background()
	s := openTest(b, filepath.Join(b.TempDir(), "dawn.db"))
	b.ReportAllocs()
	stopCPU, stopWrites := reportCPU(b), reportWrites(b)
	i := 0
	for b.Loop() {
		i++
		workloadRun(b, s, workloadThread(i))
	}
	stopCPU()
	stopWrites()
	threads, bytes, err := s.Stats(ctx)
	must(b, err)
	b.ReportMetric(float64(bytes)/float64(threads), "dbbytes/thread")
}

// BenchmarkRunLifecycleParallel is BenchmarkRunLifecycle from 16
// goroutines at once, as 16 concurrent clients of the server write.
func BenchmarkRunLifecycleParallel(b *testing.B) {
	ctx := context.Background()
	s := openTest(b, filepath.Join(b.TempDir(), "dawn.db"))
	b.ReportAllocs()
	b.SetParallelism(max(1, 16/runtime.GOMAXPROCS(0)))
	stopCPU, stopWrites := reportCPU(b), reportWrites(b)
	var next atomic.Int64
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			workloadRun(b, s, workloadThread(int(next.Add(1))))
		}
	})
	stopCPU()
	stopWrites()
	threads, bytes, err := s.Stats(ctx)
	must(b, err)
	b.ReportMetric(float64(bytes)/float64(threads), "dbbytes/thread")
}

// runLifecycle runs the i-th whole run of an older, smaller shape: a user
// message, 3 steps and a done event, about 4 messages of history, a 4-todo
// state and 11 events.
func runLifecycle(b testing.TB, s *DB, i int) {
	ctx := context.Background()
	th, run := fmt.Sprintf("thread-%08d", i), fmt.Sprintf("run-%08d", i)
	_, err := s.CreateThread(ctx, th, nil)
	must(b, err)
	must(b, startRun(ctx, s, Run{ID: run, ThreadID: th, Route: "/support/[tenant]"}))
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

// BenchmarkBytesPerThread reports the database size per thread after runs
// of the load tool's workload, each on a new thread, once the store is
// closed (as the load tool measures it: the file after the last
// checkpoint). Run it with -benchtime=1000x for the figure in bench/README.md.
func BenchmarkBytesPerThread(b *testing.B) {
	path := filepath.Join(b.TempDir(), "dawn.db")
	s := openTest(b, path)
	runs := 0
	for b.Loop() {
		runs++
		workloadRun(b, s, workloadThread(runs))
	}
	b.StopTimer()
	must(b, s.Close())
	fi, err := os.Stat(path)
	must(b, err)
	s = openTest(b, path)
	threads, _, err := s.Stats(context.Background())
	must(b, err)
	if threads != runs {
		b.Fatalf("%d threads, want %d", threads, runs)
	}
	b.ReportMetric(float64(fi.Size())/float64(threads), "bytes/thread")
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

// BenchmarkBeginRun starts one run per op on a new thread: the run's first
// transaction (the thread, the run, busy), as runs/wait on a fresh thread
// writes it.
func BenchmarkBeginRun(b *testing.B) {
	ctx := context.Background()
	s := openTest(b, filepath.Join(b.TempDir(), "dawn.db"))
	b.ReportAllocs()
	defer reportWrites(b)()
	defer reportCPU(b)()
	i := 0
	for b.Loop() {
		i++
		_, err := beginRun(ctx, s, Run{ID: fmt.Sprintf("run-%08d", i), ThreadID: workloadThread(i), Route: "/support/[tenant]"})
		must(b, err)
	}
}
