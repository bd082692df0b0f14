package store

import (
	"context"
	"encoding/json"
	"time"

	"github.com/dawn-go/dawn/internal/store/dialect"
	"github.com/dawn-go/dawn/stream"
	"github.com/dawn-go/dawn/thread"
)

// Store is a thread store: threads, their runs, checkpoints and run event
// logs, and what an app keeps beside them. DB implements it once over
// SQLite (an embedded file, the default) and Postgres (a database several
// servers share) with the same contract; the tests in this package run
// against both. It is safe for concurrent use, and several processes may
// share one database: each open store is an owner that holds a lease on
// the runs it starts (see Runs.RecoverInterrupted), and the database
// itself refuses a second running run on a thread (ErrBusy), whichever
// process asks.
//
// Store is the composition of the store's parts, split by what each
// holds, as Temporal splits its persistence into execution, history,
// task queue and metadata stores. Only the one who opens the store holds
// it whole; every other consumer takes the parts it uses.
type Store interface {
	Threads
	Runs
	Queue
	History
	ToolOutputs
	AppValues
	AuditLog
	Crons
	Items
	Assistants
	Webhooks
	Admin
}

// Threads keeps thread records: their creation (owned, with a TTL),
// reads, metadata, search, copies and deletion.
type Threads interface {
	CreateThread(ctx context.Context, id string, metadata json.RawMessage) (Thread, error)
	// CreateOwnedThread is CreateThread for a thread that belongs to
	// owner: searches for owner find it (ThreadQuery.Owner), and a run
	// for another user never adopts it (Run.Owner).
	CreateOwnedThread(ctx context.Context, owner, id string, metadata json.RawMessage) (Thread, error)
	GetThread(ctx context.Context, id string) (Thread, error)
	// DeleteThread deletes a thread with its runs, checkpoints, events
	// and tool outputs; it fails with ErrBusy while a run is running.
	DeleteThread(ctx context.Context, id string) error
	// CreateOwnedThreadTTL is CreateOwnedThread for a thread that expires
	// a TTL after its last update; SetThreadTTL gives a thread a TTL;
	// SweepThreads deletes the expired threads, and the ephemeral
	// threads of ended runs (Run.Ephemeral), that no run or person still
	// needs.
	CreateOwnedThreadTTL(ctx context.Context, owner, id string, metadata json.RawMessage, ttl time.Duration) (Thread, error)
	SetThreadTTL(ctx context.Context, id string, ttl time.Duration) (Thread, error)
	SweepThreads(ctx context.Context) (int, error)
	// PatchThreadMetadata merges members into a thread's metadata.
	PatchThreadMetadata(ctx context.Context, id string, patch json.RawMessage) (Thread, error)
	// SearchThreads and CountThreads select threads by id, status,
	// metadata and state values.
	SearchThreads(ctx context.Context, q ThreadQuery) ([]Thread, error)
	CountThreads(ctx context.Context, q ThreadQuery) (int, error)
	// CopyThread copies a thread's state and history to a new id.
	CopyThread(ctx context.Context, fromID, toID string) (Thread, error)
}

// Runs keeps the runs of threads: their start, end, reads and recovery
// after a process that owned them is gone.
type Runs interface {
	// BeginRunChecked starts a run, creating its thread when missing,
	// and hands the thread's latest checkpoint to check inside the
	// transaction; an error from check undoes everything and is
	// returned as it is.
	BeginRunChecked(ctx context.Context, r Run, check func(Checkpoint) error) (Checkpoint, error)
	FinishRun(ctx context.Context, runID, status, errMsg string, output json.RawMessage, events []stream.Event) error
	// EndRun is FinishRun with a Finish, which may carry the run's
	// webhook delivery, recorded in the same transaction.
	EndRun(ctx context.Context, runID string, f Finish, events []stream.Event) error
	// DiscardRun rolls a running run back to the checkpoint it started
	// from, deleting it (multitask_strategy "rollback").
	DiscardRun(ctx context.Context, runID string, base Checkpoint) error
	GetRun(ctx context.Context, runID string) (Run, error)
	Runs(ctx context.Context, threadID string) ([]Run, error)
	// FinishedRuns lists a thread's successful runs, with their done
	// events when asked.
	FinishedRuns(ctx context.Context, q FinishedQuery) ([]FinishedRun, error)
	RecoverInterrupted(ctx context.Context) (int, error)
	// ClaimOrphans is RecoverInterrupted that first takes over, for the
	// caller to continue, the runs of gone owners that kept their
	// request; each such run goes to one store however many ask.
	ClaimOrphans(ctx context.Context) (claimed []Run, interrupted int, err error)
}

