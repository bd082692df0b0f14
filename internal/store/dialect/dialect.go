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

// Reader is what the store reads outside a write transaction, in parts
// by what each reads. Each call reads one consistent snapshot.
type Reader interface {
	ThreadReader
	RunReader
	HistoryReader
	QueueReader
	CronReader
	AssistantReader
	ItemReader
	WebhookReader
	AppReader
}

// ThreadReader reads threads: one by id, a search and its count,
// whether any thread is due for a sweep, and the tool outputs kept with
// a thread.
type ThreadReader interface {
	Thread(ctx context.Context, id string) (ThreadRow, error)
	SearchThreads(ctx context.Context, f ThreadFilter) ([]ThreadRow, error)
	CountThreads(ctx context.Context, f ThreadFilter) (int, error)
	// AnyExpiredThread reports whether any thread expired by at, from the
	// index of the threads that have a TTL.
	AnyExpiredThread(ctx context.Context, at int64) (bool, error)
	// AnyEphemeralDue reports whether an ephemeral thread is due for a
	// sweep's look at at, from the index of the ephemeral threads.
	AnyEphemeralDue(ctx context.Context, at int64) (bool, error)
	// ToolOutput reads at most limit bytes from byte offset of the tool
	// output id of thread threadID, with its tool and whole size, or
	// ErrNoRow.
	ToolOutput(ctx context.Context, threadID, id string, offset, limit int64) (ToolOutputRow, error)
}

// RunReader reads runs, their event logs and the finished runs of a
// thread.
type RunReader interface {
	// Runs returns the runs whose id (byThread false) or thread id
	// (byThread true) is id, newest first.
	Runs(ctx context.Context, id string, byThread bool) ([]RunRow, error)
	RunExists(ctx context.Context, id string) (bool, error)
	// Events reads a run's events with seq above after, in seq order, at
	// most limit of them (0: all).
	Events(ctx context.Context, runID string, after int64, limit int, each func(EventRow) error) error
	FinishedRuns(ctx context.Context, f FinishedFilter, each func(FinishedRow) error) error
}

// HistoryReader reads the checkpoints of a thread: its head, its kept
// checkpoints, the segments and messages of its branches, and its
// parts.
type HistoryReader interface {
	// Latest reads a thread's checkpoint, head row first (see
	// CheckpointRow); no row at all means no such thread. The messages
	// are those of the head's branch only: a forked branch's inherited
	// ones are read with Segments and Messages.
	Latest(ctx context.Context, threadID string, each func(CheckpointRow) error) error
	// Checkpoints reads the kept checkpoints of a thread that f selects,
	// highest step first.
	Checkpoints(ctx context.Context, threadID string, f CheckpointFilter, each func(CheckpointMeta) error) error
	// Segments reads the segments a thread's branch inherits, by lo.
	Segments(ctx context.Context, threadID string, branch int64) ([]Segment, error)
	// Messages reads the message rows of key with seq in [lo, hi), in seq
	// order; Data is valid only during the callback.
	Messages(ctx context.Context, threadID string, key, lo, hi int64, each func(seq int64, data []byte) error) error
	// Parts reads every part row of a thread, in seq order.
	Parts(ctx context.Context, threadID string, each func(CheckpointRow) error) error
}

// QueueReader reads the queued runs.
type QueueReader interface {
	// QueuedRows reads the queued run whose id (byThread false) or the queued
	// runs whose thread id (byThread true) is id, in the order the queue
	// takes them.
	QueuedRows(ctx context.Context, id string, byThread bool) ([]QueuedRow, error)
	// AnyQueued reports whether any run of any thread is queued: one
	// cheap read that spares the due-run query when none is.
	AnyQueued(ctx context.Context) (bool, error)
	// DueQueued reads the head of each thread's queue that is due at
	// q.At and whose thread has no running run, owners in turn (DueFair),
	// at most q.Limit after q.Skip; q.ThreadID, when not empty, keeps to
	// that thread.
	DueQueued(ctx context.Context, q DueQuery) ([]QueuedRow, error)
}

// CronReader reads crons.
type CronReader interface {
	// Crons reads the crons f selects; CountCrons counts them, ignoring
	// f's page.
	Crons(ctx context.Context, f CronFilter) ([]CronRow, error)
	CountCrons(ctx context.Context, f CronFilter) (int, error)
}

