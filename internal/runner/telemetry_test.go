package runner_test

import (
	"context"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dawn-go/dawn/dawntest"
	"github.com/dawn-go/dawn/internal/apptest"
	"github.com/dawn-go/dawn/internal/telemetry"
	"github.com/tmc/langchaingo/llms"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
)

// usageModel reports fixed token counts the way langchaingo's OpenAI client
// does, in each choice's GenerationInfo.
type usageModel struct{ llms.Model }

func (m usageModel) GenerateContent(ctx context.Context, msgs []llms.MessageContent, opts ...llms.CallOption) (*llms.ContentResponse, error) {
	resp, err := m.Model.GenerateContent(ctx, msgs, opts...)
	if resp != nil {
		for _, c := range resp.Choices {
			c.GenerationInfo = map[string]any{"PromptTokens": 11, "CompletionTokens": 7, "TotalTokens": 18, "PromptCachedTokens": 4}
		}
	}
	return resp, err
}

func writeFiles(t testing.TB, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, body := range files {
		path := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// tracedApp runs a planning route with a subagent on scripted model turns,
// recording spans in memory and metrics in a manual reader.
func tracedApp(t *testing.T, model llms.Model) (*apptest.Harness, *tracetest.InMemoryExporter, *sdkmetric.ManualReader) {
	t.Helper()
	dir := writeFiles(t, map[string]string{
		"research/agent.md":                      "Lead researcher.",
		"research/plan.md":                       "- [ ] Look it up\n- [ ] Answer\n",
		"research/subagents/researcher/agent.md": "Researcher.",
	})
	spans := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(spans))
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	tel := telemetry.New(tp, mp, telemetry.Options{})
	h := apptest.New(t, dir, usageModel{model}, apptest.Options{Telemetry: tel})
	return h, spans, reader
}

func attr(s tracetest.SpanStub, key attribute.Key) attribute.Value {
	for _, kv := range s.Attributes {
		if kv.Key == key {
			return kv.Value
		}
	}
	return attribute.Value{}
}

// tree indexes spans by id and lists each span's children's names.
type tree struct {
	byID     map[trace.SpanID]tracetest.SpanStub
	children map[trace.SpanID][]tracetest.SpanStub
}

func spanTree(stubs tracetest.SpanStubs) tree {
	tr := tree{byID: map[trace.SpanID]tracetest.SpanStub{}, children: map[trace.SpanID][]tracetest.SpanStub{}}
	for _, s := range stubs {
		tr.byID[s.SpanContext.SpanID()] = s
	}
	for _, s := range stubs {
		tr.children[s.Parent.SpanID()] = append(tr.children[s.Parent.SpanID()], s)
	}
	return tr
}

func names(stubs []tracetest.SpanStub) string {
	var out []string
	for _, s := range stubs {
		out = append(out, s.Name)
	}
	return strings.Join(out, ", ")
}

func find(stubs []tracetest.SpanStub, name string) []tracetest.SpanStub {
	var out []tracetest.SpanStub
	for _, s := range stubs {
		if s.Name == name {
			out = append(out, s)
		}
	}
	return out
}

func TestTelemetrySpanTreeOfRunWithToolSubagentAndPlan(t *testing.T) {
	started := map[string]any{"todos": []map[string]string{{"content": "Look it up", "status": "in_progress"}, {"content": "Answer", "status": "pending"}}}
	finished := map[string]any{"todos": []map[string]string{{"content": "Look it up", "status": "completed"}, {"content": "Answer", "status": "completed"}}}
	model := dawntest.Script().
		CallTool("writeTodos", started).                                                   // parent
		CallTool("task", map[string]any{"subagent": "researcher", "input": "look it up"}). // parent
		Reply("found it").                                                                 // child
		CallTool("nope", map[string]any{}).                                                // parent: no such tool
		CallTool("writeTodos", finished).                                                  // parent
		Reply("the answer")                                                                // parent
	h, spans, reader := tracedApp(t, model)
	res := h.Run(t, "t1", "/research", "question")
	if res.Err != nil {
		t.Fatal(res.Err)
	}
	tr := spanTree(spans.GetSpans())
	run := checkRunSpan(t, tr, res)
	task := checkRunChildren(t, tr, run, res)
	checkSubagentSpans(t, tr, task)

	var events []string
	for _, e := range run.Events {
		events = append(events, e.Name)
	}
	want := "plan.item.started plan.item.finished plan.item.finished"
	if got := strings.Join(events, " "); got != want {
		t.Errorf("run span events = %q, want %q", got, want)
	}
	checkRunMetrics(t, reader)
}

// checkRunSpan checks that the trace has one root, the span of run res,
// and returns it.
func checkRunSpan(t *testing.T, tr tree, res *apptest.Result) tracetest.SpanStub {
	t.Helper()
	roots := tr.children[trace.SpanID{}]
	if len(roots) != 1 || roots[0].Name != "invoke_agent /research" {
		t.Fatalf("root spans = [%s], want one run span", names(roots))
	}
	run := roots[0]
	for key, want := range map[attribute.Key]string{
		telemetry.AttrThread: "t1", telemetry.AttrRoute: "/research", telemetry.AttrRun: res.Run.ID,
		telemetry.AttrRunStatus: "success", telemetry.AttrOperation: "invoke_agent",
	} {
		if got := attr(run, key).AsString(); got != want {
			t.Errorf("run span %s = %q, want %q", key, got, want)
		}
	}
	return run
}

// checkRunChildren checks the model calls and tool calls under the run
// span, and returns the span of its one task call.
func checkRunChildren(t *testing.T, tr tree, run tracetest.SpanStub, res *apptest.Result) tracetest.SpanStub {
	t.Helper()
	kids := tr.children[run.SpanContext.SpanID()]
	if got := len(find(kids, "chat "+modelSpecName(t, res))); got != 5 {
		t.Errorf("run span has %d model-call children, want 5 (the parent's turns): [%s]", got, names(kids))
	}
	if got := len(find(kids, "execute_tool writeTodos")); got != 2 {
		t.Errorf("run span has %d writeTodos children, want 2: [%s]", got, names(kids))
	}
	nope := find(kids, "execute_tool nope")
	if len(nope) != 1 || nope[0].Status.Code != codes.Error || !strings.Contains(nope[0].Status.Description, `no tool "nope"`) {
		t.Errorf("the failing tool call's span = %+v, want one with an error status", nope)
	}
	tasks := find(kids, "execute_tool task")
	if len(tasks) != 1 {
		t.Fatalf("run span children = [%s], want one task call", names(kids))
	}
	if id := attr(tasks[0], telemetry.AttrToolCallID).AsString(); id == "" {
		t.Errorf("task span has no %s", telemetry.AttrToolCallID)
	}
	return tasks[0]
}

// checkSubagentSpans checks the subagent's span under the task call's
// span, and its one model call.
func checkSubagentSpans(t *testing.T, tr tree, task tracetest.SpanStub) {
	t.Helper()
	sub := tr.children[task.SpanContext.SpanID()]
	if len(sub) != 1 || sub[0].Name != "invoke_agent researcher" {
		t.Fatalf("task span children = [%s], want the subagent's span", names(sub))
	}
	if got := attr(sub[0], telemetry.AttrRoute).AsString(); got != "/research/subagents/researcher" {
		t.Errorf("subagent span route = %q", got)
	}
	subCalls := tr.children[sub[0].SpanContext.SpanID()]
	if len(subCalls) != 1 || !strings.HasPrefix(subCalls[0].Name, "chat ") {
		t.Fatalf("subagent span children = [%s], want its one model call", names(subCalls))
	}
	call := subCalls[0]
	if attr(call, telemetry.AttrOperation).AsString() != "chat" || attr(call, telemetry.AttrInputTokens).AsInt64() != 11 || attr(call, telemetry.AttrOutputTokens).AsInt64() != 7 ||
		attr(call, telemetry.AttrCachedInputTokens).AsInt64() != 4 {
		t.Errorf("model-call span attributes = %v", call.Attributes)
	}
	if got := attr(call, telemetry.AttrFinishReasons).AsStringSlice(); len(got) != 1 || got[0] != "stop" {
		t.Errorf("finish reasons = %v, want [stop]", got)
	}
	if _, ok := attrOK(call, telemetry.AttrInputMessages); ok {
		t.Errorf("prompt text was exported without %s", telemetry.CaptureContentVar)
	}
}

// checkRunMetrics checks the metrics of the one run the reader saw.
func checkRunMetrics(t *testing.T, reader *sdkmetric.ManualReader) {
	t.Helper()
	var rm metricdata.ResourceMetrics
	if err := reader.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	got := metricTotals(rm)
	for name, want := range map[string]int64{
		"dawn.runs.started": 1, "dawn.runs.finished": 1, "dawn.runs.in_flight": 0, "dawn.run.duration": 1,
		"gen_ai.client.operation.duration": 6, "gen_ai.client.token.usage.input": 66, "gen_ai.client.token.usage.output": 42,
	} {
		if got[name] != want {
			t.Errorf("metric %s = %d, want %d (all: %v)", name, got[name], want, got)
		}
	}
	if got["dawn.store.write.duration"] == 0 {
		t.Errorf("no store write latency recorded (all: %v)", got)
	}
}

// metricTotals sums each metric of rm: counters by value, token
// histograms by sum per token type, duration histograms by count.
func metricTotals(rm metricdata.ResourceMetrics) map[string]int64 {
	got := map[string]int64{}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			switch d := m.Data.(type) {
			case metricdata.Sum[int64]:
				for _, p := range d.DataPoints {
					got[m.Name] += p.Value
				}
			case metricdata.Histogram[int64]:
				for _, p := range d.DataPoints {
					typ, _ := p.Attributes.Value(telemetry.AttrTokenType)
					got[m.Name+"."+typ.AsString()] += p.Sum
				}
			case metricdata.Histogram[float64]:
				for _, p := range d.DataPoints {
					got[m.Name] += int64(p.Count)
				}
			}
		}
	}
	return got
}

