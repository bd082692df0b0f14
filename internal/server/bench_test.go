package server_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/dawn-go/dawn/internal/apptest"
	"github.com/dawn-go/dawn/stream"
	"github.com/tmc/langchaingo/llms"
)

// benchPlanArgs is the writeTodos input of benchModel: four todos, the first
// in progress.
const benchPlanArgs = `{"todos":[` +
	`{"content":"Understand the customer request","status":"in_progress"},` +
	`{"content":"Check account context","status":"pending"},` +
	`{"content":"Decide whether to answer or escalate","status":"pending"},` +
	`{"content":"Write the final response","status":"pending"}]}`

// benchModel answers at once in two turns: with no tool result yet it calls
// writeTodos; after a tool result it answers one sentence (streamed when the
// call asks). It serves any number of runs.
type benchModel struct {
	// planned is when the latest writeTodos turn returned, in Unix ns.
	planned atomic.Int64
	// release, when not nil, holds each answer turn until it receives a
	// token: the run stays in flight while a benchmark reads its stream.
	release chan struct{}
}

func (m *benchModel) GenerateContent(ctx context.Context, msgs []llms.MessageContent, options ...llms.CallOption) (*llms.ContentResponse, error) {
	var opts llms.CallOptions
	for _, o := range options {
		o(&opts)
	}
	if !slices.ContainsFunc(msgs, isToolResult) {
		call := llms.ToolCall{ID: "call_plan", Type: "function", FunctionCall: &llms.FunctionCall{Name: "writeTodos", Arguments: benchPlanArgs}}
		m.planned.Store(time.Now().UnixNano())
		return &llms.ContentResponse{Choices: []*llms.ContentChoice{{
			StopReason: "tool_calls", ToolCalls: []llms.ToolCall{call}, FuncCall: call.FunctionCall,
		}}}, nil
	}
	if m.release != nil {
		select {
		case <-m.release:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	const text = "Your account is in good standing."
	if opts.StreamingFunc != nil {
		if err := opts.StreamingFunc(ctx, []byte(text)); err != nil {
			return nil, err
		}
	}
	return &llms.ContentResponse{Choices: []*llms.ContentChoice{{Content: text, StopReason: "stop"}}}, nil
}

// isToolResult reports whether msg is a tool result. The live state block
// comes after the conversation, so a tool result is not the request's last
// message; each benchmark run is on a fresh thread, so any tool result in
// the request is this run's.
func isToolResult(msg llms.MessageContent) bool {
	return msg.Role == llms.ChatMessageTypeTool
}

func (m *benchModel) Call(ctx context.Context, prompt string, opts ...llms.CallOption) (string, error) {
	return llms.GenerateFromSinglePrompt(ctx, m, prompt, opts...)
}

// benchServe serves a one-route planning app on an on-disk store with model
// over loopback, and returns the harness and the API's URL.
func benchServe(b testing.TB, model llms.Model) (*apptest.Harness, string) {
	b.Helper()
	dir := b.TempDir()
	files := map[string]string{
		"support/[tenant]/agent.md": "---\ndescription: support\nmodel: openai:gpt-4o-mini\n---\nYou help customers.\n",
		"support/[tenant]/plan.md":  "- [ ] Understand the customer request\n- [ ] Check account context\n- [ ] Decide whether to answer or escalate\n- [ ] Write the final response\n",
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
	h := apptest.New(b, filepath.Join(dir, "app"), model, apptest.Options{StorePath: filepath.Join(dir, "dawn.db")})
	return h, h.Serve(b)
}

// benchClient keeps enough loopback connections alive for 16 clients.
func benchClient(b *testing.B) *http.Client {
	tr := &http.Transport{MaxIdleConns: 64, MaxIdleConnsPerHost: 64}
	b.Cleanup(tr.CloseIdleConnections)
	return &http.Client{Transport: tr}
}

const benchRunBody = `{"route":"/support/acme","input":{"messages":[{"role":"user","content":"Help me with my account"}]}}`

// benchPost sends the workload's run request to path on url.
func benchPost(client *http.Client, url, path string) (*http.Response, error) {
	resp, err := client.Post(url+path, "application/json", strings.NewReader(benchRunBody))
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		return nil, fmt.Errorf("POST %s: %d %s", path, resp.StatusCode, body)
	}
	return resp, nil
}

// benchWait runs the workload on thread with runs/wait and reads the answer.
func benchWait(client *http.Client, url, thread string) error {
	resp, err := benchPost(client, url, "/threads/"+thread+"/runs/wait")
	if err != nil {
		return err
	}
	_, err = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return err
}

// BenchmarkHTTPRunWait is one runs/wait per op over loopback with a
// keep-alive client, each on a fresh thread.
func BenchmarkHTTPRunWait(b *testing.B) {
	_, url := benchServe(b, &benchModel{})
	client := benchClient(b)
	if err := benchWait(client, url, "warm-up"); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		i++
		if err := benchWait(client, url, "t-"+strconv.Itoa(i)); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "runs/s")
}

// BenchmarkHTTPRunWaitParallel is BenchmarkHTTPRunWait from about 16
// clients at once.
func BenchmarkHTTPRunWaitParallel(b *testing.B) {
	_, url := benchServe(b, &benchModel{})
	client := benchClient(b)
	if err := benchWait(client, url, "warm-up"); err != nil {
		b.Fatal(err)
	}
	b.SetParallelism(max(1, 16/runtime.GOMAXPROCS(0)))
	b.ReportAllocs()
	var next atomic.Int64
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if err := benchWait(client, url, "p-"+strconv.FormatInt(next.Add(1), 10)); err != nil {
				b.Error(err)
				return
			}
		}
	})
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "runs/s")
}

