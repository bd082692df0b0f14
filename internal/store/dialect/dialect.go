// Package dialect is the seam between the store's logic (package store)
// and a database: what SQLite (package sqlite) and Postgres (package
// postgres) each offer, as their own SQL, types, locking and notification.
// The store checks, decides and encodes; a dialect only reads and writes
// rows. It imports nothing of this module, so the store may pick a
// dialect and a dialect cannot reach the logic.
package dialect

import (
	"context"
	"errors"
	"time"
)

// Errors a dialect reports for the store to translate.
var (
	// ErrNoRow: the thread, run or owner asked for does not exist.
	ErrNoRow = errors.New("no such row")
	// ErrTaken: an insert found its id already used.
	ErrTaken = errors.New("id taken")
	// ErrRunning: an insert of a running run found another running run on
	// its thread (the database's last word on one run per thread).
	ErrRunning = errors.New("thread has a running run")
	// ErrInvalid: a name or value the database cannot take.
	ErrInvalid = errors.New("invalid input")
	// ErrUnavailable: the database could not be reached: the connection
	// was refused, cut or timed out, or the database is shutting down or
	// starting. A dialect wraps the driver's error with it (errors.Is
	// finds both); a later call may succeed.
	ErrUnavailable = errors.New("the store is unavailable")
	// ErrClosed: the database was closed.
	ErrClosed = errors.New("store: the store is closed")
)

// Database is one open database. Every implementation is safe for
// concurrent use.
type Database interface {
	Reader
	// Write runs fn as one transaction, committed before Write returns,
	// or rolled back, leaving nothing behind, when fn fails. fn may run
	// more than once (a database that aborts a transaction for a deadlock
	// runs it again), so it must not keep state outside what it returns.
	// A dialect may refuse to begin once ctx is done; the statements run
	// without its cancellation.
	Write(ctx context.Context, fn func(Tx) error) error
	// Stats reports how many threads the database holds and its size.
	Stats(ctx context.Context) (threads int, bytes int64, err error)
	// Path names the database for people (a file, or a URL without its
	// password).
	Path() string
	Close() error
}

// Reader is what the store reads outside a write transaction. Each call
// reads one consistent snapshot.
type Reader interface {
	Thread(ctx context.Context, id string) (ThreadRow, error)
	// Runs returns the runs whose id (byThread false) or thread id
	// (byThread true) is id, newest first.
	Runs(ctx context.Context, id string, byThread bool) ([]RunRow, error)
	RunExists(ctx context.Context, id string) (bool, error)
	// Latest reads a thread's checkpoint, head row first (see
	// CheckpointRow); no row at all means no such thread.
	Latest(ctx context.Context, threadID string, each func(CheckpointRow) error) error
	// Events reads a run's events with seq above after, in seq order, at
	// most limit of them (0: all).
	Events(ctx context.Context, runID string, after int64, limit int, each func(EventRow) error) error
	SearchThreads(ctx context.Context, f ThreadFilter) ([]ThreadRow, error)
	CountThreads(ctx context.Context, f ThreadFilter) (int, error)
	FinishedRuns(ctx context.Context, f FinishedFilter, each func(FinishedRow) error) error
	AppValues(ctx context.Context, each func(key, value string) error) error
	// Crons reads the crons f selects; CountCrons counts them, ignoring
	// f's page.
	Crons(ctx context.Context, f CronFilter) ([]CronRow, error)
	CountCrons(ctx context.Context, f CronFilter) (int, error)
	// Assistants reads the assistants (or versions) f selects;
	// CountAssistants counts them, ignoring f's page.
	Assistants(ctx context.Context, f AssistantFilter) ([]AssistantRow, error)
	CountAssistants(ctx context.Context, f AssistantFilter) (int, error)

	// Item reads one item of the key-value store, or ErrNoRow.
	Item(ctx context.Context, namespace, key string) (ItemRow, error)
	// Items reads the items whose namespace begins with prefix, newest
	// update first.
	Items(ctx context.Context, prefix string, each func(ItemRow) error) error
	// ItemNamespaces reads each namespace that begins with prefix and
	// holds an item, once.
	ItemNamespaces(ctx context.Context, prefix string, each func(namespace string) error) error
}

