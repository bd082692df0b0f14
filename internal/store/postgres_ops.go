package store

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/dawn-go/dawn/stream"
	"github.com/dawn-go/dawn/thread"
	"github.com/jackc/pgx/v5"
)

// Every write below locks the thread row it works on (FOR UPDATE) before
// it reads what it checks, so writes to one thread take turns whichever
// replica makes them, and each sees the one before it committed.

// CreateThread creates an idle thread (see SQLite.CreateThread).
func (s *Postgres) CreateThread(ctx context.Context, id string, metadata json.RawMessage) (Thread, error) {
	if err := checkID("thread", id); err != nil {
		return Thread{}, err
	}
	meta, err := compactObject(metadata)
	if err != nil {
		return Thread{}, fmt.Errorf("thread %q: metadata: %w", id, err)
	}
	now := s.now()
	err = s.tx(ctx, func(tx pgx.Tx) error {
		var pk int64
		err := tx.QueryRow(ctx, pgInsertThread, id, now, now, meta, StatusIdle).Scan(&pk)
		if errors.Is(err, pgx.ErrNoRows) {
			return fmt.Errorf("thread %q: %w", id, ErrExists)
		}
		if err != nil {
			return fmt.Errorf("store: create thread %q: %w", id, err)
		}
		return nil
	})
	if err != nil {
		return Thread{}, err
	}
	t := fromNanos(now)
	return Thread{ID: id, CreatedAt: t, UpdatedAt: t, Metadata: json.RawMessage(meta), Status: StatusIdle}, nil
}

const pgInsertThread = `INSERT INTO threads(id, created_at, updated_at, metadata, status)
	VALUES ($1, $2, $3, $4, $5) ON CONFLICT (id) DO NOTHING RETURNING pk`

// GetThread returns the thread with the given id, or ErrNotFound.
func (s *Postgres) GetThread(ctx context.Context, id string) (Thread, error) {
	var t Thread
	var created, updated int64
	var meta string
	err := s.pool.QueryRow(ctx, `SELECT created_at, updated_at, metadata, status FROM threads WHERE id = $1`, id).
		Scan(&created, &updated, &meta, &t.Status)
	if errors.Is(err, pgx.ErrNoRows) {
		return Thread{}, fmt.Errorf("thread %q: %w", id, ErrNotFound)
	}
	if err != nil {
		return Thread{}, fmt.Errorf("store: get thread %q: %w", id, err)
	}
	t.ID = id
	t.CreatedAt, t.UpdatedAt = fromNanos(created), fromNanos(updated)
	t.Metadata = json.RawMessage(meta)
	return t, nil
}

// DeleteThread deletes a thread and everything of it; ErrBusy while a run
// is in flight.
func (s *Postgres) DeleteThread(ctx context.Context, id string) error {
	return s.tx(ctx, func(tx pgx.Tx) error {
		pk, running, err := lockThread(ctx, tx, id)
		if err != nil {
			return fmt.Errorf("store: delete thread %q: %w", id, err)
		}
		if running {
			return fmt.Errorf("thread %q: %w: cancel it or wait for it to finish, then delete", id, ErrBusy)
		}
		for _, q := range []string{`DELETE FROM history WHERE thread = $1`, `DELETE FROM runs WHERE thread = $1`, `DELETE FROM threads WHERE pk = $1`} {
			if _, err := tx.Exec(ctx, q, pk); err != nil {
				return fmt.Errorf("store: delete thread %q: %w", id, err)
			}
		}
		return nil
	})
}

// StartRun records r as running and marks its thread busy (see
// SQLite.StartRun).
func (s *Postgres) StartRun(ctx context.Context, r Run) error {
	if err := checkID("run", r.ID); err != nil {
		return err
	}
	return s.tx(ctx, func(tx pgx.Tx) error {
		return s.startInTx(ctx, tx, r, s.now())
	})
}

