package telemetry_test

import (
	"context"
	"net"
	"sync"
	"testing"

	"github.com/dawn-go/dawn/internal/telemetry"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"
	"google.golang.org/grpc"
)

// traceService is an OTLP/gRPC trace receiver that keeps span names.
type traceService struct {
	ptraceotlp.UnimplementedGRPCServer
	mu    sync.Mutex
	names []string
}

func (s *traceService) Export(_ context.Context, req ptraceotlp.ExportRequest) (ptraceotlp.ExportResponse, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	rss := req.Traces().ResourceSpans()
	for i := range rss.Len() {
		sss := rss.At(i).ScopeSpans()
		for j := range sss.Len() {
			spans := sss.At(j).Spans()
			for k := range spans.Len() {
				s.names = append(s.names, spans.At(k).Name())
			}
		}
	}
	return ptraceotlp.NewExportResponse(), nil
}

// TestFromEnvExportsOverGRPC sets only OTEL_* variables for gRPC and checks
// that a run's span reaches a receiver on loopback when telemetry is shut
// down (which flushes it).
func TestFromEnvExportsOverGRPC(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := grpc.NewServer()
	svc := &traceService{}
	ptraceotlp.RegisterGRPCServer(srv, svc)
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(srv.Stop)

	env := map[string]string{
		"OTEL_TRACES_EXPORTER":        "otlp",
		"OTEL_METRICS_EXPORTER":       "none",
		"OTEL_EXPORTER_OTLP_PROTOCOL": "grpc",
		"OTEL_EXPORTER_OTLP_ENDPOINT": "http://" + ln.Addr().String(),
		"OTEL_EXPORTER_OTLP_INSECURE": "true",
	}
	for k, v := range env {
		t.Setenv(k, v)
	}
	tel, shutdown, err := telemetry.FromEnv(context.Background(), func(k string) string { return env[k] })
	if err != nil || tel == nil {
		t.Fatalf("FromEnv = %v, %v", tel, err)
	}
	_, run := tel.StartRun(context.Background(), telemetry.RunInfo{ThreadID: "t", RouteID: "/support", RunID: "r", Model: "openai:gpt-4o-mini"})
	run.End("success", nil)
	if err := shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	svc.mu.Lock()
	defer svc.mu.Unlock()
	if len(svc.names) != 1 || svc.names[0] != "invoke_agent /support" {
		t.Fatalf("the receiver got spans %v, want the run's", svc.names)
	}
}
