package capabilities

import "slices"

// OfflineScripter is a marker whose tools the built-in offline model, which
// needs no network, knows how to call: planning scripts its writeTodos
// steps. On each model turn, after a subagent's task call and before the
// route's app tools, the offline model asks the app's scripters, in the
// registry's order, for their next call; the first that names one (or
// asks for the next app tool call) makes the turn. When none does, the first Summary given opens the offline
// model's answer. A scripter whose tools the call does not offer answers
// with the zero OfflineStep.
type OfflineScripter interface {
	OfflineStep(t OfflineTranscript) OfflineStep
}

// OfflineTranscript is what the offline model read from the messages and
// tools of one model call.
type OfflineTranscript struct {
	// Tools are the names of the tools the call offers.
	Tools []string
	// System are the texts of the system messages, in order.
	System []string
	// User is the text of the user's last turn.
	User string
	// Calls are the model's tool calls so far, in order.
	Calls []OfflineCall
	// RunStart is the index in Calls of the first call made since the user
	// last spoke.
	RunStart int
	// AppTools are the route's app tools the offline model may call, in the
	// order it calls them (by name): those the call offers, less the ones
	// a person must approve (approve: in agent.md), which it never calls.
	AppTools []string
}

// Offers reports whether the call offers tool name.
func (t OfflineTranscript) Offers(name string) bool {
	return slices.Contains(t.Tools, name)
}

// OfflineCall is one tool call of the model, with its result.
type OfflineCall struct {
	ID, Name string
	// Arguments are the call's arguments, as JSON.
	Arguments string
	// Result is the tool's output; Answered is false when no result
	// followed the call.
	Result   string
	Answered bool
}

// OfflineStep is a scripter's answer for one model turn.
type OfflineStep struct {
	// Tool and Arguments (JSON) are the call to make; Tool is empty when
	// the scripter has none to make.
	Tool, Arguments string
	// AppTool, with Tool empty, has the offline model make its next app
	// tool call (see OfflineTranscript.AppTools) this turn, for example for
	// the plan item in progress.
	AppTool bool
	// Summary says what the scripter's calls did, as the first sentence of
	// the offline model's answer after "Offline model: ", for example
	// `worked through 2 plan items for "the request".`; empty leaves it to
	// another scripter or the default.
	Summary string
}
