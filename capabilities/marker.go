package capabilities

import (
	"context"
	"encoding/json"

	"github.com/dawn-go/dawn/router"
	"github.com/dawn-go/dawn/stream"
	"github.com/dawn-go/dawn/thread"
)

// Marker is a capability switched on by a file beside agent.md. Preparing a
// route takes three steps, kept apart as in the reference: Detect finds the
// marker file, Load reads it into a Contribution, and Prepare applies every
// contribution to the route.
//
// A marker may also implement the optional interfaces in optional.go to
// reach the rest of the runtime (dawn.yaml, typegen, HTTP routes, how a run
// executes). One that contributes only through those, such as plan-first's
// run strategy, detects nothing: its Detect always reports false.
type Marker interface {
	// Name is the capability's name, such as "planning".
	Name() string
	// Detect reports the marker file's name (relative to dir) when the
	// capability applies to the route folder dir.
	Detect(dir string) (file string, ok bool)
	// Load reads the marker file and returns what the capability adds to
	// route. file is the path Detect found, joined to the route folder.
	Load(ctx context.Context, route *router.Route, file string) (*Contribution, error)
}

// Contribution is what one marker adds to a route.
type Contribution struct {
	Tools  []Tool
	Fields []Field
	// Prompts are fragments of the system prompt: instructions that stay
	// the same from turn to turn (how to use the capability's tools). They
	// are rendered from state, but one whose text changes with state
	// changes the first message of every later request, and provider
	// prompt caches then miss on the whole conversation: render live state
	// in StatePrompts.
	Prompts []Prompt
	// StatePrompts render live state the model sees on every turn, such as
	// the current plan with its items and evidence. They are rendered fresh
	// before each model call into one block placed after the conversation
	// and never saved to the thread, so that each request begins with the
	// previous one and provider prompt caches hit.
	StatePrompts []Prompt
	Transformers []Transformer
	// Hooks, when set, steer the agent loop (see Hooks).
	Hooks *Hooks
	// RemoteSubagents are subagents that run outside the app, by the name
	// the task tool knows them by. A name the route's subagent folders or
	// another capability also give stops the route.
	RemoteSubagents map[string]RemoteSubagent
	// Details is shown by `dawn routes --json` under the capability, for
	// example the planning seed. It must encode as JSON.
	Details any
	// Warnings are problems that do not stop the route, printed by
	// `dawn check` (for example a plan.md too large to parse).
	Warnings []string
	// Notices are settings a server logs as warnings when it starts, such
	// as a safety check turned off (permissions mode bypass).
	Notices []string
	// Check, when set, runs once the route is prepared, with every tool and
	// field in place, and returns more warnings (for example a name that
	// matches none of the route's tools). It runs only when the app's Go
	// tools are known (Input.AppToolsKnown), so a missing tool is missing.
	Check func(p *Prepared) []string
	// Validate, when set, runs once the route is prepared, as Check does
	// and only when the app's tools are known, and returns problems that
	// break the route (for example a plan verifier naming a tool the route
	// does not have): each fails preparation, and `dawn check`, as an
	// *Error of phase "check".
	Validate func(p *Prepared) []string
}

// Prompt renders a prompt fragment from the current state. It runs before
// every model turn; an empty result adds nothing. As a Contribution's
// Prompts it is part of the system prompt, as its StatePrompts part of the
// per-turn state block after the conversation.
type Prompt func(s thread.State) string

// ToolEvent is a finished tool call as stream transformers see it.
type ToolEvent struct {
	CallID string
	Name   string
	Input  json.RawMessage
	Output json.RawMessage
	// Update is the state change the call made, after reducers ran; nil when
	// the call failed or changed nothing.
	Update thread.State
	// Err is the tool's error, nil on success.
	Err error
	// Delegation is a finished task call's subagent and its final state;
	// nil for any other call.
	Delegation *Delegation
}

// Transformer observes finished tool calls and returns events to add to the
// run's stream, such as plan_update.
type Transformer func(ev ToolEvent) []stream.Event
