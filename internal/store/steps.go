package store

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/dawn-go/dawn/internal/store/dialect"
	"github.com/dawn-go/dawn/stream"
	"github.com/dawn-go/dawn/thread"
)

// Checkpoint is a thread's state after one of its steps: the latest (see
// Latest), or a kept one (see History).
type Checkpoint struct {
	ThreadID string
	RunID    string // run that wrote it; "" when none
	Route    string // route id of that run
	// Step is the thread's highest step, which the next step follows
	// (Latest), or the checkpoint's own step (History); 0 when the
	// thread has no checkpoint yet.
	Step int
	// Head is the step whose state this is: Step, unless a run started a
	// new branch from an earlier checkpoint. ID names it (see
	// CheckpointID; the checkpoint before a step's model output, where a
	// run's input was added, has the step's Head and an ID of its own);
	// "" when the thread has no checkpoint yet.
	Head int
	ID   string
	// ParentID is the checkpoint before it, "" for none; Source says
	// what made it: "loop" (a step of a run), "update" (a state update)
	// or "input" (a run's input, or a thread created with its state).
	// Set by History.
	ParentID, Source string
	Messages         []thread.Message // every message of its branch, in order
	// Origins are the branch keys the messages are stored under, one per
	// message, or nil when all are 0 (a thread never forked): a message
	// is named by its origin and its index.
	Origins []int64
	// Branch is the key of the branch new messages go to (see Origins).
	Branch int64
	// CopyOf is the thread this one was copied from, whose names its
	// messages keep; "" when it is no copy.
	CopyOf    string
	Values    thread.State
	UpdatedAt time.Time

	number int64 // the checkpoint number ID holds (History)
}

// Step is what one agent step writes, in one transaction.
type Step struct {
	ThreadID string
	RunID    string
	Route    string
	Step     int              // must be the thread's previous Step + 1
	Append   []thread.Message // messages added since the previous checkpoint
	// Input is how many of Append's first messages are the run's input,
	// on a run's first step: the step then also stands for the checkpoint
	// where the input was added and the model had not answered yet (see
	// History).
	Input int
	// Values are the full state values after the step; they replace the
	// previous ones. A large array field that only gained elements costs
	// the bytes of those elements (see planParts).
	Values thread.State
	Events []stream.Event // events of this step for the run's event log (IDs already assigned)
	// Finish, when set, ends the run in the same transaction (see Finish).
	Finish *Finish
}

// SaveStep writes one step of a running run in one transaction: it appends
// st.Append to the thread's messages, replaces the checkpoint (step number
// and values) and the thread's updated_at, and appends st.Events to the
// run's event log. Either all of it lands or none does. Followers of the
// run in other processes are woken when it commits.
//
// It fails with ErrNotFound for an unknown run, ErrNotRunning when the run
// has finished, ErrStepOrder when st.Step is not the previous step + 1, and
// ErrInvalid when the run belongs to another thread or the data is not JSON.
func (s *DB) SaveStep(ctx context.Context, st Step) error {
	enc := getEncoder()
	defer putEncoder(enc)
	in, err := prepareStep(st, enc)
	if err != nil {
		return err
	}
	return s.write(ctx, func(tx dialect.Tx) error {
		l, err := tx.LockRun(ctx, st.RunID)
		if err := checkStepRow(st, l, err, s.own.pk); err != nil {
			return err
		}
		if err := s.saveStep(ctx, tx, st, &in, l); err != nil {
			return fmt.Errorf("store: save step %d of thread %q: %w", st.Step, st.ThreadID, err)
		}
		return nil
	})
}

