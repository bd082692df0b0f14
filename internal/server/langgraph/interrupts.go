package langgraph

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/dawn-go/dawn/capabilities"
	"github.com/dawn-go/dawn/internal/runner"
	"github.com/dawn-go/dawn/internal/server/wire"
	"github.com/dawn-go/dawn/internal/store"
	"github.com/dawn-go/dawn/thread"
	"github.com/google/uuid"
)

// Interrupts in the LangGraph dialect. A Dawn run parked for a person's
// decision (see Human approval) is, to a LangGraph client, a graph stopped
// at an interrupt() in its tools node:
//   - the stream's last values part is {"__interrupt__": [...]}, after the
//     state the run parked with, and updates has {"__interrupt__": [...]};
//   - runs/wait and join answer the state with "__interrupt__" in it;
//   - the thread's state has a pending "tools" task (next: ["tools"])
//     whose interrupts are the pending ones, and the thread object has
//     them by that task's id;
//   - a run whose command is {"resume": …} answers them (lgAnswers).
//
// Each interrupt is {"value": <Dawn's interrupt>, "id": <its interruptId>},
// the shape of langgraph's Interrupt (value and id) since langgraph 0.6.

// interruptKey is the key LangGraph puts interrupts under in values and
// updates.
const interruptKey = "__interrupt__"

// lgInterrupt is an interrupt as LangGraph shows it: the question a person
// is asked (Dawn's interrupt, whole) and the id that answers it.
type lgInterrupt struct {
	Value capabilities.Interrupt `json:"value"`
	ID    string                 `json:"id"`
}

func lgInterrupts(list []capabilities.Interrupt) []lgInterrupt {
	out := make([]lgInterrupt, len(list))
	for i, in := range list {
		out[i] = lgInterrupt{Value: in, ID: in.ID}
	}
	return out
}

// taskSpace is the UUID namespace of the ids of the pending tasks that
// hold a parked thread's interrupts.
var taskSpace = uuid.MustParse("5b0c7d1e-8f3a-4e52-9d61-2a7c4b9e0f13")

// interruptTasks is the pending task of a thread parked with pending: the
// tools node, which has calls held back for a person. Its id comes from
// the thread and the first interrupt, so every read shows the same id.
func interruptTasks(threadID string, pending []capabilities.Interrupt) []stateTask {
	if len(pending) == 0 {
		return nil
	}
	list := make([]any, 0, len(pending))
	for _, in := range lgInterrupts(pending) {
		list = append(list, in)
	}
	id := uuid.NewSHA1(taskSpace, []byte(threadID+"\x00"+pending[0].ID)).String()
	return []stateTask{{ID: id, Name: nodeTools, Interrupts: list}}
}

// threadInterrupts is the interrupts field of a LangGraph thread object:
// the pending interrupts by the id of the task that holds them.
func threadInterrupts(threadID string, values thread.State) map[string]any {
	out := map[string]any{}
	pending, _ := capabilities.PendingInterrupts(values) // a value that is no list of interrupts parks nothing
	for _, task := range interruptTasks(threadID, pending) {
		out[task.ID] = task.Interrupts
	}
	return out
}

// withInterrupts adds "__interrupt__" to LangGraph state values that hold
// pending interrupts (Dawn's __interrupts), as LangGraph's runs/wait
// answers a graph that stopped at an interrupt. Other values are returned
// as they are.
func withInterrupts(values json.RawMessage) json.RawMessage {
	var fields map[string]json.RawMessage
	if json.Unmarshal(values, &fields) != nil || fields == nil {
		return values
	}
	pending, err := capabilities.PendingInterrupts(thread.State(fields))
	if err != nil || len(pending) == 0 {
		return values
	}
	fields[interruptKey] = wire.MustJSON(lgInterrupts(pending))
	return wire.MustJSON(fields)
}

// lgCommand is a run's command. Only resume is served: Dawn routes have
// no graph nodes to go to, and their state changes only through runs.
type lgCommand struct {
	Resume json.RawMessage `json:"resume"`
	Update json.RawMessage `json:"update"`
	Goto   json.RawMessage `json:"goto"`
}

const commandExample = `{"command":{"resume":"once"}}, or {"command":{"resume":{"<interruptId>":"once"}}} for several interrupts`

