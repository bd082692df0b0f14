package runner

import "github.com/dawn-go/dawn/internal/agent"

// The errors a run can end with, as its Err returns them.
type (
	// ModelError is a failed model call.
	ModelError = agent.ModelError
	// TurnLimitError ends a run whose model kept calling tools for its
	// route's max_turns.
	TurnLimitError = agent.TurnLimitError
)