func attrOK(s tracetest.SpanStub, key attribute.Key) (attribute.Value, bool) {
	for _, kv := range s.Attributes {
		if kv.Key == key {
			return kv.Value, true
		}
	}
	return attribute.Value{}, false
}

// modelSpecName is the model name the run's spans carry.
func modelSpecName(t *testing.T, res *apptest.Result) string {
	t.Helper()
	if _, name, ok := strings.Cut(res.Run.Model, ":"); ok {
		return name
	}
	return res.Run.Model
}

func TestTelemetryContinuesCallersTrace(t *testing.T) {
	model := dawntest.Script().Reply("hello")
	h, spans, _ := tracedApp(t, model)
	url := h.Serve(t)
	const traceID, parentID = "4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7"
	body := `{"route":"/research","input":{"messages":[{"role":"user","content":"secret prompt"}]}}`
	req, err := http.NewRequest(http.MethodPost, url+"/threads/t2/runs/wait", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("traceparent", "00-"+traceID+"-"+parentID+"-01")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("status %d", resp.StatusCode)
	}
	var run *tracetest.SpanStub
	stubs := spans.GetSpans()
	for i, s := range stubs {
		if s.Name == "invoke_agent /research" {
			run = &stubs[i]
		}
	}
	if run == nil {
		t.Fatalf("no run span in [%s]", names(stubs))
	}
	if got := run.SpanContext.TraceID().String(); got != traceID {
		t.Errorf("run span trace id = %s, want the caller's %s", got, traceID)
	}
	if got := run.Parent.SpanID().String(); got != parentID || !run.Parent.IsRemote() {
		t.Errorf("run span parent = %s (remote %v), want the caller's span %s", got, run.Parent.IsRemote(), parentID)
	}
}

