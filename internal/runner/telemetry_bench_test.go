package runner_test

import (
	"context"
	"strconv"
	"testing"

	"github.com/dawn-go/dawn/internal/apptest"
	"github.com/dawn-go/dawn/internal/telemetry"
	metricnoop "go.opentelemetry.io/otel/metric/noop"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	tracenoop "go.opentelemetry.io/otel/trace/noop"
)

// discardSpans is a span exporter that drops what it gets, so the
// benchmark measures Dawn's and the SDK's side, not an exporter's.
type discardSpans struct{}

func (discardSpans) ExportSpans(context.Context, []sdktrace.ReadOnlySpan) error { return nil }
func (discardSpans) Shutdown(context.Context) error                             { return nil }

// discardMetrics is a metric exporter that drops what it gets.
type discardMetrics struct{}

func (discardMetrics) Temporality(k sdkmetric.InstrumentKind) metricdata.Temporality {
	return sdkmetric.DefaultTemporalitySelector(k)
}
func (discardMetrics) Aggregation(k sdkmetric.InstrumentKind) sdkmetric.Aggregation {
	return sdkmetric.DefaultAggregationSelector(k)
}
func (discardMetrics) Export(context.Context, *metricdata.ResourceMetrics) error { return nil }
func (discardMetrics) ForceFlush(context.Context) error                          { return nil }
func (discardMetrics) Shutdown(context.Context) error                            { return nil }

// BenchmarkRunTelemetry is BenchmarkRunWait's run (two model calls, a
// writeTodos call, a plan_update, three saved steps, on an in-memory store
// so that disk latency does not drown the difference) with telemetry off (the
// default: nothing configured), on no-op providers, and on the SDK with the
// batching span processor and a periodic metric reader, as `dawn start`
// sets them up for OTLP, exporting to nowhere.
func BenchmarkRunTelemetry(b *testing.B) {
	for _, c := range []struct {
		name string
		tel  func(b *testing.B) *telemetry.Telemetry
	}{
		{"off", func(*testing.B) *telemetry.Telemetry { return nil }},
		{"noop", func(*testing.B) *telemetry.Telemetry {
			return telemetry.New(tracenoop.NewTracerProvider(), metricnoop.NewMeterProvider(), telemetry.Options{})
		}},
		{"on", func(b *testing.B) *telemetry.Telemetry {
			tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(discardSpans{}))
			mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewPeriodicReader(discardMetrics{})))
			b.Cleanup(func() { _ = tp.Shutdown(context.Background()); _ = mp.Shutdown(context.Background()) })
			return telemetry.New(tp, mp, telemetry.Options{})
		}},
	} {
		b.Run(c.name, func(b *testing.B) {
			dir := writeFiles(b, map[string]string{
				"support/[tenant]/agent.md": "---\ndescription: support\n---\nYou help customers.\n",
				"support/[tenant]/plan.md":  "- [ ] Understand the customer request\n- [ ] Check account context\n- [ ] Decide whether to answer or escalate\n- [ ] Write the final response\n",
			})
			h := apptest.New(b, dir, instantModel{}, apptest.Options{Telemetry: c.tel(b)})
			if err := runOnce(h.Runs, "warm-up"); err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				i++
				if err := runOnce(h.Runs, "t-"+strconv.Itoa(i)); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