// Queue keeps the queued runs of threads (see QueuedRun): EnqueueRun,
// DueRuns, QueuedRuns, DequeueRun and FailQueued; Runs.BeginRunChecked
// starts one (Run.Queued), once across every process on the database.
type Queue interface {
	EnqueueRun(ctx context.Context, q QueuedRun, bound int) (QueuedRun, error)
	DueRuns(ctx context.Context, threadID string, at time.Time, skip, limit int) ([]QueuedRun, error)
	QueuedRuns(ctx context.Context, threadID string) ([]QueuedRun, error)
	AnyQueued(ctx context.Context) (bool, error)
	DequeueRun(ctx context.Context, runID string) error
	FailQueued(ctx context.Context, runID, errText string) error
}

// History keeps what runs leave on a thread: the steps and checkpoints
// of every branch, and each run's event log.
type History interface {
	SaveStep(ctx context.Context, st Step) error
	SaveValues(ctx context.Context, threadID string, step int, values thread.State) error
	Latest(ctx context.Context, threadID string) (Checkpoint, error)
	// History and CheckpointAt read a thread's kept checkpoints, one per
	// step of every branch; UpdateState keeps a new one outside any run.
	History(ctx context.Context, threadID string, q HistoryQuery) ([]Checkpoint, error)
	CheckpointAt(ctx context.Context, threadID, id string) (Checkpoint, error)
	UpdateState(ctx context.Context, u StateUpdate) (Checkpoint, error)
	Events(ctx context.Context, runID string, after int64) ([]stream.Event, error)
	// EventsPage is Events with at most limit events (all of them when
	// limit is 0 or less), so that a long log is read a page at a time.
	EventsPage(ctx context.Context, runID string, after int64, limit int) ([]stream.Event, error)
}

// ToolOutputs keeps the tool outputs too large to show a model whole
// with their thread, read a page at a time; Threads.DeleteThread deletes
// them.
type ToolOutputs interface {
	PutToolOutput(ctx context.Context, threadID, id, tool string, data []byte) error
	ReadToolOutput(ctx context.Context, threadID, id string, offset, limit int64) (ToolOutput, error)
}

// AppValues keeps values for the whole app, across threads, such as a
// person's "always allow this tool".
type AppValues interface {
	SetAppValues(ctx context.Context, values map[string]json.RawMessage) error
	AppValues(ctx context.Context) (thread.State, error)
	// DeleteAppValues deletes app values, such as a revoked "always".
	DeleteAppValues(ctx context.Context, keys []string) error
}

// AuditLog keeps the audit log: who answered, cancelled, deleted or
// signalled what, and when.
type AuditLog interface {
	AppendAudit(ctx context.Context, e AuditEntry) error
	Audit(ctx context.Context, q AuditQuery) ([]AuditEntry, error)
}

// Crons keeps crons: CreateCron, UpdateCron, DeleteCron, SearchCrons and
// CountCrons; DueCrons and ClaimCronTick are how a scheduler finds a due
// tick and owns it, once across every process on the database.
type Crons interface {
	CreateCron(ctx context.Context, c Cron) (Cron, error)
	UpdateCron(ctx context.Context, id string, change func(*Cron) error) (Cron, error)
	DeleteCron(ctx context.Context, id string) error
	SearchCrons(ctx context.Context, q CronQuery) ([]Cron, error)
	CountCrons(ctx context.Context, q CronQuery) (int, error)
	DueCrons(ctx context.Context, at time.Time, limit int) ([]Cron, error)
	ClaimCronTick(ctx context.Context, id string, tick, next time.Time) (bool, error)
}

