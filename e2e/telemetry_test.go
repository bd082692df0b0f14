package e2e

import (
	"compress/gzip"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/pdata/pmetric/pmetricotlp"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"
)

// otlpReceiver is an OTLP/HTTP endpoint on loopback that keeps every span
// and metric it is sent, decoded by the collector's own pdata package.
type otlpReceiver struct {
	mu      sync.Mutex
	spans   []ptrace.Span
	metrics []pmetric.Metric
	errs    []string
}

func startReceiver(t *testing.T) (*otlpReceiver, string) {
	r := &otlpReceiver{}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/traces", func(w http.ResponseWriter, req *http.Request) {
		body, err := readBody(req)
		er := ptraceotlp.NewExportRequest()
		if err == nil {
			err = er.UnmarshalProto(body)
		}
		if err != nil {
			r.fail(w, "traces: "+err.Error())
			return
		}
		r.mu.Lock()
		rss := er.Traces().ResourceSpans()
		for i := range rss.Len() {
			if name, _ := rss.At(i).Resource().Attributes().Get("service.name"); name.Str() != "dawn" {
				r.errs = append(r.errs, "resource service.name = "+name.Str())
			}
			sss := rss.At(i).ScopeSpans()
			for j := range sss.Len() {
				spans := sss.At(j).Spans()
				for k := range spans.Len() {
					r.spans = append(r.spans, spans.At(k))
				}
			}
		}
		r.mu.Unlock()
		out, _ := ptraceotlp.NewExportResponse().MarshalProto()
		w.Header().Set("Content-Type", "application/x-protobuf")
		_, _ = w.Write(out)
	})
	mux.HandleFunc("POST /v1/metrics", func(w http.ResponseWriter, req *http.Request) {
		body, err := readBody(req)
		er := pmetricotlp.NewExportRequest()
		if err == nil {
			err = er.UnmarshalProto(body)
		}
		if err != nil {
			r.fail(w, "metrics: "+err.Error())
			return
		}
		r.mu.Lock()
		rms := er.Metrics().ResourceMetrics()
		for i := range rms.Len() {
			sms := rms.At(i).ScopeMetrics()
			for j := range sms.Len() {
				ms := sms.At(j).Metrics()
				for k := range ms.Len() {
					r.metrics = append(r.metrics, ms.At(k))
				}
			}
		}
		r.mu.Unlock()
		out, _ := pmetricotlp.NewExportResponse().MarshalProto()
		w.Header().Set("Content-Type", "application/x-protobuf")
		_, _ = w.Write(out)
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return r, srv.URL
}

func readBody(req *http.Request) ([]byte, error) {
	var rd io.Reader = req.Body
	if req.Header.Get("Content-Encoding") == "gzip" {
		gz, err := gzip.NewReader(req.Body)
		if err != nil {
			return nil, err
		}
		rd = gz
	}
	return io.ReadAll(rd)
}

func (r *otlpReceiver) fail(w http.ResponseWriter, msg string) {
	r.mu.Lock()
	r.errs = append(r.errs, msg)
	r.mu.Unlock()
	http.Error(w, msg, http.StatusBadRequest)
}

// waitFor polls until ok holds on what was received, or fails after 20s.
func (r *otlpReceiver) waitFor(t *testing.T, what string, ok func([]ptrace.Span, []pmetric.Metric) bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		r.mu.Lock()
		done := ok(r.spans, r.metrics)
		errs := strings.Join(r.errs, "; ")
		r.mu.Unlock()
		if errs != "" {
			t.Fatalf("the receiver failed: %s", errs)
		}
		if done {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("no %s reached the receiver within 20s", what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func researchApp(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	files := map[string]string{
		"research/agent.md":                      "---\nmodel: openai:gpt-4o-mini\n---\nLead researcher.\n",
		"research/plan.md":                       "- [ ] Ask the researcher\n- [ ] Answer\n",
		"research/subagents/researcher/agent.md": "---\nmodel: openai:gpt-4o-mini\n---\nResearcher.\n",
	}
	writeFiles(t, dir, files)
	return dir
}

func str(s ptrace.Span, key string) string {
	v, _ := s.Attributes().Get(key)
	return v.AsString()
}

func num(s ptrace.Span, key string) int64 {
	v, _ := s.Attributes().Get(key)
	return v.Int()
}

// TestTelemetryOverOTLPHTTP runs the stock binary with only the standard
// OTEL_* variables set, against aimock, and checks what a collector would
// get: the run's span continuing the caller's trace, the model calls with
// their token counts, the tool calls, the subagent under its task call, the
// plan's span events, and the run and token metrics.
func TestTelemetryOverOTLPHTTP(t *testing.T) {
	mock := startAimock(t, "testdata/telemetry.json")
	recv, otlp := startReceiver(t)
	bin := buildDawn(t)
	url := startDawn(t, bin, researchApp(t),
		"OPENAI_BASE_URL="+mock+"/v1", "OPENAI_API_KEY=test", "DAWN_API_KEY=",
		"OTEL_EXPORTER_OTLP_ENDPOINT="+otlp, "OTEL_EXPORTER_OTLP_PROTOCOL=http/protobuf",
		"OTEL_TRACES_EXPORTER=", "OTEL_METRICS_EXPORTER=", "OTEL_SDK_DISABLED=",
		"OTEL_BSP_SCHEDULE_DELAY=100", "OTEL_METRIC_EXPORT_INTERVAL=200", "OTEL_SERVICE_NAME=")

	const traceID, parentID = "4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7"
	body := `{"route":"/research","input":{"messages":[{"role":"user","content":"Please research refunds"}]}}`
	req, err := http.NewRequest(http.MethodPost, url+"/threads/otel/runs/wait", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("traceparent", "00-"+traceID+"-"+parentID+"-01")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	out, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(out), "within 30 days") {
		t.Fatalf("runs/wait: %d %s", resp.StatusCode, out)
	}

	recv.waitFor(t, "run span", func(spans []ptrace.Span, _ []pmetric.Metric) bool {
		for _, s := range spans {
			if s.Name() == "invoke_agent /research" {
				return true
			}
		}
		return false
	})
	recv.mu.Lock()
	spans := append([]ptrace.Span(nil), recv.spans...)
	recv.mu.Unlock()

	children := map[string][]ptrace.Span{}
	var run ptrace.Span
	for _, s := range spans {
		if s.TraceID().String() != traceID {
			t.Errorf("span %s is in trace %s, not the caller's %s", s.Name(), s.TraceID(), traceID)
		}
		children[s.ParentSpanID().String()] = append(children[s.ParentSpanID().String()], s)
		if s.Name() == "invoke_agent /research" {
			run = s
		}
	}
	if got := run.ParentSpanID().String(); got != parentID {
		t.Fatalf("run span's parent = %s, want the caller's span %s", got, parentID)
	}
	if str(run, "dawn.thread.id") != "otel" || str(run, "dawn.route") != "/research" || str(run, "dawn.run.status") != "success" || str(run, "dawn.run.id") == "" {
		t.Errorf("run span attributes = %v", run.Attributes().AsRaw())
	}
	if got, want := tree(run, children, ""), strings.Join([]string{
		"invoke_agent /research",
		"  chat gpt-4o-mini input=21 output=9",
		"  chat gpt-4o-mini input=40 output=11",
		"  execute_tool task",
		"    invoke_agent researcher",
		"      chat gpt-4o-mini input=13 output=8",
		"  execute_tool writeTodos",
	}, "\n"); got != want {
		t.Errorf("span tree:\n%s\nwant:\n%s", got, want)
	}
	var events []string
	for i := range run.Events().Len() {
		events = append(events, run.Events().At(i).Name())
	}
	if got := strings.Join(events, " "); got != "plan.item.started" {
		t.Errorf("run span events = %q, want plan.item.started", got)
	}
	for _, s := range spans {
		if _, ok := s.Attributes().Get("gen_ai.input.messages"); ok {
			t.Errorf("span %s exported the prompt without DAWN_OTEL_CAPTURE_CONTENT", s.Name())
		}
	}

	recv.waitFor(t, "token and run metrics", func(_ []ptrace.Span, ms []pmetric.Metric) bool {
		return tokens(ms, "input") == 74 && tokens(ms, "output") == 28 && runsFinished(ms) == 1
	})
}

// tree prints s and its descendants, children sorted by name, with model
// calls' token counts.
func tree(s ptrace.Span, children map[string][]ptrace.Span, indent string) string {
	line := indent + s.Name()
	if str(s, "gen_ai.operation.name") == "chat" {
		line += fmt.Sprintf(" input=%d output=%d", num(s, "gen_ai.usage.input_tokens"), num(s, "gen_ai.usage.output_tokens"))
	}
	kids := children[s.SpanID().String()]
	sort.SliceStable(kids, func(i, j int) bool {
		if kids[i].Name() != kids[j].Name() {
			return kids[i].Name() < kids[j].Name()
		}
		return kids[i].StartTimestamp() < kids[j].StartTimestamp()
	})
	lines := []string{line}
	for _, k := range kids {
		lines = append(lines, tree(k, children, indent+"  "))
	}
	return strings.Join(lines, "\n")
}

// tokens is the latest cumulative sum of gen_ai.client.token.usage for typ.
func tokens(ms []pmetric.Metric, typ string) int64 {
	var sum float64
	for _, m := range ms {
		if m.Name() != "gen_ai.client.token.usage" || m.Type() != pmetric.MetricTypeHistogram {
			continue
		}
		sum = 0
		dps := m.Histogram().DataPoints()
		for i := range dps.Len() {
			if v, _ := dps.At(i).Attributes().Get("gen_ai.token.type"); v.Str() == typ {
				sum += dps.At(i).Sum()
			}
		}
	}
	return int64(sum)
}

// runsFinished is the latest cumulative count of dawn.runs.finished.
func runsFinished(ms []pmetric.Metric) int64 {
	var n int64
	for _, m := range ms {
		if m.Name() != "dawn.runs.finished" || m.Type() != pmetric.MetricTypeSum {
			continue
		}
		n = 0
		dps := m.Sum().DataPoints()
		for i := range dps.Len() {
			n += dps.At(i).IntValue()
		}
	}
	return n
}