// saveStep is SaveStep's writes, once its run's row is checked.
func (s *DB) saveStep(ctx context.Context, tx dialect.Tx, st Step, in *stepInput, l dialect.RunLock) error {
	now := s.now()
	if err := tx.InsertMessages(ctx, l.ThreadPK, l.Branch, l.Messages, in.messages); err != nil {
		return fmt.Errorf("messages: %w", err)
	}
	meta, err := planParts(ctx, tx, l.ThreadPK, l.Parts, in.parted)
	if err != nil {
		return err
	}
	err = tx.SaveCheckpoint(ctx, dialect.CheckpointWrite{ThreadPK: l.ThreadPK, Step: int64(st.Step),
		Parent: l.Head, Branch: l.Branch, Source: SourceLoop, Input: inputCount(l.Messages, st.Input, len(in.messages)),
		Messages: l.Messages + int64(len(in.messages)), RunID: st.RunID, Route: st.Route,
		State: in.state, Parts: meta, Status: in.threadStatus, Now: now})
	if err != nil {
		return err
	}
	if err := s.insertEvents(ctx, tx, l.ThreadPK, l.PK, st.Events); err != nil {
		return fmt.Errorf("run %q: events: %w", st.RunID, err)
	}
	if st.Finish != nil {
		if err := tx.FinishRun(ctx, l.PK, st.Finish.Status, st.Finish.Error, in.finishOut, now); err != nil {
			return fmt.Errorf("finish run %q: %w", st.RunID, err)
		}
		if st.Finish.Webhook != nil {
			if err := s.insertWebhook(ctx, tx, st.Finish.Webhook, l, st.RunID); err != nil {
				return err
			}
		}
	}
	if len(st.Events) > 0 || st.Finish != nil {
		return tx.RunChanged(ctx, st.RunID)
	}
	return nil
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

// Latest returns the thread's latest checkpoint with all its messages. A
// thread with no step yet gives Step 0 and empty (non-nil) Messages and
// Values. It fails with ErrNotFound when the thread does not exist.
func (s *DB) Latest(ctx context.Context, threadID string) (Checkpoint, error) {
	return latest(ctx, s.d, threadID)
}

// checkpointSource is where a checkpoint is read: the database, or a
// write transaction.
type checkpointSource interface {
	Latest(ctx context.Context, threadID string, each func(dialect.CheckpointRow) error) error
	Segments(ctx context.Context, threadID string, branch int64) ([]dialect.Segment, error)
	Messages(ctx context.Context, threadID string, key, lo, hi int64, each func(seq int64, data []byte) error) error
}

// latest reads a thread's checkpoint from src.
func latest(ctx context.Context, src checkpointSource, threadID string) (Checkpoint, error) {
	c := &checkpointReader{cp: Checkpoint{ThreadID: threadID}}
	if err := src.Latest(ctx, threadID, c.row); err != nil {
		return Checkpoint{}, fmt.Errorf("store: latest of thread %q: %w", threadID, err)
	}
	if c.cp.Values == nil {
		return Checkpoint{}, fmt.Errorf("thread %q: %w", threadID, ErrNotFound)
	}
	if err := joinParts(c.cp.Values, c.meta, c.parts); err != nil {
		return Checkpoint{}, fmt.Errorf("store: latest of thread %q: %w", threadID, err)
	}
	if c.cp.Branch != 0 {
		if err := c.inherit(ctx, src); err != nil {
			return Checkpoint{}, fmt.Errorf("store: latest of thread %q: %w", threadID, err)
		}
	}
	return c.cp, nil
}

// inherit puts before the messages of a forked branch those it shares
// with the branches it came from, read from the segments it inherits.
// Those rows never change, so a read apart from the head's sees what the
// head says.
func (c *checkpointReader) inherit(ctx context.Context, src checkpointSource) error {
	segs, err := src.Segments(ctx, c.cp.ThreadID, c.cp.Branch)
	if err != nil {
		return err
	}
	var msgs []thread.Message
	var origins []int64
	for _, sg := range segs {
		if sg.Lo >= sg.Hi {
			continue
		}
		err := src.Messages(ctx, c.cp.ThreadID, sg.Key, sg.Lo, sg.Hi, func(seq int64, data []byte) error {
			var m thread.Message
			if err := m.UnmarshalJSON(data); err != nil {
				return fmt.Errorf("message %d: %w", seq, err)
			}
			msgs = append(msgs, m)
			origins = append(origins, sg.Key)
			return nil
		})
		if err != nil {
			return err
		}
	}
	for range c.cp.Messages {
		origins = append(origins, c.cp.Branch) // the branch's own rows are under its key
	}
	c.cp.Messages = append(msgs, c.cp.Messages...)
	c.cp.Origins = origins
	return nil
}

// checkpointReader builds a checkpoint from its rows.
type checkpointReader struct {
	cp    Checkpoint
	meta  string // the head's parts metadata
	parts []part
}

func (c *checkpointReader) row(r dialect.CheckpointRow) error {
	switch r.Kind {
	case 0:
		c.cp.RunID, c.cp.Route, c.cp.Step, c.cp.Head, c.cp.CopyOf = r.RunID, r.Route, int(r.Seq), int(r.Head&^inputFlag), r.CopyOf
		c.cp.Branch = r.Branch
		if r.Head > 0 {
			c.cp.ID = CheckpointID(c.cp.ThreadID, int(r.Head))
		}
		c.cp.UpdatedAt = fromNanos(r.Updated)
		c.cp.Values = thread.State{}
		if r.Text != "{}" {
			if err := json.Unmarshal([]byte(r.Text), &c.cp.Values); err != nil {
				return fmt.Errorf("state values: %w", err)
			}
		}
		c.meta = string(r.Data)
		c.cp.Messages = make([]thread.Message, 0, r.Count)
	case 1:
		c.cp.Messages = append(c.cp.Messages, thread.Message{})
		// UnmarshalJSON directly: json.Unmarshal would check the whole
		// message once more before handing it over.
		if err := c.cp.Messages[len(c.cp.Messages)-1].UnmarshalJSON(r.Data); err != nil {
			return fmt.Errorf("message %d: %w", r.Seq, err)
		}
	case 2:
		c.parts = append(c.parts, part{seq: r.Seq, field: r.Text, data: bytes.Clone(r.Data)})
	}
	return nil
}

// Events returns the run's events with an ID greater than after, ordered by
// ID, with the same bytes of data they were saved with. It fails with
// ErrNotFound when the run does not exist.
func (s *DB) Events(ctx context.Context, runID string, after int64) ([]stream.Event, error) {
	return s.EventsPage(ctx, runID, after, 0)
}

// EventsPage is Events with at most limit events; 0 or less means all.
func (s *DB) EventsPage(ctx context.Context, runID string, after int64, limit int) ([]stream.Event, error) {
	events := []stream.Event{}
	var u unpacker
	err := s.d.Events(ctx, runID, after, max(limit, 0), func(r dialect.EventRow) error {
		data, err := u.unpack(r.Codec, r.Data)
		if err != nil {
			return fmt.Errorf("event %d: %w", r.Seq, err)
		}
		events = append(events, stream.Event{ID: r.Seq, Type: r.Type, Data: data})
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("store: events of run %q: %w", runID, err)
	}
	if len(events) == 0 {
		ok, err := s.d.RunExists(ctx, runID)
		if err != nil {
			return nil, fmt.Errorf("store: events of run %q: %w", runID, err)
		}
		if !ok {
			return nil, fmt.Errorf("run %q: %w", runID, ErrNotFound)
		}
	}
	return events, nil
}

// stepInput is a step checked and encoded before its transaction.
type stepInput struct {
	finishOut []byte // the run's output, when the step finishes it
	parted    []partedValue
	messages  []string
	state     string
	// threadStatus is the thread's status after the step; "" keeps it.
	threadStatus string
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

// checkStepRow checks st against its run's row l, read in the step's
// transaction with error err.
func checkStepRow(st Step, l dialect.RunLock, err error, self int64) error {
	switch {
	case errors.Is(err, dialect.ErrNoRow):
		return fmt.Errorf("run %q: %w", st.RunID, ErrNotFound)
	case err != nil:
		return fmt.Errorf("store: save step %d of run %q: %w", st.Step, st.RunID, err)
	case l.ThreadID != st.ThreadID:
		return fmt.Errorf("run %q: %w: it belongs to thread %q, not %q", st.RunID, ErrInvalid, l.ThreadID, st.ThreadID)
	case l.Status != RunRunning:
		return fmt.Errorf("run %q is %s: %w", st.RunID, l.Status, ErrNotRunning)
	case l.Owner != self:
		return takenOver(st.RunID)
	case int64(st.Step) != l.Step+1:
		return fmt.Errorf("thread %q: %w: got step %d, the last saved step is %d", st.ThreadID, ErrStepOrder, st.Step, l.Step)
	}
	return nil
}

// inputCount is the message count at the checkpoint where a step's input
// was added: the thread had had, then the input; 0 when the step took
// none.
func inputCount(had int64, input, added int) int64 {
	if input <= 0 || input > added {
		return 0
	}
	return had + int64(input)
}
