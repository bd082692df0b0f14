package sqlite

import (
	"cmp"
	"context"
	"database/sql"
	"errors"
	"strings"
	"time"

	"github.com/dawn-go/dawn/internal/store/dialect"
	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

// tx is a write transaction on the writer connection: the caller of
// write holds mu, so nothing else writes meanwhile and no row needs a
// lock of its own.
type tx struct{ s *DB }

var _ dialect.Tx = tx{}

func (t tx) Latest(ctx context.Context, threadID string, each func(dialect.CheckpointRow) error) error {
	return scanLatest(ctx, t.s.st.latestW, threadID, each)
}

func (t tx) InsertThread(ctx context.Context, th dialect.ThreadRow) (int64, error) {
	res, err := t.s.st.insertThread.ExecContext(ctx, th.ID, th.CreatedAt, th.UpdatedAt, th.Metadata, th.Status, th.Owner, th.TTL, th.ExpiresAt, th.DeleteAfter)
	if err != nil {
		return 0, err
	}
	if n, err := res.RowsAffected(); err != nil || n == 0 {
		return 0, cmp.Or(err, dialect.ErrTaken)
	}
	return res.LastInsertId()
}

func (t tx) LockThread(ctx context.Context, id string) (dialect.ThreadLock, error) {
	var l dialect.ThreadLock
	err := t.s.st.lockThread.QueryRowContext(ctx, id).Scan(&l.PK, &l.Step, &l.Head, &l.Branch, &l.Messages, &l.Parts, &l.Running, &l.Owner)
	if errors.Is(err, sql.ErrNoRows) {
		return l, dialect.ErrNoRow
	}
	return l, err
}

func (t tx) SetThreadStatus(ctx context.Context, threadPK int64, status string, now int64) error {
	_, err := t.s.st.setThread.ExecContext(ctx, status, now, threadPK)
	return err
}

// deleteThreadStatements delete a thread (its pk is the one argument) and
// everything that belongs to it, children first.
var deleteThreadStatements = []string{
	`DELETE FROM history WHERE thread = ?`,
	`DELETE FROM tool_outputs WHERE thread = ?`,
	`DELETE FROM webhook_deliveries WHERE thread = ?`,
	`DELETE FROM checkpoints WHERE thread = ?`,
	`DELETE FROM branches WHERE thread = ?`,
	`DELETE FROM runs WHERE thread = ?`,
	`DELETE FROM queued_runs WHERE thread = ?`,
	`DELETE FROM threads WHERE pk = ?`,
}

func (t tx) DeleteThread(ctx context.Context, threadPK int64) error {
	for _, stmt := range deleteThreadStatements {
		if _, err := t.s.conn.ExecContext(ctx, stmt, threadPK); err != nil {
			return err
		}
	}
	return nil
}

func (t tx) InsertRun(ctx context.Context, r dialect.NewRun) error {
	_, err := t.s.st.insertRun.ExecContext(ctx, r.ID, r.ThreadPK, r.Route, r.Now, r.Now, r.Owner, nullText(r.Request), nullText(r.Metadata), nullText(r.Attrs))
	var e *sqlite.Error
	if errors.As(err, &e) && e.Code() == sqlite3.SQLITE_CONSTRAINT_UNIQUE {
		if strings.Contains(e.Error(), "runs.thread") { // the runs_running index
			return dialect.ErrRunning
		}
		return dialect.ErrTaken
	}
	return err
}

func (t tx) LockRun(ctx context.Context, runID string) (dialect.RunLock, error) {
	var l dialect.RunLock
	err := t.s.st.lockRun.QueryRowContext(ctx, runID).Scan(&l.PK, &l.Status, &l.ThreadPK, &l.ThreadID, &l.Step, &l.Messages, &l.Head, &l.Branch, &l.Parts, &l.Owner)
	if errors.Is(err, sql.ErrNoRows) {
		return l, dialect.ErrNoRow
	}
	return l, err
}

func (t tx) FinishRun(ctx context.Context, runPK int64, status, errText string, output []byte, now int64) error {
	var out any
	if output != nil {
		out = string(output)
	}
	_, err := t.s.st.finishRun.ExecContext(ctx, status, errText, out, now, runPK)
	return err
}

func (t tx) InsertMessages(ctx context.Context, threadPK, branch, first int64, data []string) error {
	for i, d := range data {
		if _, err := t.s.st.insertMessage.ExecContext(ctx, threadPK, branch, first+int64(i), d); err != nil {
			return err
		}
	}
	return nil
}

// InsertEvent stores plain data as TEXT and compressed data as a BLOB.
func (t tx) InsertEvent(ctx context.Context, threadPK, runPK int64, ev dialect.EventRow) error {
	var data any = ev.Data
	if ev.Codec == 0 {
		data = string(ev.Data)
	}
	_, err := t.s.st.insertEvent.ExecContext(ctx, threadPK, runPK, ev.Seq, ev.Type, ev.Codec, data)
	return err
}

func (t tx) InsertPart(ctx context.Context, threadPK, seq int64, field string, data []byte) error {
	_, err := t.s.st.insertPart.ExecContext(ctx, threadPK, seq, field, string(data))
	return err
}

func (t tx) DeleteParts(ctx context.Context, threadPK int64, field string) error {
	_, err := t.s.st.deleteParts.ExecContext(ctx, threadPK, field)
	return err
}

func (t tx) SaveCheckpoint(ctx context.Context, c dialect.CheckpointWrite) error {
	var err error
	if c.ValuesOnly {
		_, err = t.s.st.saveValues.ExecContext(ctx, c.Step, c.Branch, c.Messages, c.State, c.Parts, c.Now, c.ThreadPK)
	} else {
		var status any
		if c.Status != "" {
			status = c.Status
		}
		_, err = t.s.st.saveCheckpoint.ExecContext(ctx,
			c.Step, c.Branch, c.Messages, c.RunID, c.Route, c.State, c.Parts, c.Now, status, c.ThreadPK)
	}
	if err != nil {
		return err
	}
	_, err = t.s.st.insertCheckpoint.ExecContext(ctx, c.ThreadPK, c.Step, c.Parent, c.Branch, c.Messages, c.Input,
		c.RunID, c.Route, c.Source, c.State, c.Parts, c.Now)
	return err
}

func (t tx) Checkpoint(ctx context.Context, threadPK, step int64) (dialect.CheckpointMeta, error) {
	rows, err := t.s.conn.QueryContext(ctx, `SELECT `+dialect.CheckpointColumns+`
		FROM checkpoints c JOIN threads t ON t.pk = c.thread WHERE c.thread = ? AND c.step = ?`, threadPK, step)
	if err != nil {
		return dialect.CheckpointMeta{}, err
	}
	defer rows.Close()
	return dialect.ScanCheckpoint(rows)
}

func (t tx) Segments(ctx context.Context, threadID string, branch int64) ([]dialect.Segment, error) {
	return segments(ctx, t.s.conn, threadID, branch)
}

func (t tx) Messages(ctx context.Context, threadID string, key, lo, hi int64, each func(seq int64, data []byte) error) error {
	return messages(ctx, t.s.conn, threadID, key, lo, hi, each)
}

// NewBranch also records an empty segment of the new key itself, so that
// a branch that inherits nothing still holds its key.
func (t tx) NewBranch(ctx context.Context, threadPK int64, segs []dialect.Segment) (int64, error) {
	var key int64
	err := t.s.conn.QueryRowContext(ctx, `SELECT min(coalesce(min(branch), -1), -1) - 1 FROM branches WHERE thread = ?`, threadPK).Scan(&key)
	if err != nil {
		return 0, err
	}
	for _, sg := range append(segs, dialect.Segment{Key: key}) {
		if _, err := t.s.conn.ExecContext(ctx, `INSERT INTO branches(thread, branch, key, lo, hi) VALUES (?, ?, ?, ?, ?)`,
			threadPK, key, sg.Key, sg.Lo, sg.Hi); err != nil {
			return 0, err
		}
	}
	return key, nil
}

func (t tx) MoveHead(ctx context.Context, f dialect.HeadWrite) error {
	_, err := t.s.conn.ExecContext(ctx, `UPDATE threads SET head = ?, branch = ?, message_count = ?, run_id = ?, route = ?,
		state = ?, parts = ?, updated_at = ? WHERE pk = ?`,
		f.Head, f.Branch, f.Messages, f.RunID, f.Route, f.State, f.Parts, f.Now, f.ThreadPK)
	return err
}

// copyThreadStatements copy a thread's kept state (from's pk is the
// first argument, to's the second).
var copyThreadStatements = []string{
	`INSERT INTO history(thread, run, seq, type, codec, data)
		SELECT ?2, run, seq, type, codec, data FROM history WHERE thread = ?1 AND run <= 0 ORDER BY run DESC, seq`,
	`INSERT INTO checkpoints(thread, step, parent, branch, message_count, input_count, run_id, route, source, state, parts, created_at)
		SELECT ?2, step, parent, branch, message_count, input_count, run_id, route, source, state, parts, created_at
		FROM checkpoints WHERE thread = ?1 ORDER BY step`,
	`INSERT INTO branches(thread, branch, key, lo, hi) SELECT ?2, branch, key, lo, hi FROM branches WHERE thread = ?1`,
	// The copy's tool messages name the outputs stored with the thread.
	`INSERT INTO tool_outputs(thread, id, tool, data, created_at) SELECT ?2, id, tool, data, created_at FROM tool_outputs WHERE thread = ?1`,
	`UPDATE threads SET (step, head, branch, message_count, run_id, route, checkpoint_at, state, parts) =
		(SELECT step, head, branch, message_count, run_id, route, checkpoint_at, state, parts FROM threads WHERE pk = ?1)
		WHERE pk = ?2`,
}

func (t tx) CopyThread(ctx context.Context, fromPK, toPK int64, copyOf string) error {
	for _, stmt := range copyThreadStatements {
		if _, err := t.s.conn.ExecContext(ctx, stmt, fromPK, toPK); err != nil {
			return err
		}
	}
	_, err := t.s.conn.ExecContext(ctx, `UPDATE threads SET copy_of = ? WHERE pk = ?`, copyOf, toPK)
	return err
}

// RunChanged does nothing: no other process follows an SQLite store's
// runs.
func (tx) RunChanged(context.Context, string) error { return nil }

func (t tx) SetAppValue(ctx context.Context, key, value string, now int64) error {
	_, err := t.s.conn.ExecContext(ctx, `INSERT INTO app_values (key, value, updated_at) VALUES (?, ?, ?)
		ON CONFLICT (key) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at`, key, value, now)
	return err
}

// Leases are Unix nanoseconds by the writer's clock: the processes that
// share a file share a machine.

func (t tx) InsertOwner(ctx context.Context, o dialect.Owner, at time.Time, lease time.Duration) (int64, error) {
	var pk int64
	err := t.s.st.insertOwner.QueryRowContext(ctx, o.PID, o.Host, o.HostKey, o.ProcStart, at.UnixNano(), at.UnixNano()+int64(lease)).Scan(&pk)
	return pk, err
}

func (t tx) RenewOwner(ctx context.Context, pk int64, o dialect.Owner, at time.Time, lease time.Duration) error {
	_, err := t.s.st.claimOwner.ExecContext(ctx, pk, o.PID, o.Host, o.HostKey, o.ProcStart, at.UnixNano(), at.UnixNano()+int64(lease))
	return err
}

func (t tx) Owners(ctx context.Context, self int64, at time.Time) ([]dialect.OwnerRow, error) {
	rows, err := t.s.st.owners.QueryContext(ctx, at.UnixNano(), self)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	return dialect.ScanOwners(rows)
}

func (t tx) DeleteOwner(ctx context.Context, pk int64) error {
	_, err := t.s.st.deleteOwner.ExecContext(ctx, pk)
	return err
}

// recoverThreads and recoverRuns are InterruptOrphans' statements: they
// take the running runs whose owner has no row. Both find the running runs
// through the runs_running index, which holds only those, and each owner
// by its pk, so recovery takes as long as there are runs running, whatever
// the size of the store.
const (
	recoverThreads = `UPDATE threads SET status = ?, updated_at = ?
		WHERE pk IN (SELECT thread FROM runs r WHERE status = 'running'
			AND NOT EXISTS (SELECT 1 FROM owners o WHERE o.pk = r.owner))`
	recoverRuns = `UPDATE runs SET status = ?, error = ?, updated_at = ? WHERE status = 'running'
		AND NOT EXISTS (SELECT 1 FROM owners o WHERE o.pk = runs.owner)`
)

func (t tx) InterruptOrphans(ctx context.Context, status, threadStatus, errText string, now int64) (int, error) {
	if _, err := t.s.conn.ExecContext(ctx, recoverThreads, threadStatus, now); err != nil {
		return 0, err
	}
	res, err := t.s.conn.ExecContext(ctx, recoverRuns, status, errText, now)
	if err != nil {
		return 0, err
	}
	n, err := res.RowsAffected()
	return int(n), err
}

// nullText is s, or NULL when s is empty.
func nullText(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// orphanRuns is OrphanRuns' query: the running runs that kept their
// request and whose owner has no row, found through the runs_running
// index as recovery's statements are.
const orphanRuns = `SELECT r.pk, r.owner, r.id, t.id, r.route, r.request, r.created_at, r.updated_at
	FROM runs r JOIN threads t ON t.pk = r.thread
	WHERE r.status = 'running' AND r.request IS NOT NULL
		AND NOT EXISTS (SELECT 1 FROM owners o WHERE o.pk = r.owner)
	ORDER BY r.pk`

// OrphanRuns needs no lock of its own: the write transaction holds the
// database.
func (t tx) OrphanRuns(ctx context.Context) ([]dialect.OrphanRun, error) {
	rows, err := t.s.conn.QueryContext(ctx, orphanRuns)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []dialect.OrphanRun
	for rows.Next() {
		var o dialect.OrphanRun
		if err := rows.Scan(&o.PK, &o.Owner, &o.ID, &o.ThreadID, &o.Route, &o.Request, &o.CreatedAt, &o.UpdatedAt); err != nil {
			return nil, err
		}
		out = append(out, o)
	}
	return out, rows.Err()
}

func (t tx) ClaimRuns(ctx context.Context, runPKs []int64, owner, now int64) error {
	for _, pk := range runPKs {
		if _, err := t.s.conn.ExecContext(ctx, `UPDATE runs SET owner = ?, updated_at = ? WHERE pk = ? AND status = 'running'`, owner, now, pk); err != nil {
			return err
		}
	}
	return nil
}
