package harness

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// StepKind is the kind of the interrupt a plan with advance: manual parks
// the run on after each finished step.
const StepKind = "step"

// Step decisions, the payload of a resume answer to a step interrupt:
// "continue", "skip", "cancel", or {"decision":"revise","note":"…"}. The
// object form {"decision":…} works for each.
const (
	// StepContinue goes on with the next item.
	StepContinue = "continue"
	// StepSkip marks the next item skipped and goes on with the one after.
	StepSkip = "skip"
	// StepRevise gives the model the person's note and asks it to revise
	// the plan before it goes on.
	StepRevise = "revise"
	// StepCancel cancels the plan and ends the run.
	StepCancel = "cancel"
)

// StepDecisions lists the step decisions, as a step interrupt's detail
// offers them.
var StepDecisions = []string{StepContinue, StepSkip, StepRevise, StepCancel}

const stepDecisionsText = `"continue", "skip", "cancel" or {"decision":"revise","note":"…"}`

// StepDetail is the detail of a step interrupt: what a person needs to
// decide how the plan goes on.
type StepDetail struct {
	Plan StepPlan `json:"plan"`
	// Finished is the item that just finished (the last one, when one
	// change finished several).
	Finished StepItem `json:"finished"`
	// Next is the item the plan goes on with: the one in progress, else
	// the first pending one.
	Next      StepItem `json:"next"`
	Decisions []string `json:"decisions"`
}

// StepPlan identifies the plan a step interrupt is about.
type StepPlan struct {
	Goal string `json:"goal,omitempty"`
	// Revision is the plan's revision number (Plan.RevisionN) when it
	// parked: the version of the plan the person saw.
	Revision int   `json:"revision"`
	State    State `json:"state"`
	Done     int   `json:"done"`
	Total    int   `json:"total"`
}

// StepItem is an item of a step interrupt, with its 1-based position.
type StepItem struct {
	Position int `json:"position"`
	Item
	// Result is the reason the model gave for the change that finished
	// the item (its writeTodos or stepFailed reason), when it gave one.
	Result string `json:"result,omitempty"`
}

// AwaitingStep reports whether p waits for a person's step decision:
// paused after a finished step because advance is manual.
func AwaitingStep(p *Plan) bool { return p.State == Paused && p.PauseReason == PauseManual }

// NewStepDetail describes the step interrupt of after, a plan that has just
// paused for a person after a change to before finished one or more items.
// ok is false when after does not wait for a person or has no next item.
func NewStepDetail(before, after *Plan) (d StepDetail, ok bool) {
	if !AwaitingStep(after) {
		return d, false
	}
	was := map[string]bool{}
	for _, it := range before.Items {
		was[it.ID] = it.Status.Terminal()
	}
	finished := -1
	for i, it := range after.Items {
		if it.Status.Terminal() && !was[it.ID] {
			finished = i
		}
	}
	next := after.nextOpen()
	if finished < 0 || next < 0 {
		return d, false
	}
	done, total := after.Progress()
	d = StepDetail{
		Plan:      StepPlan{Goal: after.Goal, Revision: after.RevisionN, State: after.State, Done: done, Total: total},
		Finished:  StepItem{Position: finished + 1, Item: after.Items[finished], Result: after.modelReason()},
		Next:      StepItem{Position: next + 1, Item: after.Items[next]},
		Decisions: StepDecisions,
	}
	return d, true
}

// nextOpen is the index of the item the plan goes on with: the one in
// progress, else the first pending one, else -1.
func (p *Plan) nextOpen() int {
	if i := p.Current(); i >= 0 {
		return i
	}
	for i, it := range p.Items {
		if it.Status == Pending {
			return i
		}
	}
	return -1
}

// modelReason is the reason of the newest revision, when the model made it.
func (p *Plan) modelReason() string {
	if n := len(p.Revisions); n > 0 {
		// The newest revision is the harness's pause; the change before
		// it finished the step.
		for i := n - 1; i >= 0 && i >= n-2; i-- {
			if r := p.Revisions[i]; r.Source == "model" {
				return r.Reason
			}
		}
	}
	return ""
}

