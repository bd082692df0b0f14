package capabilities

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/dawn-go/dawn/stream"
	"github.com/dawn-go/dawn/thread"
)

// InterruptsKey is the reserved state value that holds a parked run's
// pending interrupts, as a JSON array of Interrupt. The runtime sets it when
// a hook parks the run and removes it when the interrupts are answered. No
// state field may use the name.
const InterruptsKey = "__interrupts"

// InterruptType is the type of every interrupt: a person's decision is
// needed before the run goes on.
const InterruptType = "permission-request"

// Interrupt is a question a capability asks a person before a tool call
// runs (Hooks.BeforeTool) or after one ran (Hooks.AfterTool). The run parks:
// its state is saved with the interrupt pending, and a resume request
// answers it.
type Interrupt struct {
	// ID is unique within the thread ("perm-…").
	ID string `json:"interruptId"`
	// Type is always InterruptType; the runtime sets it.
	Type string `json:"type"`
	// Kind says which gate asked ("tool").
	Kind string `json:"kind"`
	// Detail is what the person is shown; its shape depends on Kind.
	Detail json.RawMessage `json:"detail"`
	// CallID is the tool call the interrupt holds back or, with After, the
	// call that ran before it; the runtime sets it.
	CallID string `json:"callId"`
	// After says the interrupt holds nothing back: CallID ran and its
	// result is in the history, and the run parked at the end of that
	// call's turn. The runtime sets it.
	After bool `json:"after,omitempty"`
	// InCall says the call itself asked, mid-call (a ParkCall): the
	// answer goes back to the call, which runs again with it. The runtime
	// sets it.
	InCall bool `json:"inCall,omitempty"`
	// Path, for an interrupt a subagent raised, holds the ids of the task
	// calls from the root run down to that subagent; empty for the root
	// run's own.
	Path []string `json:"path,omitempty"`
}

// SubagentsKey is the reserved state value that keeps, by task call id,
// the conversation and state of each subagent parked with its parent
// (a JSON object of SubagentFrame), so the subagent goes on when the root
// thread is resumed. No state field may use the name.
const SubagentsKey = "__subagents"

// NotesKey is the reserved state value that keeps the notes of answered
// interrupts (Resolution.Note) while the parked turn they follow is still
// open (a subagent parked again), as a JSON array of thread.Message: the
// runtime adds them to the conversation once the turn's calls have all
// run. No state field may use the name.
const NotesKey = "__notes"

// StartedKey is the reserved state value that lists, as a JSON array of
// StartedCall, the held-back calls of a parked turn whose interrupts were
// answered and that are about to run, or (for an app that continues the
// runs of a server that is gone) the calls of any turn about to run. The
// runtime saves it before the first of them runs and removes it with the
// turn's results, so a thread that still has it after a crash knows those
// calls may have run. No state field may use the name.
const StartedKey = "__started"

// StartedCall is one entry of StartedKey: a held-back call of the root run
// whose answer let it run (a task call whose parked subagent goes on
// counts), or, with Refusal set, one whose answer refused it; or, with
// Unapproved set, a call of a turn that nobody was asked about.
type StartedCall struct {
	ID         string `json:"id"`
	Name       string `json:"name"`
	Refusal    string `json:"refusal,omitempty"`
	Unapproved bool   `json:"unapproved,omitempty"`
}

// SubagentFrame is a parked subagent's run.
type SubagentFrame struct {
	Subagent string           `json:"subagent"`
	Messages []thread.Message `json:"messages"`
	Values   thread.State     `json:"values"`
	// Remote, for a task call whose remote subagent parked (a ParkCall),
	// is what its Run asked to be given back (ParkCall.Resume); Messages
	// and Values are then empty.
	Remote json.RawMessage `json:"remote,omitempty"`
}

