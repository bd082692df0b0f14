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
// is not checked. A request with no more bytes than the window has no
// more tokens (tokens.BoundConversation) and is not counted: only one
// near the window is encoded with the model's tokenizer.
func (l *loop) checkWindow(system, block string, msgs []thread.Message) error {
	window, ok := tokens.Window(l.cfg.ModelName)
	if !ok || tokens.BoundConversation(system, msgs)+len(block)+messageOverhead+l.toolBound() <= window {
		return nil // most requests: far under the window, not counted
	}
	est := tokens.EstimateConversation(l.cfg.ModelName, system, msgs) + l.toolTokens()
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
	if targets := TaskTargets(p); len(targets) > 0 {
		tools = append(tools[:len(tools):len(tools)], newTaskTool(targets))
	}
	n := tokens.EstimateMessages(model, system, nil, toolDefs(tools))
	if block := StateBlock(p, state); block != "" {
		n += tokens.EstimateText(model, block) + messageOverhead
	}
	return n
}

// toolSizes are the tokens the run's tool definitions add to each
// request, worked out once a run: their schemas do not change between
// calls.
type toolSizes struct {
	bound, estimate       int
	haveBound, haveTokens bool
}

// toolBound is tokens.BoundTools of the run's tools.
func (l *loop) toolBound() int {
	if !l.toolSize.haveBound {
		l.toolSize.bound, l.toolSize.haveBound = tokens.BoundTools(l.defs), true
	}
	return l.toolSize.bound
}

// toolTokens is tokens.EstimateTools of the run's tools on its model.
func (l *loop) toolTokens() int {
	if !l.toolSize.haveTokens {
		l.toolSize.estimate, l.toolSize.haveTokens = tokens.EstimateTools(l.cfg.ModelName, l.defs), true
	}
	return l.toolSize.estimate
}
