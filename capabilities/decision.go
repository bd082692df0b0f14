package capabilities

import (
	"encoding/json"
	"time"
)

// DecisionsKey is the reserved state value that records who answered the
// thread's interrupts, and when, as a JSON array of Decision, oldest
// first: the runtime appends one per answer when a resume is admitted, so
// GET /threads/:id/state and every later checkpoint of the history show
// it. It keeps the latest MaxDecisions; the audit log keeps them all. No
// state field may use the name.
const DecisionsKey = "__decisions"

// MaxDecisions bounds DecisionsKey's list.
const MaxDecisions = 100

// Decision is one answer to an interrupt, as DecisionsKey records it.
type Decision struct {
	InterruptID string `json:"interruptId"`
	// Kind is the interrupt's kind ("tool", "plan").
	Kind string `json:"kind"`
	// CallID is the tool call the interrupt held back.
	CallID string `json:"callId,omitempty"`
	// Status is "resolved" or "cancelled".
	Status string `json:"status"`
	// Payload is the decision ("once", "always", {"decision":"edit",…}).
	Payload json.RawMessage `json:"payload,omitempty"`
	// By is who answered: a user, the service credential, or nobody named
	// (a server without authentication).
	By Decider `json:"by"`
	// At is when the answer was admitted.
	At time.Time `json:"at"`
}

// Decider is who gave a Decision.
type Decider struct {
	User    string `json:"user,omitempty"`
	Service bool   `json:"service,omitempty"`
	// Anonymous is set when the server had no authentication.
	Anonymous bool `json:"anonymous,omitempty"`
}

// DeciderOf is the Decider of an identity; ok false (no identity) is
// anonymous.
func DeciderOf(id Identity, ok bool) Decider {
	if !ok {
		return Decider{Anonymous: true}
	}
	return Decider{User: id.User, Service: id.Service}
}
