package postgres

import (
	"bytes"
	"context"
	"errors"
	"time"

	"github.com/dawn-go/dawn/internal/store/dialect"
	"github.com/jackc/pgx/v5"
)

// tx is a write transaction. Statements whose answer the caller does not
// need wait in a batch, sent in one round trip before the next read and
// before the commit: a step's inserts and updates cost one round trip.
type tx struct {
	tx pgx.Tx
	b  *pgx.Batch
}

var _ dialect.Tx = (*tx)(nil)

// queue adds a statement to the batch.
func (t *tx) queue(query string, args ...any) { t.b.Queue(query, args...) }

// flush sends the batch.
func (t *tx) flush(ctx context.Context) error {
	if t.b.Len() == 0 {
		return nil
	}
	err := t.tx.SendBatch(ctx, t.b).Close()
	t.b = &pgx.Batch{}
	return err
}

// queryRow flushes the batch, then runs a query of one row.
func (t *tx) queryRow(ctx context.Context, query string, args []any, dest ...any) error {
	if err := t.flush(ctx); err != nil {
		return err
	}
	err := t.tx.QueryRow(ctx, query, args...).Scan(dest...)
	if errors.Is(err, pgx.ErrNoRows) {
		return dialect.ErrNoRow
	}
	return err
}

func (t *tx) Latest(ctx context.Context, threadID string, each func(dialect.CheckpointRow) error) error {
	if err := t.flush(ctx); err != nil {
		return err
	}
	return latest(ctx, t.tx, threadID, each)
}

const insertThread = `INSERT INTO threads(id, created_at, updated_at, metadata, status, owner, ttl, expires_at, delete_after)
	VALUES ($1, $2, $3, $4, $5, $6, NULLIF($7::bigint, 0), NULLIF($8::bigint, 0), NULLIF($9::bigint, 0)) ON CONFLICT (id) DO NOTHING RETURNING pk`

func (t *tx) InsertThread(ctx context.Context, th dialect.ThreadRow) (int64, error) {
	var pk int64
	err := t.queryRow(ctx, insertThread, []any{th.ID, th.CreatedAt, th.UpdatedAt, th.Metadata, th.Status, th.Owner, th.TTL, th.ExpiresAt, th.DeleteAfter}, &pk)
	if errors.Is(err, dialect.ErrNoRow) {
		return 0, dialect.ErrTaken
	}
	return pk, err
}

// LockThread locks the thread row and then, in a statement of its own
// (and so, under READ COMMITTED, a snapshot taken after the lock), asks
// whether the thread has a running run.
func (t *tx) LockThread(ctx context.Context, id string) (dialect.ThreadLock, error) {
	var l dialect.ThreadLock
	if err := t.queryRow(ctx, `SELECT pk, step, head, branch, message_count, parts, owner FROM threads WHERE id = $1 FOR UPDATE`, []any{id},
		&l.PK, &l.Step, &l.Head, &l.Branch, &l.Messages, &l.Parts, &l.Owner); err != nil {
		return l, err
	}
	err := t.queryRow(ctx, `SELECT EXISTS(SELECT 1 FROM runs WHERE thread = $1 AND status = 'running')`, []any{l.PK}, &l.Running)
	return l, err
}

func (t *tx) SetThreadStatus(_ context.Context, threadPK int64, status string, now int64) error {
	// expires_at moves with updated_at: NULL (no TTL) plus anything
	// stays NULL.
	t.queue(`UPDATE threads SET status = $1, updated_at = $2, expires_at = $2 + ttl WHERE pk = $3`, status, now, threadPK)
	return nil
}

func (t *tx) DeleteThread(_ context.Context, threadPK int64) error {
	for _, q := range []string{`DELETE FROM history WHERE thread = $1`, `DELETE FROM tool_outputs WHERE thread = $1`,
		`DELETE FROM webhook_deliveries WHERE thread = $1`, `DELETE FROM checkpoints WHERE thread = $1`,
		`DELETE FROM branches WHERE thread = $1`, `DELETE FROM runs WHERE thread = $1`, `DELETE FROM queued_runs WHERE thread = $1`, `DELETE FROM threads WHERE pk = $1`} {
		t.queue(q, threadPK)
	}
	return nil
}

