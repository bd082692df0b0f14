// Package telemetry exports what runs do as OpenTelemetry traces and
// metrics: a span per run, model call, tool call and subagent, plan events
// as span events, and run, model and store metrics. It is configured only by
// the standard OTEL_* environment variables and is off (nil) by default.
// The runner and server call it.
package telemetry