// Tx is a write transaction. Writes to one thread take turns: LockThread
// and LockRun hold the thread against every other writer until commit.
type Tx interface {
	// Latest is Reader.Latest inside the transaction.
	Latest(ctx context.Context, threadID string, each func(CheckpointRow) error) error
	// InsertThread inserts a thread and returns its pk, or ErrTaken.
	InsertThread(ctx context.Context, t ThreadRow) (int64, error)
	// LockThread locks a thread and reads what writes check, or ErrNoRow.
	LockThread(ctx context.Context, id string) (ThreadLock, error)
	SetThreadStatus(ctx context.Context, threadPK int64, status string, now int64) error
	DeleteThread(ctx context.Context, threadPK int64) error
	// InsertRun inserts a running run: ErrTaken when its id is used,
	// ErrRunning when its thread has a running run.
	InsertRun(ctx context.Context, r NewRun) error
	// LockRun locks a run's thread and reads the run, or ErrNoRow.
	LockRun(ctx context.Context, runID string) (RunLock, error)
	FinishRun(ctx context.Context, runPK int64, status, errText string, output []byte, now int64) error
	// InsertMessages appends messages, numbered from first.
	InsertMessages(ctx context.Context, threadPK, first int64, data []string) error
	// InsertEvent appends an event to a run's log; ev.Data is valid only
	// during the call.
	InsertEvent(ctx context.Context, threadPK, runPK int64, ev EventRow) error
	InsertPart(ctx context.Context, threadPK, seq int64, field string, data []byte) error
	DeleteParts(ctx context.Context, threadPK int64, field string) error
	SaveCheckpoint(ctx context.Context, c CheckpointWrite) error
	// RunChanged tells followers of the run, in other processes, that it
	// has new events once this transaction commits (a no-op where no
	// other process can follow).
	RunChanged(ctx context.Context, runID string) error
	SetAppValue(ctx context.Context, key, value string, now int64) error
	// PutItem inserts an item or replaces the value of the item with its
	// namespace and key, keeping that item's CreatedAt.
	PutItem(ctx context.Context, it ItemRow) error
	// DeleteItem deletes an item; deleting one that is not there is no
	// error.
	DeleteItem(ctx context.Context, namespace, key string) error

	// InsertCron inserts a cron, or ErrTaken. Cron reads one for an
	// update, holding it until commit, or ErrNoRow; UpdateCron writes
	// back every field but ID and CreatedAt; DeleteCron deletes one, or
	// ErrNoRow.
	InsertCron(ctx context.Context, c CronRow) error
	Cron(ctx context.Context, id string) (CronRow, error)
	UpdateCron(ctx context.Context, c CronRow) error
	DeleteCron(ctx context.Context, id string) error
	// ClaimCron moves a cron's next tick from at to next, only if it
	// still is at: the one writer that sees true owns tick at.
	ClaimCron(ctx context.Context, id string, at, next, now int64) (bool, error)

	// InsertAssistant inserts an assistant's current version, or
	// ErrTaken. Assistant reads one for an update, holding it until
	// commit, or ErrNoRow; AssistantVersion reads one version, or
	// ErrNoRow; LastAssistantVersion is the highest version kept.
	// PutAssistant replaces the current version; InsertAssistantVersion
	// keeps a version; DeleteAssistant deletes an assistant with its
	// versions, or ErrNoRow.
	InsertAssistant(ctx context.Context, r AssistantRow) error
	Assistant(ctx context.Context, id string) (AssistantRow, error)
	AssistantVersion(ctx context.Context, id string, version int) (AssistantRow, error)
	LastAssistantVersion(ctx context.Context, id string) (int, error)
	PutAssistant(ctx context.Context, r AssistantRow) error
	InsertAssistantVersion(ctx context.Context, r AssistantRow) error
	DeleteAssistant(ctx context.Context, id string) error
	// ThreadMetadata reads the metadata of a thread the transaction
	// locked; SetThreadMetadata replaces it.
	ThreadMetadata(ctx context.Context, threadPK int64) (string, error)
	SetThreadMetadata(ctx context.Context, threadPK int64, metadata string, now int64) error

	// InsertOwner registers an owner whose lease runs from at for lease
	// and returns its pk; RenewOwner pushes it a full lease from at,
	// bringing the row back if another store removed it. A database that
	// several machines share may use its own clock instead of at.
	InsertOwner(ctx context.Context, o Owner, at time.Time, lease time.Duration) (int64, error)
	RenewOwner(ctx context.Context, pk int64, o Owner, at time.Time, lease time.Duration) error
	// Owners lists every owner but self, each saying whether its lease
	// has expired at at (or by the database's clock).
	Owners(ctx context.Context, self int64, at time.Time) ([]OwnerRow, error)
	DeleteOwner(ctx context.Context, pk int64) error
	// InterruptOrphans ends, with status and errText, every running run
	// whose owner has no row, gives their threads threadStatus, and says
	// how many runs it ended.
	InterruptOrphans(ctx context.Context, status, threadStatus, errText string, now int64) (int, error)
}

