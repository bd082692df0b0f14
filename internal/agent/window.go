package agent

import (
	"fmt"

	"github.com/dawn-go/dawn/capabilities"
	"github.com/dawn-go/dawn/internal/tokens"
	"github.com/dawn-go/dawn/thread"
)

// messageOverhead is the tokens the state block's message adds besides
// its text, as tokens counts every message.
const messageOverhead = 3

// ContextWindowError is a model request that would not fit the model's
// context window: it is refused before it is sent, instead of the
// provider's 400.
type ContextWindowError struct {
	Route     string
	Model     string
	Estimated int
	Window    int
}

func (e *ContextWindowError) Error() string {
	return fmt.Sprintf("route %s: the next request to model %s is about %d input tokens, more than the model's context window of %d; "+
		"set context.max_input_tokens in the route's agent.md (or in dawn.yaml) so older turns are compacted before a request grows this large, or go on in a new thread",
		e.Route, e.Model, e.Estimated, e.Window)
}

// checkWindow refuses a request of system, block and msgs that would not
// fit the model's known context window; a model whose window is unknown
// is not checked.
func (l *loop) checkWindow(system, block string, msgs []thread.Message) error {
	window, ok := tokens.Window(l.cfg.ModelName)
	if !ok || tokens.UpperBound(system, msgs, l.defs)+len(block)+messageOverhead <= window {
		return nil // most requests: far under the window, not counted
	}
	est := tokens.EstimateMessages(l.cfg.ModelName, system, msgs, l.defs)
	if block != "" {
		est += tokens.EstimateText(l.cfg.ModelName, block) + messageOverhead
	}
	if est <= window {
		return nil
	}
	return &ContextWindowError{Route: l.cfg.Route.Route.ID, Model: l.cfg.ModelName, Estimated: est, Window: window}
}

// FixedTokens estimates the input tokens every request of route p to
// model carries before any conversation: the system prompt and the state
// block rendered from a new thread's state, and the tool definitions (the
// task tool included when the route has subagents). A route prompt whose
// template cannot render without a request's params is counted as written.
func FixedTokens(p *capabilities.Prepared, model string) int {
	state := p.InitialState()
	system, err := SystemPrompt(p, nil, state, "")
	if err != nil {
		system = p.Route.Agent.Prompt
	}
	tools := p.Tools
	if len(p.Route.Subagents) > 0 {
		tools = append(tools[:len(tools):len(tools)], newTaskTool(p.Route.Subagents))
	}
	n := tokens.EstimateMessages(model, system, nil, toolDefs(tools))
	if block := StateBlock(p, state); block != "" {
		n += tokens.EstimateText(model, block) + messageOverhead
	}
	return n
}
