package harness

import (
	"errors"
	"fmt"
	"slices"
	"strings"
)

// Lifecycle events a change can raise, besides plan_update.
const (
	EventPaused    = "plan_paused"
	EventDone      = "plan_done"
	EventFailed    = "plan_failed"
	EventCancelled = "plan_cancelled"
)

// Outcome is what a change did besides editing the plan.
type Outcome struct {
	// Event is a lifecycle event to emit (EventPaused, ...), or "".
	Event string
	// Stop says the run must end after this step, cleanly.
	Stop bool
	// Note is text for the model: a nudge appended to a tool error, or the
	// gate's correction.
	Note string
	// Reject says the gate refused a final answer.
	Reject bool
}

// Seed is one item of plan.md's checklist.
type Seed struct {
	Content   string
	Completed bool
	// Verify is the item's verifier line, if any.
	Verify string
}

// New makes a draft plan from the route's seed and settings.
func New(s Settings, seed []Seed) *Plan {
	p := &Plan{State: Draft, Goal: s.Goal, Items: []Item{}, Postconditions: []Postcondition{}, Revisions: []Revision{}, Advance: s.Advance, Budget: s.Budget}
	for _, it := range seed {
		st := Pending
		if it.Completed {
			st = Completed
		}
		p.Items = append(p.Items, Item{ID: p.newID(), Content: it.Content, Status: st, Verify: it.Verify})
	}
	for i, c := range s.Postconditions {
		pc := Postcondition{Content: c}
		if i < len(s.PostVerify) {
			pc.Verify = s.PostVerify[i]
		}
		p.Postconditions = append(p.Postconditions, pc)
	}
	if p.Advance == AdvanceManual {
		p.Budget = 0
	}
	p.revise("harness", "", fmt.Sprintf("drafted from plan.md with %d items", len(p.Items)))
	return p
}

// Start prepares the plan for a new run: a missing plan, or a finished one
// when the run brings a user message, is replaced by a fresh draft from the
// seed; a draft starts running; a plan
// the supervisor paused stays paused and stops the run; a plan paused for
// any other reason resumes when the run brings a user message, which also
// resets the auto-advance budget.
func Start(p *Plan, s Settings, seed []Seed, userMessage bool) (*Plan, Outcome) {
	if p == nil || (!p.State.Active() && userMessage) {
		p = New(s, seed)
	}
	if !p.State.Active() {
		return p, Outcome{} // finished, and nothing new to do
	}
	p.Corrections = 0
	switch p.State {
	case Draft:
		p.State = Running
		p.revise("harness", "", "started")
	case Paused:
		if p.PauseReason == PauseSupervisor || !userMessage {
			return p, Outcome{Event: EventPaused, Stop: true, Note: "the plan is paused by the supervisor; resume it with POST /threads/{id}/plan/resume"}
		}
		p.resume("harness", "the user sent a message")
	}
	if userMessage {
		p.AutoSteps = 0
	}
	return p, p.settle(0)
}

func (p *Plan) resume(source, why string) {
	if p.PauseReason == PauseRetryCap {
		if i := p.Current(); i >= 0 {
			p.Items[i].Attempts = 0
		}
	}
	p.State, p.PauseReason, p.AutoSteps = Running, "", 0
	p.revise(source, why, "resumed")
}

// Proposed is an item as the model sends it in writeTodos.
type Proposed struct {
	Content  string
	Status   Status
	Evidence string
	// Verdict is the outcome of the item's verifier, run by the caller
	// for each claim Claims lists. A claim without one is not accepted.
	Verdict *Verification
}

// Claim is a proposed item that completes a plan item with a verifier: the
// caller runs Verify and puts the outcome on list[Index].Verdict before
// Replace.
type Claim struct {
	Index   int
	Content string
	Verify  string
}

