package runner

import (
	"encoding/json"

	"github.com/dawn-go/dawn/capabilities"
	"github.com/dawn-go/dawn/thread"
	"github.com/google/uuid"
)

// PauseKind is the kind of the interrupts a run's pauses raise (see
// Overrides.PauseBeforeTools and PauseAfterTools): the run parks as for a
// person's decision, and any resolved answer goes on (a cancelled one, to
// a pause before tools, refuses the held-back calls).
const PauseKind = "pause"

// pauseHooks parks a run before each tools step's calls run, after each
// tools step, or both.
func pauseHooks(before, after bool) *capabilities.Hooks {
	pause := func(when string) capabilities.Effect {
		detail, _ := json.Marshal(map[string]string{"when": when, "node": "tools"})
		return capabilities.Effect{Interrupt: &capabilities.Interrupt{ID: "pause-" + uuid.NewString(), Kind: PauseKind, Detail: detail}}
	}
	h := &capabilities.Hooks{}
	if before {
		h.BeforeTool = func(thread.State, thread.ToolCall, thread.State) capabilities.Effect { return pause("before") }
	}
	if after {
		h.AfterTool = func(_, _ thread.State, _ capabilities.ToolEvent) capabilities.Effect { return pause("after") }
	}
	return h
}

// resolvePause is what an answer to a pause does: the held-back call
// runs (or, cancelled, is refused), and after a tools step the run goes
// on.
func resolvePause(in capabilities.Interrupt, a capabilities.Answer) capabilities.Resolution {
	switch {
	case in.After:
		return capabilities.Resolution{}
	case a.Status == capabilities.AnswerCancelled:
		return capabilities.Resolution{Refusal: "a person declined this call"}
	}
	return capabilities.Resolution{Run: true}
}
