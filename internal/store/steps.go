package store

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/dawn-go/dawn/stream"
	"github.com/dawn-go/dawn/thread"
)

// Checkpoint is a thread's state after its latest completed step.
type Checkpoint struct {
	ThreadID  string
	RunID     string           // run that wrote it; "" when none
	Route     string           // route id of that run
	Step      int              // 0 when the thread has no checkpoint yet
	Messages  []thread.Message // every message of the thread, in order
	Values    thread.State
	UpdatedAt time.Time
}

// Step is what one agent step writes, in one transaction.
type Step struct {
	ThreadID string
	RunID    string
	Route    string
	Step     int              // must be the thread's previous Step + 1
	Append   []thread.Message // messages added since the previous checkpoint
	// Values are the full state values after the step; they replace the
	// previous ones. A large array field that only gained elements costs
	// the bytes of those elements (see saveParts).
	Values thread.State
	Events []stream.Event // events of this step for the run's event log (IDs already assigned)
	// Finish, when set, ends the run in the same transaction (see Finish).
	Finish *Finish
}

// SaveStep writes one step of a running run in one transaction: it appends
// st.Append to the thread's messages, replaces the checkpoint (step number
// and values) and the thread's updated_at, and appends st.Events to the
// run's event log. Either all of it lands or none does.
//
// It fails with ErrNotFound for an unknown run, ErrNotRunning when the run
// has finished, ErrStepOrder when st.Step is not the previous step + 1, and
// ErrInvalid when the run belongs to another thread or the data is not JSON.
func (s *SQLite) SaveStep(ctx context.Context, st Step) error {
	enc := getEncoder()
	defer putEncoder(enc)
	in, err := prepareStep(st, enc)
	if err != nil {
		return err
	}
	return s.write(ctx, func(ctx context.Context) error {
		now := s.now()
		var runPK, threadPK, prevStep, count int64
		var status, owner, meta string
		err := s.st.stepCheck.QueryRowContext(ctx, st.RunID).Scan(&runPK, &status, &threadPK, &owner, &prevStep, &count, &meta)
		if err := checkStepRow(st, errors.Is(err, sql.ErrNoRows), err, status, owner, prevStep); err != nil {
			return err
		}
		for i, data := range in.messages {
			if _, err := s.st.insertMessage.ExecContext(ctx, threadPK, count+int64(i), data); err != nil {
				return fmt.Errorf("store: save step %d of thread %q: message %d: %w", st.Step, st.ThreadID, i, err)
			}
		}
		if meta, err = s.saveParts(ctx, threadPK, meta, in.parted); err != nil {
			return fmt.Errorf("store: save step %d of thread %q: %w", st.Step, st.ThreadID, err)
		}
		_, err = s.st.saveCheckpoint.ExecContext(ctx,
			st.Step, count+int64(len(in.messages)), st.RunID, st.Route, in.state, meta, now, now, in.threadStatus, threadPK)
		if err != nil {
			return fmt.Errorf("store: save step %d of thread %q: %w", st.Step, st.ThreadID, err)
		}
		if err := s.insertEvents(ctx, st.RunID, threadPK, runPK, st.Events); err != nil {
			return err
		}
		if st.Finish != nil {
			return s.finishInTx(ctx, st.RunID, runPK, *st.Finish, in.finishOut, now)
		}
		return nil
	})
}

// checkEvents rejects events without an assigned ID or out of order.
func checkEvents(runID string, events []stream.Event) error {
	var last int64
	for i, ev := range events {
		if ev.ID <= last {
			return fmt.Errorf("run %q: %w: event %d (%s) has id %d; ids must be assigned, positive and increasing", runID, ErrInvalid, i, ev.Type, ev.ID)
		}
		last = ev.ID
	}
	return nil
}

// insertEvents appends events to a run's log, each packed by the store's
// packer. The caller holds mu.
func (s *SQLite) insertEvents(ctx context.Context, runID string, threadPK, runPK int64, events []stream.Event) error {
	defer s.packer.release()
	for _, ev := range events {
		codec, data := s.packer.pack(ev.Data)
		if _, err := s.st.insertEvent.ExecContext(ctx, threadPK, runPK, ev.ID, ev.Type, codec, data); err != nil {
			return fmt.Errorf("store: run %q: event %d: %w", runID, ev.ID, err)
		}
	}
	return nil
}

// Latest returns the thread's latest checkpoint with all its messages. A
// thread with no step yet gives Step 0 and empty (non-nil) Messages and
// Values. It fails with ErrNotFound when the thread does not exist.
func (s *SQLite) Latest(ctx context.Context, threadID string) (Checkpoint, error) {
	defer s.lockRead()()
	return scanLatest(ctx, s.st.latest, threadID)
}

