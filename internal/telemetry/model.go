package telemetry

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/dawn-go/dawn/internal/models"
	"github.com/tmc/langchaingo/llms"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"
)

// WrapModel returns m with a span and metrics per model call. spec names
// the model as Dawn does ("openai:gpt-4o-mini"). A nil t returns m.
func (t *Telemetry) WrapModel(m llms.Model, spec string) llms.Model {
	if t == nil || m == nil {
		return m
	}
	provider, _, _ := strings.Cut(spec, ":")
	if !strings.Contains(spec, ":") {
		provider = ""
	}
	tm := &tracedModel{Model: m, t: t, model: modelName(spec), provider: provider}
	tm.attrs = []attribute.KeyValue{AttrOperation.String("chat"), AttrRequestModel.String(tm.model)}
	if provider != "" {
		tm.attrs = append(tm.attrs, AttrProvider.String(provider))
	}
	// Metric attribute sets are built once per model, not per call.
	tm.callSet = metric.WithAttributeSet(attribute.NewSet(tm.attrs...))
	tm.inSet = metric.WithAttributeSet(attribute.NewSet(append(slices.Clip(tm.attrs), AttrTokenType.String("input"))...))
	tm.outSet = metric.WithAttributeSet(attribute.NewSet(append(slices.Clip(tm.attrs), AttrTokenType.String("output"))...))
	return tm
}

// modelName is the model part of a spec: "gpt-4o-mini" of
// "openai:gpt-4o-mini".
func modelName(spec string) string {
	if _, name, ok := strings.Cut(spec, ":"); ok {
		return name
	}
	return spec
}

type tracedModel struct {
	llms.Model
	t        *Telemetry
	model    string
	provider string
	attrs    []attribute.KeyValue
	callSet  metric.MeasurementOption
	inSet    metric.MeasurementOption
	outSet   metric.MeasurementOption
}

func (m *tracedModel) GenerateContent(ctx context.Context, messages []llms.MessageContent, options ...llms.CallOption) (*llms.ContentResponse, error) {
	ctx, span := m.t.tracer.Start(ctx, "chat "+m.model, trace.WithSpanKind(trace.SpanKindClient), trace.WithAttributes(m.attrs...))
	if m.t.capture && span.IsRecording() {
		span.SetAttributes(AttrInputMessages.String(marshal(messages)))
	}
	start := time.Now()
	resp, err := m.Model.GenerateContent(ctx, messages, options...)
	elapsed := time.Since(start)

	if err != nil {
		m.t.modelDuration.Record(ctx, elapsed.Seconds(), metric.WithAttributes(append(slices.Clip(m.attrs), AttrErrorType.String(errorType(err)))...))
	} else {
		m.t.modelDuration.Record(ctx, elapsed.Seconds(), m.callSet)
	}
	if resp != nil {
		in, out, reasons := models.Usage(resp)
		if in >= 0 {
			span.SetAttributes(AttrInputTokens.Int64(in))
			m.t.tokens.Record(ctx, in, m.inSet)
		}
		if cached := models.CachedInputTokens(resp); cached >= 0 {
			span.SetAttributes(AttrCachedInputTokens.Int64(cached))
		}
		if out >= 0 {
			span.SetAttributes(AttrOutputTokens.Int64(out))
			m.t.tokens.Record(ctx, out, m.outSet)
		}
		if len(reasons) > 0 {
			span.SetAttributes(AttrFinishReasons.StringSlice(reasons))
		}
		if m.t.capture && span.IsRecording() {
			span.SetAttributes(AttrOutputMessage.String(marshal(resp.Choices)))
		}
	}
	endSpan(span, err)
	return resp, err
}

func marshal(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

// errorType is the error.type attribute of err: its Go type, or
// "cancelled" for a context that ended.
func errorType(err error) string {
	switch {
	case errors.Is(err, context.Canceled):
		return "cancelled"
	case errors.Is(err, context.DeadlineExceeded):
		return "timeout"
	}
	return fmt.Sprintf("%T", err)
}

// Embeddings returns what an embedder of spec ("openai:text-embedding-3-small")
// tells of each request: it records the request's duration and input
// tokens as a model call's, with operation "embeddings". A nil t returns
// nil.
func (t *Telemetry) Embeddings(spec string) func(context.Context, models.EmbedCall) {
	if t == nil {
		return nil
	}
	provider, _, _ := strings.Cut(spec, ":")
	attrs := []attribute.KeyValue{AttrOperation.String("embeddings"), AttrRequestModel.String(modelName(spec)), AttrProvider.String(provider)}
	callSet := metric.WithAttributeSet(attribute.NewSet(attrs...))
	inSet := metric.WithAttributeSet(attribute.NewSet(append(slices.Clip(attrs), AttrTokenType.String("input"))...))
	return func(ctx context.Context, c models.EmbedCall) {
		if c.Err != nil {
			t.modelDuration.Record(ctx, c.Duration.Seconds(), metric.WithAttributes(append(slices.Clip(attrs), AttrErrorType.String(errorType(c.Err)))...))
		} else {
			t.modelDuration.Record(ctx, c.Duration.Seconds(), callSet)
		}
		if c.Tokens >= 0 {
			t.tokens.Record(ctx, c.Tokens, inSet)
		}
	}
}
