package dialect

// QueuedRow is a queued run as stored: Request is the runner's request
// (JSON), times are Unix nanoseconds. ThreadPK is set on insert only;
// Owner is the owner of the run's thread, read only.
type QueuedRow struct {
	ID, ThreadID, Route, Request string
	ThreadPK                     int64
	NotBefore, CreatedAt         int64
	Owner                        string
}

// DueQuery asks Reader.DueQueued for the due heads of the queues: of one
// thread (ThreadID) or of all, due at At (Unix nanoseconds), at most
// Limit after skipping Skip.
type DueQuery struct {
	ThreadID string
	At       int64
	Skip     int
	Limit    int
}

// QueuedColumns reads queued runs with their thread's id and owner; the
// join names the queued run q and its thread t.
const QueuedColumns = `SELECT q.id, t.id, q.route, q.request, q.not_before, q.created_at, t.owner
	FROM queued_runs q JOIN threads t ON t.pk = q.thread`

// DueFair wraps a query of QueuedColumns and DueWhere (with q.pk as a
// last column, named pk) so that owners take turns: each due run is
// ranked among the due runs of its thread's owner, oldest first, and the
// runs are read by rank, then age. No owner's due runs, however many,
// come before another owner's oldest; a sweep that reads a page at a
// time reaches every owner's. The dialect adds its LIMIT and OFFSET.
func DueFair(due string) string {
	return `SELECT id, thread_id, route, request, not_before, created_at, owner FROM (
	SELECT d.*, row_number() OVER (PARTITION BY d.owner ORDER BY d.not_before, d.pk) AS turn
	FROM (` + due + `) d) f ORDER BY turn, not_before, pk`
}

// DueColumns is QueuedColumns with the names DueFair reads.
const DueColumns = `SELECT q.id AS id, t.id AS thread_id, q.route AS route, q.request AS request,
	q.not_before AS not_before, q.created_at AS created_at, t.owner AS owner, q.pk AS pk
	FROM queued_runs q JOIN threads t ON t.pk = q.thread`

// DueWhere selects, with QueuedColumns, the head of each thread's queue
// (its row with the least not_before, then pk) when it is due and its
// thread has no running run. Its one argument (the time) goes where the
// dialect's first placeholder is; ph is that placeholder.
func DueWhere(ph string) string {
	return ` WHERE q.not_before <= ` + ph + `
	AND NOT EXISTS (SELECT 1 FROM runs r WHERE r.thread = q.thread AND r.status = 'running')
	AND NOT EXISTS (SELECT 1 FROM queued_runs p WHERE p.thread = q.thread
		AND (p.not_before < q.not_before OR (p.not_before = q.not_before AND p.pk < q.pk)))`
}

// QueueOrder is the order a thread's queue is taken in.
const QueueOrder = ` ORDER BY q.not_before, q.pk`

// ScanQueued reads rows of QueuedColumns.
func ScanQueued(rows Rows) ([]QueuedRow, error) {
	return scanAll(rows, func(q *QueuedRow) []any {
		return []any{&q.ID, &q.ThreadID, &q.Route, &q.Request, &q.NotBefore, &q.CreatedAt, &q.Owner}
	})
}

// What Tx.CountOwned counts.
const (
	OwnedThreads = "threads"
	OwnedCrons   = "crons"
	OwnedQueued  = "queued_runs"
)

// CountOwnedQuery is the query of Tx.CountOwned for what, its one
// argument (the owner) at the dialect's placeholder ph.
func CountOwnedQuery(what, ph string) string {
	switch what {
	case OwnedThreads:
		return `SELECT count(*) FROM threads WHERE owner = ` + ph
	case OwnedCrons:
		return `SELECT count(*) FROM crons WHERE owner = ` + ph
	}
	return `SELECT count(*) FROM queued_runs q JOIN threads t ON t.pk = q.thread WHERE t.owner = ` + ph
}
