package capabilities

import (
	"context"
	"encoding/json"

	"github.com/dawn-go/dawn/stream"
)

// RemoteSubagent is a subagent that runs outside the app, such as an agent
// another server serves. A capability contributes it by name
// (Contribution.RemoteSubagents), and the route's task tool hands it work
// as it hands work to a subagent folder with an agent.md: its events reach
// the parent stream as subagent.* events, and a question it asks parks the
// parent run for a person's answer.
type RemoteSubagent interface {
	// Address says where it runs, such as its agent card's URL; subagent.*
	// events carry it as their route_id.
	Address() string
	// Run hands task to the remote agent and returns its final answer. It
	// stops its work, and asks the remote agent to stop, when ctx ends. An
	// error is the task call's result: the model sees it and the parent
	// goes on. To ask a person first, Run returns a *ParkCall.
	Run(ctx context.Context, task RemoteTask) (answer string, err error)
}

// RemoteTask is one task call handed to a RemoteSubagent.
type RemoteTask struct {
	// Input is the task, as the model wrote it.
	Input string
	// Resume is the ParkCall.Resume the call's last Run returned when it
	// parked, or nil on the call's first Run.
	Resume json.RawMessage
	// Answer is the person's answer to that ParkCall's interrupt, or nil.
	Answer *Answer
	// Emit puts an event on the run's stream as the subagent's own
	// ("plan_update", "chunk", ...): the parent's stream carries it as the
	// subagent's (subagent.plan_update, subagent.message).
	Emit func(stream.Event)
	// Park says the run can park for a person's answer. Without it (a run
	// whose state nobody saves) a ParkCall fails the call instead.
	Park bool
}

// ParkCall is the error a RemoteSubagent's Run returns to park the parent
// run mid-call until a person answers Interrupt (its ID, unique within the
// thread, its Kind and its Detail are the capability's; the runtime sets
// the rest). The runtime keeps Resume
// with the thread and, once the answer comes, runs the call again with
// Resume and the answer (RemoteTask.Resume, RemoteTask.Answer).
type ParkCall struct {
	Interrupt Interrupt
	Resume    json.RawMessage
}

func (p *ParkCall) Error() string {
	return "the call parked for a person's answer (" + p.Interrupt.Kind + ")"
}
