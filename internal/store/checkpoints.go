package store

import (
	"bytes"
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"github.com/dawn-go/dawn/internal/store/dialect"
	"github.com/dawn-go/dawn/thread"
	"github.com/google/uuid"
)

// Sources of a checkpoint: what made it.
const (
	// SourceLoop is a step of a run.
	SourceLoop = "loop"
	// SourceUpdate is a change of state outside any run.
	SourceUpdate = "update"
	// SourceInput is a run's input, or a state a thread was created with.
	SourceInput = "input"
)

// inputFlag marks, in a checkpoint number, the checkpoint before a step's
// model output where its run's input was added (see Step.Input): such a
// checkpoint is numbered as its step with this bit set.
const inputFlag = 1 << 46

// CheckpointID names a thread's checkpoint at step: a UUID whose first ten
// bytes come from the thread id and last six hold the step, so that the id
// says its step and the ids of a thread sort by step.
func CheckpointID(threadID string, step int) string {
	var u uuid.UUID
	sum := sha256.Sum256([]byte(threadID))
	copy(u[:10], sum[:10])
	u[6] = u[6]&0x0f | 0x80 // version 8: a custom layout
	u[8] = u[8]&0x3f | 0x80 // the RFC 9562 variant
	binary.BigEndian.PutUint16(u[10:12], uint16(uint64(step)>>32))
	binary.BigEndian.PutUint32(u[12:], uint32(step))
	return u.String()
}

// InputCheckpointID names the checkpoint where a run's input was added
// before its first step, step (see Step.Input).
func InputCheckpointID(threadID string, step int) string {
	return CheckpointID(threadID, step|inputFlag)
}

// ParseCheckpointID returns the step that id names in the thread, or false
// when id names no checkpoint of it.
func ParseCheckpointID(threadID, id string) (int, bool) {
	u, err := uuid.Parse(id)
	if err != nil {
		return 0, false
	}
	want := uuid.MustParse(CheckpointID(threadID, 0))
	if !bytes.Equal(u[:10], want[:10]) {
		return 0, false
	}
	step := int(binary.BigEndian.Uint16(u[10:12]))<<32 | int(binary.BigEndian.Uint32(u[12:]))
	return step, step > 0
}

// HistoryQuery selects a thread's kept checkpoints, of every branch,
// newest first: at most Limit (all when 0), from the one before checkpoint
// Before ("": from the newest).
type HistoryQuery struct {
	Limit  int
	Before string
	// MaxBytes bounds the page by the size of its checkpoints' values
	// and messages (DefaultHistoryBytes when 0): the page ends at the
	// checkpoint that passes it, which it holds (so a page always holds
	// one). A page shorter than Limit may so have more after it: the
	// reader pages on with Before set to its last checkpoint's id.
	MaxBytes int
}

// DefaultHistoryBytes is HistoryQuery.MaxBytes when it is 0: one page of
// history holds about this much state at most.
const DefaultHistoryBytes = 8 << 20

// History returns the thread's kept checkpoints that q selects, each with
// its values and the messages of its branch at that point: one per step,
// and before a run's first step the one where its input was added. A
// thread without a step has none. It fails with ErrNotFound for an
// unknown thread.
func (s *DB) History(ctx context.Context, threadID string, q HistoryQuery) ([]Checkpoint, error) {
	if err := s.threadExists(ctx, threadID); err != nil {
		return nil, err
	}
	f := dialect.CheckpointFilter{}
	if q.Limit > 0 {
		f.Limit = q.Limit + 1 // the row of before itself may come first
	}
	var before int64
	if q.Before != "" {
		n, ok := ParseCheckpointID(threadID, q.Before)
		if !ok {
			return nil, fmt.Errorf("thread %q: %w: before %q is no checkpoint id of this thread", threadID, ErrInvalid, q.Before)
		}
		before = int64(n)
		f.Before = before&^inputFlag + 1
	}
	budget := q.MaxBytes
	if budget <= 0 {
		budget = DefaultHistoryBytes
	}
	list, err := s.readCheckpoints(ctx, threadID, f, 0, pageBudget{skip: before, bytes: budget})
	if err != nil {
		return nil, err
	}
	if before != 0 {
		i := slices.IndexFunc(list, func(cp Checkpoint) bool { return cp.number == before })
		list = list[i+1:] // -1 when before is gone: all of them
	}
	if q.Limit > 0 && len(list) > q.Limit {
		list = list[:q.Limit]
	}
	return list, nil
}

