package wire

import (
	"bytes"
	"encoding/json"

	"github.com/dawn-go/dawn/capabilities"
)

// ResumeAnswer is one answer to a parked thread's interrupt, as Dawn's
// POST /threads/:id/resume and AG-UI's RunAgentInput.resume send it.
type ResumeAnswer struct {
	InterruptID string          `json:"interruptId"`
	Status      string          `json:"status"`
	Payload     json.RawMessage `json:"payload"`
}

// Answer is a as the runner takes it: a null payload is none. A missing
// interruptId is left for the runner to refuse, naming the pending
// interrupts the answer should have named.
func (a ResumeAnswer) Answer() capabilities.Answer {
	payload := a.Payload
	if string(bytes.TrimSpace(payload)) == "null" {
		payload = nil
	}
	return capabilities.Answer{InterruptID: a.InterruptID, Status: a.Status, Payload: payload}
}