// InsertRun runs at once: the partial unique index runs_running is the
// last word on one run per thread, and its answer is needed now.
func (t *tx) InsertRun(ctx context.Context, r dialect.NewRun) error {
	if err := t.flush(ctx); err != nil {
		return err
	}
	var request *string
	if r.Request != "" {
		request = &r.Request
	}
	var metadata, attrs *string
	if r.Metadata != "" {
		metadata = &r.Metadata
	}
	if r.Attrs != "" {
		attrs = &r.Attrs
	}
	_, err := t.tx.Exec(ctx, `INSERT INTO runs(id, thread, route, status, created_at, updated_at, owner, request, metadata, attrs)
		VALUES ($1, $2, $3, 'running', $4, $5, $6, $7, $8, $9)`, r.ID, r.ThreadPK, r.Route, r.Now, r.Now, r.Owner, request, metadata, attrs)
	switch uniqueViolation(err) {
	case "":
		return err
	case "runs_running":
		return dialect.ErrRunning
	default:
		return dialect.ErrTaken
	}
}

func (t *tx) LockRun(ctx context.Context, runID string) (dialect.RunLock, error) {
	var l dialect.RunLock
	err := t.queryRow(ctx, `SELECT r.pk, r.status, t.pk, t.id, t.step, t.message_count, t.head, t.branch, t.parts, r.owner
		FROM runs r JOIN threads t ON t.pk = r.thread WHERE r.id = $1 FOR UPDATE`, []any{runID},
		&l.PK, &l.Status, &l.ThreadPK, &l.ThreadID, &l.Step, &l.Messages, &l.Head, &l.Branch, &l.Parts, &l.Owner)
	return l, err
}

func (t *tx) FinishRun(_ context.Context, runPK int64, status, errText string, output []byte, now int64) error {
	var out any
	if output != nil {
		out = string(output)
	}
	t.queue(`UPDATE runs SET status = $1, error = $2, output = $3, updated_at = $4 WHERE pk = $5`, status, errText, out, now, runPK)
	return nil
}

func (t *tx) InsertMessages(_ context.Context, threadPK, branch, first int64, data []string) error {
	for i, d := range data {
		t.queue(`INSERT INTO history(thread, run, seq, data) VALUES ($1, $2, $3, $4)`, threadPK, branch, first+int64(i), []byte(d))
	}
	return nil
}

func (t *tx) InsertEvent(_ context.Context, threadPK, runPK int64, ev dialect.EventRow) error {
	t.queue(`INSERT INTO history(thread, run, seq, type, codec, data) VALUES ($1, $2, $3, $4, $5, $6)`,
		threadPK, runPK, ev.Seq, ev.Type, ev.Codec, bytes.Clone(ev.Data)) // sent later; the caller reuses its buffer
	return nil
}

func (t *tx) InsertPart(_ context.Context, threadPK, seq int64, field string, data []byte) error {
	t.queue(`INSERT INTO history(thread, run, seq, type, data) VALUES ($1, -1, $2, $3, $4)`, threadPK, seq, field, bytes.Clone(data))
	return nil
}

func (t *tx) DeleteParts(_ context.Context, threadPK int64, field string) error {
	t.queue(`DELETE FROM history WHERE thread = $1 AND run = -1 AND type = $2`, threadPK, field)
	return nil
}

func (t *tx) SaveCheckpoint(_ context.Context, c dialect.CheckpointWrite) error {
	if c.ValuesOnly {
		t.queue(`UPDATE threads SET step = $1, head = $1, branch = $2, message_count = $3, state = $4, parts = $5,
			checkpoint_at = $6, updated_at = $6, expires_at = $6 + ttl WHERE pk = $7`,
			c.Step, c.Branch, c.Messages, c.State, c.Parts, c.Now, c.ThreadPK)
	} else {
		var status any
		if c.Status != "" {
			status = c.Status
		}
		t.queue(`UPDATE threads SET step = $1, head = $1, branch = $2, message_count = $3, run_id = $4, route = $5,
			state = $6, parts = $7, checkpoint_at = $8, updated_at = $8, expires_at = $8 + ttl, status = coalesce($9, status) WHERE pk = $10`,
			c.Step, c.Branch, c.Messages, c.RunID, c.Route, c.State, c.Parts, c.Now, status, c.ThreadPK)
	}
	t.queue(`INSERT INTO checkpoints(thread, step, parent, branch, message_count, input_count, run_id, route, source, state, parts, created_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)`,
		c.ThreadPK, c.Step, c.Parent, c.Branch, c.Messages, c.Input, c.RunID, c.Route, c.Source, c.State, c.Parts, c.Now)
	return nil
}

