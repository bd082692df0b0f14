package planning

import "github.com/dawn-go/dawn/todo"

// MarkerFile is the file beside agent.md that switches planning on and seeds
// the todo list.
const MarkerFile = "plan.md"

// MaxSeedBytes is the largest plan.md that is parsed. A bigger file keeps
// planning on with an empty seed.
const MaxSeedBytes = 64 << 10

// ToolName is the name of the tool the model uses to replace the todo list.
const ToolName = "writeTodos"

// StateField is the state field that holds the todo list.
const StateField = "todos"

// EventType is the stream event emitted after a successful writeTodos call.
const EventType = "plan_update"

// Status is the state of one todo: the one status type of package todo.
type Status = todo.Status

// Statuses a todo can have. A seed only yields Pending and Completed; the
// model may also use InProgress. Failed and Skipped exist only on routes
// whose plan the harness owns (enforce: true in plan.md).
const (
	Pending    = todo.Pending
	InProgress = todo.InProgress
	Completed  = todo.Completed
	Failed     = todo.Failed
	Skipped    = todo.Skipped
)

// Todo is one item of the plan. Evidence is set only on routes whose plan
// the harness owns.
type Todo struct {
	Content  string `json:"content"`
	Status   Status `json:"status"`
	Evidence string `json:"evidence,omitempty"`
}
