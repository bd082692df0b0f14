package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"unicode/utf8"

	"github.com/dawn-go/dawn/capabilities"
	"github.com/dawn-go/dawn/thread"
	"github.com/tmc/langchaingo/llms"
)

// TokenEstimator estimates the input tokens of a model request: its
// messages, the system prompt among them, and its tool list.
type TokenEstimator interface {
	EstimateTokens(msgs []llms.MessageContent, tools []llms.Tool) int
}

// ByteEstimate is the TokenEstimator a run uses when its Config names
// none: a token per four bytes of each message's text, tool calls and
// tool results, and of each tool's name, description and schema, plus a
// few tokens of framing per message and tool. It knows no tokenizer, so it
// is an estimate: close for English prose and JSON, high for text in
// scripts whose characters take several bytes.
type ByteEstimate struct{}

// EstimateTokens implements TokenEstimator.
func (ByteEstimate) EstimateTokens(msgs []llms.MessageContent, tools []llms.Tool) int {
	const perMessage, perTool = 4, 8
	n := 0
	for _, m := range msgs {
		n += perMessage
		for _, p := range m.Parts {
			n += partBytes(p) / 4
		}
	}
	for _, t := range tools {
		n += perTool
		if f := t.Function; f != nil {
			n += (len(f.Name) + len(f.Description) + len(schemaText(f.Parameters))) / 4
		}
	}
	return n
}

// partBytes is the size of a message part's text as a provider sends it.
func partBytes(p llms.ContentPart) int {
	switch p := p.(type) {
	case llms.TextContent:
		return len(p.Text)
	case llms.ToolCall:
		if p.FunctionCall == nil {
			return len(p.ID)
		}
		return len(p.ID) + len(p.FunctionCall.Name) + len(p.FunctionCall.Arguments)
	case llms.ToolCallResponse:
		return len(p.ToolCallID) + len(p.Name) + len(p.Content)
	}
	return 0
}

// schemaText is a tool's parameter schema as the provider sends it.
func schemaText(v any) string {
	switch s := v.(type) {
	case nil:
		return ""
	case json.RawMessage:
		return string(s)
	case []byte:
		return string(s)
	case string:
		return s
	}
	b, _ := json.Marshal(v)
	return string(b)
}

// estimator is the run's TokenEstimator.
func (l *loop) estimator() TokenEstimator {
	if l.cfg.Tokens != nil {
		return l.cfg.Tokens
	}
	return ByteEstimate{}
}

// requestTokens estimates the input tokens of a model call that sends
// msgs with the run's system prompt for state and its tools.
func (l *loop) requestTokens(msgs []thread.Message, state thread.State) int {
	system, err := SystemPrompt(l.cfg.Route, l.cfg.Params, state)
	if err != nil {
		system = ""
	}
	return l.estimator().EstimateTokens(toLLM(system, msgs), l.defs)
}

// modelView is the conversation the turn's model call sends: the
// thread's messages as the route's BeforeModel hooks make them. A hook's
// update is saved as a step of its own first.
func (l *loop) modelView(ctx context.Context) ([]thread.Message, error) {
	msgs := l.msgs
	for _, h := range l.hooks {
		if h.BeforeModel == nil {
			continue
		}
		turn := capabilities.ModelTurn{
			RouteID:  l.cfg.Route.Route.ID,
			Messages: msgs,
			State:    l.state,
			Tokens:   func(m []thread.Message) int { return l.requestTokens(m, l.state) },
			Complete: l.complete,
		}
		view, err := h.BeforeModel(ctx, turn)
		if err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			return nil, fmt.Errorf("route %s: %w", l.cfg.Route.Route.ID, err)
		}
		if view.Messages != nil {
			msgs = view.Messages
		}
		if len(view.Update) == 0 && len(view.Events) == 0 {
			continue
		}
		if l.state, err = l.effect(l.state, view.Effect); err != nil {
			return nil, err
		}
		if err := l.save(ctx); err != nil {
			return nil, err
		}
	}
	return msgs, nil
}

// complete asks model (a name as agent.md writes it, or "" for the run's
// model) for one answer to convo after system, with no tools.
func (l *loop) complete(ctx context.Context, model, system string, convo []thread.Message) (string, error) {
	m, name := l.cfg.Model, l.cfg.ModelName
	if model != "" && model != name {
		if l.cfg.Models == nil {
			return "", fmt.Errorf("model %s cannot be reached from this run", model)
		}
		var err error
		if m, err = l.cfg.Models(model); err != nil {
			return "", fmt.Errorf("model %s: %w", model, err)
		}
		name = model
	}
	resp, err := m.GenerateContent(ctx, toLLM(system, convo), l.cfg.SamplingOptions()...)
	if err != nil {
		if ctx.Err() != nil {
			return "", ctx.Err()
		}
		return "", &ModelError{Model: name, Err: err}
	}
	if resp == nil || len(resp.Choices) == 0 || resp.Choices[0] == nil {
		return "", &ModelError{Model: name, Err: errors.New("the model returned no choices")}
	}
	return resp.Choices[0].Content, nil
}

// shown is what the model sees of the successful call ev reports: the
// output's text as the route's ToolOutput hooks make it, cut to
// Config.MaxToolOutput.
func (l *loop) shown(ctx context.Context, ev capabilities.ToolEvent) string {
	text := modelText(ev.Output)
	for _, h := range l.hooks {
		if h.ToolOutput == nil {
			continue
		}
		inv := capabilities.Invocation{CallID: ev.CallID, RouteID: l.cfg.Route.Route.ID, Params: l.cfg.Params, Input: ev.Input, State: l.state, Items: l.host.Items(), Outputs: l.cfg.Outputs}
		if s, ok := h.ToolOutput(capabilities.WithInvocation(ctx, inv), ev, text); ok && utf8.ValidString(s) {
			text = s
		}
	}
	return l.truncate(text)
}