// StepAnswer is a person's parsed answer to a step interrupt.
type StepAnswer struct {
	Decision string
	// Note is the person's note, for revise.
	Note string
}

type stepObject struct {
	Decision string `json:"decision"`
	Note     string `json:"note,omitempty"`
}

// ParseStepAnswer reads the payload of a resume answer to a step
// interrupt. An error names what is wrong and the decisions allowed.
func ParseStepAnswer(payload json.RawMessage) (StepAnswer, error) {
	var word string
	if err := json.Unmarshal(payload, &word); err == nil {
		switch word {
		case StepContinue, StepSkip, StepCancel:
			return StepAnswer{Decision: word}, nil
		case StepRevise:
			return StepAnswer{}, fmt.Errorf(`revise needs the person's note: send {"decision":"revise","note":"…"}`)
		}
		return StepAnswer{}, fmt.Errorf("unknown step decision %q; answer %s", word, stepDecisionsText)
	}
	var obj stepObject
	dec := json.NewDecoder(bytes.NewReader(payload))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&obj); err != nil {
		return StepAnswer{}, fmt.Errorf("a step answer must be %s (%v)", stepDecisionsText, err)
	}
	obj.Note = strings.TrimSpace(obj.Note)
	switch obj.Decision {
	case StepRevise:
		if obj.Note == "" {
			return StepAnswer{}, errors.New(`revise needs a note saying what to change: {"decision":"revise","note":"…"}`)
		}
	case StepContinue, StepSkip, StepCancel:
		if obj.Note != "" {
			return StepAnswer{}, fmt.Errorf(`a note goes only with "decision":"revise", not %q`, obj.Decision)
		}
	default:
		return StepAnswer{}, fmt.Errorf("unknown step decision %q; answer %s", obj.Decision, stepDecisionsText)
	}
	return StepAnswer(obj), nil
}

// DecideStep applies a person's answer to p, a plan waiting for a step
// decision (AwaitingStep), and returns the outcome and the note that tells
// the model. continue and revise resume the plan (revise also records the
// person's note as the reason of a revision); skip resumes it with the next
// item skipped; cancel cancels it and stops the run.
func DecideStep(p *Plan, a StepAnswer) (Outcome, error) {
	if !AwaitingStep(p) {
		return Outcome{}, fmt.Errorf("the plan is not waiting for a step decision (it is %s)", p.State)
	}
	switch a.Decision {
	case StepCancel:
		p.State, p.PauseReason, p.Reason = Cancelled, "", "cancelled by a person after a finished step"
		p.revise("person", "", "cancelled at a step")
		return Outcome{Event: EventCancelled, Stop: true}, nil
	case StepContinue, StepSkip, StepRevise:
	default:
		return Outcome{}, fmt.Errorf("unknown step decision %q; answer %s", a.Decision, stepDecisionsText)
	}
	p.resume("person", "")
	did := "reviewed the finished step"
	if a.Decision == StepSkip {
		if i := p.nextOpen(); i >= 0 {
			it := &p.Items[i]
			it.Status = Skipped
			did = fmt.Sprintf("skipped step %d/%d %q", i+1, len(p.Items), it.Content)
			p.revise("person", "", fmt.Sprintf("step %s skipped", it.ID))
		}
	}
	if a.Decision == StepRevise {
		p.revise("person", a.Note, "revision asked for")
	}
	out := p.settle(0)
	switch i := p.Current(); {
	case a.Decision == StepRevise:
		out.Note = fmt.Sprintf(NotePrefix+" a person reviewed the finished step and asks you to revise the plan before going on: %q. Rewrite the plan with writeTodos (keep the finished items as they are), then go on with it.", a.Note)
	case p.State != Running:
		out.Note = fmt.Sprintf(NotePrefix+" a person %s; the plan is %s, so give your final answer.", did, p.State)
	case i < 0:
		out.Note = fmt.Sprintf(NotePrefix+" a person %s; finish what is left (%s), then answer.", did, strings.Join(p.Missing(), "; "))
	default:
		out.Note = fmt.Sprintf(NotePrefix+" a person %s: go on with step %d/%d %q.", did, i+1, len(p.Items), p.Items[i].Content)
	}
	return out, nil
}
