package runner_test

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/dawn-go/dawn/internal/apptest"
	"github.com/dawn-go/dawn/internal/runner"
	"github.com/dawn-go/dawn/thread"
	"github.com/tmc/langchaingo/llms"
)

// planArgs is the writeTodos input instantModel sends: four todos, the first
// in progress.
const planArgs = `{"todos":[` +
	`{"content":"Understand the customer request","status":"in_progress"},` +
	`{"content":"Check account context","status":"pending"},` +
	`{"content":"Decide whether to answer or escalate","status":"pending"},` +
	`{"content":"Write the final response","status":"pending"}]}`

// instantModel answers at once in two turns: with no tool result yet it
// calls writeTodos with planArgs; after a tool result it answers in one
// sentence. It keeps no state, so one value serves any number of runs.
type instantModel struct{}

func (instantModel) GenerateContent(_ context.Context, msgs []llms.MessageContent, _ ...llms.CallOption) (*llms.ContentResponse, error) {
	// The live state block comes after the conversation, so the tool result
	// is not the last message; each run is on a fresh thread, so any tool
	// result in the request is this run's.
	if slices.ContainsFunc(msgs, func(m llms.MessageContent) bool { return m.Role == llms.ChatMessageTypeTool }) {
		return &llms.ContentResponse{Choices: []*llms.ContentChoice{{Content: "Your account is in good standing.", StopReason: "stop"}}}, nil
	}
	call := llms.ToolCall{ID: "call_plan", Type: "function", FunctionCall: &llms.FunctionCall{Name: "writeTodos", Arguments: planArgs}}
	return &llms.ContentResponse{Choices: []*llms.ContentChoice{{
		StopReason: "tool_calls", ToolCalls: []llms.ToolCall{call}, FuncCall: call.FunctionCall,
	}}}, nil
}

func (m instantModel) Call(ctx context.Context, prompt string, opts ...llms.CallOption) (string, error) {
	return llms.GenerateFromSinglePrompt(ctx, m, prompt, opts...)
}

// benchRuns returns a run manager for a one-route planning app on an
// on-disk SQLite store, every route answered by instantModel; settings,
// when not empty, is the app's dawn.yaml.
func benchRuns(b *testing.B, settings ...string) *runner.Manager {
	b.Helper()
	dir := b.TempDir()
	files := map[string]string{
		"support/[tenant]/agent.md": "---\ndescription: support\nmodel: openai:gpt-4o-mini\n---\nYou help customers.\n",
		"support/[tenant]/plan.md":  "- [ ] Understand the customer request\n- [ ] Check account context\n- [ ] Decide whether to answer or escalate\n- [ ] Write the final response\n",
	}
	if len(settings) > 0 {
		files["dawn.yaml"] = settings[0]
	}
	for name, body := range files {
		path := filepath.Join(dir, "app", filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	h := apptest.New(b, filepath.Join(dir, "app"), instantModel{}, apptest.Options{StorePath: filepath.Join(dir, "dawn.db")})
	return h.Runs
}

// runOnce runs the workload on a fresh thread and waits for it.
func runOnce(m *runner.Manager, threadID string) error {
	run, err := m.Start(context.Background(), runner.Request{
		ThreadID: threadID, Route: "/support/acme",
		Messages: []thread.Message{{Role: thread.RoleUser, Content: "Help me with my account"}},
	})
	if err != nil {
		return err
	}
	<-run.Done()
	return run.Err()
}

// BenchmarkRunWait is one whole run per op, in process: a fresh thread, a
// writeTodos turn, a plan_update, an answer turn, three saved steps.
func BenchmarkRunWait(b *testing.B) {
	benchRunWait(b, benchRuns(b))
}

// BenchmarkRunWaitContinueOrphans is BenchmarkRunWait with runs:
// {continue_orphans: true}: the run keeps its request, and its tool turn
// is saved once more, before the call runs.
func BenchmarkRunWaitContinueOrphans(b *testing.B) {
	benchRunWait(b, benchRuns(b, "runs:\n  continue_orphans: true\n"))
}

func benchRunWait(b *testing.B, m *runner.Manager) {
	if err := runOnce(m, "warm-up"); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		i++
		if err := runOnce(m, "t-"+strconv.Itoa(i)); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "runs/s")
}

// BenchmarkRunWaitParallel runs the same workload from about 16 goroutines
// at once, each run on its own thread.
func BenchmarkRunWaitParallel(b *testing.B) {
	m := benchRuns(b)
	if err := runOnce(m, "warm-up"); err != nil {
		b.Fatal(err)
	}
	b.SetParallelism(max(1, 16/runtime.GOMAXPROCS(0)))
	b.ReportAllocs()
	var next atomic.Int64
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if err := runOnce(m, "p-"+strconv.FormatInt(next.Add(1), 10)); err != nil {
				b.Error(err)
				return
			}
		}
	})
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "runs/s")
}