func (t *tx) Checkpoint(ctx context.Context, threadPK, step int64) (dialect.CheckpointMeta, error) {
	if err := t.flush(ctx); err != nil {
		return dialect.CheckpointMeta{}, err
	}
	rows, err := t.tx.Query(ctx, `SELECT `+dialect.CheckpointColumns+`
		FROM checkpoints c JOIN threads t ON t.pk = c.thread WHERE c.thread = $1 AND c.step = $2`, threadPK, step)
	if err != nil {
		return dialect.CheckpointMeta{}, err
	}
	defer rows.Close()
	return dialect.ScanCheckpoint(rows)
}

func (t *tx) Segments(ctx context.Context, threadID string, branch int64) ([]dialect.Segment, error) {
	if err := t.flush(ctx); err != nil {
		return nil, err
	}
	return segments(ctx, t.tx, threadID, branch)
}

func (t *tx) Messages(ctx context.Context, threadID string, key, lo, hi int64, each func(seq int64, data []byte) error) error {
	if err := t.flush(ctx); err != nil {
		return err
	}
	return messages(ctx, t.tx, threadID, key, lo, hi, each)
}

// NewBranch also records an empty segment of the new key itself, so that
// a branch that inherits nothing still holds its key.
func (t *tx) NewBranch(ctx context.Context, threadPK int64, segs []dialect.Segment) (int64, error) {
	var key int64
	err := t.queryRow(ctx, `SELECT least(coalesce(min(branch), -1), -1) - 1 FROM branches WHERE thread = $1`, []any{threadPK}, &key)
	if err != nil {
		return 0, err
	}
	for _, sg := range append(segs, dialect.Segment{Key: key}) {
		t.queue(`INSERT INTO branches(thread, branch, key, lo, hi) VALUES ($1, $2, $3, $4, $5)`, threadPK, key, sg.Key, sg.Lo, sg.Hi)
	}
	return key, nil
}

func (t *tx) MoveHead(_ context.Context, f dialect.HeadWrite) error {
	t.queue(`UPDATE threads SET head = $1, branch = $2, message_count = $3, run_id = $4, route = $5,
		state = $6, parts = $7, updated_at = $8 WHERE pk = $9`,
		f.Head, f.Branch, f.Messages, f.RunID, f.Route, f.State, f.Parts, f.Now, f.ThreadPK)
	return nil
}

func (t *tx) CopyThread(_ context.Context, fromPK, toPK int64, copyOf string) error {
	t.queue(`INSERT INTO history(thread, run, seq, type, codec, data)
		SELECT $2, run, seq, type, codec, data FROM history WHERE thread = $1 AND run <= 0`, fromPK, toPK)
	t.queue(`INSERT INTO checkpoints(thread, step, parent, branch, message_count, input_count, run_id, route, source, state, parts, created_at)
		SELECT $2, step, parent, branch, message_count, input_count, run_id, route, source, state, parts, created_at
		FROM checkpoints WHERE thread = $1`, fromPK, toPK)
	t.queue(`INSERT INTO branches(thread, branch, key, lo, hi) SELECT $2, branch, key, lo, hi FROM branches WHERE thread = $1`, fromPK, toPK)
	// The copy's tool messages name the outputs stored with the thread.
	t.queue(`INSERT INTO tool_outputs(thread, id, tool, data, created_at) SELECT $2, id, tool, data, created_at FROM tool_outputs WHERE thread = $1`, fromPK, toPK)
	t.queue(`UPDATE threads SET (step, head, branch, message_count, run_id, route, checkpoint_at, state, parts, copy_of) =
		(SELECT step, head, branch, message_count, run_id, route, checkpoint_at, state, parts, $3::text FROM threads WHERE pk = $1)
		WHERE pk = $2`, fromPK, toPK, copyOf)
	return nil
}

// RunChanged sends the run's id on dialect.ChannelEvents; Postgres
// delivers it when the transaction commits.
func (t *tx) RunChanged(_ context.Context, runID string) error {
	t.queue(`SELECT pg_notify($1, $2)`, dialect.ChannelEvents, runID)
	return nil
}

func (t *tx) SetAppValue(_ context.Context, key, value string, now int64) error {
	t.queue(`INSERT INTO app_values (key, value, updated_at) VALUES ($1, $2, $3)
		ON CONFLICT (key) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at`, key, value, now)
	return nil
}

// Leases are judged by the database's clock (at is not used): replicas
// on many machines never compare their own clocks.

