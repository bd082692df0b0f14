package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/dawn-go/dawn/capabilities"
	"github.com/dawn-go/dawn/stream"
	"github.com/dawn-go/dawn/thread"
	"github.com/tmc/langchaingo/llms"
)

// taskTool is the reserved "task" tool that hands work to a subagent. The
// loop runs it itself; Call is never used.
type taskTool struct {
	spec capabilities.ToolSpec
}

type taskInput struct {
	Subagent string `json:"subagent"`
	Input    string `json:"input"`
	// Item names the plan item the task carries out; the route's
	// capabilities read it (ToolEvent.Input), the loop does not.
	Item string `json:"item,omitempty"`
}

// TaskToolSpec is the spec of the reserved task tool the loop adds to a
// route with subagents (used by typegen, so generated types match).
func TaskToolSpec(subagents map[string]string) capabilities.ToolSpec {
	return newTaskTool(subagents).spec
}

func newTaskTool(subagents map[string]string) *taskTool {
	names := make([]string, 0, len(subagents))
	for name := range subagents {
		names = append(names, name)
	}
	slices.Sort(names)
	schema, _ := json.Marshal(map[string]any{
		"type": "object",
		"properties": map[string]any{
			"subagent": map[string]any{"type": "string", "enum": names, "description": "which subagent to run"},
			"input":    map[string]any{"type": "string", "description": "the task for the subagent, as a self-contained message"},
			"item":     map[string]any{"type": "string", "description": "optional: the plan item (its id or text) this task carries out, when you keep a plan"},
		},
		"required":             []string{"subagent", "input"},
		"additionalProperties": false,
	})
	return &taskTool{spec: capabilities.ToolSpec{
		Name:        capabilities.ReservedToolName,
		Description: "Hand a self-contained task to a subagent and get its final answer back. Subagents: " + strings.Join(names, ", ") + ".",
		Schema:      schema,
	}}
}

func (t *taskTool) Spec() capabilities.ToolSpec { return t.spec }

func (t *taskTool) Call(context.Context, capabilities.Invocation) (capabilities.Result, error) {
	return capabilities.Result{}, fmt.Errorf("the task tool runs inside the agent loop")
}

// parkedSubagent is the error runSubagent returns when the subagent parked
// for a person's decision: the parent parks with it.
type parkedSubagent struct {
	frame      capabilities.SubagentFrame
	interrupts []capabilities.Interrupt
	// inCall says the interrupts are the task call's own (a remote
	// subagent asked mid-call), not a parked child run's.
	inCall bool
}

func (p *parkedSubagent) Error() string { return "the subagent parked for a person's decision" }

