package planning

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/dawn-go/dawn/capabilities"
	"github.com/dawn-go/dawn/harness"
	"github.com/dawn-go/dawn/plandiff"
	"github.com/dawn-go/dawn/stream"
	"github.com/dawn-go/dawn/thread"
)

// Names used by a route whose plan the harness owns (enforce: true).
const (
	// PlanField is the state field holding the harness-owned plan.
	PlanField = harness.PlanField
	// StepFailedTool reports that the step in progress failed.
	StepFailedTool = "stepFailed"
	// VerifyTool verifies one postcondition with evidence.
	VerifyTool = "verifyPostcondition"
	// StopPaused is the reason a run stops when the plan pauses.
	StopPaused = "plan_paused"
	// StopCancelled is the reason a run stops when the plan is cancelled.
	StopCancelled = "plan_cancelled"
)

// enforced is the contribution of a plan.md with enforce: true.
type enforced struct {
	settings  harness.Settings
	seed      []harness.Seed
	lim       limits
	verifiers map[string]harness.VerifierFunc
}

func enforcedContribution(path string, f File, lim limits, verifiers map[string]harness.VerifierFunc) *capabilities.Contribution {
	e := &enforced{settings: f.Settings, lim: lim, verifiers: verifiers}
	for i, t := range f.Seed {
		sd := harness.Seed{Content: t.Content, Completed: t.Status == Completed}
		if i < len(f.Verify) {
			sd.Verify = f.Verify[i]
		}
		e.seed = append(e.seed, sd)
	}
	draft := harness.New(e.settings, e.seed)
	return &capabilities.Contribution{
		Tools: e.tools(),
		Fields: []capabilities.Field{
			{Name: StateField, Type: "array", Schema: mustJSON(enforcedListSchema()), Default: mustJSON(todosOf(draft)), Reducer: capabilities.Replace, Source: path},
			{Name: PlanField, Type: "object", Schema: mustJSON(map[string]any{"type": "object", "description": "The harness-owned plan: lifecycle state, items, postconditions and revisions."}), Default: mustJSON(draft), Reducer: capabilities.Replace, Source: path},
		},
		Validate:     e.validate,
		Prompts:      []capabilities.Prompt{e.rules},
		StatePrompts: []capabilities.Prompt{e.state},
		Transformers: []capabilities.Transformer{e.transform},
		Hooks: &capabilities.Hooks{
			Start:      e.start,
			BeforeTool: e.beforeTool,
			Resolve:    e.resolve,
			AfterTool:  e.afterTool,
			Final:      e.final,
			Signal:     e.signal,
		},
		Details: &EnforcedDetails{
			Seed: f.Seed, Enforce: true, Goal: f.Settings.Goal, Postconditions: f.Settings.Postconditions,
			Advance: f.Settings.Advance, Mode: modeOf(f.Settings), Threshold: f.Settings.Threshold, settings: f.Settings,
		},
	}
}

// tools are the harness's tools: verifyPostcondition only for a plan with
// postconditions, since every tool definition goes with every model request.
//
// A plan with verifiers declares writeTodos and verifyPostcondition
// idempotent (unless the plan waits for approval): a call is a claim the
// harness checks against the state it was made on, so a claim a restart
// cut off before its verifier ran is run, and verified, once after the
// restart (with runs: {continue_orphans: true}).
func (e *enforced) tools() []capabilities.Tool {
	again := e.hasVerifiers() && !e.settings.Approval
	tools := []capabilities.Tool{
		toolFunc{spec: capabilities.ToolSpec{Name: ToolName, Description: enforcedToolDescription, Schema: schemaFor(e.settings.MaxItems, true), Idempotent: again}, call: e.writeTodos},
		toolFunc{spec: capabilities.ToolSpec{Name: StepFailedTool, Description: stepFailedDescription, Schema: mustJSON(withoutDescriptions(stepFailedSchema()))}, call: e.stepFailed},
	}
	if len(e.settings.Postconditions) > 0 {
		tools = append(tools, toolFunc{spec: capabilities.ToolSpec{Name: VerifyTool, Description: verifyDescription, Schema: mustJSON(verifySchema()), Idempotent: again}, call: e.verify})
	}
	return tools
}