// AssistantReader reads assistants and their versions.
type AssistantReader interface {
	// Assistants reads the assistants (or versions) f selects;
	// CountAssistants counts them, ignoring f's page.
	Assistants(ctx context.Context, f AssistantFilter) ([]AssistantRow, error)
	CountAssistants(ctx context.Context, f AssistantFilter) (int, error)
}

// ItemReader reads the items of the key-value store and their vectors.
type ItemReader interface {
	// Item reads one item of the key-value store, or ErrNoRow. Every item
	// read skips the items that expired by at (ExpiresAt at or before it).
	Item(ctx context.Context, namespace, key string, at int64) (ItemRow, error)
	// Items reads the items whose namespace begins with prefix, newest
	// update first.
	Items(ctx context.Context, prefix string, at int64, each func(ItemRow) error) error
	// ItemNamespaces reads each namespace that begins with prefix and
	// holds an item, once.
	ItemNamespaces(ctx context.Context, prefix string, at int64, each func(namespace string) error) error
	// ItemVectors reads the vectors of one item (live or not), in path
	// order.
	ItemVectors(ctx context.Context, namespace, key string) ([]VectorRow, error)
	// VectorsUnder reads the vectors of the items whose namespace begins
	// with prefix, expired ones included (the caller knows which items
	// are live). The row each is given, its Vector included, is valid
	// during the call only.
	VectorsUnder(ctx context.Context, prefix string, each func(VectorRow) error) error
	// AnyExpiredItem reports whether any item expired by at: one read of
	// an index of the expiring items that spares a sweep its write when
	// none has.
	AnyExpiredItem(ctx context.Context, at int64) (bool, error)
}

// WebhookReader reads the webhook outbox.
type WebhookReader interface {
	// Webhook reads the webhook delivery of a run; AnyDueWebhook reports
	// whether a pending one is due at at: one cheap read through the due
	// index that spares a write transaction when none is.
	Webhook(ctx context.Context, runID string) (WebhookRow, error)
	AnyDueWebhook(ctx context.Context, at int64) (bool, error)
}

// Tx is a write transaction, in parts by what each writes. The parts are
// one transaction, as one write spans them (a run's end writes its run,
// its events, its checkpoint and its webhook delivery in one commit);
// the store's helpers take the part they use. Writes to one thread take
// turns: LockThread and LockRun hold the thread against every other
// writer until commit.
type Tx interface {
	ThreadTx
	RunTx
	HistoryTx
	ItemTx
	QueueTx
	CronTx
	AssistantTx
	OwnerTx
	WebhookTx
	AppTx
}

// ThreadTx writes threads in a transaction: their insert, lock, status,
// TTL, sweeps, metadata, tool outputs and deletion, and the count of
// what an owner holds.
type ThreadTx interface {
	// InsertThread inserts a thread and returns its pk, or ErrTaken.
	InsertThread(ctx context.Context, t ThreadRow) (int64, error)
	// CountOwned counts the threads, crons or queued runs (OwnedThreads,
	// OwnedCrons, OwnedQueued: the runs queued on its threads) of owner.
	CountOwned(ctx context.Context, what, owner string) (int, error)
	// LockThread locks a thread and reads what writes check, or ErrNoRow.
	LockThread(ctx context.Context, id string) (ThreadLock, error)
	SetThreadStatus(ctx context.Context, threadPK int64, status string, now int64) error
	DeleteThread(ctx context.Context, threadPK int64) error
	// SetThreadTTL gives a thread the transaction locked a TTL (ttl, in
	// nanoseconds) that expires at expiresAt, or none when ttl is 0.
	SetThreadTTL(ctx context.Context, threadPK, ttl, expiresAt, now int64) error
	// ExpiredThreads locks and reads at most limit of the threads that
	// expired by at, soonest expired first, skipping those another
	// transaction holds; Pending says, as of after the lock, whether the
	// thread has a running or a queued run. RearmThread moves a thread's
	// expiry to at plus its TTL.
	ExpiredThreads(ctx context.Context, at int64, limit int) ([]ExpiredThread, error)
	RearmThread(ctx context.Context, threadPK, at int64) error
	// DueEphemeral locks and reads, as ExpiredThreads does, at most limit
	// of the ephemeral threads due for a look at at, the longest due
	// first; PostponeDelete makes a thread due again at at.
	DueEphemeral(ctx context.Context, at int64, limit int) ([]ExpiredThread, error)
	PostponeDelete(ctx context.Context, threadPK, at int64) error
	// ThreadMetadata reads the metadata of a thread the transaction
	// locked; SetThreadMetadata replaces it.
	ThreadMetadata(ctx context.Context, threadPK int64) (string, error)
	SetThreadMetadata(ctx context.Context, threadPK int64, metadata string, now int64) error
	// InsertToolOutput keeps a tool output with its thread, or ErrTaken
	// when the thread has one under its id. DeleteThread deletes it.
	InsertToolOutput(ctx context.Context, threadPK int64, o ToolOutputRow, now int64) error
}

