package capabilities

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/dawn-go/dawn/router"
	"github.com/dawn-go/dawn/stream"
	"github.com/dawn-go/dawn/thread"
	"gopkg.in/yaml.v3"
)

// The interfaces below are optional. A marker implements one to reach a part
// of the runtime beyond route preparation, and the runtime finds it by an
// interface assertion on the registered markers, as Caddy finds a module's
// Provision or Validate. The runtime never names a capability.

// ConfigSection is a marker with settings in dawn.yaml, which it parses
// itself.
type ConfigSection interface {
	// ConfigKeys names the dawn.yaml keys the marker reads: a top-level key
	// ("plan_first") or a key inside a section the app owns ("limits.todos").
	ConfigKeys() []string
	// Configure returns the marker set up from the keys dawn.yaml sets, by
	// the names ConfigKeys gives; a key the file leaves out is absent from
	// values. It must not change the receiver: every load of the app
	// configures afresh. An error names the key and what to write; the host
	// adds the file, except to an *EnvError, which names its variable.
	Configure(values map[string]*yaml.Node) (Marker, error)
}

// EnvError is a setting read from the process environment, rather than
// dawn.yaml, that has a value the marker cannot use.
type EnvError struct {
	// Var is the environment variable, Value what it holds.
	Var, Value string
	// Want says what to set instead.
	Want string
}

func (e *EnvError) Error() string {
	return fmt.Sprintf("the environment variable %s is %q; %s", e.Var, e.Value, e.Want)
}

// TypegenContributor is a marker that adds named types to the code
// `dawn typegen` writes for every app, such as planning's Todo.
type TypegenContributor interface {
	TypegenTypes() []TypegenType
}

// TypegenType is one named type of the generated code.
type TypegenType struct {
	Name string
	// Doc is the type's doc comment, starting with Name.
	Doc    string
	Schema json.RawMessage
	// Consts are named string values of the type, written to the Go output
	// as one const block documented by ConstsDoc, before the types.
	ConstsDoc string
	Consts    []TypegenConst
}

// TypegenConst is one named string constant of the Go output.
type TypegenConst struct{ Name, Value string }

// HTTPRoutes is a marker that serves endpoints under /threads/:id/, such as
// the harness's GET /threads/:id/plan.
type HTTPRoutes interface {
	ThreadRoutes(host ThreadHost) []ThreadRoute
}

// AppRoutes is a marker that serves endpoints of the whole app, outside
// any thread, such as long-term memory's /memories. A route's Path is the
// whole path ("/memories/approve"); it must not be one the server or
// another capability serves. The host authenticates the request first:
// capabilities.IdentityFrom(r.Context()) is the caller, and the item store
// the host lends reaches the caller's items only (every item for the
// service credential or a server without authentication).
type AppRoutes interface {
	AppRoutes(host AppHost) []AppRoute
}

// AppRoute is one endpoint of the whole app; its Handler answers errors
// as ThreadRoute's does.
type AppRoute struct {
	Method, Path string
	Handler      func(w http.ResponseWriter, r *http.Request) error
}

// AppHost is what the runtime lends a capability's app endpoints.
type AppHost interface {
	// Items is the app's item store, scoped by each call's context as a
	// tool's is: a user's context reaches that user's items.
	Items() ItemStore
}

// ThreadRoute is one endpoint under /threads/:id/.
type ThreadRoute struct {
	// Method is the HTTP method, such as GET or POST.
	Method string
	// Path follows /threads/:id/, without a leading slash: "plan/pause".
	Path string
	// Handler serves the request; r.PathValue("id") is the thread id. The
	// host answers a returned error in its own error format: an *HTTPError
	// with its status and kind, a ThreadHost error as the host classifies
	// it, anything else as an internal error.
	Handler func(w http.ResponseWriter, r *http.Request) error
}

// HTTPError is an error a ThreadRoute answers with Status, in the host's
// error body {"error":{"kind":Kind,"message":Msg}}.
type HTTPError struct {
	Status int
	Kind   string
	Msg    string
}

func (e *HTTPError) Error() string { return e.Msg }

// ThreadHost is what the runtime lends a capability's HTTP routes.
type ThreadHost interface {
	// Thread returns the thread's latest checkpoint as a route sees it:
	// while a run is in flight, on the run's route (so the first run on a
	// thread shows the route's defaults until its first step is saved).
	Thread(ctx context.Context, threadID string) (ThreadView, error)
	// Signal hands signal ("pause", "resume", "cancel") to the thread.
	//
	// With a run in flight, the run acts on a pause or cancel at its next
	// step boundary (a cancel also interrupts the model call); Signal waits
	// up to wait for the run to stop, and pending reports that it has not
	// yet, so the signal is still on its way. Any other signal needs the
	// thread at rest: ErrRunInFlight. A run being cancelled takes no other
	// signal: ErrRunCancelling.
	//
	// With no run, the route's Signal hooks change the saved state and it
	// is saved as a new checkpoint; ErrSignalRefused says no hook could act
	// on the signal.
	Signal(ctx context.Context, threadID, signal string, wait time.Duration) (pending bool, err error)
}

