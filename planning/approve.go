package planning

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/dawn-go/dawn/capabilities"
	"github.com/dawn-go/dawn/harness"
	"github.com/dawn-go/dawn/stream"
	"github.com/dawn-go/dawn/thread"
	"github.com/google/uuid"
)

// PlanKind is the kind of the interrupt that holds the model's first plan
// for a person's approval (plan.md front matter approval: required).
const PlanKind = "plan"

// Plan approval decisions, the payload of a resume answer: "approve",
// "reject", or {"decision":"edit","todos":[…]}.
const (
	Approve = "approve"
	Reject  = "reject"
	Edit    = "edit"
)

const planDecisions = `"approve", "reject" or {"decision":"edit","todos":[{"content":"…","status":"pending"}]}`

// rejectRefusal is the writeTodos result the model gets when a person
// rejects its plan.
const rejectRefusal = "a person rejected this plan, so the plan is cancelled and nothing in it will run; do not call writeTodos again for this request, tell the user the plan was rejected"

// PlanDetail is the detail of a plan interrupt: the proposed plan.
type PlanDetail struct {
	Todos  []Todo `json:"todos"`
	Reason string `json:"reason,omitempty"`
}

// beforeTool holds the model's first writeTodos call of an unapproved plan
// for a person. A call the harness would refuse anyway (bad input, a plan
// not running) is not held: it fails and the model fixes it.
func (e *enforced) beforeTool(s thread.State, call thread.ToolCall, _ thread.State) capabilities.Effect {
	if call.Name == capabilities.ReservedToolName {
		return e.beforeTask(s, call)
	}
	if !e.settings.Approval || call.Name != ToolName {
		return capabilities.Effect{}
	}
	if p := e.current(s); p.Approved {
		return capabilities.Effect{}
	}
	todos, reason, err := e.check(s, call.Input)
	if err != nil {
		return capabilities.Effect{}
	}
	return capabilities.Effect{Interrupt: &capabilities.Interrupt{ID: "plan-" + uuid.NewString(), Kind: PlanKind, Detail: mustJSON(PlanDetail{Todos: todos, Reason: reason})}}
}

// check validates a writeTodos input by writeTodos's own rules, on a copy
// of the plan in s.
func (e *enforced) check(s thread.State, input json.RawMessage) ([]Todo, string, error) {
	todos, reason, err := validate(input, true, e.lim)
	if err != nil {
		return nil, "", err
	}
	if _, err := harness.Replace(e.current(s), e.settings, proposed(todos), reason); err != nil {
		return nil, "", err
	}
	return todos, reason, nil
}

type planEdit struct {
	Decision string          `json:"decision"`
	Todos    json.RawMessage `json:"todos"`
	Reason   string          `json:"reason,omitempty"`
}

// resolve turns a person's answer to one of the harness's interrupts into
// what it does: a plan interrupt (see resolvePlan) or a step interrupt (see
// resolveStep).
func (e *enforced) resolve(s thread.State, in capabilities.Interrupt, _ thread.ToolCall, a capabilities.Answer) (capabilities.Resolution, bool, error) {
	switch in.Kind {
	case PlanKind:
		r, err := e.resolvePlan(s, a)
		return r, true, err
	case harness.StepKind:
		r, err := e.resolveStep(s, a)
		return r, true, err
	}
	return capabilities.Resolution{}, false, nil
}