// parseCommand reads a run's command and returns its resume value.
func parseCommand(raw json.RawMessage, input json.RawMessage) (json.RawMessage, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	var cmd lgCommand
	if err := dec.Decode(&cmd); err != nil {
		return nil, wire.BadBody("command must be an object like " + commandExample + ": " + wire.JSONError(err, "command"))
	}
	switch {
	case !isNull(cmd.Goto):
		return nil, wire.BadBody("command.goto is not supported: a Dawn route has no graph nodes to go to")
	case isNull(cmd.Resume) && !isNull(cmd.Update):
		return nil, nil // an update before the run (see commandUpdate)
	case !isNull(cmd.Update):
		return nil, wire.BadBody("command.update cannot go with command.resume: change the state first with POST /threads/:id/state, then answer the interrupts")
	case isNull(cmd.Resume):
		return nil, wire.BadBody("command.resume is required: the answer to the thread's pending interrupt, like " + commandExample)
	case !isNull(input):
		return nil, wire.BadBody("a run answers its thread's interrupts with command.resume or starts with input, not both: send input null")
	}
	return cmd.Resume, nil
}

// lgAnswers turns command.resume into answers to the pending interrupts
// of a parked thread:
//   - a map {interruptId: value} answers each interrupt it names (it is
//     a map when one of its keys is a pending interrupt's id);
//   - any other value answers the one pending interrupt.
//
// A value is the decision: "once", "deny", {"decision":"edit",…}; it
// resolves the interrupt with that payload. Dawn's own answer,
// {"status":"cancelled"} or {"status":"resolved","payload":…}, is taken
// as it is, so a cancel is {"status":"cancelled"}. Every pending interrupt
// must be answered; the runner checks the decisions themselves.
func lgAnswers(threadID string, resume json.RawMessage, pending []capabilities.Interrupt) ([]capabilities.Answer, error) {
	ids := pendingIDList(pending)
	byID := map[string]bool{}
	for _, id := range ids {
		byID[id] = true
	}
	resume = bytes.TrimSpace(resume)
	var m map[string]json.RawMessage
	isMap := false
	if len(resume) > 0 && resume[0] == '{' && json.Unmarshal(resume, &m) == nil {
		for k := range m {
			if byID[k] {
				isMap = true
				break
			}
		}
	}
	if !isMap && onlyPauses(pending) {
		// One answer goes on past every pause.
		answers := make([]capabilities.Answer, 0, len(ids))
		for _, id := range ids {
			a, err := lgAnswer(id, resume)
			if err != nil {
				return nil, err
			}
			answers = append(answers, a)
		}
		return answers, nil
	}
	if !isMap {
		if len(pending) != 1 {
			return nil, invalidResume(fmt.Sprintf("thread %s has %d pending interrupts (%s): command.resume must answer each by id, like {%q:\"once\"}", threadID, len(pending), strings.Join(ids, ", "), ids[0]))
		}
		a, err := lgAnswer(ids[0], resume)
		if err != nil {
			return nil, err
		}
		return []capabilities.Answer{a}, nil
	}
	answers := make([]capabilities.Answer, 0, len(m))
	for _, id := range ids { // in the order the interrupts were raised
		raw, ok := m[id]
		if !ok {
			return nil, invalidResume(fmt.Sprintf("command.resume must answer every pending interrupt of thread %s at once; missing: %s", threadID, id))
		}
		a, err := lgAnswer(id, raw)
		if err != nil {
			return nil, err
		}
		answers = append(answers, a)
	}
	for k := range m {
		if !byID[k] {
			return nil, invalidResume(fmt.Sprintf("command.resume[%q]: no such interrupt is pending on thread %s; pending: %s", k, threadID, strings.Join(ids, ", ")))
		}
	}
	return answers, nil
}

