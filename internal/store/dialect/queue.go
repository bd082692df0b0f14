package dialect

// QueuedRow is a queued run as stored: Request is the runner's request
// (JSON), times are Unix nanoseconds. ThreadPK is set on insert only.
type QueuedRow struct {
	ID, ThreadID, Route, Request string
	ThreadPK                     int64
	NotBefore, CreatedAt         int64
}

// QueuedColumns reads queued runs with their thread's id; the join names
// the queued run q and its thread t.
const QueuedColumns = `SELECT q.id, t.id, q.route, q.request, q.not_before, q.created_at
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
		return []any{&q.ID, &q.ThreadID, &q.Route, &q.Request, &q.NotBefore, &q.CreatedAt}
	})
}