// resolvePlan turns a person's answer to a plan interrupt into what the
// held writeTodos call does. An edit is checked by writeTodos's rules here,
// so a bad edit is refused before anything changes. A rejection cancels the
// plan as the call is refused.
func (e *enforced) resolvePlan(s thread.State, a capabilities.Answer) (capabilities.Resolution, error) {
	rejected := capabilities.Resolution{Refusal: rejectRefusal}
	if p := e.current(s); p.State.Active() {
		if _, err := harness.Cancel(p, "a person rejected the plan"); err == nil {
			// The model is told by the call's result and answers the user:
			// the run goes on.
			rejected.Update, rejected.Events = update(p), []stream.Event{PlanEvent(p), lifecycleEvent(harness.EventCancelled, p)}
		}
	}
	if a.Status == capabilities.AnswerCancelled {
		return rejected, nil
	}
	var word string
	if err := json.Unmarshal(a.Payload, &word); err == nil {
		switch word {
		case Approve:
			return capabilities.Resolution{Run: true}, nil
		case Reject:
			return rejected, nil
		}
		return capabilities.Resolution{}, fmt.Errorf("unknown plan decision %q; answer %s", word, planDecisions)
	}
	var ed planEdit
	dec := json.NewDecoder(bytes.NewReader(a.Payload))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&ed); err != nil || ed.Decision != Edit {
		return capabilities.Resolution{}, fmt.Errorf("a plan answer must be %s", planDecisions)
	}
	if len(ed.Todos) == 0 {
		return capabilities.Resolution{}, fmt.Errorf(`the edit has no todos; send {"decision":"edit","todos":[…]}`)
	}
	body := map[string]json.RawMessage{"todos": ed.Todos}
	if ed.Reason != "" {
		body["reason"] = mustJSON(ed.Reason)
	}
	input := mustJSON(body)
	if _, _, err := e.check(s, input); err != nil {
		return capabilities.Resolution{}, fmt.Errorf("the edited plan is not valid: %v", err)
	}
	// The held call runs with the person's list: its revision is theirs.
	p := e.current(s)
	p.PersonEdit = true
	return capabilities.Resolution{Run: true, Input: input, Update: update(p)}, nil
}

// stepInterrupt is the interrupt a plan with advance: manual parks the run
// on after a change to prev finished a step, or nil.
func stepInterrupt(prev, next *harness.Plan) *capabilities.Interrupt {
	d, ok := harness.NewStepDetail(prev, next)
	if !ok {
		return nil
	}
	return &capabilities.Interrupt{ID: "step-" + uuid.NewString(), Kind: harness.StepKind, Detail: mustJSON(d)}
}

// resolveStep turns a person's answer to a step interrupt into what the
// run does next (see harness.DecideStep); a cancelled answer is a cancel.
// A plan someone changed while the run was parked (the supervisor
// cancelled it) has nothing left to decide: the run goes on, or ends when
// the plan has.
func (e *enforced) resolveStep(s thread.State, a capabilities.Answer) (capabilities.Resolution, error) {
	ans := harness.StepAnswer{Decision: harness.StepCancel}
	if a.Status != capabilities.AnswerCancelled {
		var err error
		if ans, err = harness.ParseStepAnswer(a.Payload); err != nil {
			return capabilities.Resolution{}, err
		}
	}
	p := e.current(s)
	if !harness.AwaitingStep(p) {
		if !p.State.Active() {
			return capabilities.Resolution{Stop: true, StopReason: StopCancelled}, nil
		}
		return capabilities.Resolution{}, nil
	}
	out, err := harness.DecideStep(p, ans)
	if err != nil {
		return capabilities.Resolution{}, err
	}
	eff := effect(p, out)
	return capabilities.Resolution{
		Update: eff.Update, Events: eff.Events, Stop: eff.Stop, StopReason: eff.StopReason,
		Note: out.Note, NoteMeta: map[string]json.RawMessage{harness.MessageHarness: json.RawMessage("true")},
	}, nil
}

// stepPending reports whether s is parked on a step interrupt.
func stepPending(s thread.State) bool {
	pending, _ := capabilities.PendingInterrupts(s)
	for _, in := range pending {
		if in.Kind == harness.StepKind && len(in.Path) == 0 {
			return true
		}
	}
	return false
}

func proposed(todos []Todo) []harness.Proposed {
	list := make([]harness.Proposed, len(todos))
	for i, t := range todos {
		list[i] = harness.Proposed{Content: t.Content, Status: harness.Status(t.Status), Evidence: t.Evidence}
	}
	return list
}