// lgAnswer is the answer to interrupt id that value gives.
func lgAnswer(id string, value json.RawMessage) (capabilities.Answer, error) {
	value = bytes.TrimSpace(value)
	if isNull(value) {
		return capabilities.Answer{}, invalidResume(fmt.Sprintf(`the answer to interrupt %s is null: send a decision such as "once" or "deny", or {"status":"cancelled"}`, id))
	}
	var own map[string]json.RawMessage
	if value[0] == '{' && json.Unmarshal(value, &own) == nil {
		if status, ok := own["status"]; ok && (len(own) == 1 || len(own) == 2 && own["payload"] != nil) {
			var s string
			if json.Unmarshal(status, &s) != nil {
				return capabilities.Answer{}, invalidResume(fmt.Sprintf(`the answer to interrupt %s: status must be "resolved" or "cancelled"`, id))
			}
			payload := own["payload"]
			if isNull(payload) {
				payload = nil
			}
			return capabilities.Answer{InterruptID: id, Status: s, Payload: payload}, nil
		}
	}
	return capabilities.Answer{InterruptID: id, Status: capabilities.AnswerResolved, Payload: value}, nil
}

func invalidResume(msg string) error {
	return wire.NewError(http.StatusBadRequest, "invalid_resume", msg)
}

func pendingIDList(pending []capabilities.Interrupt) []string {
	ids := make([]string, len(pending))
	for i, in := range pending {
		ids[i] = in.ID
	}
	return ids
}

// startResume starts the run that answers a parked thread's interrupts
// with command.resume. The answers are checked against the interrupts
// pending now, and again by the runner in the transaction that starts the
// run: a request that does not fit changes nothing.
func (s *dialect) startResume(ctx context.Context, run *lgRun, req runner.Request) (*runner.Run, error) {
	cp, err := s.host.Latest(ctx, run.ThreadID)
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		return nil, err
	}
	pending, err := capabilities.PendingInterrupts(cp.Values)
	if err != nil {
		return nil, fmt.Errorf("thread %s: the saved %s value is not a list of interrupts: %w", run.ThreadID, capabilities.InterruptsKey, err)
	}
	if len(pending) == 0 {
		return nil, wire.NewError(http.StatusConflict, "no_interrupt_pending", "thread "+run.ThreadID+" has no pending interrupt to resume: start a run with input instead of command.resume")
	}
	answers, err := lgAnswers(run.ThreadID, run.resume, pending)
	if err != nil {
		return nil, err
	}
	run.start = s.threadStart(ctx, run.ThreadID, run.RouteID, req)
	// The run starts from the parked state with its interrupts answered,
	// as the runner starts it.
	delete(run.start.Fields, capabilities.InterruptsKey)
	started, err := s.host.Resume(ctx, runner.ResumeRequest{ThreadID: run.ThreadID, Route: req.Route, Answers: answers, Stream: req.Stream, Webhook: req.Webhook, Overrides: req.Overrides})
	if err != nil {
		var re *runner.ResumeError
		if errors.As(err, &re) {
			return nil, invalidResume("command.resume: " + re.Msg)
		}
		return nil, err
	}
	return started, nil
}

// lgPending rewords the runner's refusal of a new input on a parked thread
// for a LangGraph client, which answers with command.resume.
func lgPending(err error) error {
	var pending *runner.InterruptPendingError
	if !errors.As(err, &pending) {
		return err
	}
	return wire.NewError(http.StatusConflict, "interrupt_pending", fmt.Sprintf("thread %s is waiting for a decision on interrupt %s: answer it with a run whose command is {\"resume\": …} (input null) before sending new input",
		pending.ThreadID, strings.Join(quoteAll(pending.IDs), ", ")))
}

func quoteAll(list []string) []string {
	out := make([]string, len(list))
	for i, s := range list {
		out[i] = strconv.Quote(s)
	}
	return out
}

// savedState returns a reader of the state run saved last, for the final
// values of a parked run: ok is false once the thread has moved on.
func (s *dialect) savedState(ctx context.Context, threadID, runID string) func() ([]thread.Message, thread.State, bool) {
	return func() ([]thread.Message, thread.State, bool) {
		cp, err := s.host.Latest(ctx, threadID)
		if err != nil || cp.RunID != runID {
			return nil, nil, false
		}
		return cp.Messages, cp.Values, true
	}
}

// parked reports whether r is a run that parked for a person's decision,
// not one cut short (a crash, a resume that failed early), which the store
// also marks interrupted, with the reason.
func parked(r store.Run) bool {
	return r.Status == store.RunInterrupted && r.Error == ""
}