func (s *Postgres) startInTx(ctx context.Context, tx pgx.Tx, r Run, now int64) error {
	var threadPK int64
	var running, taken bool
	err := tx.QueryRow(ctx, `SELECT t.pk,
		EXISTS(SELECT 1 FROM runs WHERE thread = t.pk AND status = 'running'),
		EXISTS(SELECT 1 FROM runs WHERE id = $2)
		FROM threads t WHERE t.id = $1 FOR UPDATE`, r.ThreadID, r.ID).Scan(&threadPK, &running, &taken)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return fmt.Errorf("thread %q: %w", r.ThreadID, ErrNotFound)
	case err != nil:
		return fmt.Errorf("store: start run %q: %w", r.ID, err)
	case running:
		return busyError(r.ThreadID)
	case taken:
		return fmt.Errorf("run %q: %w", r.ID, ErrExists)
	}
	if err := s.insertRun(ctx, tx, r, threadPK, now); err != nil {
		return err
	}
	if _, err := tx.Exec(ctx, `UPDATE threads SET status = $1, updated_at = $2 WHERE pk = $3`, StatusBusy, now, threadPK); err != nil {
		return fmt.Errorf("store: start run %q: %w", r.ID, err)
	}
	return nil
}

func busyError(threadID string) error {
	return fmt.Errorf("thread %q: %w: wait for it to finish or cancel it", threadID, ErrBusy)
}

// insertRun inserts a running run owned by this store. The partial unique
// index runs_running is the last word on one run per thread: should two
// transactions get past their checks, the second insert fails there.
func (s *Postgres) insertRun(ctx context.Context, tx pgx.Tx, r Run, threadPK, now int64) error {
	owner, err := s.ownerOfNewRun(ctx, tx)
	if err != nil {
		return fmt.Errorf("store: start run %q: %w", r.ID, err)
	}
	_, err = tx.Exec(ctx, `INSERT INTO runs(id, thread, route, status, created_at, updated_at, owner)
		VALUES ($1, $2, $3, 'running', $4, $5, $6)`, r.ID, threadPK, r.Route, now, now, owner)
	switch uniqueViolation(err) {
	case "":
	case "runs_running":
		return busyError(r.ThreadID)
	default:
		return fmt.Errorf("run %q: %w", r.ID, ErrExists)
	}
	if err != nil {
		return fmt.Errorf("store: start run %q: %w", r.ID, err)
	}
	return nil
}

// lockThread locks the thread row and then, in a statement of its own
// (and so, under READ COMMITTED, a snapshot taken after the lock), asks
// whether the thread has a running run.
func lockThread(ctx context.Context, tx pgx.Tx, id string) (pk int64, running bool, err error) {
	err = tx.QueryRow(ctx, `SELECT pk FROM threads WHERE id = $1 FOR UPDATE`, id).Scan(&pk)
	if errors.Is(err, pgx.ErrNoRows) {
		return 0, false, fmt.Errorf("thread %q: %w", id, ErrNotFound)
	}
	if err != nil {
		return 0, false, err
	}
	err = tx.QueryRow(ctx, `SELECT EXISTS(SELECT 1 FROM runs WHERE thread = $1 AND status = 'running')`, pk).Scan(&running)
	return pk, running, err
}

// BeginRun is StartRun that creates a missing thread and returns the
// thread's latest checkpoint, in one transaction.
func (s *Postgres) BeginRun(ctx context.Context, r Run) (Checkpoint, error) {
	return s.BeginRunChecked(ctx, r, nil)
}

// BeginRunChecked is BeginRun that hands the thread's latest checkpoint to
// check before it commits (see SQLite.BeginRunChecked).
func (s *Postgres) BeginRunChecked(ctx context.Context, r Run, check func(Checkpoint) error) (Checkpoint, error) {
	if err := checkID("run", r.ID); err != nil {
		return Checkpoint{}, err
	}
	if err := checkID("thread", r.ThreadID); err != nil {
		return Checkpoint{}, err
	}
	var cp Checkpoint
	err := s.tx(ctx, func(tx pgx.Tx) error {
		now := s.now()
		var threadPK int64
		err := tx.QueryRow(ctx, pgInsertThread, r.ThreadID, now, now, "{}", StatusBusy).Scan(&threadPK)
		switch {
		case errors.Is(err, pgx.ErrNoRows): // the thread exists
			if err := s.startInTx(ctx, tx, r, now); err != nil {
				return err
			}
			if cp, err = pgLatest(ctx, tx, r.ThreadID); err != nil || check == nil {
				return err
			}
			return check(cp)
		case err != nil:
			return fmt.Errorf("store: begin run %q: %w", r.ID, err)
		}
		if err := s.insertRun(ctx, tx, r, threadPK, now); err != nil {
			return err
		}
		cp = Checkpoint{ThreadID: r.ThreadID, Messages: []thread.Message{}, Values: thread.State{}}
		if check != nil {
			return check(cp)
		}
		return nil
	})
	return cp, err
}

