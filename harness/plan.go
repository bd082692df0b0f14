package harness

import (
	"fmt"

	"github.com/dawn-go/dawn/plandiff"
	"github.com/dawn-go/dawn/todo"
)

// State is a plan's lifecycle state.
type State string

// Lifecycle states. Draft, Running and Paused are active; the others are
// terminal.
const (
	Draft     State = "draft"
	Running   State = "running"
	Paused    State = "paused"
	Done      State = "done"
	Failed    State = "failed"
	Cancelled State = "cancelled"
)

// Active reports whether the plan is still being worked on or can resume.
func (s State) Active() bool { return s == Draft || s == Running || s == Paused }

// Status is an item's status: the one status type of package todo.
// Pending, InProgress and Completed are Dawn's; failed and skipped are the
// harness's additions.
type Status = todo.Status

// Item statuses.
const (
	Pending    = todo.Pending
	InProgress = todo.InProgress
	Completed  = todo.Completed
	ItemFailed = todo.Failed
	Skipped    = todo.Skipped
)

// Pause reasons.
const (
	PauseSupervisor = "supervisor" // POST /threads/:id/plan/pause
	PauseBudget     = "budget"     // the auto-advance budget is spent
	PauseManual     = "manual"     // advance: manual, after each finished item, until a person decides (see DecideStep)
	PauseRetryCap   = "retry_cap"  // a step failed as often as the retry cap allows
	PauseRevise     = "revise"     // the model asked for the plan to be rewritten
)

// Item is one step of a plan.
type Item struct {
	ID       string `json:"id"`
	Content  string `json:"content"`
	Status   Status `json:"status"`
	Evidence string `json:"evidence,omitempty"`
	Attempts int    `json:"attempts"`
	// Verify is the item's verifier line from plan.md (see ParseCheck):
	// the harness runs it when the model marks the item completed.
	Verify string `json:"verify,omitempty"`
	// Verification is the verifier's last outcome.
	Verification *Verification `json:"verification,omitempty"`
	// Children are the plans of the subagents that carried the item out
	// (task calls naming it, or made while it was in progress).
	Children []Child `json:"children,omitempty"`
}

// Postcondition is a "Done when" check the model must verify with evidence
// before its final answer is accepted.
type Postcondition struct {
	Content  string `json:"content"`
	Verified bool   `json:"verified"`
	Evidence string `json:"evidence,omitempty"`
	// Verify, Verification and Attempts are as on Item: the harness runs
	// the verifier on verifyPostcondition, and failed runs count toward
	// the retry cap.
	Verify       string        `json:"verify,omitempty"`
	Verification *Verification `json:"verification,omitempty"`
	Attempts     int           `json:"attempts,omitempty"`
}

// Revision records one change to a plan and why it was made (package
// plandiff's, which plain plan.md planning shares).
type Revision = plandiff.Revision

// MaxRevisions bounds the revisions a plan keeps in the thread's state:
// past it the oldest go, counted in Plan.Trimmed (N keeps counting), while
// the items they dropped stay in Plan.Dropped.
const MaxRevisions = plandiff.MaxRevisions

// Plan is a thread's harness-owned plan. It lives in the thread's state, so
// every change is saved with the step that made it.
type Plan struct {
	State          State           `json:"state"`
	Goal           string          `json:"goal,omitempty"`
	Items          []Item          `json:"items"`
	Postconditions []Postcondition `json:"postconditions"`
	Revisions      []Revision      `json:"revisions"`
	Advance        string          `json:"advance"`
	// Budget is how many items may finish in a row without the user; zero
	// when advance is manual.
	Budget int `json:"budget"`
	// AutoSteps counts items finished since the user last spoke.
	AutoSteps   int    `json:"auto_steps"`
	PauseReason string `json:"pause_reason,omitempty"`
	// Reason says why the plan failed or was cancelled.
	Reason string `json:"reason,omitempty"`
	// Corrections counts final answers the gate refused in this run.
	Corrections int `json:"corrections"`
	NextID      int `json:"next_id"`
	// Approved is set once a person approved (or edited) the plan, when
	// plan.md says approval: required; such a plan is not asked again.
	Approved bool `json:"approved,omitempty"`
	// PersonEdit is set while a person's edit of the proposed plan is on
	// its way to the held writeTodos call, so that the revision it makes
	// is recorded as the person's (see ReplaceBy).
	PersonEdit bool `json:"person_edit,omitempty"`
	RevisionN  int  `json:"revision_n"`
	// Trimmed counts the oldest revisions no longer kept (MaxRevisions).
	Trimmed int `json:"trimmed_revisions,omitempty"`
	// Dropped lists every item a revision removed before it was finished,
	// with the revision that removed it.
	Dropped []Removed `json:"dropped,omitempty"`
}

// BudgetLeft is how many more items may finish before the plan pauses for
// the user.
func (p *Plan) BudgetLeft() int {
	if p.Advance == AdvanceManual {
		return 0
	}
	return max(p.Budget-p.AutoSteps, 0)
}

// Current returns the index of the item in progress, or -1.
func (p *Plan) Current() int {
	for i, it := range p.Items {
		if it.Status == InProgress {
			return i
		}
	}
	return -1
}

// Progress counts terminal items.
func (p *Plan) Progress() (done, total int) {
	for _, it := range p.Items {
		if it.Status.Terminal() {
			done++
		}
	}
	return done, len(p.Items)
}

// Missing lists what stands between the plan and a final answer: items not
// terminal and postconditions not verified, in words for the model.
func (p *Plan) Missing() []string {
	var out []string
	for i, it := range p.Items {
		if !it.Status.Terminal() {
			out = append(out, fmt.Sprintf("item %d %q is %s%s", i+1, it.Content, it.Status, failedCheck(it.Verification)))
		}
	}
	for i, pc := range p.Postconditions {
		if !pc.Verified {
			out = append(out, fmt.Sprintf("postcondition %d %q is not verified%s", i, pc.Content, failedCheck(pc.Verification)))
		}
	}
	return out
}

// failedCheck is ", its verifier failed: …" for a failed verification,
// else "".
func failedCheck(v *Verification) string {
	if v == nil || v.Passed {
		return ""
	}
	return fmt.Sprintf(" (%s: %s)", v.Summary(), oneLine(v.Output))
}

func (p *Plan) newID() string {
	p.NextID++
	return fmt.Sprintf("s%04d", p.NextID)
}

func (p *Plan) revise(source, reason, change string) {
	p.reviseDiff(source, reason, change, nil)
}

// LatestReason is the reason of the newest revision that gave one.
func (p *Plan) LatestReason() string {
	for i := len(p.Revisions) - 1; i >= 0; i-- {
		if p.Revisions[i].Reason != "" {
			return p.Revisions[i].Reason
		}
	}
	return ""
}
