package wire

import (
	"context"
	"encoding/json"
	"log/slog"
	"time"

	"github.com/dawn-go/dawn/internal/app"
	"github.com/dawn-go/dawn/internal/crons"
	"github.com/dawn-go/dawn/internal/runner"
	"github.com/dawn-go/dawn/internal/runs"
	"github.com/dawn-go/dawn/internal/store"
	"github.com/dawn-go/dawn/internal/webhook"
	"github.com/dawn-go/dawn/stream"
	"github.com/labstack/echo/v4"
)

// Host is what the HTTP core offers a wire that needs all of it (the
// LangGraph dialect): where to mount its endpoints (Mux), the runs it
// translates (RunControl), what is kept of threads and runs (Threads), crons,
// items, assistants and the server's settings; Dawn's own wire also
// reads queued runs (Queue) and the server's records (Records). It is a set of narrow
// seams, not one wide interface: a wire that needs less (AG-UI, OpenAI,
// MCP) declares the few methods it calls and takes them alone. A wire
// keeps its own state; it reaches the run only through these seams, and
// sees it only as the events of its log.
type Host struct {
	Mux
	RunControl
	Threads
	Crons
	Items
	Assistants
	Settings
	Notifier
	Queue
	Records
}

// Queue follows a run that was queued (Admit) until it starts.
type Queue interface {
	// AwaitQueued waits until queued run r has started and returns it
	// live when it runs here, or nil when another replica has it (or it
	// has ended); now is how the store has it then.
	AwaitQueued(ctx context.Context, r store.Run) (live *runner.Run, now store.Run, err error)
	// QueuedEvents are the events of queued run r after the event with
	// id after: they wait for the run to start, here or on another
	// replica.
	QueuedEvents(r store.Run, after int64) *runs.QueuedEvents
}

// Records are what the server keeps beside threads and runs, as the runs
// service lets ctx's caller see them: webhook deliveries, remembered
// decisions, the audit log, and a user's data to forget.
type Records interface {
	// WebhookDelivery is how the webhook of a run went.
	WebhookDelivery(ctx context.Context, runID string) (webhook.Delivery, error)
	// Decisions are the remembered decisions the caller may see;
	// RevokeDecision forgets one (runs.Service.RevokeDecision).
	Decisions(ctx context.Context) ([]runs.Decision, error)
	RevokeDecision(ctx context.Context, user, key string) (string, error)
	// ServiceOnly is runs.ErrServiceOnly for a user: only the service
	// credential reads the audit log (AuditLog) and forgets a user
	// (ForgetUser).
	ServiceOnly(ctx context.Context) error
	AuditLog(ctx context.Context, q store.AuditQuery) ([]store.AuditEntry, error)
	ForgetUser(ctx context.Context, user string) (runner.Forgotten, error)
}

// Notifier records a wire's own delivery for the end of one of its runs
// (a push notification, webhook.PushPayload) in the webhook outbox,
// where it is sent, signed and retried, as a run's webhook is.
type Notifier interface {
	// SendsWebhooks reports whether the server has webhook settings.
	SendsWebhooks() bool
	Notify(ctx context.Context, hook store.Webhook) error
}

// Settings are the server's logger and environment.
type Settings interface {
	// Logger is the server's logger.
	Logger() *slog.Logger
	// Env reads the server's environment ("" when the server has none).
	Env(key string) string
	// AuthMode names how the server authenticates requests, as its
	// start-up log says it: "none", "api-key", "jwt hs256", "jwt rs256",
	// "jwt es256", "jwks" or "custom", the last four followed by
	// " + api-key" when the service credential is also set.
	AuthMode() string
	// Classify is the API error the core answers err with (its status,
	// kind and message), for a wire that writes errors in its own
	// protocol's terms.
	Classify(err error) *Error
}