func (t *tx) InsertOwner(ctx context.Context, o dialect.Owner, _ time.Time, lease time.Duration) (int64, error) {
	var pk int64
	err := t.queryRow(ctx, `INSERT INTO owners(pid, host, host_key, proc_start, expires_at)
		VALUES ($1, $2, $3, $4, now() + $5 * interval '1 microsecond') RETURNING pk`, []any{o.PID, o.Host, o.HostKey, o.ProcStart, lease.Microseconds()}, &pk)
	return pk, err
}

// claimOwner renews the lease a full term, bringing the owner row back if
// another store removed it (its runs stay interrupted: recovery took them).
const claimOwner = `INSERT INTO owners(pk, pid, host, host_key, proc_start, expires_at)
	VALUES ($1, $2, $3, $4, $5, now() + $6 * interval '1 microsecond')
	ON CONFLICT (pk) DO UPDATE SET expires_at = excluded.expires_at`

func (t *tx) RenewOwner(_ context.Context, pk int64, o dialect.Owner, _ time.Time, lease time.Duration) error {
	t.queue(claimOwner, pk, o.PID, o.Host, o.HostKey, o.ProcStart, lease.Microseconds())
	return nil
}

// Owners gives each owner's host key and process start: replicas of one
// database run on many machines, where the lease is the one rule all of
// them share, but a replica on this machine and pid namespace (the same
// host key) that no longer runs is gone at once, as on SQLite.
func (t *tx) Owners(ctx context.Context, self int64, _ time.Time) ([]dialect.OwnerRow, error) {
	if err := t.flush(ctx); err != nil {
		return nil, err
	}
	rows, err := t.tx.Query(ctx, `SELECT pk, pid, host_key, proc_start, expires_at < now() FROM owners WHERE pk != $1`, self)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	return dialect.ScanOwners(rows)
}

func (t *tx) DeleteOwner(_ context.Context, pk int64) error {
	t.queue(`DELETE FROM owners WHERE pk = $1`, pk)
	return nil
}

// InterruptOrphans locks the threads first, in pk order, as every other
// write locks them first: the thread row, then its run.
func (t *tx) InterruptOrphans(ctx context.Context, status, threadStatus, errText string, now int64) (int, error) {
	if err := t.flush(ctx); err != nil {
		return 0, err
	}
	rows, err := t.tx.Query(ctx, `SELECT t.pk, r.pk FROM runs r JOIN threads t ON t.pk = r.thread
		WHERE r.status = 'running' AND NOT EXISTS (SELECT 1 FROM owners o WHERE o.pk = r.owner)
		ORDER BY t.pk FOR UPDATE OF t, r`)
	if err != nil {
		return 0, err
	}
	threads, runs, err := scanPairs(rows)
	if err != nil || len(runs) == 0 {
		return 0, err
	}
	t.queue(`UPDATE threads SET status = $1, updated_at = $2 WHERE pk = ANY($3)`, threadStatus, now, threads)
	t.queue(`UPDATE runs SET status = $1, error = $2, updated_at = $3 WHERE pk = ANY($4) AND status = 'running'`,
		status, errText, now, runs)
	return len(runs), nil
}

// scanPairs reads rows of two bigints.
func scanPairs(rows pgx.Rows) (a, b []int64, err error) {
	defer rows.Close()
	for rows.Next() {
		var x, y int64
		if err := rows.Scan(&x, &y); err != nil {
			return nil, nil, err
		}
		a, b = append(a, x), append(b, y)
	}
	return a, b, rows.Err()
}

// OrphanRuns locks the threads and runs it reads, threads first in pk
// order as InterruptOrphans does: a second store claiming at once waits,
// and then reads each run with the owner the first one gave it.
func (t *tx) OrphanRuns(ctx context.Context) ([]dialect.OrphanRun, error) {
	if err := t.flush(ctx); err != nil {
		return nil, err
	}
	rows, err := t.tx.Query(ctx, `SELECT r.pk, r.owner, r.id, t.id, r.route, r.request, r.created_at, r.updated_at
		FROM runs r JOIN threads t ON t.pk = r.thread
		WHERE r.status = 'running' AND r.request IS NOT NULL
			AND NOT EXISTS (SELECT 1 FROM owners o WHERE o.pk = r.owner)
		ORDER BY t.pk FOR UPDATE OF t, r`)
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

func (t *tx) ClaimRuns(_ context.Context, runPKs []int64, owner, now int64) error {
	if len(runPKs) > 0 {
		t.queue(`UPDATE runs SET owner = $1, updated_at = $2 WHERE pk = ANY($3) AND status = 'running'`, owner, now, runPKs)
	}
	return nil
}