// heldModel is instantModel whose answer turn waits until release is
// closed: the run stays held in its model call, as runs do behind a slow
// model.
type heldModel struct {
	instantModel
	waiting chan struct{}
	release chan struct{}
}

func (m *heldModel) GenerateContent(ctx context.Context, msgs []llms.MessageContent, opts ...llms.CallOption) (*llms.ContentResponse, error) {
	if slices.ContainsFunc(msgs, func(m llms.MessageContent) bool { return m.Role == llms.ChatMessageTypeTool }) {
		m.waiting <- struct{}{}
		select {
		case <-m.release:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	return m.instantModel.GenerateContent(ctx, msgs, opts...)
}

// BenchmarkHeldRuns holds 500 runs in their answer's model call and
// reports what each keeps in the runner, past the model: goroutines,
// goroutine stack bytes and heap bytes (after a GC) per held run.
func BenchmarkHeldRuns(b *testing.B) {
	const held = 500
	model := &heldModel{waiting: make(chan struct{}, held), release: make(chan struct{})}
	dir := b.TempDir()
	app := filepath.Join(dir, "app", "support", "[tenant]")
	if err := os.MkdirAll(app, 0o755); err != nil {
		b.Fatal(err)
	}
	for name, body := range map[string]string{
		"agent.md": "---\ndescription: support\nmodel: openai:gpt-4o-mini\n---\nYou help customers.\n",
		"plan.md":  "- [ ] Understand the customer request\n- [ ] Write the final response\n",
	} {
		if err := os.WriteFile(filepath.Join(app, name), []byte(body), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	h := apptest.New(b, filepath.Join(dir, "app"), model, apptest.Options{StorePath: filepath.Join(dir, "dawn.db")})
	var goroutines, stack, heap float64
	round := 0
	for b.Loop() {
		round++
		var before, after runtime.MemStats
		g0 := settledGoroutines()
		runtime.GC()
		runtime.ReadMemStats(&before)
		runs := make([]*runner.Run, held)
		for i := range runs {
			run, err := h.Runs.Start(context.Background(), runner.Request{
				ThreadID: "h-" + strconv.Itoa(round) + "-" + strconv.Itoa(i), Route: "/support/acme",
				Messages: []thread.Message{{Role: thread.RoleUser, Content: "Help me with my account"}},
			})
			if err != nil {
				b.Fatal(err)
			}
			runs[i] = run
		}
		for range held {
			<-model.waiting
		}
		runtime.GC()
		runtime.ReadMemStats(&after)
		goroutines += float64(runtime.NumGoroutine()-g0) / held
		stack += (float64(after.StackInuse) - float64(before.StackInuse)) / held
		heap += (float64(after.HeapAlloc) - float64(before.HeapAlloc)) / held
		close(model.release)
		for _, run := range runs {
			<-run.Done()
		}
		model.release = make(chan struct{})
	}
	n := float64(round)
	b.ReportMetric(goroutines/n, "goroutines/run")
	b.ReportMetric(stack/n, "stack-B/run")
	b.ReportMetric(heap/n, "heap-B/run")
}

// settledGoroutines waits up to a second for the goroutines of ended runs
// to exit (each ends a little after its run is done), and returns how
// many goroutines there are.
func settledGoroutines() int {
	n := runtime.NumGoroutine()
	for range 100 {
		time.Sleep(10 * time.Millisecond)
		m := runtime.NumGoroutine()
		if m == n {
			return n
		}
		n = m
	}
	return n
}
