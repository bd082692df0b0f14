package planview

// Todo is one plan item as plan_update events carry it.
type Todo struct {
	Content string `json:"content"`
	Status  string `json:"status"`
}

// Statuses a Todo can have.
const (
	Pending    = "pending"
	InProgress = "in_progress"
	Completed  = "completed"
)

// Symbol is the mark a terminal shows for status: ✓ completed, ▶ in
// progress, and ○ for pending or anything unknown.
func Symbol(status string) string {
	switch status {
	case Completed:
		return "✓"
	case InProgress:
		return "▶"
	}
	return "○"
}

// Box is the mark a plain line shows for status: [x] completed, [>] in
// progress, and [ ] for pending or anything unknown.
func Box(status string) string {
	switch status {
	case Completed:
		return "[x]"
	case InProgress:
		return "[>]"
	}
	return "[ ]"
}

// CountDone returns how many of todos are completed.
func CountDone(todos []Todo) int {
	n := 0
	for _, t := range todos {
		if t.Status == Completed {
			n++
		}
	}
	return n
}