// FinishRun ends a running run (see SQLite.FinishRun).
func (s *Postgres) FinishRun(ctx context.Context, runID, status, errMsg string, output json.RawMessage, events []stream.Event) error {
	f := Finish{Status: status, Error: errMsg, Output: output}
	out, err := f.check(runID)
	if err != nil {
		return err
	}
	if err := checkEvents(runID, events); err != nil {
		return err
	}
	return s.tx(ctx, func(tx pgx.Tx) error {
		var runPK, threadPK int64
		var current string
		err := tx.QueryRow(ctx, `SELECT r.pk, r.thread, r.status FROM runs r JOIN threads t ON t.pk = r.thread
			WHERE r.id = $1 FOR UPDATE`, runID).Scan(&runPK, &threadPK, &current)
		switch {
		case errors.Is(err, pgx.ErrNoRows):
			return fmt.Errorf("run %q: %w", runID, ErrNotFound)
		case err != nil:
			return fmt.Errorf("store: finish run %q: %w", runID, err)
		case current != RunRunning:
			return fmt.Errorf("run %q is %s: %w", runID, current, ErrNotRunning)
		}
		now := s.now()
		b := &pgx.Batch{}
		queueEvents(b, threadPK, runPK, events)
		queueFinish(b, runPK, f, out, now)
		b.Queue(`UPDATE threads SET status = $1, updated_at = $2 WHERE pk = $3`, threadStatusAfter[f.Status], now, threadPK)
		b.Queue(`SELECT pg_notify($1, $2)`, ChannelEvents, runID)
		if err := tx.SendBatch(ctx, b).Close(); err != nil {
			return fmt.Errorf("store: finish run %q: %w", runID, err)
		}
		return nil
	})
}

// queueEvents queues the inserts of a run's events, packed like SQLite's.
func queueEvents(b *pgx.Batch, threadPK, runPK int64, events []stream.Event) {
	var p packer
	for _, ev := range events {
		codec, data := p.pack(ev.Data)
		var raw []byte
		switch v := data.(type) {
		case string:
			raw = []byte(v)
		case []byte:
			raw = bytes.Clone(v) // the packer reuses its buffer
		}
		b.Queue(`INSERT INTO history(thread, run, seq, type, codec, data) VALUES ($1, $2, $3, $4, $5, $6)`,
			threadPK, runPK, ev.ID, ev.Type, codec, raw)
	}
}

func queueFinish(b *pgx.Batch, runPK int64, f Finish, out any, now int64) {
	b.Queue(`UPDATE runs SET status = $1, error = $2, output = $3, updated_at = $4 WHERE pk = $5`, f.Status, f.Error, out, now, runPK)
}

// GetRun returns the run with the given id, or ErrNotFound.
func (s *Postgres) GetRun(ctx context.Context, runID string) (Run, error) {
	runs, err := s.queryRuns(ctx, pgRunColumns+` WHERE r.id = $1`, runID)
	if err != nil {
		return Run{}, fmt.Errorf("store: get run %q: %w", runID, err)
	}
	if len(runs) == 0 {
		return Run{}, fmt.Errorf("run %q: %w", runID, ErrNotFound)
	}
	return runs[0], nil
}

// Runs returns the runs of a thread, newest first.
func (s *Postgres) Runs(ctx context.Context, threadID string) ([]Run, error) {
	runs, err := s.queryRuns(ctx, pgRunColumns+` WHERE t.id = $1 ORDER BY r.created_at DESC, r.id DESC`, threadID)
	if err != nil {
		return nil, fmt.Errorf("store: runs of thread %q: %w", threadID, err)
	}
	if len(runs) == 0 {
		if _, err := s.GetThread(ctx, threadID); err != nil {
			return nil, err
		}
		return []Run{}, nil
	}
	return runs, nil
}

const pgRunColumns = `SELECT r.id, t.id, r.route, r.status, r.error, r.output, r.created_at, r.updated_at
	FROM runs r JOIN threads t ON t.pk = r.thread`

