package agent_test

import (
	"context"
	"encoding/json"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/dawn-go/dawn/capabilities"
	"github.com/dawn-go/dawn/dawntest"
	"github.com/dawn-go/dawn/internal/agent"
	"github.com/dawn-go/dawn/stream"
	"github.com/dawn-go/dawn/thread"
	"github.com/tmc/langchaingo/llms"
)

// specTool is a tool with a hand-written spec.
type specTool struct {
	spec capabilities.ToolSpec
	call func(ctx context.Context, inv capabilities.Invocation) (capabilities.Result, error)
}

func (t specTool) Spec() capabilities.ToolSpec { return t.spec }
func (t specTool) Call(ctx context.Context, inv capabilities.Invocation) (capabilities.Result, error) {
	return t.call(ctx, inv)
}

func textResult(s string) (capabilities.Result, error) {
	out, _ := json.Marshal(s)
	return capabilities.Result{Output: out}, nil
}

// slowSteps is a StepRunner whose steps take d.
type slowSteps struct{ d time.Duration }

func (s slowSteps) RunStep(context.Context, string, capabilities.StepTarget, string) (string, error) {
	time.Sleep(s.d)
	return "step done", nil
}
func (slowSteps) Emit(stream.Event) {}
func (slowSteps) Signal() string    { return "" }

// TestToolDeadline: a call past its deadline fails with an error the model
// sees and the run goes on to its answer, whether the tool honours its
// context or ignores it; the tool's own timeout wins over the app's; a
// tool that runs agents is not cut off by the time they take.
func TestToolDeadline(t *testing.T) {
	block := func(ctx context.Context, _ capabilities.Invocation) (capabilities.Result, error) {
		<-ctx.Done()
		return capabilities.Result{}, ctx.Err()
	}
	ignore := func(context.Context, capabilities.Invocation) (capabilities.Result, error) {
		select {}
	}
	steps := func(ctx context.Context, inv capabilities.Invocation) (capabilities.Result, error) {
		text, err := inv.Steps.RunStep(ctx, inv.CallID, capabilities.StepTarget{}, "work")
		if err != nil {
			return capabilities.Result{}, err
		}
		return textResult(text)
	}
	cases := []struct {
		name    string
		tool    specTool
		app     time.Duration
		wantErr string
	}{
		{"honours its context", specTool{capabilities.ToolSpec{Name: "slow"}, block}, 50 * time.Millisecond, `tool "slow" did not finish within 50ms`},
		{"ignores its context", specTool{capabilities.ToolSpec{Name: "slow"}, ignore}, 50 * time.Millisecond, `tool "slow" did not finish within 50ms`},
		{"its own timeout", specTool{capabilities.ToolSpec{Name: "slow", Timeout: 30 * time.Millisecond}, block}, time.Hour, `tool "slow" did not finish within 30ms`},
		{"runs agents", specTool{capabilities.ToolSpec{Name: "slow"}, steps}, 20 * time.Millisecond, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := prepare(t, map[string]string{"r/agent.md": "Help."}, capabilities.AppTool{Tool: tc.tool})
			model := dawntest.Script().CallTool("slow", map[string]any{}).Reply("Done.")
			res, rec, err := run(t, p, model, func(c *agent.Config, h *testHost) {
				c.ToolTimeout = tc.app
				h.steps = slowSteps{100 * time.Millisecond}
			})
			if err != nil || res.Answer != "Done." {
				t.Fatalf("run: %v, answer %q", err, res.Answer)
			}
			got := strings.Join(rec.toolErrors(), "; ")
			if (tc.wantErr == "") != (got == "") || !strings.Contains(got, tc.wantErr) {
				t.Fatalf("tool errors %q, want %q", got, tc.wantErr)
			}
			if tc.wantErr != "" && !strings.Contains(toolMessage(res.Messages), tc.wantErr) {
				t.Fatalf("the model was not told: %+v", res.Messages)
			}
		})
	}
}

// toolMessage is the content of the first tool message of msgs.
func toolMessage(msgs []thread.Message) string {
	for _, m := range msgs {
		if m.Role == thread.RoleTool {
			return m.Content
		}
	}
	return ""
}