func (l *loop) runSubagent(ctx context.Context, c thread.ToolCall, state thread.State) (capabilities.Result, error) {
	var in taskInput
	dec := json.NewDecoder(strings.NewReader(string(c.Input)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&in); err != nil {
		return capabilities.Result{}, &capabilities.InputError{Tool: c.Name, Msg: `expected {"subagent": name, "input": text, "item"?: plan item}: ` + err.Error()}
	}
	if _, ok := TaskTargets(l.cfg.Route)[in.Subagent]; !ok {
		return capabilities.Result{}, &capabilities.InputError{Tool: c.Name, Msg: fmt.Sprintf("subagent must be one of %s, not %q", strings.Join(l.task.names(), ", "), in.Subagent)}
	}
	if l.cfg.Depth+1 > l.cfg.MaxDepth {
		return capabilities.Result{}, fmt.Errorf("subagent %q not started: nesting would exceed the depth limit of %d", in.Subagent, l.cfg.MaxDepth)
	}
	if sub, ok := l.cfg.Route.RemoteSubagents[in.Subagent]; ok {
		return l.runRemote(ctx, c, state, in, sub)
	}
	child, model, modelName, err := l.host.Subagent(l.cfg.Route, in.Subagent)
	if err != nil {
		return capabilities.Result{}, err
	}
	who := stream.Subagent{CallID: c.ID, Name: in.Subagent, RouteID: child.Route.ID, Depth: l.cfg.Depth + 1}
	cfg := Config{
		Route:          child,
		Params:         l.cfg.Params,
		Model:          model,
		ModelName:      modelName,
		Stream:         l.cfg.Stream,
		Host:           Delegate(l.host, who),
		AppMaxTurns:    l.cfg.AppMaxTurns,
		AppTemperature: l.cfg.AppTemperature,
		Depth:          l.cfg.Depth + 1,
		MaxDepth:       l.cfg.MaxDepth,
		MaxToolOutput:  l.cfg.MaxToolOutput,
		ToolTimeout:    l.cfg.ToolTimeout,
		Park:           l.cfg.Park,
		Models:         l.cfg.Models,
		Outputs:        l.cfg.Outputs,
		ThreadID:       l.cfg.ThreadID,
		RunID:          l.cfg.RunID,
	}
	if l.cfg.Tracer != nil {
		var end func(error)
		ctx, end = l.cfg.Tracer.Subagent(ctx, in.Subagent, child.Route.ID, cfg.Depth)
		cfg.Tracer = l.cfg.Tracer
		defer func() { end(err) }()
	}
	history, values, input := []thread.Message(nil), child.InitialState(), []thread.Message{{Role: thread.RoleUser, Content: in.Input}}
	frames := map[string]capabilities.SubagentFrame{}
	if _, err := state.Decode(capabilities.SubagentsKey, &frames); err != nil {
		return capabilities.Result{}, fmt.Errorf("the saved %s value cannot be read: %w", capabilities.SubagentsKey, err)
	}
	if frame, ok := frames[c.ID]; ok {
		// The subagent parked with this call: it goes on where it stopped,
		// with the answers addressed to it.
		history, values, input = frame.Messages, frame.Values.Clone(), nil
		delete(values, capabilities.InterruptsKey)
		cfg.Resolved = map[string]capabilities.Resolution{}
		for key, r := range l.cfg.Resolved {
			if task, rest, ok := capabilities.SplitResolutionKey(key); ok && task == c.ID {
				cfg.Resolved[rest] = r
			}
		}
	}
	// Dawn's subagent.start and subagent.end frame the child's events; a
	// child that parks or is cancelled has no end, as in Dawn.
	l.emit(stream.SubagentStart(who))
	res, err := Run(ctx, cfg, history, values, input)
	if err != nil {
		if ctx.Err() == nil {
			l.emit(stream.SubagentEnd(who, "", err))
		}
		return capabilities.Result{}, fmt.Errorf("subagent %q failed: %w", in.Subagent, err)
	}
	if len(res.Interrupts) > 0 {
		return capabilities.Result{}, &parkedSubagent{
			frame:      capabilities.SubagentFrame{Subagent: in.Subagent, Messages: res.Messages, Values: res.Values},
			interrupts: res.Interrupts,
		}
	}
	l.emit(stream.SubagentEnd(who, res.Answer, nil))
	out, _ := json.Marshal(res.Answer)
	return capabilities.Result{Output: out, Delegation: &capabilities.Delegation{Subagent: in.Subagent, RouteID: child.Route.ID, Values: res.Values, Answer: res.Answer}}, nil
}

func (t *taskTool) names() []string {
	var s struct {
		Properties struct {
			Subagent struct {
				Enum []string `json:"enum"`
			} `json:"subagent"`
		} `json:"properties"`
	}
	_ = json.Unmarshal(t.spec.Schema, &s)
	return s.Properties.Subagent.Enum
}

// Delegate returns the Host of a run that parent delegates work to, such
// as a subagent: its events reach parent forwarded as who
// (stream.Forward), it saves nothing (the delegating run keeps what it
// needs), takes no signal and lends no steps, and its own subagents, the
// app's values and the key-value store come from parent.
func Delegate(parent Host, who stream.Subagent) Host {
	return delegated{parent: parent, who: who}
}

type delegated struct {
	parent Host
	who    stream.Subagent
}

func (d delegated) Emit(e stream.Event) { d.parent.Emit(stream.Forward(e, d.who)) }

func (delegated) Checkpoint(context.Context, []thread.Message, thread.State) error { return nil }

func (delegated) Signal() string { return "" }

func (d delegated) Subagent(parent *capabilities.Prepared, name string) (*capabilities.Prepared, llms.Model, string, error) {
	return d.parent.Subagent(parent, name)
}

func (d delegated) App() thread.State { return d.parent.App() }

func (delegated) Steps() capabilities.StepRunner { return nil }

func (d delegated) Items() capabilities.ItemStore { return d.parent.Items() }
