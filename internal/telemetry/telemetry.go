package telemetry

import (
	"context"
	"net/http"
	"sync"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	otellog "go.opentelemetry.io/otel/log"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	"github.com/dawn-go/dawn/stream"
)

// ScopeName is the instrumentation scope of Dawn's spans and metrics.
const ScopeName = "github.com/dawn-go/dawn"

// Attribute keys Dawn sets besides the GenAI semantic conventions.
const (
	AttrThread    = attribute.Key("dawn.thread.id")
	AttrRoute     = attribute.Key("dawn.route")
	AttrRun       = attribute.Key("dawn.run.id")
	AttrRunStatus = attribute.Key("dawn.run.status")
	AttrDepth     = attribute.Key("dawn.subagent.depth")
	AttrStoreOp   = attribute.Key("dawn.store.operation")

	AttrOperation    = attribute.Key("gen_ai.operation.name")
	AttrProvider     = attribute.Key("gen_ai.provider.name")
	AttrRequestModel = attribute.Key("gen_ai.request.model")
	AttrInputTokens  = attribute.Key("gen_ai.usage.input_tokens")
	AttrOutputTokens = attribute.Key("gen_ai.usage.output_tokens")
	// AttrCachedInputTokens are the input tokens the provider read from its
	// prompt cache (semantic conventions v1.41.0).
	AttrCachedInputTokens = attribute.Key("gen_ai.usage.cache_read.input_tokens")
	AttrFinishReasons     = attribute.Key("gen_ai.response.finish_reasons")
	AttrAgentName         = attribute.Key("gen_ai.agent.name")
	AttrToolName          = attribute.Key("gen_ai.tool.name")
	AttrToolCallID        = attribute.Key("gen_ai.tool.call.id")
	AttrTokenType         = attribute.Key("gen_ai.token.type")
	AttrInputMessages     = attribute.Key("gen_ai.input.messages")
	AttrOutputMessage     = attribute.Key("gen_ai.output.messages")
	AttrErrorType         = attribute.Key("error.type")
)

// Telemetry records runs as spans and metrics. A nil *Telemetry records
// nothing and costs nothing: every method returns at once.
type Telemetry struct {
	tracer     trace.Tracer
	propagator propagation.TextMapPropagator
	// capture exports prompt and completion text (DAWN_OTEL_CAPTURE_CONTENT).
	capture bool
	// audit emits the audit log's records; nil when logs are not exported.
	audit otellog.Logger

	runsStarted   metric.Int64Counter
	runsFinished  metric.Int64Counter
	runDuration   metric.Float64Histogram
	modelDuration metric.Float64Histogram
	tokens        metric.Int64Histogram
	inFlight      metric.Int64UpDownCounter
	subscribers   metric.Int64UpDownCounter
	storeWrite    metric.Float64Histogram
	storeOps      sync.Map // op name -> metric.MeasurementOption
	sets          sync.Map // setKey -> metric.MeasurementOption
}

// setKey names a metric attribute set: a route, and a run status or "".
type setKey struct{ route, status string }

// set returns the (cached) attribute set of route and status: routes and
// statuses are few, so the sets are built once, not per run.
func (t *Telemetry) set(route, status string) metric.MeasurementOption {
	k := setKey{route, status}
	if s, ok := t.sets.Load(k); ok {
		return s.(metric.MeasurementOption)
	}
	kvs := []attribute.KeyValue{AttrRoute.String(route)}
	if status != "" {
		kvs = append(kvs, AttrRunStatus.String(status))
	}
	s, _ := t.sets.LoadOrStore(k, metric.WithAttributeSet(attribute.NewSet(kvs...)))
	return s.(metric.MeasurementOption)
}

// Options configure New.
type Options struct {
	// CaptureContent exports prompt and completion text on model-call spans.
	CaptureContent bool
	// Propagator reads incoming trace context; default W3C tracecontext
	// and baggage.
	Propagator propagation.TextMapPropagator
	// Logs, when set, receives the audit log as log records (see Audit).
	Logs otellog.LoggerProvider
}

// New returns Telemetry that records on tp and mp.
func New(tp trace.TracerProvider, mp metric.MeterProvider, opts Options) *Telemetry {
	t := &Telemetry{tracer: tp.Tracer(ScopeName), propagator: opts.Propagator, capture: opts.CaptureContent}
	if t.propagator == nil {
		t.propagator = propagation.NewCompositeTextMapPropagator(propagation.TraceContext{}, propagation.Baggage{})
	}
	if opts.Logs != nil {
		t.audit = opts.Logs.Logger(ScopeName)
	}
	m := mp.Meter(ScopeName)
	// The instruments of a MeterProvider never fail to build with valid
	// names; a failure leaves a no-op instrument, which is what we want.
	t.runsStarted, _ = m.Int64Counter("dawn.runs.started", metric.WithDescription("Runs started"), metric.WithUnit("{run}"))
	t.runsFinished, _ = m.Int64Counter("dawn.runs.finished", metric.WithDescription("Runs finished, by status"), metric.WithUnit("{run}"))
	t.runDuration, _ = m.Float64Histogram("dawn.run.duration", metric.WithDescription("Duration of runs"), metric.WithUnit("s"))
	t.modelDuration, _ = m.Float64Histogram("gen_ai.client.operation.duration", metric.WithDescription("Duration of model calls"), metric.WithUnit("s"))
	t.tokens, _ = m.Int64Histogram("gen_ai.client.token.usage", metric.WithDescription("Tokens used per model call, by model and token type"), metric.WithUnit("{token}"))
	t.inFlight, _ = m.Int64UpDownCounter("dawn.runs.in_flight", metric.WithDescription("Runs in flight"), metric.WithUnit("{run}"))
	t.subscribers, _ = m.Int64UpDownCounter("dawn.sse.subscribers", metric.WithDescription("Open SSE streams"), metric.WithUnit("{subscriber}"))
	t.storeWrite, _ = m.Float64Histogram("dawn.store.write.duration", metric.WithDescription("Latency of thread store writes"), metric.WithUnit("s"))
	return t
}

