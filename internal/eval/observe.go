package eval

import (
	"encoding/json"

	"github.com/dawn-go/dawn/stream"
	"github.com/dawn-go/dawn/thread"
)

// Observation is what one run showed: read from its events and the final
// state its done event carries.
type Observation struct {
	// Answer is the last assistant message's text.
	Answer string `json:"answer"`
	// Todos is the final plan; nil when the state has none.
	Todos []Todo `json:"todos,omitempty"`
	// Calls are the tool calls the route's own agent made, in order.
	Calls []Call `json:"tool_calls,omitempty"`
	// Turns counts the model calls (model_call events).
	Turns int `json:"turns"`
	// MaxInputTokens is the largest input token count of one model call;
	// TokensKnown is false when the model reported none.
	MaxInputTokens int64 `json:"max_input_tokens,omitempty"`
	TokensKnown    bool  `json:"-"`
	// Err is why the run failed or was cancelled; empty on success.
	Err string `json:"error,omitempty"`
	// Interrupts are the interrupts the run parked on, in order, with
	// the answers the case gave; Parked says the run ended waiting on
	// the last of them.
	Interrupts []Interrupt `json:"interrupts,omitempty"`
	Parked     bool        `json:"parked,omitempty"`
	// Messages are the final conversation, for the judge.
	Messages []thread.Message `json:"-"`
	// Drift is how the plan changed during the run.
	Drift Drift `json:"-"`
}

// Call is one tool call.
type Call struct {
	Name  string          `json:"name"`
	Input json.RawMessage `json:"input"`
}

// planUpdate is the type of the event that carries the plan after each
// change; a route whose final state has no todos field is judged by the
// last one.
const planUpdate = "plan_update"

// Observe reads a run's events, the done event last.
func Observe(events []stream.Event) Observation {
	var o Observation
	var lastPlan *[]Todo
	for _, e := range events {
		o.Drift.observe(e)
		switch e.Type {
		case planUpdate:
			var p struct {
				Todos []Todo `json:"todos"`
			}
			if json.Unmarshal(e.Data, &p) == nil {
				lastPlan = &p.Todos
			}
		case stream.TypeToolCall:
			var c Call
			if json.Unmarshal(e.Data, &c) == nil {
				o.Calls = append(o.Calls, c)
			}
		case stream.TypeModelCall:
			o.Turns++
			var mc struct {
				InputTokens *int64 `json:"input_tokens"`
			}
			if json.Unmarshal(e.Data, &mc) == nil && mc.InputTokens != nil {
				o.TokensKnown = true
				o.MaxInputTokens = max(o.MaxInputTokens, *mc.InputTokens)
			}
		case stream.TypeInterrupt:
			o.Interrupts = append(o.Interrupts, readInterrupt(e.Data))
			o.Parked = true
		case stream.TypeDone:
			o.done(e.Data)
		}
	}
	o.Drift.settle()
	if o.Todos == nil && lastPlan != nil {
		o.Todos = *lastPlan
		if o.Todos == nil {
			o.Todos = []Todo{}
		}
	}
	return o
}

// done reads the done event: the final state, or why the run did not end
// well.
func (o *Observation) done(data json.RawMessage) {
	var d struct {
		Output struct {
			Error     string           `json:"error"`
			Cancelled bool             `json:"cancelled"`
			Messages  []thread.Message `json:"messages"`
			Todos     *[]Todo          `json:"todos"`
		} `json:"output"`
	}
	if err := json.Unmarshal(data, &d); err != nil {
		o.Err = "the done event cannot be read: " + err.Error()
		return
	}
	out := d.Output
	switch {
	case out.Error != "":
		o.Err = out.Error
	case out.Cancelled:
		o.Err = "the run was cancelled"
	}
	o.Messages = out.Messages
	if out.Todos != nil {
		o.Todos = *out.Todos
		if o.Todos == nil {
			o.Todos = []Todo{}
		}
	}
	for i := len(out.Messages) - 1; i >= 0; i-- {
		if m := out.Messages[i]; m.Role == thread.RoleAssistant && m.Content != "" {
			o.Answer = m.Content
			break
		}
	}
}
