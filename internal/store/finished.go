package store

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/dawn-go/dawn/stream"
)

// FinishedRun is a run that ended successfully, with the data of its done
// event, which holds the thread's state as the run left it.
type FinishedRun struct {
	ID, ThreadID, Route  string
	CreatedAt, UpdatedAt time.Time
	// Done is the data of the run's done event, {"output": ...}, when the
	// query asked for it.
	Done json.RawMessage
}

// FinishedQuery selects a thread's successful runs for FinishedRuns.
type FinishedQuery struct {
	ThreadID string
	// RunID keeps only that run.
	RunID string
	// Before keeps only runs created before that run of the thread.
	Before string
	// Limit bounds the runs returned; 0 means no bound.
	Limit int
	// Done asks for each run's done event, which holds the whole state;
	// without it only the runs are read.
	Done bool
}

// FinishedRuns returns a thread's successful runs, newest first, with
// their done event if asked: the states the thread has been in between
// runs. A plan preview, which changed no state, is not one of them. It
// fails with ErrNotFound when the thread does not exist.
func (s *SQLite) FinishedRuns(ctx context.Context, q FinishedQuery) ([]FinishedRun, error) {
	data := `0, NULL`
	if q.Done {
		data = `h.codec, h.data`
	}
	query := `SELECT r.id, r.route, r.created_at, r.updated_at, ` + data + `
		FROM runs r JOIN threads t ON t.pk = r.thread
		JOIN history h ON h.thread = r.thread AND h.run = r.pk AND h.type = ?
		WHERE t.id = ? AND r.status = ?
		AND (CASE WHEN json_valid(r.output) THEN json_extract(r.output, '$.preview') END) IS NULL`
	args := []any{stream.TypeDone, q.ThreadID, RunSuccess}
	if q.RunID != "" {
		query += ` AND r.id = ?`
		args = append(args, q.RunID)
	}
	if q.Before != "" {
		query += ` AND (r.created_at, r.pk) < (SELECT created_at, pk FROM runs WHERE id = ?)`
		args = append(args, q.Before)
	}
	query += ` ORDER BY r.created_at DESC, r.pk DESC`
	if q.Limit > 0 {
		query += ` LIMIT ?`
		args = append(args, q.Limit)
	}
	defer s.lockRead()()
	rows, err := s.rq.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, fmt.Errorf("store: finished runs of thread %q: %w", q.ThreadID, err)
	}
	defer rows.Close()
	out := []FinishedRun{}
	var u unpacker
	for rows.Next() {
		r := FinishedRun{ThreadID: q.ThreadID}
		var created, updated int64
		var codec int
		var data []byte
		if err := rows.Scan(&r.ID, &r.Route, &created, &updated, &codec, &data); err != nil {
			return nil, fmt.Errorf("store: finished runs of thread %q: %w", q.ThreadID, err)
		}
		if r.Done, err = u.unpack(codec, data); err != nil {
			return nil, fmt.Errorf("store: done event of run %q: %w", r.ID, err)
		}
		r.CreatedAt, r.UpdatedAt = fromNanos(created), fromNanos(updated)
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: finished runs of thread %q: %w", q.ThreadID, err)
	}
	if len(out) == 0 {
		if err := s.threadExists(ctx, q.ThreadID); err != nil {
			return nil, err
		}
	}
	return out, nil
}