// Claims lists the items of list that would complete an item of p that
// has a verifier, matching items by content as Replace does.
func Claims(p *Plan, list []Proposed) []Claim {
	old := map[string][]int{}
	for i, it := range p.Items {
		old[it.Content] = append(old[it.Content], i)
	}
	var out []Claim
	for i, pr := range list {
		idx := old[pr.Content]
		if len(idx) == 0 {
			continue
		}
		prev := p.Items[idx[0]]
		old[pr.Content] = idx[1:]
		if pr.Status == Completed && prev.Status != Completed && prev.Verify != "" {
			out = append(out, Claim{Index: i, Content: pr.Content, Verify: prev.Verify})
		}
	}
	return out
}

// ErrNotRunning refuses model changes to a plan that is not running.
var ErrNotRunning = errors.New("the plan is not running")

// Replace applies a model's full-replace list: items keep their id,
// attempts and evidence when their content is unchanged; more than one
// in_progress item is normalized to the first; the list is capped at
// MaxItems; with evidence required, completing an item without evidence is
// refused. Every accepted change is recorded as a revision with reason. On
// error the plan is unchanged.
func Replace(p *Plan, s Settings, list []Proposed, reason string) (Outcome, error) {
	return ReplaceBy(p, s, list, reason, "model")
}

// ReplaceBy is Replace for a list source made: "model" for the model's
// writeTodos, "person" for a person's edit of it.
func ReplaceBy(p *Plan, s Settings, list []Proposed, reason, source string) (Outcome, error) {
	if p.State != Running {
		return Outcome{}, fmt.Errorf("%w (it is %s); only a running plan can be changed", ErrNotRunning, p.State)
	}
	if len(list) > s.MaxItems {
		return Outcome{}, fmt.Errorf("the plan would have %d items, over the limit of %d (max_items in plan.md); merge steps or split the work into a follow-up", len(list), s.MaxItems)
	}
	old := map[string][]int{}
	for i, it := range p.Items {
		old[it.Content] = append(old[it.Content], i)
	}
	next := make([]Item, 0, len(list))
	finished, added := 0, 0
	var failedChecks []int
	for i, pr := range list {
		it := Item{Content: pr.Content, Status: pr.Status, Evidence: strings.TrimSpace(pr.Evidence)}
		wasTerminal := false
		if idx := old[pr.Content]; len(idx) > 0 {
			prev := p.Items[idx[0]]
			old[pr.Content] = idx[1:]
			var failed bool
			it, failed = merged(prev, pr)
			wasTerminal = prev.Status.Terminal()
			if failed {
				failedChecks = append(failedChecks, i)
			}
		} else {
			added++
		}
		if s.Evidence && it.Status == Completed && it.Evidence == "" && it.Verify == "" {
			return Outcome{}, fmt.Errorf("todos[%d] %q is marked completed without evidence. Evidence is a short, checkable record that shows the step is done: a tool result, an id, a number or a quote (for example \"lookupAccount returned plan=business\"). Add \"evidence\" to the item, or leave it in_progress", i, pr.Content)
		}
		if it.Status.Terminal() && !wasTerminal {
			finished++
		}
		next = append(next, it)
	}
	demoted := p.normalize(next)
	removed := len(p.Items) - (len(next) - added)
	diff := diffItems(p.Items, next)
	p.Items = next
	change := fmt.Sprintf("%d items (%d added, %d removed, %d newly finished)", len(next), added, removed, finished)
	if demoted > 0 {
		change += fmt.Sprintf("; %d extra in_progress demoted to pending", demoted)
	}
	if n := diff.CountDropped(); n > 0 {
		change += fmt.Sprintf("; %d dropped before finishing", n)
	}
	p.reviseDiff(source, reason, change, diff)
	if len(failedChecks) == 0 {
		return p.settle(finished), nil
	}
	out := p.checksFailed(s, failedChecks)
	if out.Stop {
		return out, nil
	}
	settled := p.settle(finished) // other items may have finished in the same call
	settled.Note = out.Note
	return settled, nil
}