// CheckpointAt returns the thread's kept checkpoint with the given id. It
// fails with ErrNotFound when the thread or the checkpoint does not exist.
func (s *DB) CheckpointAt(ctx context.Context, threadID, id string) (Checkpoint, error) {
	if err := s.threadExists(ctx, threadID); err != nil {
		return Checkpoint{}, err
	}
	n, ok := ParseCheckpointID(threadID, id)
	if !ok {
		return Checkpoint{}, checkpointNotFound(threadID, id)
	}
	list, err := s.readCheckpoints(ctx, threadID, dialect.CheckpointFilter{Step: int64(n) &^ inputFlag, Limit: 1}, int64(n), pageBudget{})
	if err != nil {
		return Checkpoint{}, err
	}
	if len(list) == 0 {
		return Checkpoint{}, checkpointNotFound(threadID, id)
	}
	return list[0], nil
}

func checkpointNotFound(threadID, id string) error {
	return fmt.Errorf("thread %q has no checkpoint %q: %w", threadID, id, ErrNotFound)
}

// readCheckpoints reads the checkpoints of the rows f selects, with their
// values and messages; only checkpoint number only when it is not 0.
func (s *DB) readCheckpoints(ctx context.Context, threadID string, f dialect.CheckpointFilter, only int64, budget pageBudget) ([]Checkpoint, error) {
	var metas []dialect.CheckpointMeta
	err := s.d.Checkpoints(ctx, threadID, f, func(m dialect.CheckpointMeta) error {
		metas = append(metas, m)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("store: checkpoints of thread %q: %w", threadID, err)
	}
	r := historyReader{d: s.d, threadID: threadID, branches: map[int64]*branchMessages{}, metas: map[int64]dialect.CheckpointMeta{}}
	out := make([]Checkpoint, 0, len(metas))
	if err := r.load(ctx, metas); err != nil {
		return nil, fmt.Errorf("store: checkpoints of thread %q: %w", threadID, err)
	}
	for _, m := range metas {
		list := []int64{m.Step}
		if m.Input > 0 {
			list = append(list, m.Step|inputFlag)
		}
		for _, n := range list {
			if only != 0 && n != only {
				continue
			}
			cp, err := r.checkpoint(ctx, m, n)
			if err != nil {
				return nil, fmt.Errorf("store: checkpoint %d of thread %q: %w", m.Step, threadID, err)
			}
			out = append(out, cp)
			if budget.spend(cp) {
				return out, nil
			}
		}
	}
	return out, nil
}

// pageBudget bounds a page of checkpoints by their size: bytes 0 bounds
// nothing. skip is the checkpoint number the page starts after (the
// page's before), which is read but not counted.
type pageBudget struct {
	skip  int64
	bytes int
}

// spend counts cp against the budget and reports whether the page is
// full.
func (b *pageBudget) spend(cp Checkpoint) bool {
	if b.bytes <= 0 || (b.skip != 0 && cp.number == b.skip) {
		return false
	}
	b.bytes -= checkpointSize(cp)
	return b.bytes <= 0
}

// checkpointSize is about how many bytes cp takes as JSON: its values
// and its messages.
func checkpointSize(cp Checkpoint) int {
	n := 0
	for k, v := range cp.Values {
		n += len(k) + len(v)
	}
	for _, m := range cp.Messages {
		n += len(m.Content) + 64
		for _, tc := range m.ToolCalls {
			n += len(tc.Input) + len(tc.Name) + len(tc.ID)
		}
		for k, v := range m.Meta {
			n += len(k) + len(v)
		}
	}
	return n
}

// historyReader reads what a page of checkpoints needs once: each branch's
// messages up to the longest checkpoint of it, and the thread's parts.
type historyReader struct {
	d        dialect.Reader
	threadID string
	branches map[int64]*branchMessages
	metas    map[int64]dialect.CheckpointMeta // by step
	parts    []part
	parted   bool // parts is read
}

// branchMessages are the first messages of a branch, with their origins.
type branchMessages struct {
	want     int64
	messages []thread.Message
	origins  []int64
}

// load reads the messages metas need.
func (r *historyReader) load(ctx context.Context, metas []dialect.CheckpointMeta) error {
	for _, m := range metas {
		r.metas[m.Step] = m
		b := r.branches[m.Branch]
		if b == nil {
			b = &branchMessages{}
			r.branches[m.Branch] = b
		}
		b.want = max(b.want, m.Messages)
	}
	for key, b := range r.branches {
		if err := r.loadBranch(ctx, key, b); err != nil {
			return err
		}
	}
	return nil
}

// meta returns the row of step, read when the page does not hold it.
func (r *historyReader) meta(ctx context.Context, step int64) (dialect.CheckpointMeta, error) {
	if m, ok := r.metas[step]; ok {
		return m, nil
	}
	found := false
	err := r.d.Checkpoints(ctx, r.threadID, dialect.CheckpointFilter{Step: step, Limit: 1}, func(m dialect.CheckpointMeta) error {
		r.metas[step], found = m, true
		return nil
	})
	if err == nil && !found {
		err = fmt.Errorf("checkpoint %d is gone", step)
	}
	return r.metas[step], err
}

// values returns the state values of checkpoint number n: a step's own,
// or, for the checkpoint where a step's input was added, those of the
// step's parent.
func (r *historyReader) values(ctx context.Context, n int64) (thread.State, error) {
	values := thread.State{}
	for n != 0 {
		m, err := r.meta(ctx, n&^inputFlag)
		if err != nil {
			return nil, err
		}
		if n&inputFlag != 0 {
			n = m.Parent
			continue
		}
		if m.State != "{}" {
			if err := json.Unmarshal([]byte(m.State), &values); err != nil {
				return nil, fmt.Errorf("state values: %w", err)
			}
		}
		if m.Parts == "{}" {
			return values, nil
		}
		if !r.parted {
			r.parted = true
			err := r.d.Parts(ctx, r.threadID, func(row dialect.CheckpointRow) error {
				r.parts = append(r.parts, part{seq: row.Seq, field: row.Text, data: bytes.Clone(row.Data)})
				return nil
			})
			if err != nil {
				return nil, err
			}
		}
		return values, joinParts(values, m.Parts, r.parts)
	}
	return values, nil
}

// loadBranch reads the first b.want messages of branch key: the segments
// it inherits, then its own.
func (r *historyReader) loadBranch(ctx context.Context, key int64, b *branchMessages) error {
	segs, err := r.d.Segments(ctx, r.threadID, key)
	if err != nil {
		return err
	}
	segs = append(segs, dialect.Segment{Key: key, Lo: ownStart(segs), Hi: b.want})
	for _, sg := range segs {
		hi := min(sg.Hi, b.want)
		if sg.Lo >= hi {
			continue
		}
		err := r.d.Messages(ctx, r.threadID, sg.Key, sg.Lo, hi, func(seq int64, data []byte) error {
			var m thread.Message
			if err := m.UnmarshalJSON(data); err != nil {
				return fmt.Errorf("message %d: %w", seq, err)
			}
			b.messages = append(b.messages, m)
			b.origins = append(b.origins, sg.Key)
			return nil
		})
		if err != nil {
			return err
		}
	}
	if int64(len(b.messages)) != b.want {
		return fmt.Errorf("branch %d holds %d messages, its checkpoints say %d", key, len(b.messages), b.want)
	}
	return nil
}

// ownStart is where the own messages of a branch that inherits segs
// begin.
func ownStart(segs []dialect.Segment) int64 {
	var start int64
	for _, sg := range segs {
		start = max(start, sg.Hi)
	}
	return start
}

// checkpoint builds checkpoint number n of row m (its step, or the
// checkpoint where its input was added) from what load read.
func (r *historyReader) checkpoint(ctx context.Context, m dialect.CheckpointMeta, n int64) (Checkpoint, error) {
	b := r.branches[m.Branch]
	count, parent, source := m.Messages, m.Parent, m.Source
	if m.Input > 0 {
		parent = m.Step | inputFlag
	}
	if n&inputFlag != 0 {
		count, parent, source = m.Input, m.Parent, SourceInput
	}
	cp := Checkpoint{
		ThreadID: r.threadID, RunID: m.RunID, Route: m.Route, Step: int(m.Step), Head: int(m.Step),
		ID: CheckpointID(r.threadID, int(n)), Source: source, number: n,
		Messages:  slices.Clip(b.messages[:count]),
		UpdatedAt: fromNanos(m.CreatedAt), CopyOf: m.CopyOf, Branch: m.Branch,
	}
	if parent > 0 {
		cp.ParentID = CheckpointID(r.threadID, int(parent))
	}
	if slices.ContainsFunc(b.origins[:count], func(k int64) bool { return k != 0 }) {
		cp.Origins = slices.Clip(b.origins[:count])
	}
	var err error
	cp.Values, err = r.values(ctx, n)
	return cp, err
}

// fork makes the thread's kept checkpoint id its head, on a new branch
// that shares the messages before it: the next step follows it, and the
// branch it was on stays as it is. l is the thread, locked. Forking from
// the head itself changes nothing.
func (s *DB) fork(ctx context.Context, tx dialect.Tx, threadID string, l dialect.ThreadLock, id string) error {
	n, ok := ParseCheckpointID(threadID, id)
	if !ok {
		return checkpointNotFound(threadID, id)
	}
	if int64(n) == l.Head {
		return nil
	}
	m, err := forkPoint(ctx, tx, l.PK, int64(n))
	if errors.Is(err, dialect.ErrNoRow) {
		return checkpointNotFound(threadID, id)
	}
	if err != nil {
		return err
	}
	segs, err := tx.Segments(ctx, threadID, m.Branch)
	if err != nil {
		return err
	}
	inherit := make([]dialect.Segment, 0, len(segs)+1)
	for _, sg := range segs {
		if hi := min(sg.Hi, m.Messages); sg.Lo < hi {
			inherit = append(inherit, dialect.Segment{Key: sg.Key, Lo: sg.Lo, Hi: hi})
		}
	}
	if start := ownStart(segs); start < m.Messages {
		inherit = append(inherit, dialect.Segment{Key: m.Branch, Lo: start, Hi: m.Messages})
	}
	key, err := tx.NewBranch(ctx, l.PK, inherit)
	if err != nil {
		return err
	}
	meta, err := s.forkParts(ctx, tx, threadID, l, m)
	if err != nil {
		return err
	}
	return tx.MoveHead(ctx, dialect.HeadWrite{ThreadPK: l.PK, Head: int64(n), Branch: key, Messages: m.Messages,
		RunID: m.RunID, Route: m.Route, State: m.State, Parts: meta, Now: s.now()})
}

// forkPoint reads what checkpoint number n holds, as a row: a step's own
// row, or for the checkpoint where a step's input was added, the step's
// branch and run with the input's message count and the state of the
// step's parent.
func forkPoint(ctx context.Context, tx dialect.HistoryTx, threadPK, n int64) (dialect.CheckpointMeta, error) {
	m, err := tx.Checkpoint(ctx, threadPK, n&^inputFlag)
	if err != nil || n&inputFlag == 0 {
		return m, err
	}
	if m.Input == 0 {
		return m, dialect.ErrNoRow
	}
	m.Messages, m.State, m.Parts = m.Input, "{}", "{}"
	for p := m.Parent; p != 0; {
		parent, err := tx.Checkpoint(ctx, threadPK, p&^inputFlag)
		if err != nil {
			return m, err
		}
		if p&inputFlag == 0 {
			m.State, m.Parts = parent.State, parent.Parts
			break
		}
		p = parent.Parent
	}
	return m, nil
}

// forkParts writes again, as new parts, the parted fields of checkpoint m,
// so that the new branch's parts follow on from its own: a field's parts
// are read from its first on (see joinParts). It returns the head's new
// parts metadata.
func (s *DB) forkParts(ctx context.Context, tx dialect.Tx, threadID string, l dialect.ThreadLock, m dialect.CheckpointMeta) (string, error) {
	if m.Parts == "{}" {
		return "{}", nil
	}
	c := &checkpointReader{cp: Checkpoint{ThreadID: threadID}}
	if err := tx.Latest(ctx, threadID, c.row); err != nil {
		return "", err
	}
	values := thread.State{}
	if err := joinParts(values, m.Parts, c.parts); err != nil {
		return "", err
	}
	_, parted, err := splitValues(values)
	if err != nil {
		return "", err
	}
	var cur partsMeta
	if err := json.Unmarshal([]byte(l.Parts), &cur); err != nil {
		return "", fmt.Errorf("parts %q: %w", l.Parts, err)
	}
	fresh, err := json.Marshal(partsMeta{Next: cur.Next, Fields: map[string]partField{}})
	if err != nil {
		return "", err
	}
	return planParts(ctx, tx, l.PK, string(fresh), parted)
}

// StateUpdate is a change of a thread's state outside any run, kept as a
// new checkpoint on the thread's branch.
type StateUpdate struct {
	ThreadID string
	// Checkpoint, when set, is the checkpoint to change: the thread
	// first starts a new branch from it (see BeginRunChecked).
	Checkpoint string
	// Source is what the checkpoint says made it; SourceUpdate when "".
	Source string
	// Merge gets the state to change, inside the write, and returns the
	// messages to add to it and the whole new state values.
	Merge func(Checkpoint) (append []thread.Message, values thread.State, err error)
	// Rewrite, when set, is used instead of Merge: an update that may
	// change or drop messages the state has (see Rewrite and branchAt).
	Rewrite Rewrite
}

// UpdateState keeps a new checkpoint on the thread: the state u.Merge
// makes of its latest one. It returns the thread's new latest checkpoint.
// It fails with ErrNotFound for an unknown thread or checkpoint, ErrBusy
// while a run is in flight, and with Merge's error as it is.
func (s *DB) UpdateState(ctx context.Context, u StateUpdate) (Checkpoint, error) {
	var out Checkpoint
	err := s.write(ctx, func(tx dialect.Tx) error {
		l, err := lockIdle(ctx, tx, u.ThreadID)
		if err != nil {
			return err
		}
		if u.Checkpoint != "" {
			if err := s.fork(ctx, tx, u.ThreadID, l, u.Checkpoint); err != nil {
				return err
			}
			if l, err = lockIdle(ctx, tx, u.ThreadID); err != nil {
				return err
			}
		}
		cp, err := latest(ctx, tx, u.ThreadID)
		if err != nil {
			return err
		}
		keep, msgs, values, err := u.merge(cp)
		if err != nil {
			return err
		}
		if u.Checkpoint == "" && keep == len(cp.Messages) && len(msgs) == 0 {
			same, err := unchanged(ctx, tx, l, u.source(), cp.Values, values)
			if err != nil || same {
				// An update that changes nothing keeps no copy of the
				// state: the latest checkpoint stands for it.
				out = cp
				return err
			}
		}
		if l, err = branchAt(ctx, tx, u.ThreadID, l, int64(keep)); err != nil {
			return fmt.Errorf("store: update state of thread %q: %w", u.ThreadID, err)
		}
		if err := s.saveUpdate(ctx, tx, l, u, msgs, values); err != nil {
			return fmt.Errorf("store: update state of thread %q: %w", u.ThreadID, err)
		}
		out, err = latest(ctx, tx, u.ThreadID)
		return err
	})
	return out, err
}

// lockIdle locks a thread that has no run in flight.
func lockIdle(ctx context.Context, tx dialect.ThreadTx, threadID string) (dialect.ThreadLock, error) {
	l, err := tx.LockThread(ctx, threadID)
	switch {
	case errors.Is(err, dialect.ErrNoRow):
		return l, fmt.Errorf("thread %q: %w", threadID, ErrNotFound)
	case err != nil:
		return l, fmt.Errorf("store: lock thread %q: %w", threadID, err)
	case l.Running:
		return l, fmt.Errorf("thread %q: %w: its state changes once the run in flight ends", threadID, ErrBusy)
	}
	return l, nil
}

// saveUpdate writes an update's messages and values as the step after the
// thread's highest.
func (s *DB) saveUpdate(ctx context.Context, tx dialect.Tx, l dialect.ThreadLock, u StateUpdate, msgs []thread.Message, values thread.State) error {
	whole, parted, err := splitValues(values)
	if err != nil {
		return fmt.Errorf("%w: %v", ErrInvalid, err)
	}
	enc := getEncoder()
	defer putEncoder(enc)
	texts, state, err := enc.encodeStep(msgs, whole)
	if err != nil {
		return fmt.Errorf("%w: %v", ErrInvalid, err)
	}
	if err := tx.InsertMessages(ctx, l.PK, l.Branch, l.Messages, texts); err != nil {
		return err
	}
	meta, err := planParts(ctx, tx, l.PK, l.Parts, parted)
	if err != nil {
		return err
	}
	return tx.SaveCheckpoint(ctx, dialect.CheckpointWrite{ThreadPK: l.PK, Step: l.Step + 1, Parent: l.Head, Branch: l.Branch,
		Messages: l.Messages + int64(len(texts)), Source: u.source(), State: state, Parts: meta, Now: s.now(), ValuesOnly: true})
}

// source is what the update's checkpoint says made it.
func (u StateUpdate) source() string {
	if u.Source == "" {
		return SourceUpdate
	}
	return u.Source
}

// unchanged reports whether an update that adds and drops no message,
// made by source, leaves the thread l locked as its head checkpoint is:
// the same values, and a head made by the same source (a checkpoint made
// by another node says something new even with the same values).
func unchanged(ctx context.Context, tx dialect.HistoryTx, l dialect.ThreadLock, source string, before, after thread.State) (bool, error) {
	if l.Head == 0 || l.Head&inputFlag != 0 || len(before) != len(after) {
		return false, nil
	}
	for k, v := range after {
		old, ok := before[k]
		if !ok || !sameJSON(old, v) {
			return false, nil
		}
	}
	head, err := tx.Checkpoint(ctx, l.PK, l.Head)
	if err != nil {
		return false, err
	}
	return head.Source == source, nil
}

// sameJSON reports whether a and b are the same JSON text, but for space.
func sameJSON(a, b json.RawMessage) bool {
	if bytes.Equal(a, b) {
		return true
	}
	var ca, cb bytes.Buffer
	return json.Compact(&ca, a) == nil && json.Compact(&cb, b) == nil && bytes.Equal(ca.Bytes(), cb.Bytes())
}

// CopyThread creates thread toID with the metadata, checkpoints, branches
// and latest state of thread fromID: the same state and history under a
// new id, without its runs. It fails with ErrNotFound for an unknown
// thread and ErrExists when toID is taken.
func (s *DB) CopyThread(ctx context.Context, fromID, toID string) (Thread, error) {
	if err := checkID("thread", toID); err != nil {
		return Thread{}, err
	}
	from, err := s.GetThread(ctx, fromID)
	if err != nil {
		return Thread{}, err
	}
	now := s.now()
	// The copy belongs to the thread's owner: whoever may copy it may see
	// it, and the copy stays theirs.
	row := dialect.ThreadRow{ID: toID, CreatedAt: now, UpdatedAt: now, Metadata: string(from.Metadata), Status: StatusIdle, Owner: from.Owner}
	if from.Status != StatusBusy {
		row.Status = from.Status
	}
	err = s.write(ctx, func(tx dialect.Tx) error {
		l, err := tx.LockThread(ctx, fromID)
		if errors.Is(err, dialect.ErrNoRow) {
			return fmt.Errorf("thread %q: %w", fromID, ErrNotFound)
		}
		if err != nil {
			return err
		}
		pk, err := tx.InsertThread(ctx, row)
		if errors.Is(err, dialect.ErrTaken) {
			return fmt.Errorf("thread %q: %w", toID, ErrExists)
		}
		if err != nil {
			return err
		}
		if err := s.checkThreads(ctx, tx, row.Owner); err != nil {
			return err
		}
		cp, err := latest(ctx, tx, fromID)
		if err != nil {
			return err
		}
		return tx.CopyThread(ctx, l.PK, pk, cmp.Or(cp.CopyOf, fromID))
	})
	if err != nil {
		return Thread{}, fmt.Errorf("store: copy thread %q to %q: %w", fromID, toID, err)
	}
	return threadOf(row), nil
}
