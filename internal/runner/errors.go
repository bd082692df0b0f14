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

// ModelUnavailableError is a model the server cannot make for a run: its
// provider is not configured (a key or base URL is not set) or its name
// names none. The run does not start.
type ModelUnavailableError struct {
	Spec string
	Err  error
}

func (e *ModelUnavailableError) Error() string { return e.Err.Error() }

func (e *ModelUnavailableError) Unwrap() error { return e.Err }
