package models

import (
	"context"
	"encoding/json"
	"errors"
	"slices"

	"github.com/tmc/langchaingo/llms"
)

// checkedModel wraps a provider model. It turns every error into a
// *ModelError, smooths over message shapes some langchaingo providers cannot
// send, and keeps tool-call JSON out of the text stream.
type checkedModel struct {
	inner   llms.Model
	spec    Spec
	baseURL string
}

// GenerateContent calls the wrapped model.
func (m *checkedModel) GenerateContent(ctx context.Context, messages []llms.MessageContent, options ...llms.CallOption) (*llms.ContentResponse, error) {
	ctx = beginCall(ctx)
	if err := ctx.Err(); err != nil {
		return nil, classify(ctx, m.spec, m.baseURL, err)
	}
	messages = splitMessages(m.spec.Provider, messages)
	if w, ok := m.inner.(*wireModel); ok && w.fast != nil {
		if call, ok := w.fast.prepare(messages, options); ok {
			resp, err := w.fast.generate(ctx, messages, call)
			return m.outcome(ctx, resp, err)
		}
	}
	return m.generate(ctx, messages, options)
}

// generate makes a call the fast path does not cover, through the
// provider's client. It is apart from GenerateContent, which a held run
// waits under, so that GenerateContent's frame stays small: a goroutine's
// stack shrinks back only when what it uses while it waits is small.
func (m *checkedModel) generate(ctx context.Context, messages []llms.MessageContent, options []llms.CallOption) (*llms.ContentResponse, error) {
	messages, state := lateSystemAsUser(m.spec.Provider, messages)
	ctx = withCacheEdit(ctx, m.spec.Provider, state)
	if !temperatureSet(options) {
		ctx = context.WithValue(ctx, omitTemperatureKey{}, true)
	}
	var join *streamJoin
	if m.spec.Provider == ProviderOpenAI || m.spec.Provider == ProviderOllama || m.spec.Provider == ProviderCompatible {
		ctx, options, join = joinStreamedText(ctx, textOnlyStreaming(options))
	}
	resp, err := m.inner.GenerateContent(ctx, messages, options...)
	resp, err = m.outcome(ctx, resp, err)
	if err == nil && join != nil {
		join.fill(resp)
	}
	return resp, err
}

// outcome checks what a call under ctx returned: every error becomes a
// *ModelError, and so does an answer without a choice.
func (m *checkedModel) outcome(ctx context.Context, resp *llms.ContentResponse, err error) (*llms.ContentResponse, error) {
	if err != nil {
		return nil, classify(ctx, m.spec, m.baseURL, err)
	}
	if resp == nil || len(resp.Choices) == 0 || resp.Choices[0] == nil {
		return nil, classify(ctx, m.spec, m.baseURL, errors.New("the server returned no answer"))
	}
	return resp, nil
}

// Call generates text for a single prompt.
func (m *checkedModel) Call(ctx context.Context, prompt string, options ...llms.CallOption) (string, error) {
	return llms.GenerateFromSinglePrompt(ctx, m, prompt, options...)
}

// splitMessages gives each tool result its own message (the openai client
// accepts exactly one part per tool message) and, for anthropic, each
// assistant part its own message without empty text (that client reads only
// the first part; the API joins consecutive turns of one role). The input is
// not changed; it is returned as is when nothing needs splitting.
func splitMessages(provider string, messages []llms.MessageContent) []llms.MessageContent {
	needsSplit := func(mc llms.MessageContent) bool {
		switch mc.Role {
		case llms.ChatMessageTypeTool:
			return len(mc.Parts) > 1
		case llms.ChatMessageTypeAI:
			return provider == ProviderAnthropic && (len(mc.Parts) > 1 || hasEmptyText(mc.Parts))
		}
		return false
	}
	if !slices.ContainsFunc(messages, needsSplit) {
		return messages
	}
	out := make([]llms.MessageContent, 0, len(messages)+4)
	for _, mc := range messages {
		if !needsSplit(mc) {
			out = append(out, mc)
			continue
		}
		for _, part := range mc.Parts {
			if text, ok := part.(llms.TextContent); ok && text.Text == "" {
				continue
			}
			out = append(out, llms.MessageContent{Role: mc.Role, Parts: []llms.ContentPart{part}})
		}
	}
	return out
}

func hasEmptyText(parts []llms.ContentPart) bool {
	for _, p := range parts {
		if text, ok := p.(llms.TextContent); ok && text.Text == "" {
			return true
		}
	}
	return false
}

// textOnlyStreaming wraps the streaming func so that it sees only text: the
// openai client also streams each tool-call delta as JSON, and empty chunks.
func textOnlyStreaming(options []llms.CallOption) []llms.CallOption {
	var o llms.CallOptions
	for _, opt := range options {
		opt(&o)
	}
	stream := o.StreamingFunc
	if stream == nil {
		return options
	}
	filtered := func(ctx context.Context, chunk []byte) error {
		if len(chunk) == 0 || isToolCallDelta(chunk) {
			return nil
		}
		return stream(ctx, chunk)
	}
	return append(slices.Clip(options), llms.WithStreamingFunc(filtered))
}

// isToolCallDelta reports whether chunk is the JSON array of tool-call deltas
// the openai client passes to the streaming func.
func isToolCallDelta(chunk []byte) bool {
	if chunk[0] != '[' {
		return false
	}
	var deltas []map[string]json.RawMessage
	if json.Unmarshal(chunk, &deltas) != nil || len(deltas) == 0 {
		return false
	}
	for _, d := range deltas {
		if _, ok := d["function"]; !ok {
			return false
		}
	}
	return true
}
