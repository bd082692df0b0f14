package planfirst

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"github.com/dawn-go/dawn/capabilities"
	"github.com/dawn-go/dawn/harness"
	"github.com/dawn-go/dawn/planning"
	"github.com/dawn-go/dawn/stream"
	"github.com/dawn-go/dawn/thread"
	"github.com/google/uuid"
)

// PlanKind is the kind of the interrupt a plan-first plan waits on, as a
// harness plan's first writeTodos waits (planning.PlanKind); its detail is
// a PlanDetail.
const PlanKind = planning.PlanKind

// PlanDetail is the detail of a plan-first plan interrupt: the proposed
// plan (goal, steps with their deps and targets) and the order its steps
// start in. It is also the preview.
type PlanDetail = PreviewJSON

// Decisions on a plan-first plan, the payload of a resume answer:
// "approve", "reject", or {"decision":"edit","plan":{…}}.
const (
	Approve = planning.Approve
	Reject  = planning.Reject
	Edit    = planning.Edit
)

const planDecisions = `"approve", "reject" or {"decision":"edit","plan":{"goal":"…","steps":[{"id":"E1","task":"…"}]}}`

// StopRejected is the stop reason of a run whose plan a person rejected;
// EventPlanRejected is sent then, with the plan and the interrupt's id.
const (
	StopRejected      = "plan_rejected"
	EventPlanRejected = "plan_rejected"
)

// parked is what a plan-first run parks with (capabilities.StrategyPark's
// data): the plan the person is asked about and, when it parked after a
// step (advance: manual), the results of the steps that ended.
type parked struct {
	Plan *Plan        `json:"plan"`
	Done []StepResult `json:"done,omitempty"`
}

// park ends the planning half of a run: the plan waits for a person's
// decision under a plan interrupt. A preview also says so on the stream
// (plan_preview, with the interrupt's id) and answers with the preview.
func park(host capabilities.RunHost, out capabilities.StrategyResult, plan *Plan, preview bool) capabilities.StrategyResult {
	data := PreviewData(plan)
	in := capabilities.Interrupt{ID: "plan-" + uuid.NewString(), Kind: PlanKind, Detail: mustJSON(data)}
	if preview {
		host.Emit(stream.New(EventPlanPreview, map[string]any{"plan": plan, "order": data.Order, "text": Preview(plan), "interruptId": in.ID}))
		out.Output = mustJSON(map[string]any{"preview": map[string]any{"plan": plan, "order": data.Order, "interruptId": in.ID}})
	}
	out.Interrupts = []capabilities.Interrupt{in}
	out.Park = mustJSON(parked{Plan: plan})
	return out
}

type planEdit struct {
	Decision string          `json:"decision"`
	Plan     json.RawMessage `json:"plan"`
}

// Resume takes a person's answer to a parked plan
// (capabilities.StrategyResumer): "approve" runs exactly the parked plan,
// an edit runs the plan it carries once plan-first's rules accept it,
// "reject" (or a cancelled answer) ends the run with the plan recorded as
// rejected. The planner is not asked again.
func (m marker) Resume(r capabilities.ParkedRun) (capabilities.StrategyRun, error) {
	var saved parked
	if err := json.Unmarshal(r.Data, &saved); err != nil || saved.Plan == nil {
		return nil, errors.New("the parked plan-first run holds no plan to resume; resume it with status \"cancelled\"")
	}
	if len(r.Answers) != 1 || len(r.Interrupts) != 1 || (r.Interrupts[0].Kind != PlanKind && r.Interrupts[0].Kind != StepKind) {
		return nil, fmt.Errorf("a plan-first run parks on one %q or %q interrupt; answer it alone", PlanKind, StepKind)
	}
	if r.Interrupts[0].Kind == StepKind {
		return m.resumeStep(r, saved)
	}
	a, id := r.Answers[0], r.Interrupts[0].ID
	at := fmt.Sprintf("resume[0] (interrupt %s)", id)
	plan, decision, err := decide(a, saved.Plan, r.Route, r.Routes)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", at, err)
	}
	p, parallel := r.Route, m.parallelFor(r.Route)
	return func(ctx context.Context, host capabilities.RunHost, history []thread.Message, values thread.State, _ []thread.Message) (capabilities.StrategyResult, error) {
		out := capabilities.StrategyResult{Messages: slices.Clip(history), Values: values}
		if decision == Reject {
			return reject(ctx, host, out, plan, id)
		}
		res, err := execute(ctx, host, p, parallel, plan, out, nil)
		if rec, ok := res.Record.(map[string]any); ok {
			rec["decision"] = decision
		}
		return res, err
	}, nil
}

// decide reads answer a to the plan interrupt: the plan to run and the
// decision. An edited plan is validated by the rules a planner's plan
// meets, with the route's subagents and the app's routes as targets.
func decide(a capabilities.Answer, plan *Plan, p *capabilities.Prepared, routes []string) (*Plan, string, error) {
	if a.Status == capabilities.AnswerCancelled {
		return plan, Reject, nil
	}
	var word string
	if err := json.Unmarshal(a.Payload, &word); err == nil {
		switch word {
		case Approve, Reject:
			return plan, word, nil
		}
		return nil, "", fmt.Errorf("unknown plan decision %q; answer %s", word, planDecisions)
	}
	var ed planEdit
	dec := json.NewDecoder(bytes.NewReader(a.Payload))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&ed); err != nil || ed.Decision != Edit {
		return nil, "", fmt.Errorf("a plan answer must be %s", planDecisions)
	}
	if len(ed.Plan) == 0 || string(ed.Plan) == "null" {
		return nil, "", fmt.Errorf(`the edit has no plan; send {"decision":"edit","plan":{"steps":[…]}}`)
	}
	edited := &Plan{}
	pd := json.NewDecoder(bytes.NewReader(ed.Plan))
	pd.DisallowUnknownFields()
	if err := pd.Decode(edited); err != nil {
		return nil, "", fmt.Errorf("the edited plan must be {\"goal\":\"…\",\"steps\":[{\"id\",\"task\",\"deps\",\"route\",\"subagent\"}]}: %v", err)
	}
	var subagents []string
	for name := range p.Route.Subagents {
		subagents = append(subagents, name)
	}
	slices.Sort(subagents)
	err := Validate(edited)
	if err == nil {
		err = CheckTargets(edited, routes, subagents)
	}
	if err != nil {
		return nil, "", fmt.Errorf("the edited %v", err)
	}
	return edited, Edit, nil
}

// reject ends the run without running a step: the conversation records
// that a person rejected the plan, and so does the run's record.
func reject(ctx context.Context, host capabilities.RunHost, out capabilities.StrategyResult, plan *Plan, id string) (capabilities.StrategyResult, error) {
	host.Emit(stream.New(EventPlanRejected, map[string]any{"plan": plan, "interruptId": id}))
	msg := harness.Mark(thread.Message{Role: thread.RoleAssistant, Content: "A person rejected this plan, so none of its steps ran:\n" + plan.JSON()})
	out.Messages = append(out.Messages, msg)
	out.Stop = StopRejected
	out.Record = map[string]any{"decision": Reject, "rejected": true, "plan": plan}
	return out, host.Save(ctx, []thread.Message{msg}, out.Values)
}