// Mux mounts a wire's endpoints on the core's router.
type Mux interface {
	// Default serves method and path, one of Dawn's own endpoints, with
	// h (behind m) for every request no wire claims (Claim): it is the
	// path's default handler, which Dawn's wire gives.
	Default(method, path string, h echo.HandlerFunc, m ...echo.MiddlewareFunc)
	// Add serves method and path with h, behind the core's middleware
	// (auth, CORS, body limits) and then m.
	Add(method, path string, h echo.HandlerFunc, m ...echo.MiddlewareFunc)
	// Claim serves with h (behind m) the requests to method and path,
	// one of Dawn's own endpoints, that claims says are the wire's; the
	// core serves the others with the path's Default handler (Dawn's).
	// A wire never wraps another's handler. An error from claims
	// (a body that cannot be read) is the request's answer.
	Claim(method, path string, claims func(echo.Context) (bool, error), h echo.HandlerFunc, m ...echo.MiddlewareFunc)
	// Expose lets a browser page on an allowed origin read these response
	// headers (CORS), beside Dawn's own.
	Expose(headers ...string)
}

// RunControl starts, finds and stops runs. Every run goes through the
// runs service; these are its methods, plus what a wire reads of the
// request.
type RunControl interface {
	// App is the app being served now (routes, markers, limits).
	App() *app.App
	// Start starts a run; Resume starts the run that answers a parked
	// thread's interrupts.
	Start(ctx context.Context, req runner.Request) (*runner.Run, error)
	Resume(ctx context.Context, req runner.ResumeRequest) (*runner.Run, error)
	// Active is the run in flight on a thread on this replica, or nil;
	// nil too when ctx's caller may not see the thread (another user's).
	Active(ctx context.Context, threadID string) *runner.Run
	// Cancel stops the run in flight on a thread on this replica; reached
	// is false when it was already ending. It stops nothing on a thread
	// ctx's caller may not see.
	Cancel(ctx context.Context, threadID string) (run *runner.Run, reached bool)
	// RemoteRun is the run in flight on a thread on another replica of a
	// shared store; ok is false when there is none (or it runs here, or
	// the thread is another user's).
	RemoteRun(ctx context.Context, threadID string) (r store.Run, ok bool)
	// StopRemote cancels run r, which runs on another replica: with wait,
	// it returns once the store records the run's end; without, at once.
	// A run on a thread ctx's caller may not see is not found.
	StopRemote(ctx context.Context, r store.Run, wait bool) error
	// Admit starts req on its thread as a's multitask strategy says
	// (reject, interrupt, rollback, enqueue), or queues it: always when
	// a.At, the time a delayed run may start, is not zero. It returns the
	// run started here, or else the queued run, pending.
	Admit(ctx context.Context, req runner.Request, a runs.Admission) (*runner.Run, store.Run, error)
	// AwaitStart waits until a queued run has started (or ended) and
	// returns it as the store has it then.
	AwaitStart(ctx context.Context, runID string) (store.Run, error)
	// RollbackRun stops run r, here or on another replica, and has it
	// discard its steps and itself (a cancel with action rollback); with
	// wait it returns once that is done. reached is false when r is not
	// in flight.
	RollbackRun(ctx context.Context, r store.Run, wait bool) (reached bool, err error)
	// Dequeue cancels a queued run before it starts.
	Dequeue(ctx context.Context, runID string) error
	// Follow reads the events of a run that may run on another replica
	// from the store, after the event with id after, as they commit. It
	// checks no owner: read the run with GetRun, which does, first.
	Follow(runID string, after int64) *runner.Follower
	// RunOptions reads the options of the app's run strategies from the
	// top-level fields of a run request's body, such as plan_first; a
	// value that is not a string is a 400 naming the field.
	RunOptions(fields map[string]json.RawMessage) (map[string]string, error)
	// Subscribed counts a reader of a run's events; call what it returns
	// when the reader leaves.
	Subscribed() func()
}