// Items keeps the key-value store of the LangGraph Store API, across
// threads (long-term memory lives there): PutItem, GetItem, DeleteItem,
// SearchItems (by filter, or by meaning through the store's Index) and
// ListNamespaces. PutItemTTL puts an item that expires; PeekItem reads
// one without moving its expiry; SweepItems deletes the expired ones.
type Items interface {
	PutItem(ctx context.Context, namespace []string, key string, value json.RawMessage) error
	PutItemTTL(ctx context.Context, namespace []string, key string, value json.RawMessage, ttl time.Duration) error
	GetItem(ctx context.Context, namespace []string, key string) (Item, error)
	PeekItem(ctx context.Context, namespace []string, key string) (Item, error)
	SweepItems(ctx context.Context) (int, error)
	DeleteItem(ctx context.Context, namespace []string, key string) error
	SearchItems(ctx context.Context, q ItemQuery) ([]Item, error)
	ListNamespaces(ctx context.Context, q NamespaceQuery) ([][]string, error)
}

// Assistants keeps assistants, configured variants of a route, with
// their versions: CreateAssistant, GetAssistant, UpdateAssistant (a new
// version), SetLatestAssistant, DeleteAssistant, SearchAssistants,
// CountAssistants and AssistantVersions.
type Assistants interface {
	CreateAssistant(ctx context.Context, a Assistant) (Assistant, error)
	GetAssistant(ctx context.Context, id string) (Assistant, error)
	UpdateAssistant(ctx context.Context, id string, change func(*Assistant) error) (Assistant, error)
	SetLatestAssistant(ctx context.Context, id string, version int) (Assistant, error)
	DeleteAssistant(ctx context.Context, id string) error
	SearchAssistants(ctx context.Context, q AssistantQuery) ([]Assistant, error)
	CountAssistants(ctx context.Context, q AssistantQuery) (int, error)
	AssistantVersions(ctx context.Context, id string, q AssistantQuery) ([]Assistant, error)
}

// Webhooks keeps the webhook outbox: the deliveries of ended runs
// (AddWebhook, or Runs.EndRun's Finish), sent by whichever server claims
// them, once across every process on the database (see Webhook).
type Webhooks interface {
	AddWebhook(ctx context.Context, w Webhook) error
	GetWebhook(ctx context.Context, runID string) (Webhook, error)
	ClaimWebhooks(ctx context.Context, limit int, hold time.Duration) ([]Webhook, error)
	RecordWebhookAttempt(ctx context.Context, runID string, a WebhookAttempt) error
	ReleaseWebhooks(ctx context.Context) (int, error)
	SweepWebhooks(ctx context.Context, before time.Time) (int, error)
}

// Admin is the store as the one who opened it sees it: its bounds, its
// name, its size, its lease and its end.
type Admin interface {
	// SetQuotas bounds what one user may keep in the store (Quotas).
	SetQuotas(q Quotas)
	// Path names the database for people: the file path, or the
	// Postgres URL without its password.
	Path() string
	Stats(ctx context.Context) (threads int, bytes int64, err error)
	// Lease is how long the store's claim on its runs lasts unrenewed.
	Lease() time.Duration
	Close() error
}

// Channels of Notifier (see dialect.ChannelEvents and ChannelSignals).
const (
	ChannelEvents  = dialect.ChannelEvents
	ChannelSignals = dialect.ChannelSignals
)

// Notifier is what a store shared by several processes offers so that they
// can reach each other's runs: a store on Postgres implements it, one on
// SQLite does not (see dialect.Notifier).
type Notifier = dialect.Notifier

// sharedDB is a store whose database also carries notifications.
type sharedDB struct {
	*DB
	dialect.Notifier
}
