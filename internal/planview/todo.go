package planview

import "github.com/dawn-go/dawn/todo"

// Todo is one plan item as plan_update events carry it.
type Todo struct {
	Content string      `json:"content"`
	Status  todo.Status `json:"status"`
}

// Symbol is the mark a terminal shows for status: ✓ completed, ▶ in
// progress, and ○ for pending or anything unknown.
func Symbol(status todo.Status) string {
	switch status {
	case todo.Completed:
		return "✓"
	case todo.InProgress:
		return "▶"
	}
	return "○"
}

// Box is the mark a plain line shows for status: [x] completed, [>] in
// progress, and [ ] for pending or anything unknown.
func Box(status todo.Status) string {
	switch status {
	case todo.Completed:
		return "[x]"
	case todo.InProgress:
		return "[>]"
	}
	return "[ ]"
}

// CountDone returns how many of todos are completed.
func CountDone(todos []Todo) int {
	n := 0
	for _, t := range todos {
		if t.Status == todo.Completed {
			n++
		}
	}
	return n
}