// merged is the model's proposed item pr over prev, the plan's item it
// keeps: the id, attempts, verifier, verification and nested plans carry
// over, and a claim that completes it is checked, by its verifier's
// verdict, or refused while a harness-owned subagent plan under it is
// open. failed says the check refused the claim.
func merged(prev Item, pr Proposed) (it Item, failed bool) {
	it = Item{Content: pr.Content, Status: pr.Status, Evidence: strings.TrimSpace(pr.Evidence), ID: prev.ID, Attempts: prev.Attempts,
		Verify: prev.Verify, Verification: prev.Verification, Children: prev.Children}
	if it.Evidence == "" {
		it.Evidence = prev.Evidence
	}
	if it.Status != Completed || prev.Status == Completed {
		return it, false
	}
	verdict := pr.Verdict
	if c := openChild(prev); c != nil && !prev.Status.Terminal() {
		verdict = &Verification{VerifiedBy: "subagent: " + c.Subagent, Output: fmt.Sprintf("subagent %s's plan is %s, not done; the item completes when it is", c.Subagent, c.State)}
	} else if it.Verify == "" {
		return it, false
	}
	return it, checkFailed(&it, verdict)
}

// normalize gives the new items of next an id and keeps one item in
// progress, the first; it returns how many it moved back to pending.
func (p *Plan) normalize(next []Item) (demoted int) {
	for i := range next {
		if next[i].ID == "" {
			next[i].ID = p.newID()
		}
	}
	seen := false
	for i := range next {
		if next[i].Status == InProgress {
			if seen {
				next[i].Status = Pending
				demoted++
			}
			seen = true
		}
	}
	return demoted
}

// checkFailed records verdict v on it, an item the model marks completed
// and whose verifier ran (v nil: it could not run), and reports whether
// the claim fails: the item then stays in_progress with the attempt
// counted. A passing verdict becomes the item's evidence, with the model's
// own words kept in it as Claim.
func checkFailed(it *Item, v *Verification) bool {
	if v == nil {
		v = &Verification{VerifiedBy: it.Verify, Output: "the verifier did not run"}
	}
	if v.Claim == "" {
		v.Claim = it.Evidence
	}
	it.Verification = v
	if v.Passed {
		it.Evidence = v.Summary()
		return false
	}
	it.Status = InProgress
	it.Attempts++
	return true
}

// checksFailed records that the items of p at the indexes failed their
// verifiers: the first stays in progress (any other in_progress item goes
// back to pending), the plan pauses when it reached the retry cap, and the
// note gives the model the verifiers' output as the reason.
func (p *Plan) checksFailed(s Settings, failed []int) Outcome {
	for j := range p.Items {
		if p.Items[j].Status == InProgress && j != failed[0] {
			p.Items[j].Status = Pending
		}
	}
	var b strings.Builder
	b.WriteString(NotePrefix + " the harness ran the verifier of each item you marked completed, and these did not pass, so they stay in_progress:\n")
	capped := -1
	for _, i := range failed {
		it := &p.Items[i]
		if i != failed[0] {
			it.Status = Pending
		}
		fmt.Fprintf(&b, "- item %d %q %s, attempt %d of %d: %s\n", i+1, it.Content, it.Verification.Summary(), it.Attempts, s.RetryCap, oneLine(it.Verification.Output))
		p.revise("harness", it.Verification.Output, fmt.Sprintf("step %s not completed: %s", it.ID, it.Verification.Summary()))
		if it.Attempts >= s.RetryCap && capped < 0 {
			capped = i
		}
	}
	b.WriteString("Do the work the verifier checks, then mark the item completed again.")
	if capped >= 0 {
		out := p.pause(PauseRetryCap, "harness", fmt.Sprintf("step %q failed its verifier %d times", p.Items[capped].Content, p.Items[capped].Attempts))
		out.Note = b.String() + " The retry cap is reached: the plan is paused for the supervisor."
		return out
	}
	return Outcome{Note: b.String()}
}

// Next actions for StepFailed.
const (
	NextRetry  = "retry"
	NextSkip   = "skip"
	NextAbort  = "abort"
	NextRevise = "revise"
)

