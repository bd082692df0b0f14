package telemetry

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"go.opentelemetry.io/otel/exporters/otlp/otlplog/otlploggrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlplog/otlploghttp"
	"go.opentelemetry.io/otel/exporters/otlp/otlpmetric/otlpmetricgrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlpmetric/otlpmetrichttp"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/metric"
	metricnoop "go.opentelemetry.io/otel/metric/noop"
	sdklog "go.opentelemetry.io/otel/sdk/log"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.37.0"
	"go.opentelemetry.io/otel/trace"
	tracenoop "go.opentelemetry.io/otel/trace/noop"
)

// CaptureContentVar, set to 1 or true, exports prompt and completion text
// on model-call spans. Off by default.
const CaptureContentVar = "DAWN_OTEL_CAPTURE_CONTENT"

// FromEnv builds Telemetry from the standard OTEL_* variables, read with
// env. Traces are on when OTEL_TRACES_EXPORTER is otlp, or unset with
// OTEL_EXPORTER_OTLP_ENDPOINT or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT set;
// metrics likewise with OTEL_METRICS_EXPORTER and the _METRICS_ endpoint.
// The protocol is OTEL_EXPORTER_OTLP_[TRACES_|METRICS_]PROTOCOL:
// http/protobuf (the default) or grpc. The exporters read the rest
// (endpoints, headers, timeouts, OTEL_METRIC_EXPORT_INTERVAL) as the SDK
// documents. OTEL_SDK_DISABLED=true turns everything off.
//
// With nothing configured FromEnv returns nil Telemetry, which records
// nothing, and a shutdown that does nothing. Shutdown flushes what is
// buffered; call it before the process exits.
func FromEnv(ctx context.Context, env func(string) string) (*Telemetry, func(context.Context) error, error) {
	nothing := func(context.Context) error { return nil }
	if strings.EqualFold(strings.TrimSpace(env("OTEL_SDK_DISABLED")), "true") {
		return nil, nothing, nil
	}
	traces, err := wanted(env, "TRACES")
	if err != nil {
		return nil, nothing, err
	}
	metrics, err := wanted(env, "METRICS")
	if err != nil {
		return nil, nothing, err
	}
	logs, err := wanted(env, "LOGS")
	if err != nil {
		return nil, nothing, err
	}
	if !traces && !metrics && !logs {
		return nil, nothing, nil
	}
	res, err := resource.New(ctx,
		resource.WithAttributes(semconv.ServiceName("dawn")),
		resource.WithFromEnv(), resource.WithTelemetrySDK(),
	)
	if err != nil {
		return nil, nothing, fmt.Errorf("OpenTelemetry resource (OTEL_SERVICE_NAME, OTEL_RESOURCE_ATTRIBUTES): %w", err)
	}
	var shutdowns []func(context.Context) error
	shutdown := func(ctx context.Context) error {
		var errs []error
		for _, f := range shutdowns {
			errs = append(errs, f(ctx))
		}
		return errors.Join(errs...)
	}
	var tp trace.TracerProvider = tracenoop.NewTracerProvider()
	if traces {
		exp, err := traceExporter(ctx, env)
		if err != nil {
			return nil, nothing, err
		}
		sdk := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp), sdktrace.WithResource(res))
		shutdowns = append(shutdowns, sdk.Shutdown)
		tp = sdk
	}
	var mp metric.MeterProvider = metricnoop.NewMeterProvider()
	if metrics {
		exp, err := metricExporter(ctx, env)
		if err != nil {
			_ = shutdown(ctx)
			return nil, nothing, err
		}
		sdk := sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewPeriodicReader(exp)), sdkmetric.WithResource(res))
		shutdowns = append(shutdowns, sdk.Shutdown)
		mp = sdk
	}
	opts := Options{}
	if logs {
		exp, err := logExporter(ctx, env)
		if err != nil {
			_ = shutdown(ctx)
			return nil, nothing, err
		}
		sdk := sdklog.NewLoggerProvider(sdklog.WithProcessor(sdklog.NewBatchProcessor(exp)), sdklog.WithResource(res))
		shutdowns = append(shutdowns, sdk.Shutdown)
		opts.Logs = sdk
	}
	capture := env(CaptureContentVar)
	opts.CaptureContent = capture == "1" || strings.EqualFold(capture, "true")
	return New(tp, mp, opts), shutdown, nil
}

// wanted says whether the signal ("TRACES" or "METRICS") is to be
// exported.
func wanted(env func(string) string, signal string) (bool, error) {
	name := "OTEL_" + signal + "_EXPORTER"
	switch v := strings.TrimSpace(env(name)); v {
	case "":
		return env("OTEL_EXPORTER_OTLP_ENDPOINT") != "" || env("OTEL_EXPORTER_OTLP_"+signal+"_ENDPOINT") != "", nil
	case "none":
		return false, nil
	case "otlp":
		return true, nil
	default:
		return false, fmt.Errorf("%s=%q: Dawn exports only otlp (or none); set it to otlp and choose the protocol with OTEL_EXPORTER_OTLP_PROTOCOL", name, v)
	}
}

// protocol is the OTLP protocol of the signal.
func protocol(env func(string) string, signal string) (string, error) {
	name := "OTEL_EXPORTER_OTLP_" + signal + "_PROTOCOL"
	v := env(name)
	if v == "" {
		name = "OTEL_EXPORTER_OTLP_PROTOCOL"
		v = env(name)
	}
	switch v {
	case "", "http/protobuf":
		return "http/protobuf", nil
	case "grpc":
		return "grpc", nil
	default:
		return "", fmt.Errorf("%s=%q: want http/protobuf or grpc", name, v)
	}
}

func traceExporter(ctx context.Context, env func(string) string) (sdktrace.SpanExporter, error) {
	p, err := protocol(env, "TRACES")
	if err != nil {
		return nil, err
	}
	if p == "grpc" {
		return otlptracegrpc.New(ctx)
	}
	return otlptracehttp.New(ctx)
}

func metricExporter(ctx context.Context, env func(string) string) (sdkmetric.Exporter, error) {
	p, err := protocol(env, "METRICS")
	if err != nil {
		return nil, err
	}
	if p == "grpc" {
		return otlpmetricgrpc.New(ctx)
	}
	return otlpmetrichttp.New(ctx)
}

// logExporter is the OTLP exporter of the audit log's records, over the
// protocol OTEL_EXPORTER_OTLP_LOGS_PROTOCOL (or OTEL_EXPORTER_OTLP_PROTOCOL)
// names.
func logExporter(ctx context.Context, env func(string) string) (sdklog.Exporter, error) {
	p, err := protocol(env, "LOGS")
	if err != nil {
		return nil, err
	}
	if p == "grpc" {
		return otlploggrpc.New(ctx)
	}
	return otlploghttp.New(ctx)
}
