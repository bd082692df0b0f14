package agent_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/dawn-go/dawn/capabilities"
	"github.com/dawn-go/dawn/dawntest"
	"github.com/dawn-go/dawn/internal/agent"
	"github.com/dawn-go/dawn/markers"
	"github.com/dawn-go/dawn/router"
	"github.com/dawn-go/dawn/stream"
	"github.com/dawn-go/dawn/thread"
	"github.com/tmc/langchaingo/llms"
)

// afterRoute is a route with an echo tool and a hook that parks the run
// after every echo call, with a stop as its fallback.
func afterRoute(t *testing.T) (*capabilities.Prepared, *int) {
	t.Helper()
	ran := 0
	echo := capabilities.Func("echo", "echoes", func(_ context.Context, in echoIn) (string, error) { ran++; return in.Text, nil })
	p := prepare(t, map[string]string{"r/agent.md": "P", "r/state.yaml": "seen:\n  type: string\n  default: \"\"\n"}, capabilities.AppTool{Tool: echo})
	p.Hooks = append(p.Hooks, &capabilities.Hooks{AfterTool: func(_, _ thread.State, ev capabilities.ToolEvent) capabilities.Effect {
		if ev.Name != "echo" {
			return capabilities.Effect{}
		}
		return capabilities.Effect{
			Interrupt: &capabilities.Interrupt{ID: "after-1", Kind: "check", Detail: json.RawMessage(`{"said":` + string(ev.Output) + `}`)},
			Stop:      true, StopReason: "fallback",
		}
	}})
	return p, &ran
}

// parkAfter runs afterRoute's model to its park and returns the result.
func parkAfter(t *testing.T, p *capabilities.Prepared, model llms.Model) agent.Result {
	t.Helper()
	res, rec, err := run(t, p, model, func(c *agent.Config, h *testHost) { c.Park = true })
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Interrupts) != 1 {
		t.Fatalf("interrupts %+v, stopped %q", res.Interrupts, res.Stopped)
	}
	in := res.Interrupts[0]
	if !in.After || in.CallID == "" || in.Type != capabilities.InterruptType || string(in.Detail) != `{"said":"hi"}` {
		t.Fatalf("interrupt %+v", in)
	}
	last := res.Messages[len(res.Messages)-1]
	if last.Role != thread.RoleTool || last.ToolCallID != in.CallID || last.Content != "hi" {
		t.Fatalf("the call's result is not the last message: %+v", last)
	}
	if types := dawntest.Types(rec.events); types[len(types)-1] != stream.TypeInterrupt {
		t.Fatalf("events %v, want the interrupt last", types)
	}
	return res
}

// resumeAfter goes on from res with r as the answer to its interrupt.
func resumeAfter(t *testing.T, p *capabilities.Prepared, model llms.Model, res agent.Result, r capabilities.Resolution) (agent.Result, *recorder) {
	t.Helper()
	values := res.Values.Clone()
	delete(values, capabilities.InterruptsKey)
	rec := &recorder{}
	key := capabilities.ResolutionKey(nil, capabilities.AfterID(res.Interrupts[0].ID))
	cfg := agent.Config{Route: p, Model: model, ModelName: "script", Host: &testHost{rec: rec}, Park: true, Resolved: map[string]capabilities.Resolution{key: r}}
	out, err := agent.Run(context.Background(), cfg, res.Messages, values, nil)
	if err != nil {
		t.Fatal(err)
	}
	return out, rec
}