func TestTelemetryCapturesContentOnlyWhenAsked(t *testing.T) {
	for _, capture := range []bool{false, true} {
		spans := tracetest.NewInMemoryExporter()
		tel := telemetry.New(sdktrace.NewTracerProvider(sdktrace.WithSyncer(spans)), sdkmetric.NewMeterProvider(), telemetry.Options{CaptureContent: capture})
		m := tel.WrapModel(dawntest.Script().Reply("the completion"), "openai:gpt-test")
		if _, err := llms.GenerateFromSinglePrompt(context.Background(), m, "the prompt"); err != nil {
			t.Fatal(err)
		}
		stubs := spans.GetSpans()
		if len(stubs) != 1 || stubs[0].Name != "chat gpt-test" || attr(stubs[0], telemetry.AttrProvider).AsString() != "openai" {
			t.Fatalf("spans = [%s]", names(stubs))
		}
		in, inOK := attrOK(stubs[0], telemetry.AttrInputMessages)
		out, outOK := attrOK(stubs[0], telemetry.AttrOutputMessage)
		if inOK != capture || outOK != capture {
			t.Fatalf("capture %v: prompt exported %v, completion exported %v", capture, inOK, outOK)
		}
		if capture && (!strings.Contains(in.AsString(), "the prompt") || !strings.Contains(out.AsString(), "the completion")) {
			t.Errorf("captured %q and %q", in.AsString(), out.AsString())
		}
	}
}

func TestTelemetryConcurrentRuns(t *testing.T) {
	const n = 8
	model := dawntest.Script()
	for range n {
		model.Reply("done")
	}
	h, spans, _ := tracedApp(t, model)
	done := make(chan *apptest.Result, n)
	for i := range n {
		go func() { done <- h.Run(t, "c"+string(rune('a'+i)), "/research", "go") }()
	}
	for range n {
		if res := <-done; res.Err != nil {
			t.Error(res.Err)
		}
	}
	runs := map[string]bool{}
	for _, s := range spans.GetSpans() {
		if s.Name == "invoke_agent /research" && attr(s, telemetry.AttrRunStatus).AsString() == "success" {
			runs[attr(s, telemetry.AttrRun).AsString()] = true
		}
	}
	if len(runs) != n {
		t.Fatalf("%d finished run spans, want %d", len(runs), n)
	}
}