// EnforcedDetails describes a route whose plan the harness owns, for
// `dawn routes --json`, and carries its settings for the runtime.
type EnforcedDetails struct {
	Seed           []Todo   `json:"seed"`
	Enforce        bool     `json:"enforce"`
	Goal           string   `json:"goal,omitempty"`
	Postconditions []string `json:"postconditions,omitempty"`
	Advance        string   `json:"advance"`
	Mode           string   `json:"mode,omitempty"`
	Threshold      int      `json:"threshold,omitempty"`
	settings       harness.Settings
}

// SettingsOf returns the harness settings of a prepared route whose plan the
// harness owns; ok is false for any other route.
func SettingsOf(p *capabilities.Prepared) (harness.Settings, bool) {
	for _, c := range p.Capabilities {
		if d, ok := c.Details.(*EnforcedDetails); ok && c.Name == Name {
			return d.settings, true
		}
	}
	return harness.Settings{}, false
}

// DecodePlan reads the harness-owned plan from a thread's state; nil when
// the state has none.
func DecodePlan(s thread.State) (*harness.Plan, error) {
	var p harness.Plan
	ok, err := s.Decode(PlanField, &p)
	if !ok || err != nil {
		return nil, err
	}
	return &p, nil
}

// PlanUpdate is the data of a plan_update event on a harness-owned route:
// Dawn's todos, each with its id, status, evidence and attempts, plus the
// lifecycle fields. Clients that read only todos keep working.
type PlanUpdate struct {
	Todos          []harness.Item          `json:"todos"`
	State          harness.State           `json:"state"`
	Goal           string                  `json:"goal,omitempty"`
	Current        int                     `json:"current"`
	Postconditions []harness.Postcondition `json:"postconditions"`
	Advance        string                  `json:"advance"`
	BudgetLeft     int                     `json:"budget_left"`
	PauseReason    string                  `json:"pause_reason,omitempty"`
	Reason         string                  `json:"reason,omitempty"`
	// Revised is the newest revision that changed the list, with its diff;
	// Dropped every item the plan removed before it was finished.
	Revised *harness.Revision `json:"revised,omitempty"`
	Dropped []harness.Removed `json:"dropped,omitempty"`
}

// PlanEvent is the plan_update event for p.
func PlanEvent(p *harness.Plan) stream.Event {
	return stream.New(EventType, PlanUpdate{
		Todos: p.Items, State: p.State, Goal: p.Goal, Current: p.Current(), Postconditions: p.Postconditions,
		Advance: p.Advance, BudgetLeft: p.BudgetLeft(), PauseReason: p.PauseReason, Reason: p.Reason,
		Revised: lastRevised(p), Dropped: p.Dropped,
	})
}

// lastRevised is the newest revision of p that changed the list, or nil.
func lastRevised(p *harness.Plan) *harness.Revision {
	for i := len(p.Revisions) - 1; i >= 0; i-- {
		if p.Revisions[i].Diff != nil {
			return &p.Revisions[i]
		}
	}
	return nil
}

// revisedEvents are the plan_revised events of the revisions next has and
// prev had not that changed the list itself (items added, removed,
// reworded, reordered or moved back), each with its diff. Every revision,
// a status change included, is kept in the plan and served by
// GET /threads/:id/plan/revisions.
func revisedEvents(prev, next *harness.Plan) []stream.Event {
	var out []stream.Event
	for _, r := range (&plandiff.Log{Revisions: next.Revisions}).Since(prev.RevisionN) {
		out = append(out, stream.New(harness.EventRevised, r))
	}
	return out
}

// lifecycleEvent is plan_paused, plan_done, plan_failed or plan_cancelled.
func lifecycleEvent(typ string, p *harness.Plan) stream.Event {
	done, total := p.Progress()
	return stream.New(typ, map[string]any{"state": p.State, "goal": p.Goal, "pause_reason": p.PauseReason, "reason": p.Reason, "done": done, "total": total})
}

// todosOf is the Dawn-shaped todo list of a plan.
func todosOf(p *harness.Plan) []Todo {
	todos := make([]Todo, len(p.Items))
	for i, it := range p.Items {
		todos[i] = Todo{Content: it.Content, Status: Status(it.Status), Evidence: it.Evidence}
	}
	return todos
}

// PlanState is the state change for a changed plan: the plan and its
// Dawn-shaped todos.
func PlanState(p *harness.Plan) thread.State { return update(p) }

// update is the state change for a changed plan: the plan and its todos.
func update(p *harness.Plan) thread.State {
	return thread.State{PlanField: mustJSON(p), StateField: mustJSON(todosOf(p))}
}