func (s *Postgres) queryRuns(ctx context.Context, q string, arg string) ([]Run, error) {
	rows, err := s.pool.Query(ctx, q, arg)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var runs []Run
	for rows.Next() {
		var r Run
		var out *string
		var created, updated int64
		if err := rows.Scan(&r.ID, &r.ThreadID, &r.Route, &r.Status, &r.Error, &out, &created, &updated); err != nil {
			return nil, err
		}
		if out != nil && *out != "" {
			r.Output = json.RawMessage(*out)
		}
		r.CreatedAt, r.UpdatedAt = fromNanos(created), fromNanos(updated)
		runs = append(runs, r)
	}
	return runs, rows.Err()
}

// RecoverInterrupted removes the owner rows whose lease has expired by the
// database's clock and marks their running runs interrupted, and their
// threads too (see SQLite.RecoverInterrupted). Unlike SQLite it never
// judges an owner by its pid: replicas of one database run on many
// machines, and the lease is the one rule all of them share. The runs of
// live owners, whose lease is renewed, are never touched. A store that
// was itself cut off from the database (see contact) judges no lease until
// it has been back a whole lease term: the others may have been cut off
// too, and a lease that ran out in an outage says nothing about its owner.
func (s *Postgres) RecoverInterrupted(ctx context.Context) (int, error) {
	var n int
	err := s.tx(ctx, func(tx pgx.Tx) error {
		if err := s.renew(ctx, tx); err != nil {
			return err
		}
		if !s.contact.mayJudge(time.Now()) {
			// Cut off from the database until lately: the others may
			// have been too, and get a lease term to renew first.
			return nil
		}
		if _, err := tx.Exec(ctx, `DELETE FROM owners WHERE expires_at < now()`); err != nil {
			return err
		}
		now := s.now()
		// Threads first, in pk order, as every other write locks them
		// first: the thread row, then its run.
		rows, err := tx.Query(ctx, `SELECT t.pk, r.pk FROM runs r JOIN threads t ON t.pk = r.thread
			WHERE r.status = 'running' AND NOT EXISTS (SELECT 1 FROM owners o WHERE o.pk = r.owner)
			ORDER BY t.pk FOR UPDATE OF t, r`)
		if err != nil {
			return err
		}
		var threads, runs []int64
		for rows.Next() {
			var t, r int64
			if err := rows.Scan(&t, &r); err != nil {
				rows.Close()
				return err
			}
			threads, runs = append(threads, t), append(runs, r)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
		n = len(runs)
		if n == 0 {
			return nil
		}
		if _, err := tx.Exec(ctx, `UPDATE threads SET status = $1, updated_at = $2 WHERE pk = ANY($3)`, StatusInterrupted, now, threads); err != nil {
			return err
		}
		_, err = tx.Exec(ctx, `UPDATE runs SET status = $1, error = $2, updated_at = $3 WHERE pk = ANY($4) AND status = 'running'`,
			RunInterrupted, interruptedText, now, runs)
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("store: recover interrupted runs: %w", err)
	}
	return n, nil
}

// SaveStep writes one step of a running run in one transaction (see
// SQLite.SaveStep), and wakes the replicas that follow the run's events.
func (s *Postgres) SaveStep(ctx context.Context, st Step) error {
	enc := getEncoder()
	defer putEncoder(enc)
	in, err := prepareStep(st, enc)
	if err != nil {
		return err
	}
	return s.tx(ctx, func(tx pgx.Tx) error {
		now := s.now()
		var runPK, threadPK, prevStep, count int64
		var status, owner, meta string
		err := tx.QueryRow(ctx, `SELECT r.pk, r.status, t.pk, t.id, t.step, t.message_count, t.parts
			FROM runs r JOIN threads t ON t.pk = r.thread WHERE r.id = $1 FOR UPDATE`, st.RunID).
			Scan(&runPK, &status, &threadPK, &owner, &prevStep, &count, &meta)
		if err := checkStepRow(st, errors.Is(err, pgx.ErrNoRows), err, status, owner, prevStep); err != nil {
			return err
		}
		b := &pgx.Batch{}
		for i, data := range in.messages {
			b.Queue(`INSERT INTO history(thread, run, seq, data) VALUES ($1, 0, $2, $3)`, threadPK, count+int64(i), []byte(data))
		}
		if meta, err = planParts(threadPK, meta, in.parted, pgPartWriter(b, threadPK)); err != nil {
			return fmt.Errorf("store: save step %d of thread %q: %w", st.Step, st.ThreadID, err)
		}
		b.Queue(`UPDATE threads SET step = $1, message_count = $2, run_id = $3, route = $4,
			state = $5, parts = $6, checkpoint_at = $7, updated_at = $8, status = coalesce($9, status) WHERE pk = $10`,
			st.Step, count+int64(len(in.messages)), st.RunID, st.Route, in.state, meta, now, now, in.threadStatus, threadPK)
		queueEvents(b, threadPK, runPK, st.Events)
		if st.Finish != nil {
			queueFinish(b, runPK, *st.Finish, in.finishOut, now)
		}
		if len(st.Events) > 0 || st.Finish != nil {
			b.Queue(`SELECT pg_notify($1, $2)`, ChannelEvents, st.RunID)
		}
		if err := tx.SendBatch(ctx, b).Close(); err != nil {
			return fmt.Errorf("store: save step %d of thread %q: %w", st.Step, st.ThreadID, err)
		}
		return nil
	})
}

// pgPartWriter queues planParts' changes in b.
func pgPartWriter(b *pgx.Batch, threadPK int64) partWriter {
	return partWriter{
		drop: func(name string) error {
			b.Queue(`DELETE FROM history WHERE thread = $1 AND run = -1 AND type = $2`, threadPK, name)
			return nil
		},
		add: func(seq int64, name string, data []byte) error {
			b.Queue(`INSERT INTO history(thread, run, seq, type, data) VALUES ($1, -1, $2, $3, $4)`, threadPK, seq, name, bytes.Clone(data))
			return nil
		},
	}
}

// pgLatestQuery is latestQuery for Postgres: the head row, then the
// messages, then the parts, in one statement and so one snapshot.
const pgLatestQuery = `SELECT 0 AS kind, t.step AS seq, t.message_count, t.checkpoint_at, t.run_id, t.route, t.state, convert_to(t.parts, 'UTF8')
	FROM threads t WHERE t.id = $1
	UNION ALL
	SELECT 1, m.seq, NULL, NULL, NULL, NULL, NULL, m.data
	FROM threads t JOIN history m ON m.thread = t.pk AND m.run = 0 AND m.seq < t.message_count WHERE t.id = $1
	UNION ALL
	SELECT 2, p.seq, NULL, NULL, NULL, NULL, p.type, p.data
	FROM threads t JOIN history p ON p.thread = t.pk AND p.run = -1 WHERE t.id = $1
	ORDER BY 1, 2`

// Latest returns the thread's latest checkpoint (see SQLite.Latest).
func (s *Postgres) Latest(ctx context.Context, threadID string) (Checkpoint, error) {
	return pgLatest(ctx, s.pool, threadID)
}

func pgLatest(ctx context.Context, q querierPG, threadID string) (Checkpoint, error) {
	rows, err := q.Query(ctx, pgLatestQuery, threadID)
	if err != nil {
		return Checkpoint{}, fmt.Errorf("store: latest of thread %q: %w", threadID, err)
	}
	defer rows.Close()
	cp := Checkpoint{ThreadID: threadID}
	var meta string
	var parts []part
	for rows.Next() {
		var kind int32
		var seq int64
		var count, updated *int64
		var runID, route, text *string
		var data []byte
		if err := rows.Scan(&kind, &seq, &count, &updated, &runID, &route, &text, &data); err != nil {
			return Checkpoint{}, fmt.Errorf("store: latest of thread %q: %w", threadID, err)
		}
		switch kind {
		case 0:
			cp.RunID, cp.Route, cp.Step = *runID, *route, int(seq)
			cp.UpdatedAt = fromNanos(*updated)
			cp.Values = thread.State{}
			if *text != "{}" {
				if err := json.Unmarshal([]byte(*text), &cp.Values); err != nil {
					return Checkpoint{}, fmt.Errorf("store: latest of thread %q: state values: %w", threadID, err)
				}
			}
			meta = string(data)
			cp.Messages = make([]thread.Message, 0, *count)
		case 1:
			cp.Messages = append(cp.Messages, thread.Message{})
			if err := json.Unmarshal(data, &cp.Messages[len(cp.Messages)-1]); err != nil {
				return Checkpoint{}, fmt.Errorf("store: message %d of thread %q: %w", seq, threadID, err)
			}
		case 2:
			parts = append(parts, part{seq: seq, field: *text, data: data})
		}
	}
	if err := rows.Err(); err != nil {
		return Checkpoint{}, fmt.Errorf("store: latest of thread %q: %w", threadID, err)
	}
	if cp.Values == nil {
		return Checkpoint{}, fmt.Errorf("thread %q: %w", threadID, ErrNotFound)
	}
	if err := joinParts(cp.Values, meta, parts); err != nil {
		return Checkpoint{}, fmt.Errorf("store: latest of thread %q: %w", threadID, err)
	}
	return cp, nil
}

// Events returns the run's events after an id, in id order.
func (s *Postgres) Events(ctx context.Context, runID string, after int64) ([]stream.Event, error) {
	return s.EventsPage(ctx, runID, after, 0)
}

// EventsPage is Events with at most limit events; 0 or less means all.
func (s *Postgres) EventsPage(ctx context.Context, runID string, after int64, limit int) ([]stream.Event, error) {
	var lim *int // NULL: no limit
	if limit > 0 {
		lim = &limit
	}
	rows, err := s.pool.Query(ctx, `SELECT h.seq, h.type, h.codec, h.data
		FROM runs r JOIN history h ON h.thread = r.thread AND h.run = r.pk
		WHERE r.id = $1 AND h.seq > $2 ORDER BY h.seq LIMIT $3`, runID, after, lim)
	if err != nil {
		return nil, fmt.Errorf("store: events of run %q: %w", runID, err)
	}
	defer rows.Close()
	events := []stream.Event{}
	var u unpacker
	for rows.Next() {
		var ev stream.Event
		var codec int16
		var data []byte
		if err := rows.Scan(&ev.ID, &ev.Type, &codec, &data); err != nil {
			return nil, fmt.Errorf("store: events of run %q: %w", runID, err)
		}
		if ev.Data, err = u.unpack(int(codec), data); err != nil {
			return nil, fmt.Errorf("store: event %d of run %q: %w", ev.ID, runID, err)
		}
		events = append(events, ev)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: events of run %q: %w", runID, err)
	}
	if len(events) == 0 {
		if _, err := s.GetRun(ctx, runID); err != nil {
			return nil, err
		}
	}
	return events, nil
}

// SaveValues replaces a thread's state values outside any run (see
// SQLite.SaveValues).
func (s *Postgres) SaveValues(ctx context.Context, threadID string, step int, values thread.State) error {
	whole, parted, err := splitValues(values)
	if err != nil {
		return fmt.Errorf("thread %q: %w: %v", threadID, ErrInvalid, err)
	}
	enc := getEncoder()
	defer putEncoder(enc)
	_, state, err := enc.encodeStep(nil, whole)
	if err != nil {
		return fmt.Errorf("thread %q: %w: %v", threadID, ErrInvalid, err)
	}
	return s.tx(ctx, func(tx pgx.Tx) error {
		pk, running, err := lockThread(ctx, tx, threadID)
		if err != nil {
			return fmt.Errorf("store: save values of thread %q: %w", threadID, err)
		}
		var prev int64
		var meta string
		if err := tx.QueryRow(ctx, `SELECT step, parts FROM threads WHERE pk = $1`, pk).Scan(&prev, &meta); err != nil {
			return fmt.Errorf("store: save values of thread %q: %w", threadID, err)
		}
		switch {
		case int64(step) != prev+1:
			return fmt.Errorf("thread %q: %w: got step %d, the last saved step is %d", threadID, ErrStepOrder, step, prev)
		case running:
			return fmt.Errorf("thread %q: %w", threadID, ErrBusy)
		}
		b := &pgx.Batch{}
		if meta, err = planParts(pk, meta, parted, pgPartWriter(b, pk)); err != nil {
			return fmt.Errorf("store: save values of thread %q: %w", threadID, err)
		}
		now := s.now()
		b.Queue(`UPDATE threads SET step = $1, state = $2, parts = $3, checkpoint_at = $4, updated_at = $5 WHERE pk = $6`, step, state, meta, now, now, pk)
		if err := tx.SendBatch(ctx, b).Close(); err != nil {
			return fmt.Errorf("store: save values of thread %q: %w", threadID, err)
		}
		return nil
	})
}