// RunTx writes runs in a transaction: their insert, lock, end, events
// and rollback.
type RunTx interface {
	// InsertRun inserts a running run: ErrTaken when its id is used,
	// ErrRunning when its thread has a running run.
	InsertRun(ctx context.Context, r NewRun) error
	// LockRun locks a run's thread and reads the run, or ErrNoRow.
	LockRun(ctx context.Context, runID string) (RunLock, error)
	FinishRun(ctx context.Context, runPK int64, status, errText string, output []byte, now int64) error
	// InsertEvent appends an event to a run's log; ev.Data is valid only
	// during the call.
	InsertEvent(ctx context.Context, threadPK, runPK int64, ev EventRow) error
	// RunChanged tells followers of the run, in other processes, that it
	// has new events once this transaction commits (a no-op where no
	// other process can follow).
	RunChanged(ctx context.Context, runID string) error
	// DiscardRun deletes a run, its events, its kept checkpoints (by
	// runID) and the messages of branch from number fromMessage on (a
	// rollback).
	DiscardRun(ctx context.Context, threadPK, runPK, branch, fromMessage int64, runID string) error
	// InsertEndedRun inserts a run that has already ended with status,
	// such as a queued run that could not start.
	InsertEndedRun(ctx context.Context, r NewRun, status, errText string) error
}

// HistoryTx writes the checkpoints of a thread in a transaction:
// messages, parts, checkpoints, branches, forks and copies.
type HistoryTx interface {
	// Latest is Reader.Latest inside the transaction.
	Latest(ctx context.Context, threadID string, each func(CheckpointRow) error) error
	// InsertMessages appends messages to a branch (a history run key),
	// numbered from first.
	InsertMessages(ctx context.Context, threadPK, branch, first int64, data []string) error
	InsertPart(ctx context.Context, threadPK, seq int64, field string, data []byte) error
	DeleteParts(ctx context.Context, threadPK int64, field string) error
	// SaveCheckpoint makes c the thread's head and keeps it as a
	// checkpoint row.
	SaveCheckpoint(ctx context.Context, c CheckpointWrite) error
	// Checkpoint reads one kept checkpoint, or ErrNoRow.
	Checkpoint(ctx context.Context, threadPK, step int64) (CheckpointMeta, error)
	// Segments and Messages are Reader's, in the transaction.
	Segments(ctx context.Context, threadID string, branch int64) ([]Segment, error)
	Messages(ctx context.Context, threadID string, key, lo, hi int64, each func(seq int64, data []byte) error) error
	// NewBranch records a new branch of a thread that inherits segs, and
	// returns its key: one below every key the thread used, and -2 at
	// most (0 is the first branch, -1 holds parts).
	NewBranch(ctx context.Context, threadPK int64, segs []Segment) (int64, error)
	// MoveHead makes the thread's head f, an existing checkpoint, without
	// keeping a new one (a fork).
	MoveHead(ctx context.Context, f HeadWrite) error
	// CopyThread copies the checkpoints, branches, messages, parts and
	// head of one thread to another, which has none yet, and sets the
	// other's copy_of.
	CopyThread(ctx context.Context, fromPK, toPK int64, copyOf string) error
}

// ItemTx writes the items of the key-value store and their vectors in a
// transaction.
type ItemTx interface {
	// CountItems counts the live items (at at) whose namespace begins
	// with prefix.
	CountItems(ctx context.Context, prefix string, at int64) (int, error)
	// PutItem inserts an item or replaces the value, TTL and expiry of the
	// item with its namespace and key, keeping that item's CreatedAt
	// unless it expired by at (then it is replaced whole).
	PutItem(ctx context.Context, it ItemRow, at int64) error
	// RefreshItem moves the expiry of an item that has a TTL and has not
	// expired by at to expiresAt; it does nothing to any other item.
	RefreshItem(ctx context.Context, namespace, key string, expiresAt, at int64) error
	// DeleteExpiredItems deletes at most limit of the items that expired
	// by at, skipping those another transaction holds, and says how many
	// it deleted.
	DeleteExpiredItems(ctx context.Context, at int64, limit int) (int, error)
	// DeleteItem deletes an item; deleting one that is not there is no
	// error.
	DeleteItem(ctx context.Context, namespace, key string) error
	// SetItemVectors replaces the vectors of an item with rows (none:
	// the item has no vector). The database deletes an item's vectors
	// with the item.
	SetItemVectors(ctx context.Context, namespace, key string, rows []VectorRow) error
}

