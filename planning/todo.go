package planning

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

// Status is the state of one todo.
type Status string

// Statuses a todo can have. A seed only yields Pending and Completed; the
// model may also use InProgress.
const (
	Pending    Status = "pending"
	InProgress Status = "in_progress"
	Completed  Status = "completed"
	// Failed and Skipped exist only on routes whose plan the harness owns
	// (enforce: true in plan.md).
	Failed  Status = "failed"
	Skipped Status = "skipped"
)

// Valid reports whether s is one of the known statuses.
func (s Status) Valid() bool {
	return s == Pending || s == InProgress || s == Completed
}

func (s Status) validEnforced() bool { return s.Valid() || s == Failed || s == Skipped }

// Todo is one item of the plan. Evidence is set only on routes whose plan
// the harness owns.
type Todo struct {
	Content  string `json:"content"`
	Status   Status `json:"status"`
	Evidence string `json:"evidence,omitempty"`
}
