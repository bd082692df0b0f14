package planfirst

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/dawn-go/dawn/harness"
	"github.com/dawn-go/dawn/thread"
)

// ReportOutputLimit is the most runes of one step's output that Report.Text
// includes; longer outputs are cut with a note saying how much was left out.
const ReportOutputLimit = 8000

// StepResult is what happened to one step.
type StepResult struct {
	Step Step `json:"step"`
	// Task is the task as run, placeholders resolved (empty if skipped).
	Task   string `json:"task,omitempty"`
	Status Status `json:"status"`
	Output string `json:"output,omitempty"`
	// Err is why the step failed, or why a skipped step did not run.
	Err string `json:"error,omitempty"`
	// Decided marks a step a person skipped (the "skip" answer to a step
	// interrupt, advance: manual): Resume keeps it skipped, the steps after
	// it still run, and its placeholders resolve to "[step E2 skipped: …]".
	// A step skipped because the plan stopped is not decided and runs when
	// the plan resumes.
	Decided bool `json:"decided,omitempty"`
}

// Report is the outcome of executing a plan, with its steps in execution
// order.
type Report struct {
	Goal  string       `json:"goal,omitempty"`
	Steps []StepResult `json:"steps"`
	// HadErrors is set when at least one step failed.
	HadErrors bool `json:"had_errors"`
	// Stopped is set when the plan stopped before every step ran; the steps
	// left are skipped and StopReason says why.
	Stopped    bool   `json:"stopped"`
	StopReason string `json:"stop_reason,omitempty"`
}

// Counts returns how many steps completed, failed and were skipped.
func (r Report) Counts() (completed, failed, skipped int) {
	for _, s := range r.Steps {
		switch s.Status {
		case Completed:
			completed++
		case Failed:
			failed++
		case Skipped:
			skipped++
		}
	}
	return completed, failed, skipped
}

// Text renders the report for the agent: a summary line, then each step's
// task, where it was dispatched, its status and its output or error, then a
// handoff telling the agent to write the final answer from these results.
// The same report always renders the same text.
//
// It is meant to be sent as a user message (see Messages): a conversation
// that ends on an assistant turn is refused by some models.
func (r Report) Text() string {
	var b strings.Builder
	completed, failed, skipped := r.Counts()
	fmt.Fprintf(&b, ReportPrefix+" %d %s, %d completed, %d failed, %d skipped.\n",
		len(r.Steps), plural(len(r.Steps), "step", "steps"), completed, failed, skipped)
	if r.Goal != "" {
		fmt.Fprintf(&b, "Goal: %s\n", r.Goal)
	}
	for k, s := range r.Steps {
		fmt.Fprintf(&b, "\n## Step %d of %d: %s (%s)\n", k+1, len(r.Steps), s.Step.ID, s.Status)
		task := s.Task
		if task == "" {
			task = s.Step.Task
		}
		fmt.Fprintf(&b, "Task: %s\n", task)
		switch {
		case s.Step.Route != "":
			fmt.Fprintf(&b, "Route: %s\n", s.Step.Route)
		case s.Step.Subagent != "":
			fmt.Fprintf(&b, "Subagent: %s\n", s.Step.Subagent)
		}
		switch s.Status {
		case Completed:
			out := strings.TrimSpace(s.Output)
			if out == "" {
				out = "(no output)"
			}
			fmt.Fprintf(&b, "Output:\n%s\n", limitRunes(out, ReportOutputLimit))
		case Failed:
			fmt.Fprintf(&b, "Error: %s\n", strings.TrimSpace(s.Err))
		case Skipped:
			fmt.Fprintf(&b, "Not run: %s\n", strings.TrimSpace(s.Err))
		}
	}
	b.WriteString("\n---\n")
	if r.Stopped {
		fmt.Fprintf(&b, "The plan stopped before every step ran (%s); the results so far are above.", r.StopReason)
	} else {
		b.WriteString("Every step of the plan has run; the results are above.")
	}
	b.WriteString(" Now write the final answer to the original request from these results, without running the steps again.")
	if failed > 0 {
		b.WriteString(" Some steps failed: say what could not be done instead of inventing their results.")
	}
	if r.Stopped {
		b.WriteString(" Say what is missing.")
	}
	b.WriteString("\n")
	return b.String()
}

// ReportPrefix starts every report's text.
const ReportPrefix = "Plan-first results:"

// Messages returns the two messages that hand a plan-first run to the
// agent: an assistant message holding the plan JSON (so the model sees what
// was attempted) and a user message holding the report (so the conversation
// ends on a user turn). Both are marked as added by the harness.
func Messages(p *Plan, r Report) []thread.Message {
	return []thread.Message{
		harness.Mark(thread.Message{Role: thread.RoleAssistant, Content: p.JSON()}),
		harness.Mark(thread.Message{Role: thread.RoleUser, Content: r.Text()}),
	}
}

// limitRunes cuts s to n runes and says how many were left out.
func limitRunes(s string, n int) string {
	total := utf8.RuneCountInString(s)
	if total <= n {
		return s
	}
	return strings.TrimSuffix(head(s, n), "…") + fmt.Sprintf("\n… [%d more characters cut]", total-n)
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