// TestAfterToolInterrupt: an AfterTool hook's interrupt parks the run after
// the call ran (its result in the history, the call not run again on
// resume); the answer's update goes through the reducers with its events,
// its note reaches the model after the tool result, and its stop ends the
// run without asking the model.
func TestAfterToolInterrupt(t *testing.T) {
	p, ran := afterRoute(t)
	model := dawntest.Script().CallTool("echo", map[string]string{"text": "hi"}).Reply("went on")
	res := parkAfter(t, p, model)
	out, rec := resumeAfter(t, p, model, res, capabilities.Resolution{
		Update: thread.State{"seen": json.RawMessage(`"yes"`)},
		Events: []stream.Event{stream.New("checked", map[string]string{"by": "a person"})},
		Note:   "a person says: go on", NoteMeta: map[string]json.RawMessage{"who": json.RawMessage(`"person"`)},
	})
	if out.Answer != "went on" || *ran != 1 || len(out.Interrupts) != 0 {
		t.Fatalf("answer %q, echo ran %d times, interrupts %v", out.Answer, *ran, out.Interrupts)
	}
	if string(out.Values["seen"]) != `"yes"` {
		t.Fatalf("the answer's update did not apply: %s", out.Values["seen"])
	}
	if types := dawntest.Types(rec.events); types[0] != "checked" {
		t.Fatalf("events of the resumed run %v, want the answer's event first", types)
	}
	note := out.Messages[len(res.Messages)]
	if note.Role != thread.RoleUser || note.Content != "a person says: go on" || string(note.Meta["who"]) != `"person"` {
		t.Fatalf("message after the tool result: %+v", note)
	}
	sent := model.Requests()[1]
	if text, _ := sent[len(sent)-1].Parts[0].(llms.TextContent); text.Text != "a person says: go on" {
		t.Fatalf("the model did not get the note last: %+v", sent[len(sent)-1])
	}

	stopModel := dawntest.Script().CallTool("echo", map[string]string{"text": "hi"}).Reply("never")
	res = parkAfter(t, p, stopModel)
	out, _ = resumeAfter(t, p, stopModel, res, capabilities.Resolution{Stop: true, StopReason: "person_stopped"})
	if out.Stopped != "person_stopped" || stopModel.Calls() != 1 {
		t.Fatalf("stopped %q after %d model calls; want the run to end without asking the model", out.Stopped, stopModel.Calls())
	}
}

// TestAfterToolInterruptWithoutPark: a run that cannot park drops the
// interrupt and acts on the hook's fallback stop.
func TestAfterToolInterruptWithoutPark(t *testing.T) {
	p, _ := afterRoute(t)
	model := dawntest.Script().CallTool("echo", map[string]string{"text": "hi"}).Reply("never")
	res, _, err := run(t, p, model, nil)
	if err != nil || len(res.Interrupts) != 0 || res.Stopped != "fallback" || model.Calls() != 1 {
		t.Fatalf("err %v, interrupts %v, stopped %q, model calls %d", err, res.Interrupts, res.Stopped, model.Calls())
	}
}

// TestAnswerIsForTheParkedTurnOnly: an answer applies to the held-back
// call of the parked turn; a later call that reuses its id (some providers
// number calls per turn) is a new call and is asked about again.
func TestAnswerIsForTheParkedTurnOnly(t *testing.T) {
	ran := 0
	echo := capabilities.Func("echo", "echoes", func(_ context.Context, in echoIn) (string, error) { ran++; return in.Text, nil })
	p := prepare(t, map[string]string{"r/agent.md": "P"}, capabilities.AppTool{Tool: echo})
	p.Hooks = append(p.Hooks, &capabilities.Hooks{BeforeTool: func(_ thread.State, c thread.ToolCall, _ thread.State) capabilities.Effect {
		return capabilities.Effect{Interrupt: &capabilities.Interrupt{ID: "ask-" + c.ID, Kind: "check"}}
	}})
	callEcho := func([]llms.MessageContent, llms.CallOptions) (*llms.ContentResponse, error) {
		call := llms.ToolCall{ID: "c1", Type: "function", FunctionCall: &llms.FunctionCall{Name: "echo", Arguments: `{"text":"hi"}`}}
		return &llms.ContentResponse{Choices: []*llms.ContentChoice{{ToolCalls: []llms.ToolCall{call}}}}, nil
	}
	model := dawntest.Script().Then(callEcho).Then(callEcho).Reply("never")
	res, _, err := run(t, p, model, func(c *agent.Config, h *testHost) { c.Park = true })
	if err != nil || len(res.Interrupts) != 1 || ran != 0 {
		t.Fatalf("first park: %v %+v, echo ran %d times", err, res.Interrupts, ran)
	}
	values := res.Values.Clone()
	delete(values, capabilities.InterruptsKey)
	cfg := agent.Config{Route: p, Model: model, ModelName: "script", Host: &testHost{}, Park: true,
		Resolved: map[string]capabilities.Resolution{capabilities.ResolutionKey(nil, "c1"): {Run: true}}}
	out, err := agent.Run(context.Background(), cfg, res.Messages, values, nil)
	if err != nil || len(out.Interrupts) != 1 || ran != 1 {
		t.Fatalf("the second call c1 must be asked about again: err %v, interrupts %+v, echo ran %d times, answer %q", err, out.Interrupts, ran, out.Answer)
	}
}