// Threads reads what the store keeps of threads, their state, runs and
// events (store.Store's methods of those names).
type Threads interface {
	GetThread(ctx context.Context, id string) (store.Thread, error)
	// CreateThreadTTL creates a thread of the caller's that expires ttl
	// after its last update (0: never).
	CreateThreadTTL(ctx context.Context, id string, metadata json.RawMessage, ttl time.Duration) (store.Thread, error)
	// Latest is a thread's latest saved state.
	Latest(ctx context.Context, threadID string) (store.Checkpoint, error)
	SearchThreads(ctx context.Context, q store.ThreadQuery) ([]store.Thread, error)
	CountThreads(ctx context.Context, q store.ThreadQuery) (int, error)
	DeleteThread(ctx context.Context, id string) error
	GetRun(ctx context.Context, runID string) (store.Run, error)
	// Runs are a thread's runs, newest first.
	Runs(ctx context.Context, threadID string) ([]store.Run, error)
	FinishedRuns(ctx context.Context, q store.FinishedQuery) ([]store.FinishedRun, error)
	// History and CheckpointAt read a thread's kept checkpoints;
	// UpdateState keeps a new one outside any run; CopyThread copies a
	// thread's state and history to a new id.
	History(ctx context.Context, threadID string, q store.HistoryQuery) ([]store.Checkpoint, error)
	CheckpointAt(ctx context.Context, threadID, id string) (store.Checkpoint, error)
	UpdateState(ctx context.Context, u store.StateUpdate) (store.Checkpoint, error)
	CopyThread(ctx context.Context, fromID, toID string) (store.Thread, error)
	// Events are a run's saved events after the one with id after.
	Events(ctx context.Context, runID string, after int64) ([]stream.Event, error)
	// EventsPage is Events with at most limit events, for reading a long
	// log a page at a time.
	EventsPage(ctx context.Context, runID string, after int64, limit int) ([]stream.Event, error)
}

// Crons keeps crons (store.Store's methods of those names) and runs them:
// the server's scheduler fires each due tick once across replicas and
// starts its run through the Starter a wire gives it.
type Crons interface {
	CreateCron(ctx context.Context, c store.Cron) (store.Cron, error)
	UpdateCron(ctx context.Context, id string, change func(*store.Cron) error) (store.Cron, error)
	DeleteCron(ctx context.Context, id string) error
	SearchCrons(ctx context.Context, q store.CronQuery) ([]store.Cron, error)
	CountCrons(ctx context.Context, q store.CronQuery) (int, error)
	// ParseSchedule reads a cron's schedule as the scheduler does.
	ParseSchedule(schedule, timezone string) (crons.Schedule, error)
	// CheckWebhook checks a cron's webhook URL as a run request's is
	// checked when its run starts.
	CheckWebhook(ctx context.Context, url string) error
	// StartCrons makes s the starter of every tick's run; a server
	// whose wires give none fires no crons.
	StartCrons(s crons.Starter)
}

// Items is the key-value store of items across threads (store.Store's
// methods of those names), which the LangGraph Store API serves.
type Items interface {
	PutItem(ctx context.Context, namespace []string, key string, value json.RawMessage) error
	PutItemTTL(ctx context.Context, namespace []string, key string, value json.RawMessage, ttl time.Duration) error
	GetItem(ctx context.Context, namespace []string, key string) (store.Item, error)
	PeekItem(ctx context.Context, namespace []string, key string) (store.Item, error)
	DeleteItem(ctx context.Context, namespace []string, key string) error
	SearchItems(ctx context.Context, q store.ItemQuery) ([]store.Item, error)
	ListNamespaces(ctx context.Context, q store.NamespaceQuery) ([][]string, error)
}

// Assistants keeps the assistants clients create (store.Store's methods
// of those names), and merges a thread's metadata.
type Assistants interface {
	CreateAssistant(ctx context.Context, a store.Assistant) (store.Assistant, error)
	GetAssistant(ctx context.Context, id string) (store.Assistant, error)
	UpdateAssistant(ctx context.Context, id string, change func(*store.Assistant) error) (store.Assistant, error)
	SetLatestAssistant(ctx context.Context, id string, version int) (store.Assistant, error)
	DeleteAssistant(ctx context.Context, id string) error
	SearchAssistants(ctx context.Context, q store.AssistantQuery) ([]store.Assistant, error)
	CountAssistants(ctx context.Context, q store.AssistantQuery) (int, error)
	AssistantVersions(ctx context.Context, id string, q store.AssistantQuery) ([]store.Assistant, error)
	PatchThreadMetadata(ctx context.Context, id string, patch json.RawMessage) (store.Thread, error)
	// SetThreadTTL gives a thread a new ttl (see store.Store).
	SetThreadTTL(ctx context.Context, id string, ttl time.Duration) (store.Thread, error)
}

// Busy reports whether err refuses a run because its thread has one in
// flight, on this replica or another (runs.Busy).
func Busy(err error) bool { return runs.Busy(err) }
