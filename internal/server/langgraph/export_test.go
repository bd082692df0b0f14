package langgraph

import "github.com/dawn-go/dawn/internal/runner"

// SetBeforeStatelessAnswer sets the hook a stateless run's request runs
// before it writes its answer, for the test's lifetime.
func SetBeforeStatelessAnswer(f func(threadID string, run *runner.Run)) (restore func()) {
	beforeStatelessAnswer = f
	return func() { beforeStatelessAnswer = nil }
}

// SetBeforeRunAnswer sets the hook POST /threads/:id/runs runs after its
// run started, before it answers, for the test's lifetime.
func SetBeforeRunAnswer(f func(threadID string, run *runner.Run)) (restore func()) {
	beforeRunAnswer = f
	return func() { beforeRunAnswer = nil }
}
