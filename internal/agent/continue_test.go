package agent_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/dawn-go/dawn/capabilities"
	"github.com/dawn-go/dawn/dawntest"
	"github.com/dawn-go/dawn/internal/agent"
	"github.com/dawn-go/dawn/stream"
	"github.com/dawn-go/dawn/thread"
)

// saved is what a test host's checkpoints saved: the conversation and the
// state of the last step.
type saved struct {
	msgs  []thread.Message
	state thread.State
	steps int
}

func (s *saved) save(_ context.Context, added []thread.Message, values thread.State) error {
	s.msgs = append(s.msgs, added...)
	s.state, s.steps = values, s.steps+1
	return nil
}

// startedList decodes the state's capabilities.StartedKey.
func startedList(t *testing.T, state thread.State) []capabilities.StartedCall {
	t.Helper()
	var list []capabilities.StartedCall
	if _, err := state.Decode(capabilities.StartedKey, &list); err != nil {
		t.Fatal(err)
	}
	return list
}

// TestRecordTurnBeforeCalls: with RecordStarted, a tool turn is saved
// before its calls run, with the calls listed as started, and the list
// leaves the state with the turn's results; without it nothing is saved
// before a call runs.
func TestRecordTurnBeforeCalls(t *testing.T) {
	for _, record := range []bool{true, false} {
		var s saved
		var atCall saved // what was saved when the tool ran
		charge := capabilities.Func("charge", "charges", func(context.Context, echoIn) (string, error) {
			atCall = saved{msgs: append([]thread.Message(nil), s.msgs...), state: s.state, steps: s.steps}
			return "charged", nil
		})
		p := prepare(t, map[string]string{"r/agent.md": "P"}, capabilities.AppTool{Tool: charge})
		model := dawntest.Script().CallTool("charge", echoIn{Text: "k1"}).Reply("done")
		res, _, err := run(t, p, model, func(c *agent.Config, h *testHost) {
			c.Park, c.RecordStarted = true, record
			h.save = s.save
		})
		if err != nil {
			t.Fatal(err)
		}
		if res.Answer != "done" {
			t.Fatalf("answer %q", res.Answer)
		}
		if !record {
			if atCall.steps != 0 {
				t.Errorf("without RecordStarted, %d steps were saved before the call ran, want 0", atCall.steps)
			}
			continue
		}
		list := startedList(t, atCall.state)
		if atCall.steps != 1 || len(list) != 1 || list[0].Name != "charge" || !list[0].Unapproved {
			t.Fatalf("saved before the call ran: %d steps, started %+v; want the turn with charge started", atCall.steps, list)
		}
		last := atCall.msgs[len(atCall.msgs)-1]
		if last.Role != thread.RoleAssistant || len(last.ToolCalls) != 1 || last.ToolCalls[0].ID != list[0].ID {
			t.Fatalf("the saved turn ends with %+v, want the assistant message with the call", last)
		}
		if _, ok := res.Values[capabilities.StartedKey]; ok {
			t.Errorf("the run ended with %s still in its state", capabilities.StartedKey)
		}
		if _, ok := s.state[capabilities.StartedKey]; ok {
			t.Errorf("the turn's results were saved with %s still in the state", capabilities.StartedKey)
		}
	}
}

// TestContinueAnswersStartedCalls: a run continued from the turn a crash
// cut off (Config.Continue, no input) does not run a started call of a
// tool that is not idempotent: the model and the client are told its
// outcome is unknown. A started call of an idempotent tool runs again.
// The Start hooks, which saw the run's input before the crash, do not run
// again.
func TestContinueAnswersStartedCalls(t *testing.T) {
	for _, idempotent := range []bool{false, true} {
		ran := 0
		var tool capabilities.Tool = capabilities.Func("charge", "charges", func(context.Context, echoIn) (string, error) {
			ran++
			return "charged", nil
		})
		if idempotent {
			tool = capabilities.Idempotent(tool)
		}
		p := prepare(t, map[string]string{"r/agent.md": "P"}, capabilities.AppTool{Tool: tool})
		starts := 0
		p.Hooks = append(p.Hooks, &capabilities.Hooks{Start: func(thread.State, []thread.Message) capabilities.Effect {
			starts++
			return capabilities.Effect{}
		}})
		// The crash: the turn is saved, then the tool never returns.
		var s saved
		crash := dawntest.Script().CallTool("charge", echoIn{Text: "k1"})
		_, _, _ = run(t, p, crash, func(c *agent.Config, h *testHost) {
			c.Park, c.RecordStarted = true, true
			h.save = func(ctx context.Context, added []thread.Message, values thread.State) error {
				if err := s.save(ctx, added, values); err != nil {
					return err
				}
				if _, ok := values[capabilities.StartedKey]; ok {
					return context.Canceled // the server dies here
				}
				return nil
			}
		})
		if ran != 0 || starts != 1 {
			t.Fatalf("before the crash: tool ran %d times, Start hooks %d; want 0 and 1", ran, starts)
		}

		model := dawntest.Script().Reply("checked")
		rec := &recorder{}
		cfg := agent.Config{Route: p, Model: model, ModelName: "script", Host: &testHost{rec: rec}, Park: true, RecordStarted: true, Continue: true}
		res, err := agent.Run(context.Background(), cfg, s.msgs, s.state, nil)
		if err != nil {
			t.Fatal(err)
		}
		if res.Answer != "checked" || starts != 1 {
			t.Fatalf("continued run: answer %q, Start hooks %d; want checked and no new Start", res.Answer, starts)
		}
		reqs := model.Requests()
		seen := describe(reqs[len(reqs)-1])
		toolText := seen[len(seen)-1]
		if idempotent {
			if ran != 1 || !strings.HasSuffix(toolText, " charged") {
				t.Errorf("an idempotent started call: ran %d times, model got %v; want it run again", ran, toolText)
			}
			continue
		}
		if ran != 0 || !strings.Contains(toolText, agent.CutOffUnknown) {
			t.Errorf("a started call: ran %d times, model got %v; want not run, outcome unknown", ran, toolText)
		}
		var unknown bool
		for _, e := range rec.events {
			var d struct{ Outcome string }
			if e.Type == stream.TypeToolResult && json.Unmarshal(e.Data, &d) == nil && d.Outcome == "unknown" {
				unknown = true
			}
		}
		if !unknown {
			t.Errorf("no tool_result with outcome unknown among %v", dawntest.Types(rec.events))
		}
	}
}