// effect turns a harness outcome on p into a hook effect: the state update,
// plan_update and any lifecycle event, and a stop when the plan paused or
// ended the run.
func effect(p *harness.Plan, out harness.Outcome) capabilities.Effect {
	eff := capabilities.Effect{Update: update(p), Events: []stream.Event{PlanEvent(p)}, Note: out.Note, Reject: out.Reject}
	if out.Event != "" {
		eff.Events = append(eff.Events, lifecycleEvent(out.Event, p))
	}
	if out.Stop {
		eff.Stop, eff.StopReason = true, StopPaused
		if p.State == harness.Cancelled {
			eff.StopReason = StopCancelled
		}
	}
	return eff
}

// current decodes the plan in s, or a fresh draft when there is none.
func (e *enforced) current(s thread.State) *harness.Plan {
	p, err := DecodePlan(s)
	if err != nil || p == nil {
		return harness.New(e.settings, e.seed)
	}
	return p
}

func (e *enforced) start(s thread.State, input []thread.Message) capabilities.Effect {
	p, _ := DecodePlan(s)
	user := false
	for _, m := range input {
		user = user || m.Role == thread.RoleUser
	}
	p, out := harness.Start(p, e.settings, e.seed, user)
	return effect(p, out)
}

func (e *enforced) afterTool(before, after thread.State, ev capabilities.ToolEvent) capabilities.Effect {
	if ev.Name == capabilities.ReservedToolName && ev.Err == nil && ev.Delegation != nil {
		return e.delegated(after, ev)
	}
	switch ev.Name {
	case ToolName, StepFailedTool, VerifyTool:
		if ev.Err != nil {
			return capabilities.Effect{}
		}
		prev, next := e.current(before), e.current(after)
		out := harness.Outcome{}
		if next.State != prev.State {
			switch next.State {
			case harness.Paused:
				out = harness.Outcome{Event: harness.EventPaused, Stop: true}
			case harness.Done:
				out.Event = harness.EventDone
			case harness.Failed:
				out.Event = harness.EventFailed
			}
		}
		revised := revisedEvents(prev, next)
		if out.Event == "" {
			return capabilities.Effect{Events: revised}
		}
		eff := effect(next, out)
		eff.Update = nil
		eff.Events = append(revised, eff.Events[1:]...) // the transformer already sent plan_update
		// A manual plan waits for a person after each finished step: the
		// run parks on a step interrupt (or, where it cannot park, stops
		// with the plan paused).
		eff.Interrupt = stepInterrupt(prev, next)
		return eff
	}
	if ev.Err == nil {
		return capabilities.Effect{}
	}
	p := e.current(after)
	out := harness.ToolFailed(p, e.settings)
	if out.Note == "" {
		return capabilities.Effect{}
	}
	return effect(p, out)
}

func (e *enforced) final(s thread.State, _ string) capabilities.Effect {
	p := e.current(s)
	out := harness.Final(p, e.settings)
	eff := effect(p, out)
	if out.Reject {
		eff.NoteMeta = map[string]json.RawMessage{harness.MessageHarness: json.RawMessage("true")}
	} else {
		eff.AnswerMeta = map[string]json.RawMessage{harness.MessagePlan: mustJSON(p)}
	}
	return eff
}

func (e *enforced) signal(s thread.State, sig string) capabilities.Effect {
	p := e.current(s)
	var out harness.Outcome
	var err error
	switch sig {
	case "pause":
		out, err = harness.Pause(p)
	case "cancel":
		out, err = harness.Cancel(p, "cancelled by the supervisor")
	case "resume":
		if stepPending(s) {
			// The plan waits for a person's step decision, given on
			// POST /threads/:id/resume; the supervisor cannot take it.
			return capabilities.Effect{}
		}
		err = harness.Resume(p)
	default:
		err = fmt.Errorf("unknown signal %q", sig)
	}
	if err != nil {
		return capabilities.Effect{Stop: true, StopReason: sig}
	}
	return effect(p, out)
}

// rules is the system prompt's planning section: how to keep the plan.
func (e *enforced) rules(thread.State) string { return harness.Rules(e.settings) }

// state is the plan's live state, for the per-turn block after the
// conversation.
func (e *enforced) state(s thread.State) string {
	p := e.current(s)
	if e.settings.Compact {
		return harness.CompactState(p, e.settings)
	}
	return harness.FullState(p)
}