// QueueTx writes the queued runs in a transaction.
type QueueTx interface {
	// InsertQueued inserts a queued run (ErrTaken when its id is used)
	// and returns how many queued runs its thread holds with it.
	InsertQueued(ctx context.Context, q QueuedRow) (int, error)
	// DeleteQueued deletes a queued run and returns it with its ThreadPK,
	// or ErrNoRow.
	DeleteQueued(ctx context.Context, id string) (QueuedRow, error)
}

// CronTx writes crons in a transaction.
type CronTx interface {
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
}

// AssistantTx writes assistants and their versions in a transaction.
type AssistantTx interface {
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
}

// OwnerTx keeps the owners (the open stores) and their leases in a
// transaction, and takes over or ends the runs of gone ones.
type OwnerTx interface {
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
	// OrphanRuns locks and reads the running runs that kept their request
	// and whose owner has no row; ClaimRuns makes owner their owner.
	// Recovery claims, in one transaction, those whose owner it judged
	// gone, before InterruptOrphans ends the rest.
	OrphanRuns(ctx context.Context) ([]OrphanRun, error)
	ClaimRuns(ctx context.Context, runPKs []int64, owner, now int64) error
}

// WebhookTx writes the webhook outbox in a transaction.
type WebhookTx interface {
	// InsertWebhook records a webhook delivery, unless its run already
	// has one (a dialect may send it with the transaction's other
	// writes). DueWebhooks locks and reads at most limit pending
	// deliveries due at at, the earliest first, skipping rows another
	// transaction has locked; LockWebhook locks and reads one.
	// ClaimWebhook sets a delivery's claimer and next_at; UpdateWebhook
	// writes an attempt's outcome (status, attempts, code, error, next_at,
	// claimed_by, updated_at). ReleaseWebhooks makes the pending
	// deliveries owner claimed due at at, unclaimed, and says how many.
	// DeleteEndedWebhooks deletes at most limit ended deliveries last
	// updated before before.
	InsertWebhook(ctx context.Context, w WebhookRow) error
	DueWebhooks(ctx context.Context, at int64, limit int) ([]WebhookRow, error)
	LockWebhook(ctx context.Context, runID string) (WebhookRow, error)
	ClaimWebhook(ctx context.Context, runID string, owner, next, now int64) error
	UpdateWebhook(ctx context.Context, w WebhookRow) error
	ReleaseWebhooks(ctx context.Context, owner, at int64) (int, error)
	DeleteEndedWebhooks(ctx context.Context, before int64, limit int) (int, error)
}

// OrphanRun is a running run whose owner has no row, with the request it
// was started with.
type OrphanRun struct {
	PK, Owner            int64
	ID, ThreadID, Route  string
	Request              string
	CreatedAt, UpdatedAt int64
}

// ThreadRow is a thread as stored. Times are Unix nanoseconds.
type ThreadRow struct {
	ID                   string
	CreatedAt, UpdatedAt int64
	Metadata, Status     string
	// Owner is the user the thread belongs to, "" for none.
	Owner string
	// TTL is how long the thread lives after its last update, in
	// nanoseconds, and ExpiresAt when it expires; 0 (NULL) for a thread
	// that does not expire. Every write that sets a thread's UpdatedAt
	// sets its ExpiresAt to UpdatedAt plus TTL in the same statement.
	TTL, ExpiresAt int64
	// DeleteAfter, when not 0, makes the thread ephemeral: a sweep looks
	// at it from then on and deletes it once no run or person needs it
	// (see DueEphemeral).
	DeleteAfter int64
}

// ExpiredThread is a thread a sweep found expired, locked.
type ExpiredThread struct {
	PK      int64
	ID      string
	Status  string
	Pending bool
}