// TestStartedCallsAfterCrash: a thread whose saved state says approved
// calls had started (a crash cut the resume off) answers them before the
// next input: a call of a plain tool gets "outcome unknown" and does not
// run, an idempotent tool's call runs again, a refused call gets its
// refusal; the record is gone from the state the run ends with.
func TestStartedCallsAfterCrash(t *testing.T) {
	var charges, refreshes atomic.Int32
	charge := specTool{capabilities.ToolSpec{Name: "charge"}, func(context.Context, capabilities.Invocation) (capabilities.Result, error) {
		charges.Add(1)
		return textResult("charged")
	}}
	refresh := capabilities.Idempotent(specTool{capabilities.ToolSpec{Name: "refresh"}, func(context.Context, capabilities.Invocation) (capabilities.Result, error) {
		refreshes.Add(1)
		return textResult("refreshed")
	}})
	p := prepare(t, map[string]string{"r/agent.md": "Help."}, capabilities.AppTool{Tool: charge}, capabilities.AppTool{Tool: refresh})
	history := []thread.Message{
		{Role: thread.RoleUser, Content: "Pay and refresh"},
		{Role: thread.RoleAssistant, ToolCalls: []thread.ToolCall{
			{ID: "c1", Name: "charge", Input: json.RawMessage(`{}`)},
			{ID: "c2", Name: "refresh", Input: json.RawMessage(`{}`)},
			{ID: "c3", Name: "charge", Input: json.RawMessage(`{}`)},
		}},
	}
	started, _ := json.Marshal([]capabilities.StartedCall{{ID: "c1", Name: "charge"}, {ID: "c2", Name: "refresh"}, {ID: "c3", Name: "charge", Refusal: "a person denied it"}})
	values := p.InitialState()
	values[capabilities.StartedKey] = started
	model := dawntest.Script().Reply("Checked.")
	rec := &recorder{}
	cfg := agent.Config{Route: p, Model: model, ModelName: "script", Host: &testHost{rec: rec}}
	res, err := agent.Run(context.Background(), cfg, history, values, []thread.Message{{Role: thread.RoleUser, Content: "What happened?"}})
	if err != nil || res.Answer != "Checked." {
		t.Fatalf("run: %v, answer %q", err, res.Answer)
	}
	if charges.Load() != 0 || refreshes.Load() != 1 {
		t.Fatalf("charge ran %d times (want 0), refresh %d (want 1)", charges.Load(), refreshes.Load())
	}
	if _, ok := res.Values[capabilities.StartedKey]; ok {
		t.Fatalf("the record of started calls outlived the run: %s", res.Values[capabilities.StartedKey])
	}
	want := []string{"tool c1 error: " + agent.OutcomeUnknown, "tool c2 refreshed", "tool c3 a person denied it", "human What happened?"}
	reqs := model.Requests()
	got := describe(reqs[0][len(reqs[0])-4:])
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("the model got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	var unknown int
	for _, e := range rec.events {
		if e.Type == stream.TypeToolResult && strings.Contains(string(e.Data), `"outcome":"unknown"`) && strings.Contains(string(e.Data), `"id":"c1"`) {
			unknown++
		}
	}
	if unknown != 1 {
		t.Fatalf("want one tool_result with outcome unknown for c1, events: %+v", rec.events)
	}
}

// describe writes each tool or user message as "tool ID text" or "user
// text".
func describe(msgs []llms.MessageContent) []string {
	var out []string
	for _, m := range msgs {
		for _, part := range m.Parts {
			switch p := part.(type) {
			case llms.ToolCallResponse:
				out = append(out, "tool "+p.ToolCallID+" "+p.Content)
			case llms.TextContent:
				out = append(out, string(m.Role)+" "+p.Text)
			}
		}
	}
	return out
}

// TestApprovedCallIsRecordedBeforeItRuns: resuming a parked call that a
// person approved saves a step recording the call as started before the
// tool runs, and the step with the call's result drops the record. A
// cancelled resume saves nothing and runs nothing.
func TestApprovedCallIsRecordedBeforeItRuns(t *testing.T) {
	var saves []thread.State
	var seenBefore string
	charge := specTool{capabilities.ToolSpec{Name: "charge"}, func(context.Context, capabilities.Invocation) (capabilities.Result, error) {
		if len(saves) > 0 {
			seenBefore = string(saves[len(saves)-1][capabilities.StartedKey])
		}
		return textResult("charged")
	}}
	p := prepare(t, map[string]string{"r/agent.md": "Help."}, capabilities.AppTool{Tool: charge})
	history := []thread.Message{
		{Role: thread.RoleUser, Content: "Pay"},
		{Role: thread.RoleAssistant, ToolCalls: []thread.ToolCall{{ID: "c1", Name: "charge", Input: json.RawMessage(`{}`)}}},
	}
	host := &testHost{rec: &recorder{}, save: func(_ context.Context, _ []thread.Message, values thread.State) error {
		saves = append(saves, values)
		return nil
	}}
	cfg := agent.Config{Route: p, Model: dawntest.Script().Reply("Paid."), ModelName: "script", Host: host, Park: true,
		Resolved: map[string]capabilities.Resolution{"c1": {Run: true}}}

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := agent.Run(ctx, cfg, history, p.InitialState(), nil); err == nil || len(saves) != 0 || seenBefore != "" {
		t.Fatalf("a cancelled resume: err %v, %d saves; want an error and nothing saved or run", err, len(saves))
	}

	res, err := agent.Run(context.Background(), cfg, history, p.InitialState(), nil)
	if err != nil || res.Answer != "Paid." {
		t.Fatalf("run: %v, answer %q", err, res.Answer)
	}
	if seenBefore != `[{"id":"c1","name":"charge"}]` {
		t.Fatalf("when the tool ran, the last saved step recorded %q as started, want c1", seenBefore)
	}
	for _, v := range saves[1:] {
		if _, ok := v[capabilities.StartedKey]; ok {
			t.Fatalf("a step after the call still records it as started: %s", v[capabilities.StartedKey])
		}
	}
}

// TestStartedTaskCallAfterCrash: a task call whose parked subagent was
// going on when a crash cut it off counts as one call of unknown outcome:
// the subagent does not run again and its parked frame is dropped.
func TestStartedTaskCallAfterCrash(t *testing.T) {
	p := prepare(t, map[string]string{"r/agent.md": "P", "r/subagents/helper/agent.md": "H"})
	history := []thread.Message{
		{Role: thread.RoleUser, Content: "Delegate"},
		{Role: thread.RoleAssistant, ToolCalls: []thread.ToolCall{{ID: "t1", Name: "task", Input: json.RawMessage(`{"subagent":"helper","input":"x"}`)}}},
	}
	values := p.InitialState()
	values[capabilities.StartedKey] = json.RawMessage(`[{"id":"t1","name":"task"}]`)
	values[capabilities.SubagentsKey] = json.RawMessage(`{"t1":{"subagent":"helper","messages":[],"values":{}}}`)
	host := &testHost{rec: &recorder{}, subagent: func(*capabilities.Prepared, string) (*capabilities.Prepared, llms.Model, string, error) {
		t.Fatal("the cut-off subagent ran again")
		return nil, nil, "", nil
	}}
	cfg := agent.Config{Route: p, Model: dawntest.Script().Reply("Checked."), ModelName: "script", Host: host}
	res, err := agent.Run(context.Background(), cfg, history, values, []thread.Message{{Role: thread.RoleUser, Content: "What happened?"}})
	if err != nil || res.Answer != "Checked." {
		t.Fatalf("run: %v, answer %q", err, res.Answer)
	}
	if reply := toolMessage(res.Messages); reply != "error: "+agent.OutcomeUnknown {
		t.Fatalf("the task call's result: %q", reply)
	}
	for _, key := range []string{capabilities.StartedKey, capabilities.SubagentsKey} {
		if _, ok := res.Values[key]; ok {
			t.Errorf("%s outlived the run: %s", key, res.Values[key])
		}
	}
}
