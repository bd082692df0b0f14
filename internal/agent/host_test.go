package agent_test

import (
	"context"

	"github.com/dawn-go/dawn/capabilities"
	"github.com/dawn-go/dawn/stream"
	"github.com/dawn-go/dawn/thread"
	"github.com/tmc/langchaingo/llms"
)

// testHost is the agent.Host of these tests: events go to rec, steps to
// save (nil saves nothing), subagents come from subagent, and steps is
// lent to the route's tools.
type testHost struct {
	rec      *recorder
	save     func(context.Context, []thread.Message, thread.State) error
	subagent func(*capabilities.Prepared, string) (*capabilities.Prepared, llms.Model, string, error)
	steps    capabilities.StepRunner
}

func (h *testHost) Emit(e stream.Event) {
	if h.rec != nil {
		h.rec.emit(e)
	}
}

func (h *testHost) Checkpoint(ctx context.Context, added []thread.Message, values thread.State) error {
	if h.save == nil {
		return nil
	}
	return h.save(ctx, added, values)
}

func (h *testHost) Signal() string { return "" }

func (h *testHost) Subagent(parent *capabilities.Prepared, name string) (*capabilities.Prepared, llms.Model, string, error) {
	return h.subagent(parent, name)
}

func (h *testHost) App() thread.State { return nil }

func (h *testHost) Steps() capabilities.StepRunner { return h.steps }

func (h *testHost) Items() capabilities.ItemStore { return nil }