// StepFailed records the model's report that the current step failed and
// what to do next.
func StepFailed(p *Plan, s Settings, next, reason string) (Outcome, error) {
	if p.State != Running {
		return Outcome{}, fmt.Errorf("%w (it is %s)", ErrNotRunning, p.State)
	}
	i := p.Current()
	if i < 0 {
		return Outcome{}, errors.New("no step is in progress; mark the step you are working on in_progress with writeTodos first")
	}
	it := &p.Items[i]
	switch next {
	case NextRetry:
		it.Attempts++
		p.revise("model", reason, fmt.Sprintf("step %s: retry (attempt %d of %d)", it.ID, it.Attempts, s.RetryCap))
		if it.Attempts >= s.RetryCap {
			return p.pause(PauseRetryCap, "harness", fmt.Sprintf("step %q reached the retry cap of %d", it.Content, s.RetryCap)), nil
		}
		return Outcome{Note: fmt.Sprintf("retry %d of %d for step %d/%d", it.Attempts, s.RetryCap, i+1, len(p.Items))}, nil
	case NextSkip:
		it.Status = Skipped
		p.revise("model", reason, fmt.Sprintf("step %s skipped", it.ID))
		return p.settle(1), nil
	case NextAbort:
		it.Status = ItemFailed
		p.revise("model", reason, fmt.Sprintf("step %s failed; plan aborted", it.ID))
		return p.fail(fmt.Sprintf("the model aborted the plan at step %d (%q): %s", i+1, it.Content, reason)), nil
	case NextRevise:
		p.revise("model", reason, fmt.Sprintf("step %s: plan needs revising", it.ID))
		return p.pause(PauseRevise, "model", reason), nil
	}
	return Outcome{}, fmt.Errorf("next must be one of retry, skip, abort, revise, not %q", next)
}

// Verify marks postcondition index verified with evidence. A
// postcondition with a verifier needs its verdict: use VerifyChecked.
func Verify(p *Plan, index int, evidence string) (Outcome, error) {
	return VerifyChecked(p, Settings{RetryCap: DefaultRetryCap}, index, evidence, nil)
}

// VerifyChecked is Verify for a postcondition whose verifier the caller
// ran (verdict; nil when it has none). A failed verdict leaves the
// postcondition unverified, counts an attempt (at the retry cap the plan
// pauses) and returns the note that tells the model why.
func VerifyChecked(p *Plan, s Settings, index int, evidence string, verdict *Verification) (Outcome, error) {
	if p.State != Running {
		return Outcome{}, fmt.Errorf("%w (it is %s)", ErrNotRunning, p.State)
	}
	if index < 0 || index >= len(p.Postconditions) {
		if len(p.Postconditions) == 0 {
			return Outcome{}, errors.New("this plan has no postconditions")
		}
		return Outcome{}, fmt.Errorf("index must be from 0 to %d", len(p.Postconditions)-1)
	}
	evidence = strings.TrimSpace(evidence)
	pc := &p.Postconditions[index]
	if pc.Verify != "" {
		return p.postconditionChecked(s, index, evidence, verdict), nil
	}
	if evidence == "" {
		return Outcome{}, errors.New("evidence must say what shows the postcondition holds (a tool result, an id, a quote)")
	}
	pc.Verified, pc.Evidence = true, evidence
	p.revise("model", "", fmt.Sprintf("postcondition %d verified", index))
	return p.settle(0), nil
}

func (p *Plan) postconditionChecked(s Settings, index int, evidence string, v *Verification) Outcome {
	pc := &p.Postconditions[index]
	if v == nil {
		v = &Verification{VerifiedBy: pc.Verify, Output: "the verifier did not run"}
	}
	if v.Claim == "" {
		v.Claim = evidence
	}
	pc.Verification = v
	if v.Passed {
		pc.Verified, pc.Evidence = true, v.Summary()
		p.revise("harness", "", fmt.Sprintf("postcondition %d verified: %s", index, v.Summary()))
		return p.settle(0)
	}
	pc.Attempts++
	p.revise("harness", v.Output, fmt.Sprintf("postcondition %d not verified: %s", index, v.Summary()))
	note := fmt.Sprintf(NotePrefix+" postcondition %d %q %s, attempt %d of %d: %s\nMake it hold, then call verifyPostcondition again.", index, pc.Content, v.Summary(), pc.Attempts, s.RetryCap, oneLine(v.Output))
	if pc.Attempts >= s.RetryCap {
		out := p.pause(PauseRetryCap, "harness", fmt.Sprintf("postcondition %q failed its verifier %d times", pc.Content, pc.Attempts))
		out.Note = note + " The retry cap is reached: the plan is paused for the supervisor."
		return out
	}
	return Outcome{Note: note}
}