// scanLatest runs one of the latest statements and reads its rows.
func scanLatest(ctx context.Context, stmt *sql.Stmt, threadID string) (Checkpoint, error) {
	rows, err := stmt.QueryContext(ctx, threadID)
	if err != nil {
		return Checkpoint{}, fmt.Errorf("store: latest of thread %q: %w", threadID, err)
	}
	defer rows.Close()
	cp := Checkpoint{ThreadID: threadID}
	var kind, seq int64
	var count, updated sql.NullInt64
	var runID, route, text sql.NullString
	var data sql.RawBytes
	var meta string
	var parts []part
	for rows.Next() {
		if err := rows.Scan(&kind, &seq, &count, &updated, &runID, &route, &text, &data); err != nil {
			return Checkpoint{}, fmt.Errorf("store: latest of thread %q: %w", threadID, err)
		}
		switch kind {
		case 0:
			cp.RunID, cp.Route, cp.Step = runID.String, route.String, int(seq)
			cp.UpdatedAt = fromNanos(updated.Int64)
			cp.Values = thread.State{}
			if text.String != "{}" {
				if err := json.Unmarshal([]byte(text.String), &cp.Values); err != nil {
					return Checkpoint{}, fmt.Errorf("store: latest of thread %q: state values: %w", threadID, err)
				}
			}
			meta = string(data)
			cp.Messages = make([]thread.Message, 0, count.Int64)
		case 1:
			cp.Messages = append(cp.Messages, thread.Message{})
			// UnmarshalJSON directly: json.Unmarshal would check the
			// whole message once more before handing it over.
			if err := cp.Messages[len(cp.Messages)-1].UnmarshalJSON(data); err != nil {
				return Checkpoint{}, fmt.Errorf("store: message %d of thread %q: %w", seq, threadID, err)
			}
		case 2:
			parts = append(parts, part{seq: seq, field: text.String, data: bytes.Clone(data)})
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

// eventsQuery reads a run's events after an id, in id order, at most a
// number of them (-1 for all).
const eventsQuery = `SELECT h.seq, h.type, h.codec, h.data
	FROM runs r JOIN history h ON h.thread = r.thread AND h.run = r.pk
	WHERE r.id = ? AND h.seq > ? ORDER BY h.seq LIMIT ?`

// Events returns the run's events with an ID greater than after, ordered by
// ID, with the same bytes of data they were saved with. It fails with
// ErrNotFound when the run does not exist.
func (s *SQLite) Events(ctx context.Context, runID string, after int64) ([]stream.Event, error) {
	return s.EventsPage(ctx, runID, after, 0)
}

// EventsPage is Events with at most limit events; 0 or less means all.
func (s *SQLite) EventsPage(ctx context.Context, runID string, after int64, limit int) ([]stream.Event, error) {
	if limit <= 0 {
		limit = -1
	}
	defer s.lockRead()()
	rows, err := s.rq.QueryContext(ctx, eventsQuery, runID, after, limit)
	if err != nil {
		return nil, fmt.Errorf("store: events of run %q: %w", runID, err)
	}
	defer rows.Close()
	events := []stream.Event{}
	var u unpacker
	for rows.Next() {
		var ev stream.Event
		var codec int
		var data sql.RawBytes
		if err := rows.Scan(&ev.ID, &ev.Type, &codec, &data); err != nil {
			return nil, fmt.Errorf("store: events of run %q: %w", runID, err)
		}
		if ev.Data, err = u.unpack(codec, data); err != nil {
			return nil, fmt.Errorf("store: event %d of run %q: %w", ev.ID, runID, err)
		}
		events = append(events, ev)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: events of run %q: %w", runID, err)
	}
	if len(events) == 0 {
		var one int
		err := s.rq.QueryRowContext(ctx, `SELECT 1 FROM runs WHERE id = ?`, runID).Scan(&one)
		if errors.Is(err, sql.ErrNoRows) {
			return nil, fmt.Errorf("run %q: %w", runID, ErrNotFound)
		}
		if err != nil {
			return nil, fmt.Errorf("store: events of run %q: %w", runID, err)
		}
	}
	return events, nil
}

// stepInput is a step checked and encoded before its transaction, as every
// store writes it.
type stepInput struct {
	finishOut any // the run's output, when the step finishes it
	parted    []partedValue
	messages  []string
	state     string
	// threadStatus is the thread's status after the step; nil (NULL)
	// keeps it.
	threadStatus any
}

// prepareStep checks st and encodes it with enc; the messages it returns
// live in enc's buffer.
func prepareStep(st Step, enc *encoder) (stepInput, error) {
	var in stepInput
	if st.Step < 1 {
		return in, fmt.Errorf("thread %q: %w: step must be 1 or more, got %d", st.ThreadID, ErrInvalid, st.Step)
	}
	if err := checkEvents(st.RunID, st.Events); err != nil {
		return in, err
	}
	if st.Finish != nil {
		var err error
		if in.finishOut, err = st.Finish.check(st.RunID); err != nil {
			return in, err
		}
		in.threadStatus = threadStatusAfter[st.Finish.Status]
	}
	whole, parted, err := splitValues(st.Values)
	if err != nil {
		return in, fmt.Errorf("thread %q step %d: %w: %v", st.ThreadID, st.Step, ErrInvalid, err)
	}
	in.parted = parted
	if in.messages, in.state, err = enc.encodeStep(st.Append, whole); err != nil {
		return in, fmt.Errorf("thread %q step %d: %w: %v", st.ThreadID, st.Step, ErrInvalid, err)
	}
	return in, nil
}

// checkStepRow checks st against its run's row, read in the step's
// transaction: missing says no row was found, err is the read's other
// failure.
func checkStepRow(st Step, missing bool, err error, status, owner string, prevStep int64) error {
	switch {
	case missing:
		return fmt.Errorf("run %q: %w", st.RunID, ErrNotFound)
	case err != nil:
		return fmt.Errorf("store: save step %d of run %q: %w", st.Step, st.RunID, err)
	case owner != st.ThreadID:
		return fmt.Errorf("run %q: %w: it belongs to thread %q, not %q", st.RunID, ErrInvalid, owner, st.ThreadID)
	case status != RunRunning:
		return fmt.Errorf("run %q is %s: %w", st.RunID, status, ErrNotRunning)
	case int64(st.Step) != prevStep+1:
		return fmt.Errorf("thread %q: %w: got step %d, the last saved step is %d", st.ThreadID, ErrStepOrder, st.Step, prevStep)
	}
	return nil
}
