package store

import (
	"context"
	"database/sql"
	"fmt"
)

// statements are the prepared statements of the hot paths: StartRun,
// SaveStep, FinishRun and Latest. The write ones are bound to the writer
// connection, so every transaction reuses them without preparing again.
type statements struct {
	begin, commit, rollback *sql.Stmt
	// CreateThread
	insertThread *sql.Stmt
	// StartRun
	startCheck *sql.Stmt
	insertRun  *sql.Stmt
	setThread  *sql.Stmt
	// SaveStep
	stepCheck      *sql.Stmt
	insertMessage  *sql.Stmt
	saveCheckpoint *sql.Stmt
	insertEvent    *sql.Stmt
	// FinishRun
	runOwner  *sql.Stmt
	finishRun *sql.Stmt
	// Latest (read pool), and BeginRun's read inside its write transaction
	latest, latestW *sql.Stmt

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
		{writer, &st.insertThread, `INSERT INTO threads(id, created_at, updated_at, metadata, status)
			VALUES (?, ?, ?, ?, ?) ON CONFLICT(id) DO NOTHING`},
		{writer, &st.startCheck, `SELECT
			EXISTS(SELECT 1 FROM runs WHERE thread_id = t.id AND status = 'running'),
			EXISTS(SELECT 1 FROM runs WHERE id = ?2)
			FROM threads t WHERE t.id = ?1`},
		{writer, &st.insertRun, `INSERT INTO runs(id, thread_id, route, status, created_at, updated_at)
			VALUES (?, ?, ?, 'running', ?, ?)`},
		{writer, &st.setThread, `UPDATE threads SET status = ?, updated_at = ? WHERE id = ?`},

		{writer, &st.stepCheck, `SELECT r.thread_id, r.status, t.step, t.message_count
			FROM runs r JOIN threads t ON t.id = r.thread_id WHERE r.id = ?`},
		{writer, &st.insertMessage, `INSERT INTO messages(thread_id, seq, data) VALUES (?, ?, ?)`},
		{writer, &st.saveCheckpoint, `UPDATE threads SET step = ?, message_count = ?, run_id = ?, route = ?,
			state = ?, checkpoint_at = ?, updated_at = ? WHERE id = ?`},
		{writer, &st.insertEvent, `INSERT INTO events(run_id, id, type, data) VALUES (?, ?, ?, ?)`},

		{writer, &st.runOwner, `SELECT thread_id, status FROM runs WHERE id = ?`},
		{writer, &st.finishRun, `UPDATE runs SET status = ?, error = ?, output = ?, updated_at = ? WHERE id = ?`},

		// One statement, so one read transaction: the head columns come
		// on the first row only, then one row per message (none when the
		// thread has no messages, in which case m.seq is NULL).
		{reader, &st.latest, `SELECT t.step, t.message_count, t.checkpoint_at,
			CASE WHEN coalesce(m.seq, 0) = 0 THEN t.run_id END,
			CASE WHEN coalesce(m.seq, 0) = 0 THEN t.route END,
			CASE WHEN coalesce(m.seq, 0) = 0 THEN t.state END,
			m.data
			FROM threads t LEFT JOIN messages m ON m.thread_id = t.id AND m.seq < t.message_count
			WHERE t.id = ? ORDER BY m.seq`},
		{writer, &st.latestW, `SELECT t.step, t.message_count, t.checkpoint_at,
			CASE WHEN coalesce(m.seq, 0) = 0 THEN t.run_id END,
			CASE WHEN coalesce(m.seq, 0) = 0 THEN t.route END,
			CASE WHEN coalesce(m.seq, 0) = 0 THEN t.state END,
			m.data
			FROM threads t LEFT JOIN messages m ON m.thread_id = t.id AND m.seq < t.message_count
			WHERE t.id = ? ORDER BY m.seq`},
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

func (st *statements) close() {
	for _, stmt := range st.all {
		_ = stmt.Close()
	}
	st.all = nil
}