// ThreadRow is a thread as stored. Times are Unix nanoseconds.
type ThreadRow struct {
	ID                   string
	CreatedAt, UpdatedAt int64
	Metadata, Status     string
}

// ItemRow is an item of the key-value store (the LangGraph Store API):
// Namespace is the store's encoding of its labels (see store.Item), Value
// a JSON object, times Unix nanoseconds.
type ItemRow struct {
	Namespace, Key, Value string
	CreatedAt, UpdatedAt  int64
}

// ThreadLock is what a write reads of the thread it locked.
type ThreadLock struct {
	PK, Step int64
	Parts    string
	Running  bool
}

// RunRow is a run as stored; Output is nil for NULL.
type RunRow struct {
	ID, ThreadID, Route, Status, Error string
	Output                             []byte
	CreatedAt, UpdatedAt               int64
}

// NewRun is a run to insert, running, owned by Owner.
type NewRun struct {
	ID       string
	ThreadPK int64
	Route    string
	Owner    int64
	Now      int64
}

// RunLock is what a step or a run's end reads of its run and thread.
type RunLock struct {
	PK, ThreadPK     int64
	ThreadID, Status string
	Step, Messages   int64
	Parts            string
}

// CheckpointRow is one row of a checkpoint: Kind 0 is the head (Seq the
// step, Count the message count, Updated, RunID, Route, Text the state
// and Data the parts metadata), kind 1 a message (Seq, Data) and kind 2
// a part of a state field (Seq, Text the field, Data). Data is valid only
// during the callback.
type CheckpointRow struct {
	Kind                int
	Seq, Count, Updated int64
	RunID, Route, Text  string
	Data                []byte
}

// CheckpointWrite is a step's new checkpoint. Status "" keeps the
// thread's status; with ValuesOnly (a change of state outside any run)
// only Step, State, Parts and Now are written.
type CheckpointWrite struct {
	ThreadPK, Step, Messages int64
	RunID, Route             string
	State, Parts             string
	Status                   string
	Now                      int64
	ValuesOnly               bool
}

// EventRow is a run event as stored: its data in codec. Data is valid
// only during the call or callback that hands it over.
type EventRow struct {
	Seq   int64
	Type  string
	Codec int
	Data  []byte
}

// FinishedRow is a successful run with, when asked, its done event.
type FinishedRow struct {
	ID, Route            string
	CreatedAt, UpdatedAt int64
	Codec                int
	Data                 []byte
}

// FinishedFilter selects a thread's successful runs that are no
// preview; see store.FinishedQuery.
type FinishedFilter struct {
	ThreadID, RunID, Before, DoneType, Success string
	Limit                                      int
	Done                                       bool
}

// Owner is who an owner row names.
type Owner struct {
	PID       int
	Host      string
	HostKey   string // "" where pids cannot be judged
	ProcStart string
}

// OwnerRow is another owner, as recovery judges it.
type OwnerRow struct {
	PK        int64
	PID       int
	HostKey   string // "" when the database keeps none
	ProcStart string
	Expired   bool
}

// Channels of Notifier.
const (
	// ChannelEvents carries a run id each time events of the run, or its
	// end, are committed: replicas that follow the run read them then.
	// The store sends it itself, in the transaction that commits
	// (Tx.RunChanged).
	ChannelEvents = "dawn_events"
	// ChannelSignals carries supervisor signals for runs wherever they
	// run: the runner publishes them, the replica running the run acts.
	ChannelSignals = "dawn_signals"
)

// Notifier is what a database shared by several processes offers so that
// they can reach each other's runs. Postgres implements it with
// LISTEN/NOTIFY; an SQLite database is one process's, and does not.
//
// Notifications are wake-ups, not a queue: one sent while a listener's
// connection is down is lost, so a listener that must not miss a change
// also polls the store now and then.
type Notifier interface {
	// Publish sends payload to every subscriber of channel, in every
	// process on the database, this one included.
	Publish(ctx context.Context, channel, payload string) error
	// Subscribe returns a channel of the payloads sent on channel, and
	// the function that ends the subscription. Payloads a slow
	// subscriber has no room for are dropped.
	Subscribe(channel string) (<-chan string, func())
}

// Peeker is a database that runs any read of one row, for tools and
// tests that look at what is stored.
type Peeker interface {
	// Peek runs query (with ? or $n placeholders, as the database takes
	// them) and scans its one row into dest.
	Peek(ctx context.Context, query string, args []any, dest ...any) error
}