// BenchmarkPlanUpdateLatency measures, per runs/stream, the time from the
// model handing back its writeTodos call to the SSE client having read the
// plan_update event: the tool's run, the event's encoding, the write and
// the flush. The answer turn waits until then, so nothing else competes.
// It reports the mean and median as ns/plan_update and p50-ns/plan_update.
func BenchmarkPlanUpdateLatency(b *testing.B) {
	model := &benchModel{release: make(chan struct{}, 1)}
	_, url := benchServe(b, model)
	client := benchClient(b)
	var lat []time.Duration
	streamOnce := func(thread string) error {
		resp, err := benchPost(client, url, "/threads/"+thread+"/runs/stream")
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		r := stream.NewReader(resp.Body)
		released := false
		for {
			e, err := r.Next()
			if errors.Is(err, io.EOF) {
				if !released {
					return errors.New("the stream ended without a plan_update")
				}
				return nil
			}
			if err != nil {
				return err
			}
			if e.Type == "plan_update" && !released {
				lat = append(lat, time.Since(time.Unix(0, model.planned.Load())))
				model.release <- struct{}{}
				released = true
			}
		}
	}
	if err := streamOnce("warm-up"); err != nil {
		b.Fatal(err)
	}
	lat = lat[:0]
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		i++
		if err := streamOnce("s-" + strconv.Itoa(i)); err != nil {
			b.Fatal(err)
		}
	}
	var sum time.Duration
	for _, d := range lat {
		sum += d
	}
	slices.Sort(lat)
	b.ReportMetric(float64(sum.Nanoseconds())/float64(len(lat)), "ns/plan_update")
	b.ReportMetric(float64(lat[len(lat)/2].Nanoseconds()), "p50-ns/plan_update")
}

// BenchmarkIdleThreadMemory runs the workload once per op on a fresh thread
// over HTTP, then reports what each finished (idle) thread keeps: Go heap
// bytes after a GC, and SQLite database bytes.
func BenchmarkIdleThreadMemory(b *testing.B) {
	h, url := benchServe(b, &benchModel{})
	client := benchClient(b)
	if err := benchWait(client, url, "warm-up"); err != nil {
		b.Fatal(err)
	}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		i++
		if err := benchWait(client, url, "m-"+strconv.Itoa(i)); err != nil {
			b.Fatal(err)
		}
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	b.ReportMetric((float64(after.HeapAlloc)-float64(before.HeapAlloc))/float64(b.N), "heap-B/thread")
	threads, bytes, err := h.Store.Stats(context.Background())
	if err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(float64(bytes)/float64(threads), "db-B/thread")
}
