// Package todo holds the one status type every plan in Dawn shares: Dawn's
// planning todos, the items of a plan the harness owns, plan-first steps,
// the offline model's plan and the terminal plan view all use Status.
package todo

// Status is the state of one plan item.
type Status string

// Statuses. Dawn's writeTodos takes Pending, InProgress and Completed; a plan
// the harness owns (and a plan-first step) may also be Failed or Skipped.
const (
	Pending    Status = "pending"
	InProgress Status = "in_progress"
	Completed  Status = "completed"
	Failed     Status = "failed"
	Skipped    Status = "skipped"
)

// Valid reports whether s is one of Dawn's three statuses: pending,
// in_progress or completed.
func (s Status) Valid() bool {
	return s == Pending || s == InProgress || s == Completed
}

// ValidOwned reports whether s is a status of a plan the harness owns:
// Dawn's three, failed or skipped.
func (s Status) ValidOwned() bool { return s.Valid() || s == Failed || s == Skipped }

// Terminal reports whether an item with status s needs no more work.
func (s Status) Terminal() bool { return s == Completed || s == Failed || s == Skipped }
