package dialect

// Rows is a result set as both drivers give it (database/sql's *sql.Rows
// and pgx's Rows), for the scans the dialects share. The caller closes
// it.
type Rows interface {
	Next() bool
	Scan(dest ...any) error
	Err() error
}

// scanAll reads every row of rows with scan.
func scanAll[T any](rows Rows, scan func(*T) []any) ([]T, error) {
	var out []T
	for rows.Next() {
		var v T
		if err := rows.Scan(scan(&v)...); err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, rows.Err()
}

// ThreadColumns are the columns of a thread row of threads t, NULL as 0,
// in ScanThreads' order.
const ThreadColumns = `t.id, t.created_at, t.updated_at, t.metadata, t.status, t.owner, COALESCE(t.ttl, 0), COALESCE(t.expires_at, 0)`

// ScanThreads reads rows of ThreadColumns.
func ScanThreads(rows Rows) ([]ThreadRow, error) {
	out, err := scanAll(rows, func(t *ThreadRow) []any {
		return []any{&t.ID, &t.CreatedAt, &t.UpdatedAt, &t.Metadata, &t.Status, &t.Owner, &t.TTL, &t.ExpiresAt}
	})
	if out == nil && err == nil {
		out = []ThreadRow{}
	}
	return out, err
}

// ScanRuns reads rows of id, thread id, route, status, error, output,
// created, updated and metadata
// (NULL gives nil), created_at, updated_at.
func ScanRuns(rows Rows) ([]RunRow, error) {
	return scanAll(rows, func(r *RunRow) []any {
		return []any{&r.ID, &r.ThreadID, &r.Route, &r.Status, &r.Error, &r.Output, &r.CreatedAt, &r.UpdatedAt, &r.Metadata, &r.Attrs}
	})
}

// ScanOwners reads rows of pk, pid, host key, process start, expired.
func ScanOwners(rows Rows) ([]OwnerRow, error) {
	return scanAll(rows, func(o *OwnerRow) []any {
		return []any{&o.PK, &o.PID, &o.HostKey, &o.ProcStart, &o.Expired}
	})
}

// CheckpointColumns are the columns ScanCheckpoints reads, of checkpoints
// c joined with their thread t.
const CheckpointColumns = `c.step, c.parent, c.branch, c.message_count, c.input_count, c.run_id, c.route, c.source, c.state, c.parts, c.created_at, t.copy_of`

// ScanCheckpoints hands each row of CheckpointColumns to each.
func ScanCheckpoints(rows Rows, each func(CheckpointMeta) error) error {
	for rows.Next() {
		var m CheckpointMeta
		if err := rows.Scan(&m.Step, &m.Parent, &m.Branch, &m.Messages, &m.Input, &m.RunID, &m.Route, &m.Source,
			&m.State, &m.Parts, &m.CreatedAt, &m.CopyOf); err != nil {
			return err
		}
		if err := each(m); err != nil {
			return err
		}
	}
	return rows.Err()
}

// ScanCheckpoint reads the one checkpoint of rows (CheckpointColumns), or
// fails with ErrNoRow when there is none.
func ScanCheckpoint(rows Rows) (CheckpointMeta, error) {
	var found *CheckpointMeta
	err := ScanCheckpoints(rows, func(m CheckpointMeta) error { found = &m; return nil })
	if err == nil && found == nil {
		err = ErrNoRow
	}
	if err != nil {
		return CheckpointMeta{}, err
	}
	return *found, nil
}

// ScanSegments reads rows of key, lo, hi.
func ScanSegments(rows Rows) ([]Segment, error) {
	return scanAll(rows, func(s *Segment) []any { return []any{&s.Key, &s.Lo, &s.Hi} })
}
