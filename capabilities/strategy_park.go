package capabilities

import "encoding/json"

// StrategyKey is the reserved state value that keeps, while a run a
// strategy parked waits for a person, which strategy parked it and the data
// it parked with (a StrategyPark). The runtime sets it with the
// interrupts and removes it when they are answered. No state field may use
// the name.
const StrategyKey = "__strategy"

// StrategyPark is the saved StrategyKey value.
type StrategyPark struct {
	// Option is the RunOption of the strategy that parked the run.
	Option string `json:"option"`
	// Data is StrategyResult.Park, handed back to the strategy on resume.
	Data json.RawMessage `json:"data,omitempty"`
}

// StrategyResumer is a RunStrategy whose runs can park before the agent
// loop (StrategyResult.Interrupts) and go on when a person answers. The
// parked state lives in the store, so the resume may come from another
// process or after a restart: everything the strategy needs to go on is in
// the thread or in the data it parked with.
type StrategyResumer interface {
	RunStrategy
	// Resume checks the answers of r against what the run parked with and
	// returns the run that goes on: it gets the thread's conversation and
	// state (without the interrupts) as history and values, and no input.
	// It must change nothing. An error is the client's mistake: the runtime
	// answers it as a 400 and the thread stays parked as it was, so it
	// names the answer (resume[i]), the interrupt and what to send.
	Resume(r ParkedRun) (StrategyRun, error)
}

// ParkedRun is a run a strategy parked, with the answers that resume it.
type ParkedRun struct {
	// Route is the route the thread parked on.
	Route *Prepared
	// Data is what the strategy parked with (StrategyResult.Park).
	Data json.RawMessage
	// Interrupts are the pending interrupts, as the run parked them.
	Interrupts []Interrupt
	// Answers are the resume request's answers, in its order. The runtime
	// has checked that they answer each interrupt exactly once and that
	// their statuses and payloads are present as the status says.
	Answers []Answer
	// Routes are the ids of the app's agent routes other than Route,
	// sorted, as RunHost.Routes gives them.
	Routes []string
}