// ThreadView is a thread as ThreadHost.Thread shows it.
type ThreadView struct {
	// Route is the prepared route of the thread (see ThreadHost.Thread), or
	// nil when the app has no such route: a thread with no run yet, or one
	// whose route has since been removed.
	Route *Prepared
	// Values are the thread's state values with the route's defaults
	// filled in.
	Values thread.State
	// Running is true while a run is in flight on the thread.
	Running bool
	// PendingSignal is a signal ("pause", "cancel") the run in flight has
	// not acted on yet.
	PendingSignal string
}

// Errors of ThreadHost.Signal.
var (
	// ErrSignalRefused: no Signal hook of the thread's route can act on the
	// signal in the saved state.
	ErrSignalRefused = errors.New("no capability of the thread's route can act on the signal in its current state")
	// ErrRunInFlight: the signal needs the thread at rest, and a run is in
	// flight on it.
	ErrRunInFlight = errors.New("a run is in flight on this thread")
	// ErrRunCancelling: the run in flight is being cancelled and takes no
	// other signal.
	ErrRunCancelling = errors.New("the run in flight is being cancelled")
)

// RunStrategy is a marker that runs some routes its own way before the
// agent loop, as plan-first has the model plan the whole task and runs the
// steps before the loop writes the answer.
type RunStrategy interface {
	// RunOption names the field of a run request that steers the strategy
	// ("plan_first").
	RunOption() string
	// Choose decides whether a run on p goes through the strategy, given
	// option (the request's RunOption field, "" when unset) and the run's
	// new input messages. It returns nil for the plain agent loop. An error
	// is the client's mistake and names the option.
	Choose(p *Prepared, option string, input []thread.Message) (StrategyRun, error)
}

// StrategyRun is the strategy's part of one run. history is the thread's
// conversation before the run, values its state with the input applied.
type StrategyRun func(ctx context.Context, host RunHost, history []thread.Message, values thread.State, input []thread.Message) (StrategyResult, error)

// RunHost is what the runtime lends a StrategyRun.
type RunHost interface {
	// Complete asks the run's model for one answer to convo, with the
	// route's system prompt and no tools.
	Complete(ctx context.Context, convo []thread.Message) (string, error)
	// Routes returns the ids of the app's agent routes other than the
	// run's, sorted.
	Routes() []string
	StepRunner
	// Save checkpoints the messages added since the last save and values.
	Save(ctx context.Context, added []thread.Message, values thread.State) error
}

// StepRunner runs tasks on fresh agents for a capability, as plan-first
// runs its steps and the harness fans a parallel plan's items out. The
// runtime lends it to a run strategy (RunHost) and to the tools of a run's
// own route (Invocation.Steps).
type StepRunner interface {
	// RunStep runs task on a fresh agent and returns its answer: on the
	// route's subagent target.Subagent, on route target.Route, or else on a
	// worker of the run's route (see Prepared.Worker). The agent's events
	// reach the run's stream as subagent events under callID. Steps run at
	// once: RunStep and Emit must be safe to call from several goroutines.
	RunStep(ctx context.Context, callID string, target StepTarget, task string) (string, error)
	// Emit publishes e on the run's stream.
	Emit(e stream.Event)
	// Signal returns the supervisor's pending signal ("pause" or "cancel"),
	// or "" when there is none.
	Signal() string
}

// StepTarget says who runs a step: a subagent of the run's route, another
// route, or (both empty) a worker of the run's route.
type StepTarget struct {
	Subagent string
	Route    string
}

// StrategyResult is what a StrategyRun hands to the runtime.
type StrategyResult struct {
	// Messages is the conversation the agent loop goes on from: the
	// history, the input and what the strategy added.
	Messages []thread.Message
	Values   thread.State
	// Stop, when set, ends the run without the agent loop, for this reason
	// ("plan_paused", "plan_rejected").
	Stop string
	// Output, when set, is the run's output in place of its final state
	// values (a preview's plan).
	Output json.RawMessage
	// Record is kept in the run's record under RunOption.
	Record any
	// Interrupts, when set, park the run before the agent loop for a
	// person's decision, as a hook's interrupt parks it: Messages and
	// Values are saved with them, the thread waits for POST
	// /threads/:id/resume, and the marker's StrategyResumer takes the
	// answers. Each needs a unique ID and a Kind; the runtime sets Type.
	// With Output set, the run's output is Output with the interrupts
	// beside it.
	Interrupts []Interrupt
	// Park is what the strategy keeps with the parked run (in the store,
	// under StrategyKey) for StrategyResumer.Resume.
	Park json.RawMessage
}