// transform sends plan_update after a successful harness tool call.
func (e *enforced) transform(ev capabilities.ToolEvent) []stream.Event {
	if ev.Err != nil || ev.Update == nil {
		return nil
	}
	switch ev.Name {
	case ToolName, StepFailedTool, VerifyTool:
		if p, err := DecodePlan(ev.Update); err == nil && p != nil {
			return []stream.Event{PlanEvent(p)}
		}
	}
	return nil
}

func (e *enforced) writeTodos(ctx context.Context, inv capabilities.Invocation) (capabilities.Result, error) {
	todos, reason, err := validate(inv.Input, true, e.lim)
	if err != nil {
		return capabilities.Result{}, &capabilities.InputError{Tool: ToolName, Msg: err.Error()}
	}
	p := e.current(inv.State)
	list := proposed(todos)
	if p.State == harness.Running {
		e.runClaims(ctx, inv, p, list)
	}
	source := plandiff.SourceModel
	if p.PersonEdit {
		source, p.PersonEdit = plandiff.SourcePerson, false
	}
	out, err := harness.ReplaceBy(p, e.settings, list, reason, source)
	if err != nil {
		return capabilities.Result{}, err
	}
	// With approval: required, beforeTool holds every writeTodos call
	// of an unapproved plan that would get here, so this one was
	// approved (or edited) by a person.
	if e.settings.Approval {
		p.Approved = true
	}
	if e.settings.FanOut && inv.Steps != nil && p.State == harness.Running {
		return e.fanOut(ctx, inv.Steps, p)
	}
	return result(p, out.Note)
}

type stepFailedInput struct {
	Next   string `json:"next"`
	Reason string `json:"reason"`
}

func (e *enforced) stepFailed(_ context.Context, inv capabilities.Invocation) (capabilities.Result, error) {
	var in stepFailedInput
	if err := strictDecode(inv.Input, &in); err != nil {
		return capabilities.Result{}, &capabilities.InputError{Tool: StepFailedTool, Msg: `expected {"next":"retry|skip|abort|revise","reason":"…"}: ` + err.Error()}
	}
	p := e.current(inv.State)
	out, err := harness.StepFailed(p, e.settings, in.Next, in.Reason)
	if err != nil {
		return capabilities.Result{}, err
	}
	return result(p, out.Note)
}

type verifyInput struct {
	Index    *int   `json:"index"`
	Evidence string `json:"evidence"`
}

func (e *enforced) verify(ctx context.Context, inv capabilities.Invocation) (capabilities.Result, error) {
	var in verifyInput
	if err := strictDecode(inv.Input, &in); err != nil || in.Index == nil {
		msg := "index is required"
		if err != nil {
			msg = err.Error()
		}
		return capabilities.Result{}, &capabilities.InputError{Tool: VerifyTool, Msg: `expected {"index":0,"evidence":"…"}: ` + msg}
	}
	p := e.current(inv.State)
	var verdict *harness.Verification
	if i := *in.Index; p.State == harness.Running && i >= 0 && i < len(p.Postconditions) && p.Postconditions[i].Verify != "" {
		verdict = e.runCheck(ctx, inv, p.Postconditions[i].Verify, p.Postconditions[i].Content, in.Evidence)
	}
	out, err := harness.VerifyChecked(p, e.settings, *in.Index, in.Evidence, verdict)
	if err != nil {
		return capabilities.Result{}, err
	}
	return result(p, out.Note)
}

// result is a harness tool's result: the plan's state and progress for the
// model, and the plan and todos as the state update. The list itself is not
// repeated: the next turn's prompt section shows it, and plan_update carries
// it to clients.
func result(p *harness.Plan, note string) (capabilities.Result, error) {
	done, total := p.Progress()
	out := map[string]any{"state": p.State, "done": done, "total": total}
	if note != "" {
		out["note"] = note
	}
	if p.PauseReason != "" {
		out["pause_reason"] = p.PauseReason
	}
	return capabilities.Result{Output: mustJSON(out), Update: update(p)}, nil
}

func strictDecode(raw json.RawMessage, v any) error {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if dec.More() {
		return errors.New("trailing data after the JSON object")
	}
	return nil
}

// toolFunc adapts a function to capabilities.Tool.
type toolFunc struct {
	spec capabilities.ToolSpec
	call func(context.Context, capabilities.Invocation) (capabilities.Result, error)
}

func (t toolFunc) Spec() capabilities.ToolSpec { return t.spec }

func (t toolFunc) Call(ctx context.Context, inv capabilities.Invocation) (capabilities.Result, error) {
	return t.call(ctx, inv)
}
