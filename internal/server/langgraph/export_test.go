package langgraph

import "github.com/dawn-go/dawn/internal/runner"

// SetBeforeStatelessAnswer sets the hook a stateless run's request runs
// before it writes its answer, for the test's lifetime.
func SetBeforeStatelessAnswer(f func(threadID string, run *runner.Run)) (restore func()) {
	beforeStatelessAnswer = f
	return func() { beforeStatelessAnswer = nil }
}
