package telemetry_test

import (
	"context"
	"testing"
	"time"

	"github.com/dawn-go/dawn/internal/telemetry"
	"github.com/dawn-go/dawn/stream"
	"github.com/tmc/langchaingo/llms"
	metricnoop "go.opentelemetry.io/otel/metric/noop"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	tracenoop "go.opentelemetry.io/otel/trace/noop"
)

// answerModel answers at once with fixed usage.
type answerModel struct{}

var answer = &llms.ContentResponse{Choices: []*llms.ContentChoice{{
	Content: "ok", StopReason: "stop", GenerationInfo: map[string]any{"PromptTokens": 10, "CompletionTokens": 2},
}}}

func (answerModel) GenerateContent(context.Context, []llms.MessageContent, ...llms.CallOption) (*llms.ContentResponse, error) {
	return answer, nil
}
func (answerModel) Call(context.Context, string, ...llms.CallOption) (string, error) {
	return "ok", nil
}

type discardSpans struct{}

func (discardSpans) ExportSpans(context.Context, []sdktrace.ReadOnlySpan) error { return nil }
func (discardSpans) Shutdown(context.Context) error                             { return nil }

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

// BenchmarkRunHooks is what telemetry adds to one run like the runner's
// benchmark run (two model calls, one tool call, a plan update, three store
// writes), without the run itself: off (nil, the default), on no-op
// providers, and on the SDK as `dawn start` sets it up, exporting nowhere.
func BenchmarkRunHooks(b *testing.B) {
	update := stream.New("plan_update", map[string]any{"todos": []map[string]string{{"content": "a", "status": "in_progress"}, {"content": "b", "status": "pending"}}})
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
			tel := c.tel(b)
			var model llms.Model = answerModel{}
			model = tel.WrapModel(model, "openai:gpt-4o-mini")
			msgs := []llms.MessageContent{llms.TextParts(llms.ChatMessageTypeHuman, "hi")}
			b.ReportAllocs()
			for b.Loop() {
				ctx, run := tel.StartRun(context.Background(), telemetry.RunInfo{ThreadID: "t", RouteID: "/support/[tenant]", RunID: "r", Model: "openai:gpt-4o-mini"})
				_, _ = model.GenerateContent(ctx, msgs)
				tctx, end := tel.Tool(ctx, "writeTodos", "call_1")
				_ = tctx
				end(nil)
				run.Event(update)
				_, _ = model.GenerateContent(ctx, msgs)
				for range 3 {
					tel.StoreWrite("save_step", time.Millisecond)
				}
				run.End("success", nil)
			}
		})
	}
}
