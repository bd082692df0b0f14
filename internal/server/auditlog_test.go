package server_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/dawn-go/dawn/dawntest"
	"github.com/dawn-go/dawn/internal/apptest"
	"github.com/dawn-go/dawn/internal/auth/authtest"
	"github.com/dawn-go/dawn/internal/server"
	"github.com/dawn-go/dawn/internal/telemetry"
	"go.opentelemetry.io/otel/attribute"
	metricnoop "go.opentelemetry.io/otel/metric/noop"
	sdklog "go.opentelemetry.io/otel/sdk/log"
	tracenoop "go.opentelemetry.io/otel/trace/noop"
)

// logRecorder is a log exporter that keeps what it is sent.
type logRecorder struct {
	mu      sync.Mutex
	records []sdklog.Record
}

func (r *logRecorder) Export(_ context.Context, rs []sdklog.Record) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, rec := range rs {
		r.records = append(r.records, rec.Clone())
	}
	return nil
}
func (r *logRecorder) Shutdown(context.Context) error   { return nil }
func (r *logRecorder) ForceFlush(context.Context) error { return nil }

// TestAuditExportsLogRecords: with telemetry exporting logs, an audited
// call becomes an OpenTelemetry log record naming the action, the thread,
// the user and the outcome.
func TestAuditExportsLogRecords(t *testing.T) {
	rec := &logRecorder{}
	logs := sdklog.NewLoggerProvider(sdklog.WithProcessor(sdklog.NewSimpleProcessor(rec)))
	tel := telemetry.New(tracenoop.NewTracerProvider(), metricnoop.NewMeterProvider(), telemetry.Options{Logs: logs})
	h := apptest.New(t, supportApp(t), dawntest.Script().Reply("ok").Repeat(), apptest.Options{Telemetry: tel})
	srv := httptest.NewServer(server.New(h.Runs, server.Options{Auth: hsAuth(t)}))
	t.Cleanup(srv.Close)
	alice := authtest.HS256(t, jwtSecret, authtest.Claims("alice", "", "dawn"))
	authed(t, http.MethodPost, srv.URL+"/threads/o1/cancel", alice, "").Body.Close()

	rec.mu.Lock()
	defer rec.mu.Unlock()
	if len(rec.records) != 1 {
		t.Fatalf("%d log records, want 1", len(rec.records))
	}
	r := rec.records[0]
	got := map[attribute.Key]string{}
	r.WalkAttributes(func(kv attribute.KeyValue) bool {
		got[kv.Key] = kv.Value.String()
		return true
	})
	if r.EventName() != telemetry.AuditEvent || got[telemetry.AttrAuditAction] != "cancel" || got[telemetry.AttrThread] != "o1" ||
		got[telemetry.AttrUser] != "alice" || got[telemetry.AttrAuditOutcome] != "thread_not_found" || r.Timestamp().IsZero() {
		t.Fatalf("record %s %v", r.EventName(), got)
	}
}
