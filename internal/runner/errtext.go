package runner

import (
	"errors"

	"github.com/dawn-go/dawn/internal/agent"
	"github.com/dawn-go/dawn/internal/models"
	"github.com/dawn-go/dawn/internal/store"
)

// errorText is the text of a run's error that its output and record keep,
// which clients read. A store that cannot be reached is said so without the
// driver's words, which name the database's host, user and name; the log
// has them.
func errorText(err error) string {
	if errors.Is(err, store.ErrUnavailable) {
		return store.ErrUnavailable.Error() + " (its database cannot be reached); the last saved step is kept"
	}
	return err.Error()
}

// errorName names the kind of a run's error, which a failed run's output
// carries as "error_name" beside its text and the LangGraph dialect sends
// as the error's name: ModelError for a model call that failed,
// GraphRecursionError for the turn limit (LangGraph's name for running
// out of steps), StoreUnavailable, InputError, and RunError for the rest.
func errorName(err error) string {
	var agentModel *agent.ModelError
	var model *models.ModelError
	var turns *agent.TurnLimitError
	var input *InputError
	switch {
	case errors.As(err, &turns):
		return "GraphRecursionError"
	case errors.As(err, &agentModel), errors.As(err, &model):
		return "ModelError"
	case errors.Is(err, store.ErrUnavailable):
		return "StoreUnavailable"
	case errors.As(err, &input):
		return "InputError"
	}
	return "RunError"
}
