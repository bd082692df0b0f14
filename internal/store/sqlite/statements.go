package sqlite

import (
	"context"
	"database/sql"
	"fmt"
)

// statements are the prepared statements of the writes and of Latest.
// The write ones are bound to the writer connection, so every transaction
// reuses them without preparing again.
type statements struct {
	begin, commit, rollback *sql.Stmt
	// a group commit's savepoint around each request
	savepoint, release, rollbackTo *sql.Stmt

	insertThread, lockThread, setThread *sql.Stmt
	insertRun, lockRun, finishRun       *sql.Stmt
	insertMessage, insertEvent          *sql.Stmt
	saveCheckpoint, saveValues          *sql.Stmt
	insertCheckpoint                    *sql.Stmt
	insertPart, deleteParts             *sql.Stmt
	insertOwner, claimOwner, owners     *sql.Stmt
	deleteOwner                         *sql.Stmt
	// Latest on the read pool, and inside a write transaction
	latest, latestW *sql.Stmt
	// anyQueued on the read pool: whether the queue has a row at all
	anyQueued *sql.Stmt

	all []*sql.Stmt
}

func (st *statements) prepare(ctx context.Context, writer *sql.Conn, reader querier) error {
	list := []struct {
		db   querier
		dst  **sql.Stmt
		text string
	}{
		{writer, &st.begin, `BEGIN IMMEDIATE`},
		{writer, &st.commit, `COMMIT`},
		{writer, &st.rollback, `ROLLBACK`},
		{writer, &st.savepoint, `SAVEPOINT request`},
		{writer, &st.release, `RELEASE request`},
		{writer, &st.rollbackTo, `ROLLBACK TO request`},
		// No row changed means the id is taken; else the new rowid is the
		// thread's pk. (Not RETURNING: SQLite buffers returned rows in an
		// ephemeral table, which costs more than the insert.)
		{writer, &st.insertThread, `INSERT INTO threads(id, created_at, updated_at, metadata, status, owner, ttl, expires_at, delete_after)
			VALUES (?, ?, ?, ?, ?, ?, NULLIF(?, 0), NULLIF(?, 0), NULLIF(?, 0)) ON CONFLICT(id) DO NOTHING`},
		{writer, &st.lockThread, `SELECT pk, step, head, branch, message_count, parts, EXISTS(SELECT 1 FROM runs WHERE thread = t.pk AND status = 'running'), owner
			FROM threads t WHERE t.id = ?`},
		// expires_at moves with updated_at: NULL (no TTL) plus anything
		// stays NULL.
		{writer, &st.setThread, `UPDATE threads SET status = ?1, updated_at = ?2, expires_at = ?2 + ttl WHERE pk = ?3`},
		{writer, &st.insertRun, `INSERT INTO runs(id, thread, route, status, created_at, updated_at, owner, request, metadata, attrs)
			VALUES (?, ?, ?, 'running', ?, ?, ?, ?, ?, ?)`},
		{writer, &st.lockRun, `SELECT r.pk, r.status, t.pk, t.id, t.step, t.message_count, t.head, t.branch, t.parts, r.owner
			FROM runs r JOIN threads t ON t.pk = r.thread WHERE r.id = ?`},
		{writer, &st.finishRun, `UPDATE runs SET status = ?, error = ?, output = ?, updated_at = ? WHERE pk = ?`},

		{writer, &st.insertMessage, `INSERT INTO history(thread, run, seq, data) VALUES (?, ?, ?, ?)`},
		{writer, &st.insertEvent, `INSERT INTO history(thread, run, seq, type, codec, data) VALUES (?, ?, ?, ?, ?, ?)`},
		// status is NULL (kept) unless the step also ends the run.
		{writer, &st.saveCheckpoint, `UPDATE threads SET step = ?1, head = ?1, branch = ?2, message_count = ?3, run_id = ?4, route = ?5,
			state = ?6, parts = ?7, checkpoint_at = ?8, updated_at = ?8, expires_at = ?8 + ttl, status = coalesce(?9, status) WHERE pk = ?10`},
		{writer, &st.saveValues, `UPDATE threads SET step = ?1, head = ?1, branch = ?2, message_count = ?3,
			state = ?4, parts = ?5, checkpoint_at = ?6, updated_at = ?6, expires_at = ?6 + ttl WHERE pk = ?7`},
		{writer, &st.insertCheckpoint, `INSERT INTO checkpoints(thread, step, parent, branch, message_count, input_count, run_id, route, source, state, parts, created_at)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`},
		{writer, &st.insertPart, `INSERT INTO history(thread, run, seq, type, data) VALUES (?, -1, ?, ?, ?)`},
		{writer, &st.deleteParts, `DELETE FROM history WHERE thread = ? AND run = -1 AND type = ?`},

		{writer, &st.insertOwner, `INSERT INTO owners(pid, host, host_key, proc_start, started_at, expires_at)
			VALUES (?, ?, ?, ?, ?, ?) RETURNING pk`},
		// An upsert: a store whose row another one removed, judging its
		// lease expired, gets it back with the same pk.
		{writer, &st.claimOwner, `INSERT INTO owners(pk, pid, host, host_key, proc_start, started_at, expires_at)
			VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT(pk) DO UPDATE SET expires_at = excluded.expires_at`},
		{writer, &st.owners, `SELECT pk, pid, host_key, proc_start, expires_at < ? FROM owners WHERE pk != ?`},
		{writer, &st.deleteOwner, `DELETE FROM owners WHERE pk = ?`},

		// One statement, so one read transaction: the thread's head row,
		// then one row per message, then one per part of a state field.
		{reader, &st.latest, latestQuery},
		{reader, &st.anyQueued, `SELECT EXISTS(SELECT 1 FROM queued_runs)`},
		{writer, &st.latestW, latestQuery},
	}
	for _, p := range list {
		stmt, err := p.db.PrepareContext(ctx, p.text)
		if err != nil {
			return fmt.Errorf("prepare %q: %w", p.text, err)
		}
		*p.dst = stmt
		st.all = append(st.all, stmt)
	}
	return nil
}

// latestQuery reads a thread's latest checkpoint. Its rows are the head
// (kind 0: step, message count, time, run, route, state, parts, head,
// branch, copy_of), the messages of the head's branch that the checkpoint
// covers (kind 1: seq and data), and the parts of its
// state fields (kind 2: seq, field name and data), in that order and by
// seq: SQLite merges the three, each read in order from its index. The
// messages a forked branch inherits are read apart (see Segments).
const latestQuery = `SELECT 0, t.step, t.message_count, t.checkpoint_at, t.run_id, t.route, t.state, t.parts, t.head, t.branch, t.copy_of
	FROM threads t WHERE t.id = ?1
	UNION ALL
	SELECT 1, m.seq, NULL, NULL, NULL, NULL, NULL, m.data, NULL, NULL, NULL
	FROM threads t JOIN history m ON m.thread = t.pk AND m.run = t.branch AND m.seq < t.message_count WHERE t.id = ?1
	UNION ALL
	SELECT 2, p.seq, NULL, NULL, NULL, NULL, p.type, p.data, NULL, NULL, NULL
	FROM threads t JOIN history p ON p.thread = t.pk AND p.run = -1 WHERE t.id = ?1
	ORDER BY 1, 2`

func (st *statements) close() {
	for _, stmt := range st.all {
		_ = stmt.Close()
	}
	st.all = nil
}
