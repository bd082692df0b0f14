package agent

import (
	"fmt"

	"github.com/dawn-go/dawn/internal/tokens"
	"github.com/dawn-go/dawn/thread"
)

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
	if !ok {
		return nil
	}
	est := tokens.EstimateMessages(l.cfg.ModelName, system, msgs, l.defs)
	if block != "" {
		est += tokens.EstimateText(l.cfg.ModelName, block) + 3
	}
	if est <= window {
		return nil
	}
	return &ContextWindowError{Route: l.cfg.Route.Route.ID, Model: l.cfg.ModelName, Estimated: est, Window: window}
}
