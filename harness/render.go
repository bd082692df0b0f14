package harness

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// maxField bounds each free-text field in the compact prompt block.
const maxField = 160

// RenderFull is the planning prompt section for an enforced plan: the rules
// the harness enforces (Rules), then the plan's state (FullState).
func RenderFull(p *Plan, s Settings) string { return Rules(s) + FullState(p) }

// RenderCompact is the short form of RenderFull: the rules, then
// CompactState.
func RenderCompact(p *Plan, s Settings) string { return Rules(s) + CompactState(p, s) }

// FullState is an enforced plan's live state: the goal, progress, every
// item on one line of the form "- [in_progress] Check account context",
// then the postconditions. It changes with the plan, so it belongs after
// the conversation (capabilities.Contribution.StatePrompts).
func FullState(p *Plan) string {
	var b strings.Builder
	if p.Goal != "" {
		fmt.Fprintf(&b, "Goal: %s\n", oneLine(p.Goal))
	}
	done, total := p.Progress()
	fmt.Fprintf(&b, "Plan %s, %d/%d finished", p.State, done, total)
	if p.Advance == AdvanceAuto {
		fmt.Fprintf(&b, ", %d more before the user checks in", p.BudgetLeft())
	}
	b.WriteString(":\n")
	if len(p.Items) == 0 {
		b.WriteString("(The plan is empty. Write one with writeTodos before you start.)\n")
	}
	for _, it := range p.Items {
		// Each item's evidence is in the writeTodos call that gave it; an
		// open item shows, on a line of its own, why its last claim was
		// refused.
		fmt.Fprintf(&b, "- [%s] %s\n", it.Status, oneLine(it.Content))
		if why := lastRefusal(it); why != "" {
			fmt.Fprintf(&b, "  last attempt: %s\n", why)
		}
	}
	writePostconditions(&b, p)
	return b.String()
}

// lastRefusal says, for an open item whose verifier or subagent plan last
// refused it, why, cut to maxField; else "".
func lastRefusal(it Item) string {
	if it.Status.Terminal() {
		return ""
	}
	if c := openChild(it); c != nil {
		return fmt.Sprintf("subagent %s's plan ended %s", c.Subagent, c.State)
	}
	if v := it.Verification; v != nil && !v.Passed {
		return field(v.Summary() + ": " + v.Output)
	}
	return ""
}

// CompactState is the short form of FullState: a <plan_state> block with
// the goal, the current item, a short pending summary, the latest revision
// reason and numeric progress. Long fields are cut and markup is escaped,
// so text from the model cannot close the block.
func CompactState(p *Plan, s Settings) string {
	var b strings.Builder
	b.WriteString("<plan_state>\n")
	if p.Goal != "" {
		fmt.Fprintf(&b, "goal: %s\n", field(p.Goal))
	}
	done, total := p.Progress()
	fmt.Fprintf(&b, "state: %s\nprogress: %d/%d finished\n", p.State, done, total)
	if i := p.Current(); i >= 0 {
		it := p.Items[i]
		fmt.Fprintf(&b, "current: %d. %s (attempt %d of %d)\n", i+1, field(it.Content), it.Attempts+1, s.RetryCap)
	}
	var pending []string
	for _, it := range p.Items {
		if it.Status == Pending {
			pending = append(pending, field(it.Content))
		}
	}
	if len(pending) > 0 {
		shown := pending[:min(3, len(pending))]
		fmt.Fprintf(&b, "pending: %s", strings.Join(shown, "; "))
		if len(pending) > len(shown) {
			fmt.Fprintf(&b, "; and %d more", len(pending)-len(shown))
		}
		b.WriteByte('\n')
	}
	verified := 0
	for _, pc := range p.Postconditions {
		if pc.Verified {
			verified++
		}
	}
	if len(p.Postconditions) > 0 {
		fmt.Fprintf(&b, "postconditions: %d/%d verified\n", verified, len(p.Postconditions))
	}
	if r := p.LatestReason(); r != "" {
		fmt.Fprintf(&b, "latest revision: %s\n", field(r))
	}
	b.WriteString("</plan_state>\n")
	b.WriteString("This is a summary; writeTodos still takes the whole list.\n")
	return b.String()
}

// Rules says once how to keep an enforced plan; the tool descriptions say
// only what each tool does. It goes with every model request and depends
// only on the settings, so it belongs in the system prompt.
func Rules(s Settings) string {
	var b strings.Builder
	b.WriteString("## Planning\n\nThe harness owns this plan and checks every change. Keep it current with writeTodos: pass the whole list each time, with a short reason.")
	if s.FanOut {
		b.WriteString(fanOutRule)
	} else {
		b.WriteString(" Keep one item in_progress.")
	}
	if s.Evidence {
		b.WriteString(" Mark an item completed only with evidence: a short, checkable record (a tool result, an id, a quote).")
	}
	b.WriteString(" If a step cannot be done, call stepFailed. Your final answer is accepted only when every item is completed, skipped or failed")
	if len(s.Postconditions) > 0 {
		b.WriteString(" and every postcondition is verified with verifyPostcondition")
	}
	b.WriteString(".\n\n")
	return b.String()
}

func writePostconditions(b *strings.Builder, p *Plan) {
	if len(p.Postconditions) == 0 {
		return
	}
	b.WriteString("Done when (verify each with verifyPostcondition and its index):\n")
	for i, pc := range p.Postconditions {
		mark := " "
		if pc.Verified {
			mark = "x"
		}
		fmt.Fprintf(b, "%d. [%s] %s\n", i, mark, oneLine(pc.Content))
	}
}

// field makes model-written text safe and short for the compact block.
func field(s string) string {
	s = oneLine(s)
	if utf8.RuneCountInString(s) > maxField {
		r := []rune(s)
		s = string(r[:maxField-1]) + "…"
	}
	return escaper.Replace(s)
}

var escaper = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;")

func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}