// answerAll answers every interrupt of res with r, keyed as the runner
// keys them.
func answerAll(res agent.Result, r capabilities.Resolution) map[string]capabilities.Resolution {
	out := map[string]capabilities.Resolution{}
	for _, in := range res.Interrupts {
		id := in.CallID
		if in.After {
			id = capabilities.AfterID(in.ID)
		}
		out[capabilities.ResolutionKey(in.Path, id)] = r
	}
	return out
}

// TestNoteWaitsForAnOpenTurn: the note of an answer to an interrupt raised
// after a call is kept while a subagent of the same turn parks again, and
// reaches the model once the turn's calls have all run.
func TestNoteWaitsForAnOpenTurn(t *testing.T) {
	dir := t.TempDir()
	for name, body := range map[string]string{"r/agent.md": "P", "r/subagents/child/agent.md": "C"} {
		path := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	tree, err := router.Discover(dir)
	if err != nil {
		t.Fatal(err)
	}
	echo := capabilities.Func("echo", "echoes", func(_ context.Context, in echoIn) (string, error) { return in.Text, nil })
	in := capabilities.Input{Markers: markers.All(), AppTools: []capabilities.AppTool{{Tool: echo}}, AppToolsKnown: true}
	root, err := capabilities.Prepare(context.Background(), tree.Route("/r"), in)
	if err != nil {
		t.Fatal(err)
	}
	child, err := capabilities.Prepare(context.Background(), tree.Route(root.Route.Subagents["child"]), in)
	if err != nil {
		t.Fatal(err)
	}
	root.Hooks = append(root.Hooks, &capabilities.Hooks{AfterTool: func(_, _ thread.State, ev capabilities.ToolEvent) capabilities.Effect {
		if ev.Name != "echo" {
			return capabilities.Effect{}
		}
		return capabilities.Effect{Interrupt: &capabilities.Interrupt{ID: "after-1", Kind: "check"}}
	}})
	child.Hooks = append(child.Hooks, &capabilities.Hooks{BeforeTool: func(_ thread.State, c thread.ToolCall, _ thread.State) capabilities.Effect {
		return capabilities.Effect{Interrupt: &capabilities.Interrupt{ID: "ask-" + c.ID, Kind: "check"}}
	}})
	rootModel := dawntest.Script().
		CallTools(dawntest.ToolCall{Name: "echo", Args: map[string]string{"text": "hi"}}, dawntest.ToolCall{Name: "task", Args: map[string]string{"subagent": "child", "input": "go"}}).
		Reply("root done")
	childModel := dawntest.Script().CallTool("echo", map[string]string{"text": "1"}).CallTool("echo", map[string]string{"text": "2"}).Reply("child done")
	cfg := agent.Config{Route: root, Model: rootModel, ModelName: "script", Park: true,
		Host: &testHost{subagent: func(*capabilities.Prepared, string) (*capabilities.Prepared, llms.Model, string, error) {
			return child, childModel, "script", nil
		}}}
	step := func(history []thread.Message, values thread.State, input []thread.Message, resolved map[string]capabilities.Resolution) agent.Result {
		t.Helper()
		c := cfg
		c.Resolved = resolved
		values = values.Clone()
		delete(values, capabilities.InterruptsKey)
		res, err := agent.Run(context.Background(), c, history, values, input)
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	res := step(nil, thread.State{}, []thread.Message{{Role: thread.RoleUser, Content: "go"}}, nil)
	if len(res.Interrupts) != 2 {
		t.Fatalf("first park: %+v", res.Interrupts)
	}
	res = step(res.Messages, res.Values, nil, answerAll(res, capabilities.Resolution{Run: true, Note: "a person says: go on"}))
	if len(res.Interrupts) != 1 || len(res.Interrupts[0].Path) != 1 || res.Values[capabilities.NotesKey] == nil {
		t.Fatalf("second park (the subagent asks again, the note waits): %+v, notes %s", res.Interrupts, res.Values[capabilities.NotesKey])
	}
	res = step(res.Messages, res.Values, nil, answerAll(res, capabilities.Resolution{Run: true}))
	if res.Answer != "root done" || res.Values[capabilities.NotesKey] != nil {
		t.Fatalf("answer %q, notes left %s", res.Answer, res.Values[capabilities.NotesKey])
	}
	sent := rootModel.Requests()[1]
	last := sent[len(sent)-1]
	if text, _ := last.Parts[0].(llms.TextContent); last.Role != llms.ChatMessageTypeHuman || text.Text != "a person says: go on" {
		t.Fatalf("the root model did not get the note after the turn: %+v", last)
	}
}
