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
)

// askingRemote is a remote subagent that asks a question on its first Run
// and answers with the person's answer on the next; runs records each
// Run's task.
type askingRemote struct{ runs []capabilities.RemoteTask }

func (*askingRemote) Address() string { return "remote://asking" }

func (r *askingRemote) Run(_ context.Context, task capabilities.RemoteTask) (string, error) {
	r.runs = append(r.runs, task)
	task.Emit(stream.New("plan_update", map[string]any{"todos": []any{}}))
	if task.Resume == nil {
		return "", &capabilities.ParkCall{Interrupt: capabilities.Interrupt{ID: "ask-1", Kind: "question"}, Resume: json.RawMessage(`{"session":7}`)}
	}
	return "answered " + string(task.Answer.Payload), nil
}

// TestRemoteSubagentParksMidCall: a remote subagent's ParkCall parks the
// run with the task call held back and its own interrupt (InCall); the
// answer runs the call again with what it asked to keep, and the model
// gets its result.
func TestRemoteSubagentParksMidCall(t *testing.T) {
	p := prepare(t, map[string]string{"r/agent.md": "P"})
	remote := &askingRemote{}
	p.RemoteSubagents = map[string]capabilities.RemoteSubagent{"asker": remote}
	model := dawntest.Script().CallTool("task", map[string]any{"subagent": "asker", "input": "do it"}).Reply("done")
	res, rec, err := run(t, p, model, func(c *agent.Config, _ *testHost) { c.Park = true })
	if err != nil || len(res.Interrupts) != 1 {
		t.Fatalf("err %v, interrupts %+v; want one", err, res.Interrupts)
	}
	in := res.Interrupts[0]
	if !in.InCall || in.ID != "ask-1" || in.Kind != "question" || in.Type != capabilities.InterruptType || in.CallID == "" || len(in.Path) != 0 {
		t.Fatalf("interrupt = %+v; want the remote's, in the task call, on the run's own path", in)
	}
	if !strings.Contains(types(rec.events), "subagent.start,subagent.plan_update") {
		t.Errorf("events %s; want the remote's plan forwarded", types(rec.events))
	}
	values := res.Values.Clone()
	delete(values, capabilities.InterruptsKey)
	answer := &capabilities.Answer{InterruptID: "ask-1", Status: capabilities.AnswerResolved, Payload: json.RawMessage(`"yes"`)}
	cfg := agent.Config{Route: p, Model: model, ModelName: "script", Host: &testHost{rec: rec}, Park: true,
		Resolved: map[string]capabilities.Resolution{capabilities.ResolutionKey(nil, in.CallID): {Run: true, Answer: answer}}}
	out, err := agent.Run(context.Background(), cfg, res.Messages, values, nil)
	if err != nil || out.Answer != "done" || len(out.Interrupts) != 0 {
		t.Fatalf("resumed: err %v, answer %q, interrupts %+v", err, out.Answer, out.Interrupts)
	}
	if len(remote.runs) != 2 || string(remote.runs[1].Resume) != `{"session":7}` || remote.runs[1].Input != "do it" {
		t.Fatalf("runs = %+v; want the second with what the first kept", remote.runs)
	}
	if _, ok := out.Values[capabilities.SubagentsKey]; ok {
		t.Errorf("the finished call's frame is still kept: %s", out.Values[capabilities.SubagentsKey])
	}
	if errs := rec.toolErrors(); len(errs) != 0 {
		t.Errorf("tool errors %q", errs)
	}
}

// TestRemoteSubagentCannotPark: in a run that cannot park, a remote
// subagent's question fails the task call, and the model goes on.
func TestRemoteSubagentCannotPark(t *testing.T) {
	p := prepare(t, map[string]string{"r/agent.md": "P"})
	remote := &askingRemote{}
	p.RemoteSubagents = map[string]capabilities.RemoteSubagent{"asker": remote}
	model := dawntest.Script().CallTool("task", map[string]any{"subagent": "asker", "input": "do it"}).Reply("went on")
	res, rec, err := run(t, p, model, nil)
	if err != nil || res.Answer != "went on" || len(res.Interrupts) != 0 {
		t.Fatalf("err %v, answer %q, interrupts %+v", err, res.Answer, res.Interrupts)
	}
	if remote.runs[0].Park {
		t.Error("the remote was told the run can park")
	}
	if errs := rec.toolErrors(); len(errs) != 1 || !strings.Contains(errs[0], `subagent "asker" asks a question that cannot be put to a person here`) {
		t.Errorf("tool errors %q", errs)
	}
}

func types(events []stream.Event) string {
	var s []string
	for _, e := range events {
		s = append(s, e.Type)
	}
	return strings.Join(s, ",")
}