// WorkerFilter is a marker whose tools a worker keeps. A worker is a fresh
// agent on a route that runs one step for a RunStrategy: it has the route's
// prompt, state fields and app tools, but no capability's transformers or
// hooks, no capability's prompts unless it is a WorkerPrompter and, unless
// the capability's WorkerKeeps says so, none of its tools, so the run's own
// plan does not steer the step.
type WorkerFilter interface {
	WorkerKeeps(tool string) bool
}

// WorkerPrompter is a marker whose prompt fragments a worker keeps, as
// every agent of a route follows its standing instructions. A worker drops
// the prompt fragments of every other capability.
type WorkerPrompter interface {
	WorkerKeepsPrompts() bool
}

// MessageMetadata is a marker that stores data of its own on thread
// messages, under keys it names: the harness marks the messages it writes
// ("harness") and links its plan snapshot to a final answer ("plan"). The
// runtime keeps and serves those keys beside the message's own fields and
// never reads them.
type MessageMetadata interface {
	MessageKeys() []string
}

// OfflineScript is a marker whose run strategy or hooks write model turns of
// their own. The built-in offline model, which needs no network, asks it
// about each text in a user turn: own reports the capability wrote the text
// (so it is not the user's request), and reply, when not empty, is the
// offline model's answer to it (plan-first's planning directive gets a
// plan).
type OfflineScript interface {
	OfflineReply(text string) (reply string, own bool)
}

// StateMirror is a marker whose stream events carry new values of its state
// fields, so that a client mirroring a thread's state during a run (the
// AG-UI endpoint's shared state) keeps it live between checkpoints, as
// planning's plan_update carries the todos. It may also show a client one
// of its fields in another shape than the thread stores, as planning shows
// a harness-owned plan as its plan_update view.
type StateMirror interface {
	// MirrorEvent returns the state fields an event of type typ sets in the
	// mirror, by name, each as JSON in the shape the mirror shows it; ok is
	// false for an event the marker does not mirror. typ and data are the
	// event as the capability emitted it: a subagent's event comes without
	// the stream.SubagentPrefix and the identity fields forwarding adds, and
	// the fields it returns land in that subagent's part of the mirror.
	// current returns a field's value in that part of the mirror as JSON, or
	// nil when it has none, for an event that changes part of a field.
	MirrorEvent(typ string, data json.RawMessage, current func(field string) json.RawMessage) (fields map[string]json.RawMessage, ok bool)
	// MirrorField returns the value raw of field, a field the marker
	// contributes to route p, as the mirror shows it; ok false shows it as
	// stored.
	MirrorField(p *Prepared, field string, raw json.RawMessage) (view json.RawMessage, ok bool)
}

// ToolSource is a marker that brings tools from outside the app's Go code,
// such as the MCP servers dawn.yaml lists. Each load of the app asks the
// configured marker once; its tools join the app's tools, shared by every
// route unless scoped, and filtered by agent.md tools:. An error names
// what failed; the tools returned with it are still used.
type ToolSource interface {
	AppTools(ctx context.Context, appDir string) ([]AppTool, error)
	// Sources describe where the tools come from, one line each, for
	// `dawn routes`; none when dawn.yaml configures no source.
	Sources() []string
	// Stop ends what AppTools started in this process (server processes,
	// connections). The CLI calls it on the registered markers on its way
	// out.
	Stop()
}

type savedToolListsKey struct{}

// WithSavedToolLists marks ctx for a command that only reads an app (dawn
// routes, check, typegen): a ToolSource may then answer AppTools from a
// listing it saved before, instead of starting a server to list its tools.
func WithSavedToolLists(ctx context.Context) context.Context {
	return context.WithValue(ctx, savedToolListsKey{}, true)
}

// SavedToolListsOK reports whether ctx allows a saved tool listing (see
// WithSavedToolLists).
func SavedToolListsOK(ctx context.Context) bool {
	ok, _ := ctx.Value(savedToolListsKey{}).(bool)
	return ok
}

// ThreadCleaner is a marker that holds something of a thread outside the
// store, such as a running sandbox, and frees it when the thread is
// deleted. An error is logged; the thread stays deleted.
type ThreadCleaner interface {
	ThreadDeleted(ctx context.Context, threadID string) error
}

// RouteDetector is a marker whose files may sit outside the route folder,
// such as the app folder's AGENTS.md or skills/ (see router.Route.AppDir).
// Prepare asks DetectRoute in place of Marker.Detect. file is relative to
// the route folder, or absolute.
type RouteDetector interface {
	DetectRoute(route *router.Route) (file string, ok bool)
}
