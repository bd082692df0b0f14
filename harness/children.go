package harness

import (
	"fmt"
	"strconv"
	"strings"
)

// DefaultMaxChildren bounds the subagent plans nested under one item when
// plan.md's max_children does not.
const DefaultMaxChildren = 4

// Child is a subagent's plan nested under the plan item its task call
// carried out.
type Child struct {
	CallID   string `json:"call_id"`
	Subagent string `json:"subagent"`
	RouteID  string `json:"route_id"`
	// Owned says the subagent's plan is harness-owned: the parent's item
	// then completes only when that plan is done.
	Owned bool   `json:"owned"`
	State State  `json:"state,omitempty"`
	Goal  string `json:"goal,omitempty"`
	// Todos are the subagent's plan items as it ended (with their own
	// verifications and children).
	Todos []Item `json:"todos"`
	// Answer is an excerpt of the subagent's final answer.
	Answer string `json:"answer,omitempty"`
}

// ItemFor returns the index of the item a task call carries out: the one
// named (by id, 1-based position or exact text), else the one in
// progress; -1 when there is none.
func (p *Plan) ItemFor(name string) int {
	name = strings.TrimSpace(name)
	if name == "" {
		return p.Current()
	}
	for i, it := range p.Items {
		if it.ID == name || it.Content == name {
			return i
		}
	}
	if n, err := strconv.Atoi(name); err == nil && n >= 1 && n <= len(p.Items) {
		return n - 1
	}
	return -1
}

// ChildrenFull reports why item i cannot take another subagent plan, or
// "" when it can.
func (p *Plan) ChildrenFull(s Settings, i int) string {
	limit := s.MaxChildren
	if limit <= 0 {
		limit = DefaultMaxChildren
	}
	if i >= 0 && i < len(p.Items) && len(p.Items[i].Children) >= limit {
		return fmt.Sprintf("plan item %d %q already has %d subagent plans, the limit (max_children in plan.md); finish or fail the item instead of delegating it again", i+1, p.Items[i].Content, limit)
	}
	return ""
}

// Delegated records c, the plan a subagent ended with, under item i. A
// subagent whose harness-owned plan is done completes the item, with its
// answer and its verified steps as the evidence; one whose plan did not
// finish counts a failed attempt of the item (at the retry cap the plan
// pauses). A subagent without a harness-owned plan is only recorded.
func Delegated(p *Plan, s Settings, i int, c Child) Outcome {
	if p.State != Running || i < 0 || i >= len(p.Items) {
		return Outcome{}
	}
	c.Answer = excerpt(c.Answer)
	it := &p.Items[i]
	it.Children = append(it.Children, c)
	if !c.Owned || it.Status.Terminal() {
		p.revise("harness", "", fmt.Sprintf("step %s: subagent %s's plan nested", it.ID, c.Subagent))
		return Outcome{}
	}
	if c.State == Done {
		verified := 0
		for _, t := range c.Todos {
			if t.Verification != nil && t.Verification.Passed {
				verified++
			}
		}
		for j := range p.Items {
			if p.Items[j].Status == InProgress && j != i {
				p.Items[j].Status = Pending
			}
		}
		it.Status = Completed
		it.Evidence = fmt.Sprintf("subagent %s finished its plan (%d steps, %d verified): %s", c.Subagent, len(c.Todos), verified, firstLine(c.Answer))
		p.revise("harness", "", fmt.Sprintf("step %s completed by subagent %s", it.ID, c.Subagent))
		return p.settle(1)
	}
	it.Attempts++
	why := fmt.Sprintf("subagent %s's plan ended %s, not done", c.Subagent, c.State)
	p.revise("harness", why, fmt.Sprintf("step %s: %s", it.ID, why))
	note := fmt.Sprintf(NotePrefix+" step %d/%d %q is not done: %s (attempt %d of %d).", i+1, len(p.Items), it.Content, why, it.Attempts, s.RetryCap)
	if it.Attempts >= s.RetryCap {
		out := p.pause(PauseRetryCap, "harness", fmt.Sprintf("step %q failed %d times", it.Content, it.Attempts))
		out.Note = note + " The retry cap is reached: the plan is paused for the supervisor."
		return out
	}
	return Outcome{Note: note}
}

// openChild returns the harness-owned subagent plan of it that is not
// done, or nil: the item cannot complete while it is open.
func openChild(it Item) *Child {
	if len(it.Children) == 0 {
		return nil
	}
	last := it.Children[len(it.Children)-1]
	if last.Owned && last.State != Done {
		return &last
	}
	return nil
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(strings.TrimSpace(s), "\n")
	return line
}