// RunInfo names a run.
type RunInfo struct {
	ThreadID, RouteID, RunID, Model string
}

// Run is the span and clock of one run. A nil *Run records nothing.
type Run struct {
	t     *Telemetry
	span  trace.Span
	start time.Time
	route string

	mu    sync.Mutex
	plan  []string // last known status of each plan item, by index
	ended bool
}

// StartRun opens the span of a run as a child of the span context in ctx
// (a caller's traceparent, see Middleware) and counts it as started and
// in flight. End must be called once.
func (t *Telemetry) StartRun(ctx context.Context, info RunInfo) (context.Context, *Run) {
	if t == nil {
		return ctx, nil
	}
	ctx, span := t.tracer.Start(ctx, "invoke_agent "+info.RouteID, trace.WithSpanKind(trace.SpanKindInternal), trace.WithAttributes(
		AttrOperation.String("invoke_agent"), AttrAgentName.String(info.RouteID),
		AttrThread.String(info.ThreadID), AttrRoute.String(info.RouteID), AttrRun.String(info.RunID),
		AttrRequestModel.String(modelName(info.Model)),
	))
	route := t.set(info.RouteID, "")
	t.runsStarted.Add(ctx, 1, route)
	t.inFlight.Add(ctx, 1, route)
	return ctx, &Run{t: t, span: span, start: time.Now(), route: info.RouteID}
}

// Recording reports whether the run's span records events (false on a
// no-op tracer provider), so a caller can skip feeding it.
func (r *Run) Recording() bool { return r != nil && r.span.IsRecording() }

// Event records the run's stream events that tell what the plan did as
// span events: plan items started, finished or failed, gate rejections,
// pauses and the plan's lifecycle. Text and token events are left out.
func (r *Run) Event(e stream.Event) {
	if r == nil || !r.span.IsRecording() {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.event(e)
}

// End closes the run with status ("success", "error", "cancelled") and
// err, if any.
func (r *Run) End(status string, err error) {
	if r == nil {
		return
	}
	r.mu.Lock()
	if r.ended {
		r.mu.Unlock()
		return
	}
	r.ended = true
	r.mu.Unlock()
	ctx := context.Background()
	r.span.SetAttributes(AttrRunStatus.String(status))
	if err != nil && status == "error" {
		r.span.RecordError(err)
		r.span.SetStatus(codes.Error, err.Error())
	}
	r.span.End()
	attrs := r.t.set(r.route, status)
	r.t.runsFinished.Add(ctx, 1, attrs)
	r.t.runDuration.Record(ctx, time.Since(r.start).Seconds(), attrs)
	r.t.inFlight.Add(ctx, -1, r.t.set(r.route, ""))
}

// Tool opens the span of a tool call under the span in ctx; the returned
// function ends it with the call's error.
func (t *Telemetry) Tool(ctx context.Context, name, callID string) (context.Context, func(error)) {
	if t == nil {
		return ctx, func(error) {}
	}
	ctx, span := t.tracer.Start(ctx, "execute_tool "+name, trace.WithAttributes(
		AttrOperation.String("execute_tool"), AttrToolName.String(name), AttrToolCallID.String(callID),
	))
	return ctx, func(err error) { endSpan(span, err) }
}

// Subagent opens the span of a subagent run under the span in ctx (its
// task tool call); the returned function ends it with the run's error.
func (t *Telemetry) Subagent(ctx context.Context, name, routeID string, depth int) (context.Context, func(error)) {
	if t == nil {
		return ctx, func(error) {}
	}
	ctx, span := t.tracer.Start(ctx, "invoke_agent "+name, trace.WithAttributes(
		AttrOperation.String("invoke_agent"), AttrAgentName.String(name), AttrRoute.String(routeID), AttrDepth.Int(depth),
	))
	return ctx, func(err error) { endSpan(span, err) }
}

func endSpan(span trace.Span, err error) {
	if err != nil {
		span.RecordError(err)
		span.SetStatus(codes.Error, err.Error())
		span.SetAttributes(AttrErrorType.String(errorType(err)))
	}
	span.End()
}

// StoreWrite records the latency of one store write.
func (t *Telemetry) StoreWrite(op string, d time.Duration) {
	if t == nil {
		return
	}
	set, ok := t.storeOps.Load(op)
	if !ok {
		set, _ = t.storeOps.LoadOrStore(op, metric.WithAttributeSet(attribute.NewSet(AttrStoreOp.String(op))))
	}
	t.storeWrite.Record(context.Background(), d.Seconds(), set.(metric.MeasurementOption))
}

// Subscribed counts an open SSE stream; call the returned function when it
// closes.
func (t *Telemetry) Subscribed() func() {
	if t == nil {
		return func() {}
	}
	t.subscribers.Add(context.Background(), 1)
	return func() { t.subscribers.Add(context.Background(), -1) }
}

// Middleware continues a caller's trace: the span context of an incoming
// traceparent header goes into the request's context, where runs started
// by the request find it.
func (t *Telemetry) Middleware(next http.Handler) http.Handler {
	if t == nil {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("traceparent") != "" {
			r = r.WithContext(t.propagator.Extract(r.Context(), propagation.HeaderCarrier(r.Header)))
		}
		next.ServeHTTP(w, r)
	})
}