// ResolutionKey is the key of a Resolution in agent.Config.Resolved: the
// call id, after the task call ids of the path to a subagent's call. The
// answer to an interrupt raised after its call ran (Interrupt.After) is
// keyed by AfterID of the interrupt's id instead of a call id.
func ResolutionKey(path []string, callID string) string {
	return strings.Join(append(slices.Clone(path), callID), pathSep)
}

// pathSep separates the ids of a ResolutionKey; model call ids never hold
// it.
const pathSep = "\x1f"

// afterMark starts the last id of the ResolutionKey of an interrupt raised
// after its call ran; model call ids never hold it.
const afterMark = "\x1e"

// AfterID is the last id of the ResolutionKey of interrupt id, raised after
// its call ran (Interrupt.After).
func AfterID(id string) string { return afterMark + id }

// IsAfterID reports whether id, the last id of a ResolutionKey, is an
// AfterID rather than a held-back call's id.
func IsAfterID(id string) bool { return strings.HasPrefix(id, afterMark) }

// SplitResolutionKey returns the first task call id of key and the rest,
// or ok false for a key of the run's own call.
func SplitResolutionKey(key string) (task, rest string, ok bool) {
	return strings.Cut(key, pathSep)
}

// Answer is a person's answer to one interrupt, from a resume request.
type Answer struct {
	InterruptID string
	// Status is "resolved" or "cancelled" (a cancel is a denial).
	Status string
	// Payload is the decision; its shape depends on the interrupt's kind.
	// Empty when Status is "cancelled".
	Payload json.RawMessage
}

// Answer statuses.
const (
	AnswerResolved  = "resolved"
	AnswerCancelled = "cancelled"
)

// Resolution is what an answered interrupt does: what the held-back tool
// call does, or, for an interrupt raised after its call ran
// (Interrupt.After), only the Update, Events, Note and Stop below.
//
// When the run goes on, Update and Events apply first (before a held-back
// call runs or is refused), and answers to interrupts raised after their
// call come before those of held-back calls. Note and Stop act once the
// parked turn's calls have all run.
type Resolution struct {
	// Run runs the call; otherwise the model gets Refusal as its result.
	Run bool
	// Input, when set with Run, replaces the call's arguments. The runtime
	// checks it against the tool's input schema first.
	Input json.RawMessage
	// Refusal is the tool result the model gets when the call does not run.
	Refusal string
	// Remember are app-wide values the runtime keeps in the store for every
	// thread from now on (see Hooks.BeforeTool's app argument).
	Remember map[string]json.RawMessage
	// Update is the state change the answer makes, applied through the
	// fields' reducers; Events go on the run's stream with it.
	Update thread.State
	Events []stream.Event
	// Note is text for the model, added to the conversation as a message
	// after the turn's tool results, with NoteMeta as its metadata (see
	// MessageMetadata). Answers' notes are joined.
	Note     string
	NoteMeta map[string]json.RawMessage
	// Stop ends the run cleanly, with StopReason, instead of asking the
	// model again.
	Stop       bool
	StopReason string
	// Answer, for an interrupt a call raised mid-call (Interrupt.InCall),
	// is the person's answer, handed back to the call as it runs again.
	Answer *Answer
}

// PendingInterrupts returns the interrupts parked in s, or nil.
func PendingInterrupts(s thread.State) ([]Interrupt, error) {
	var list []Interrupt
	if _, err := s.Decode(InterruptsKey, &list); err != nil {
		return nil, err
	}
	return list, nil
}

// DecisionWord reads a person's answer to an interrupt whose decisions are
// words: a JSON string ("once") or an object {"decision": "once"} with no
// other field. want, such as `"once" or "deny"`, is named in the error.
func DecisionWord(payload json.RawMessage, want string) (string, error) {
	var word string
	if err := json.Unmarshal(payload, &word); err == nil {
		return word, nil
	}
	var obj struct {
		Decision string `json:"decision"`
	}
	dec := json.NewDecoder(bytes.NewReader(payload))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&obj); err != nil {
		return "", fmt.Errorf("payload is not a decision (%v); send %s", err, want)
	}
	return obj.Decision, nil
}
