package dialect

import (
	"math"
	"strings"
)

// CronRow is a cron as stored. Times are Unix nanoseconds; NextRunAt is
// the tick the cron fires at next (0: none, the cron has ended), EndTime
// 0 means no end. ThreadID "" runs each tick on a new thread. Payload is
// the run request (JSON) each tick starts; Metadata a JSON object.
type CronRow struct {
	ID, AssistantID, ThreadID string
	Schedule, Timezone        string
	Payload, Metadata         string
	OnRunCompleted            string
	NextRunAt, EndTime        int64
	CreatedAt, UpdatedAt      int64
	Enabled                   bool
	// Owner is the user the cron belongs to, "" for none.
	Owner string
}

// CronFilter is a checked cron search: every field is valid.
type CronFilter struct {
	AssistantID, ThreadID string
	// ID, when not "", keeps the cron with that id; Owner, when not "",
	// the crons that user owns.
	ID, Owner string
	// Enabled, when not nil, keeps the crons whose enabled flag it holds.
	Enabled *bool
	// DueBy, when above 0, keeps the enabled crons whose next tick is at
	// or before it.
	DueBy int64
	// Sort is a column of CronColumns' names: "cron_id", "assistant_id",
	// "thread_id", "created_at", "updated_at" or "next_run_date".
	Sort          string
	Desc          bool
	Limit, Offset int
}

// CronColumns are the columns of a cron row, in CronRow's scan order
// (see ScanCron).
const CronColumns = `id, assistant_id, thread_id, schedule, timezone, payload, metadata, on_run_completed,
	next_run_at, end_time, created_at, updated_at, enabled, owner`

// cronSort maps the sort names a client sends to columns.
var cronSort = map[string]string{
	"cron_id": "id", "assistant_id": "assistant_id", "thread_id": "thread_id",
	"created_at": "created_at", "updated_at": "updated_at", "next_run_date": "next_run_at",
}

// CronWhere is f's WHERE clause over crons (with a leading space, or
// empty), its arguments in a.
func CronWhere(a *Args, f CronFilter) string {
	var conds []string
	if f.AssistantID != "" {
		conds = append(conds, "assistant_id = "+a.Add(f.AssistantID))
	}
	if f.ThreadID != "" {
		conds = append(conds, "thread_id = "+a.Add(f.ThreadID))
	}
	if f.ID != "" {
		conds = append(conds, "id = "+a.Add(f.ID))
	}
	if f.Owner != "" {
		conds = append(conds, "owner = "+a.Add(f.Owner))
	}
	if f.Enabled != nil {
		conds = append(conds, "enabled = "+a.Add(*f.Enabled))
	}
	if f.DueBy > 0 {
		conds = append(conds, "enabled = "+a.Add(true), "next_run_at > 0", "next_run_at <= "+a.Add(f.DueBy))
	}
	if len(conds) == 0 {
		return ""
	}
	return " WHERE " + strings.Join(conds, " AND ")
}

// CronQuery is the SELECT of the crons f selects, in its order and page.
func CronQuery(a *Args, f CronFilter) string {
	q := "SELECT " + CronColumns + " FROM crons" + CronWhere(a, f)
	col := cronSort[f.Sort]
	if col == "" {
		col = "created_at"
	}
	dir := " ASC"
	if f.Desc {
		dir = " DESC"
	}
	q += " ORDER BY " + col + dir + ", id" + dir
	switch {
	case f.Limit > 0:
		q += " LIMIT " + a.Add(f.Limit)
	case f.Offset > 0:
		q += " LIMIT " + a.Add(math.MaxInt64) // SQLite takes OFFSET only after a LIMIT
	}
	if f.Offset > 0 {
		q += " OFFSET " + a.Add(f.Offset)
	}
	return q
}

// ScanCron scans a row of CronColumns; scan is the row's Scan.
func ScanCron(scan func(dest ...any) error) (CronRow, error) {
	var c CronRow
	err := scan(&c.ID, &c.AssistantID, &c.ThreadID, &c.Schedule, &c.Timezone, &c.Payload, &c.Metadata, &c.OnRunCompleted,
		&c.NextRunAt, &c.EndTime, &c.CreatedAt, &c.UpdatedAt, &c.Enabled, &c.Owner)
	return c, err
}
