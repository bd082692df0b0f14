package models

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/tmc/langchaingo/llms"
)

// ListSeparator joins the names of a fallback list in one model string:
// "openai:gpt-4o-mini,anthropic:claude-3-5-haiku-latest". A YAML list under
// model: is joined with it, so a list is one string everywhere a model name
// goes (the runner caches models by that string).
const ListSeparator = ","

// ParseSpecList parses a model name or a fallback list of them joined by
// ListSeparator. Each name is checked by ParseSpec; errors say which one.
func ParseSpecList(s string) ([]Spec, error) {
	parts := strings.Split(s, ListSeparator)
	if len(parts) == 1 {
		spec, err := ParseSpec(s)
		if err != nil {
			return nil, err
		}
		return []Spec{spec}, nil
	}
	specs := make([]Spec, 0, len(parts))
	for i, part := range parts {
		spec, err := ParseSpec(part)
		if err != nil {
			return nil, fmt.Errorf("model list %q, entry %d: %w", s, i+1, err)
		}
		specs = append(specs, spec)
	}
	return specs, nil
}

// JoinSpecList is the inverse of ParseSpecList for names already written
// out: it trims each and joins them with ListSeparator.
func JoinSpecList(names []string) string {
	trimmed := make([]string, len(names))
	for i, n := range names {
		trimmed[i] = strings.TrimSpace(n)
	}
	return strings.Join(trimmed, ListSeparator)
}

// fallbackModel tries its models in order: when one fails (after its own
// retries), the next is asked the same thing. It does not fall back once
// the failed model has streamed text, which the client has already seen,
// nor when the caller's context has ended.
type fallbackModel struct {
	models []llms.Model
	specs  []string
}

// GenerateContent asks each model in turn until one answers.
func (f *fallbackModel) GenerateContent(ctx context.Context, messages []llms.MessageContent, options ...llms.CallOption) (*llms.ContentResponse, error) {
	ctx = beginCall(ctx)
	var o llms.CallOptions
	for _, opt := range options {
		opt(&o)
	}
	var errs []error
	for i, m := range f.models {
		streamed := false
		opts := options
		if stream := o.StreamingFunc; stream != nil {
			opts = append(options[:len(options):len(options)], llms.WithStreamingFunc(func(ctx context.Context, chunk []byte) error {
				if len(chunk) > 0 {
					streamed = true
				}
				return stream(ctx, chunk)
			}))
		}
		resp, err := m.GenerateContent(ctx, messages, opts...)
		if err == nil {
			return resp, nil
		}
		errs = append(errs, err)
		if ctx.Err() != nil || streamed || i == len(f.models)-1 {
			return nil, f.failed(errs, err)
		}
		a := Attempt{Model: f.specs[i], Next: f.specs[i+1], Err: err}
		var me *ModelError
		if errors.As(err, &me) {
			a.Status = me.Status
		}
		report(ctx, a)
	}
	return nil, errors.New("no models in the list") // New never builds an empty list
}

// failed is the error of the whole list: the last model's *ModelError,
// naming the earlier failures too.
func (f *fallbackModel) failed(errs []error, last error) error {
	if len(errs) == 1 {
		return last
	}
	var me *ModelError
	if !errors.As(last, &me) {
		return last
	}
	earlier := make([]string, len(errs)-1)
	for i, err := range errs[:len(errs)-1] {
		earlier[i] = err.Error()
	}
	out := *me
	out.Err = fmt.Errorf("%w (after %d other models failed: %s)", me.Err, len(earlier), strings.Join(earlier, "; "))
	return &out
}

// Call generates text for a single prompt.
func (f *fallbackModel) Call(ctx context.Context, prompt string, options ...llms.CallOption) (string, error) {
	return llms.GenerateFromSinglePrompt(ctx, f, prompt, options...)
}