// ToolOutputRow is a stored tool output, or a page of one: Data is the
// bytes read, Total the whole output's size.
type ToolOutputRow struct {
	ID, Tool string
	Data     []byte
	Total    int64
}

// ItemRow is an item of the key-value store (the LangGraph Store API):
// Namespace is the store's encoding of its labels (see store.Item), Value
// a JSON object, times Unix nanoseconds.
type ItemRow struct {
	Namespace, Key, Value string
	CreatedAt, UpdatedAt  int64
	// TTLMinutes is how long the item lives after it is put or read, in
	// minutes, and ExpiresAt when it expires; 0 (NULL) for an item that
	// does not expire.
	TTLMinutes float64
	ExpiresAt  int64
}

// VectorRow is the embedding of one field of an item: Path names the
// field (a JSON path), Digest the model, dimensions and text it was made
// from, and Vector holds its little-endian float32 components.
type VectorRow struct {
	Namespace, Key, Path, Digest string
	Vector                       []byte
}

// ThreadLock is what a write reads of the thread it locked: Step is the
// highest step, Head the step of its latest state, Branch that state's
// branch and Messages its message count.
type ThreadLock struct {
	PK, Step, Head, Branch, Messages int64
	Parts                            string
	Running                          bool
	// Owner is the thread's owner, "" for none.
	Owner string
}

// RunRow is a run as stored; Output is nil for NULL.
type RunRow struct {
	ID, ThreadID, Route, Status, Error string
	Output                             []byte
	CreatedAt, UpdatedAt               int64
	Metadata                           []byte // nil for NULL
	Attrs                              []byte // nil for NULL
}

// NewRun is a run to insert, running, owned by Owner.
type NewRun struct {
	ID       string
	ThreadPK int64
	Route    string
	Owner    int64
	Now      int64
	// Request is the JSON request the run was started with, or "" to
	// keep none (NULL).
	Request string
	// Metadata is the run's JSON metadata, or "" for none (NULL).
	Metadata string
	// Attrs is what the run's starter keeps with it as JSON, or "" for
	// none (NULL).
	Attrs string
}

// RunLock is what a step or a run's end reads of its run and thread.
type RunLock struct {
	PK, ThreadPK                 int64
	ThreadID, Status             string
	Step, Messages, Head, Branch int64
	Parts                        string
	// Owner is the owner pk of the store running the run.
	Owner int64
}

// CheckpointRow is one row of a checkpoint: Kind 0 is the head (Seq the
// step, Count the message count, Updated, RunID, Route, Text the state,
// Data the parts metadata, Head, Branch and CopyOf), kind 1 a message of
// the head's branch (Seq, Data) and kind 2 a part of a state
// field (Seq, Text the field, Data). Data is valid only during the
// callback.
type CheckpointRow struct {
	Kind                int
	Seq, Count, Updated int64
	RunID, Route, Text  string
	Data                []byte
	Head, Branch        int64
	CopyOf              string
}

// CheckpointWrite is a step's new checkpoint, the child of Parent (a
// step; 0 for none) on Branch. Status "" keeps the thread's status; with
// ValuesOnly (a change of state outside any run) the thread keeps its run
// id and route.
type CheckpointWrite struct {
	ThreadPK, Step, Parent, Branch, Messages int64
	// Input is the message count once the run's input was added, before
	// the step's own messages; 0 when the step took no input.
	Input                int64
	RunID, Route, Source string
	State, Parts         string
	Status               string
	Now                  int64
	ValuesOnly           bool
}

// CheckpointMeta is a kept checkpoint as its row holds it: its messages
// are the first Messages of Branch.
type CheckpointMeta struct {
	Step, Parent, Branch, Messages, Input int64
	RunID, Route, Source, State, Parts    string
	CreatedAt                             int64
	CopyOf                                string // the thread's copy_of
}

// CheckpointFilter selects kept checkpoints: below step Before (0: any),
// or the one at Step (0: any), at most Limit (0: all).
type CheckpointFilter struct {
	Before, Step int64
	Limit        int
}

// Segment says that messages Lo..Hi-1 of a branch are the rows of Key.
type Segment struct{ Key, Lo, Hi int64 }

// HeadWrite is a thread's new head: checkpoint Head on Branch with its
// message count, run, route, state and parts.
type HeadWrite struct {
	ThreadPK, Head, Branch, Messages int64
	RunID, Route, State, Parts       string
	Now                              int64
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