// ToolFailed counts a failing tool call against the step in progress and
// returns the nudge to append to the tool's error. At the retry cap the plan
// pauses for the supervisor.
func ToolFailed(p *Plan, s Settings) Outcome {
	i := p.Current()
	if p.State != Running || i < 0 {
		return Outcome{}
	}
	it := &p.Items[i]
	it.Attempts++
	note := fmt.Sprintf(NotePrefix+" this is step %d/%d, attempt %d/%d. If the error suggests another way, try the one that best fits the user's intent; call stepFailed only when you have run out of angles.", i+1, len(p.Items), it.Attempts, s.RetryCap)
	if it.Attempts >= s.RetryCap {
		out := p.pause(PauseRetryCap, "harness", fmt.Sprintf("step %q failed %d times", it.Content, it.Attempts))
		out.Note = fmt.Sprintf(NotePrefix+" step %d/%d failed %d times, the retry cap; the plan is paused for the supervisor.", i+1, len(p.Items), it.Attempts)
		return out
	}
	return Outcome{Note: note}
}

// Final is the finalization gate: it accepts a final answer when the plan is
// finished (every item terminal, every postcondition verified) or already
// ended, and otherwise refuses it with a note listing what is missing. After
// s.Corrections refusals in one run the plan fails and the answer stands.
func Final(p *Plan, s Settings) Outcome {
	if p.State != Running {
		return Outcome{}
	}
	if out := p.settle(0); p.State != Running {
		return out
	}
	missing := p.Missing()
	if len(p.Items) == 0 && len(missing) == 0 { // nothing was planned, nothing is left
		p.State = Done
		p.revise("harness", "", "done")
		return Outcome{Event: EventDone}
	}
	p.Corrections++
	if p.Corrections > s.Corrections {
		return p.fail(fmt.Sprintf("the model gave a final answer %d times while the plan was unfinished (%s)", p.Corrections, strings.Join(missing, "; ")))
	}
	var b strings.Builder
	fmt.Fprintf(&b, NotePrefix+" your answer was not accepted because the plan is not finished (correction %d of %d):\n", p.Corrections, s.Corrections)
	for _, m := range missing {
		fmt.Fprintf(&b, "- %s\n", m)
	}
	b.WriteString("Finish them with writeTodos")
	if len(p.Postconditions) > 0 {
		b.WriteString(", verifyPostcondition")
	}
	b.WriteString(" or stepFailed, then answer again.")
	return Outcome{Reject: true, Note: b.String()}
}

// Pause is the supervisor's pause.
func Pause(p *Plan) (Outcome, error) {
	if p.State != Running && p.State != Draft {
		return Outcome{}, fmt.Errorf("only a draft or running plan can be paused; this one is %s", p.State)
	}
	return p.pause(PauseSupervisor, "supervisor", "paused by the supervisor"), nil
}

// Resume is the supervisor's resume; the next run continues the plan.
func Resume(p *Plan) error {
	if p.State != Paused {
		return fmt.Errorf("only a paused plan can be resumed; this one is %s", p.State)
	}
	p.resume("supervisor", "resumed by the supervisor")
	return nil
}

// Cancel is the supervisor's cancel.
func Cancel(p *Plan, reason string) (Outcome, error) {
	if !p.State.Active() {
		return Outcome{}, fmt.Errorf("the plan already ended (%s)", p.State)
	}
	p.State, p.Reason, p.PauseReason = Cancelled, reason, ""
	p.revise("supervisor", reason, "cancelled")
	return Outcome{Event: EventCancelled, Stop: true}, nil
}

