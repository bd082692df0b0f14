package agent

import (
	"context"
	"errors"
	"fmt"
	"unicode/utf8"

	"github.com/dawn-go/dawn/capabilities"
	"github.com/dawn-go/dawn/internal/tokens"
	"github.com/dawn-go/dawn/thread"
)

// requestTokens estimates the input tokens of a model call that sends
// msgs with the run's system prompt for state, its per-turn state block
// and its tools (see
// tokens.EstimateMessages: the model's tokenizer where Go has one, else
// four bytes a token).
func (l *loop) requestTokens(ctx context.Context, msgs []thread.Message, state thread.State) int {
	system, err := SystemPrompt(l.cfg.Route, l.cfg.Params, state, userOf(ctx))
	if err != nil {
		system = ""
	}
	if block := StateBlock(l.cfg.Route, state); block != "" {
		system += "\n\n" + block
	}
	return tokens.EstimateConversation(l.cfg.ModelName, system, msgs) + l.toolTokens()
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
			Tokens:   func(m []thread.Message) int { return l.requestTokens(ctx, m, l.state) },
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
// Config.MaxToolOutput; size is the length of the output's text.
func (l *loop) shown(ctx context.Context, ev capabilities.ToolEvent) (shown string, size int) {
	text := modelText(ev.Output)
	size = len(text)
	for _, h := range l.hooks {
		if h.ToolOutput == nil {
			continue
		}
		inv := capabilities.Invocation{CallID: ev.CallID, ThreadID: l.cfg.ThreadID, RunID: l.cfg.RunID, RouteID: l.cfg.Route.Route.ID, Params: l.cfg.Params, Input: ev.Input, State: l.state, Items: l.host.Items(), Outputs: l.cfg.Outputs}
		if s, ok := h.ToolOutput(capabilities.WithInvocation(ctx, inv), ev, text); ok && utf8.ValidString(s) {
			text = s
		}
	}
	return l.truncate(text), size
}