func (p *Plan) pause(reason, source, why string) Outcome {
	p.State, p.PauseReason = Paused, reason
	p.revise(source, why, "paused ("+reason+")")
	return Outcome{Event: EventPaused, Stop: true}
}

func (p *Plan) fail(reason string) Outcome {
	p.State, p.Reason = Failed, reason
	p.revise("harness", reason, "failed")
	return Outcome{Event: EventFailed}
}

// settle advances and ends the plan as its items require: with nothing in
// progress the first pending item starts; when every item is terminal the
// plan fails if any failed, and is done once postconditions are verified;
// finished counts items that just finished, which spend the auto-advance
// budget (a manual plan pauses after each, before the next item starts).
func (p *Plan) settle(finished int) Outcome {
	if p.State != Running || len(p.Items) == 0 { // an empty plan waits for the model's list
		return Outcome{}
	}
	allTerminal, anyFailed := true, false
	for _, it := range p.Items {
		allTerminal = allTerminal && it.Status.Terminal()
		anyFailed = anyFailed || it.Status == ItemFailed
	}
	if allTerminal {
		if anyFailed {
			return p.fail("every item ended and at least one failed")
		}
		for _, pc := range p.Postconditions {
			if !pc.Verified {
				return Outcome{}
			}
		}
		p.State = Done
		p.revise("harness", "", "done")
		return Outcome{Event: EventDone}
	}
	if finished > 0 && p.Advance == AdvanceManual {
		// The next item waits for the person's decision (see DecideStep),
		// so it does not start.
		p.AutoSteps += finished
		return p.pause(PauseManual, "harness", "advance is manual: waiting for a person after a finished step")
	}
	if p.Current() < 0 {
		for i := range p.Items {
			if p.Items[i].Status == Pending {
				p.Items[i].Status = InProgress
				break
			}
		}
	}
	if finished > 0 {
		p.AutoSteps += finished
		if p.AutoSteps >= p.Budget {
			return p.pause(PauseBudget, "harness", fmt.Sprintf("%d steps finished without the user; the auto-advance budget is %d", p.AutoSteps, p.Budget))
		}
	}
	return Outcome{}
}

// MarkRunning records that the harness's own execution (plan-first runs)
// is running the items running, which may be several independent steps at
// once: each of them is in_progress, and any other in_progress item (one the
// harness advanced to when a step ended) is pending again.
func MarkRunning(p *Plan, running []int) Outcome {
	if p.State != Running {
		return Outcome{}
	}
	for j := range p.Items {
		if p.Items[j].Status == InProgress && !slices.Contains(running, j) {
			p.Items[j].Status = Pending
		}
	}
	for _, i := range running {
		if i >= 0 && i < len(p.Items) && !p.Items[i].Status.Terminal() {
			p.Items[i].Status = InProgress
		}
	}
	return p.settle(0)
}

// MarkStep records the harness's own execution of item i (plan-first runs):
// its status and evidence, then advances and ends the plan as Replace would.
// A step that was already running when the plan paused for a person
// (AwaitingStep) is recorded too when it ends; the plan stays paused, or
// runs on to its end if that was the last open item.
func MarkStep(p *Plan, i int, status Status, evidence string) Outcome {
	late := AwaitingStep(p) && status.Terminal()
	if (p.State != Running && !late) || i < 0 || i >= len(p.Items) {
		return Outcome{}
	}
	it := &p.Items[i]
	finished := 0
	if status.Terminal() && !it.Status.Terminal() {
		finished = 1
	}
	if status == InProgress {
		for j := range p.Items {
			if p.Items[j].Status == InProgress && j != i {
				p.Items[j].Status = Pending
			}
		}
	}
	it.Status, it.Evidence = status, strings.TrimSpace(evidence)
	if finished > 0 {
		p.revise("harness", "", fmt.Sprintf("step %s %s", it.ID, status))
	}
	if late {
		if p.nextOpen() >= 0 {
			return Outcome{} // the person still decides how the plan goes on
		}
		p.resume("harness", "nothing is left to decide: every step ended")
		return p.settle(0)
	}
	return p.settle(finished)
}
