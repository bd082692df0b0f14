package langgraph

import (
	"context"
	"encoding/json"
	"errors"
	"github.com/dawn-go/dawn/capabilities"
	"net/http"
	"time"

	"github.com/dawn-go/dawn/internal/server/wire"
	"github.com/dawn-go/dawn/internal/store"
	"github.com/labstack/echo/v4"
)

// A thread's checkpoints, as GET /threads/:id/state and POST
// /threads/:id/history show them, are the store's kept checkpoints: one
// per step of every branch, each linked to its parent. The thread's
// latest state is its head: the newest checkpoint, or the one a run
// started a new branch from.

// threadState is one checkpoint of a thread. It is Dawn's state shape
// (values, next, config, metadata, created_at, parent_config, plus
// thread_id, status and updated_at) and the LangGraph ThreadState (tasks,
// checkpoint, parent_checkpoint) in one, so either client reads it.
type threadState struct {
	Values           json.RawMessage `json:"values"`
	Next             []string        `json:"next"`
	Tasks            []stateTask     `json:"tasks"`
	Checkpoint       lgCheckpoint    `json:"checkpoint"`
	ParentCheckpoint *lgCheckpoint   `json:"parent_checkpoint"`
	Config           stateConfig     `json:"config"`
	ParentConfig     *stateConfig    `json:"parent_config"`
	Metadata         map[string]any  `json:"metadata"`
	CreatedAt        time.Time       `json:"created_at"`
	ThreadID         string          `json:"thread_id"`
	Status           string          `json:"status,omitempty"`
	UpdatedAt        *time.Time      `json:"updated_at,omitempty"`
	// Interrupts are the decisions a parked thread waits for (also in
	// values under __interrupts).
	Interrupts []capabilities.Interrupt `json:"interrupts,omitempty"`
}

// lgCheckpoint names a checkpoint in both dialects: LangGraph's
// thread_id, checkpoint_ns and checkpoint_id, and Dawn's step, run and
// route.
type lgCheckpoint struct {
	ThreadID     string `json:"thread_id"`
	CheckpointNS string `json:"checkpoint_ns"`
	CheckpointID string `json:"checkpoint_id"`
	Step         *int   `json:"step,omitempty"`
	RunID        string `json:"run_id,omitempty"`
	Route        string `json:"route,omitempty"`
}

type stateConfig struct {
	Configurable lgCheckpoint `json:"configurable"`
}

// stateTask is a pending or failed task; Dawn shows the error of a thread
// whose last run failed, as LangGraph shows a failed node.
type stateTask struct {
	ID         string   `json:"id"`
	Name       string   `json:"name"`
	Error      string   `json:"error,omitempty"`
	Interrupts []any    `json:"interrupts"`
	Checkpoint *string  `json:"checkpoint"`
	State      *string  `json:"state"`
	Result     *float64 `json:"result,omitempty"`
}

func newCheckpointRef(threadID, id string) lgCheckpoint {
	return lgCheckpoint{ThreadID: threadID, CheckpointID: id}
}

// checkpoints returns up to limit kept checkpoints of a thread, newest
// first, from the one before before (a checkpoint id; "" starts at the
// newest). A thread without a step has none.
func (s *dialect) checkpoints(ctx context.Context, threadID string, limit int, before string) ([]threadState, error) {
	t, cp, kept, err := s.keptCheckpoints(ctx, threadID, limit, before)
	if err != nil {
		return nil, err
	}
	list := make([]threadState, 0, len(kept))
	for _, k := range kept {
		if k.ID == cp.ID {
			list = append(list, s.latestState(ctx, t, cp, k))
			continue
		}
		list = append(list, keptState(t, k))
	}
	return list, nil
}

// keptCheckpoints reads the thread, its latest state and up to limit of
// its stored checkpoints before before (nil when before names none of
// the thread's).
func (s *dialect) keptCheckpoints(ctx context.Context, threadID string, limit int, before string) (store.Thread, store.Checkpoint, []store.Checkpoint, error) {
	t, err := s.host.GetThread(ctx, threadID)
	if err != nil {
		return t, store.Checkpoint{}, nil, err
	}
	cp, err := s.host.Latest(ctx, threadID)
	if err != nil {
		return t, cp, nil, err
	}
	if before != "" {
		if _, ok := store.ParseCheckpointID(threadID, before); !ok {
			return t, cp, nil, nil // not a checkpoint of this thread: nothing before it
		}
	}
	kept, err := s.host.History(ctx, threadID, store.HistoryQuery{Limit: limit, Before: before})
	return t, cp, kept, err
}

// headState is the thread's latest state, with its parent.
func (s *dialect) headState(ctx context.Context, threadID string) (threadState, error) {
	t, err := s.host.GetThread(ctx, threadID)
	if err != nil {
		return threadState{}, err
	}
	cp, err := s.host.Latest(ctx, threadID)
	if err != nil {
		return threadState{}, err
	}
	if cp.ID == "" {
		return s.latestState(ctx, t, cp, store.Checkpoint{}), nil
	}
	kept, err := s.host.CheckpointAt(ctx, threadID, cp.ID)
	if err != nil {
		return threadState{}, err
	}
	return s.withRun(ctx, kept, s.latestState(ctx, t, cp, kept)), nil
}

// keptState is a kept checkpoint that is not the thread's latest state.
func keptState(t store.Thread, k store.Checkpoint) threadState {
	ref := newCheckpointRef(t.ID, k.ID)
	step := k.Step
	ref.Step, ref.RunID, ref.Route = &step, k.RunID, k.Route
	cs := threadState{
		Values:     lcCheckpointValues(k),
		Next:       []string{},
		Tasks:      []stateTask{},
		Checkpoint: ref,
		Config:     stateConfig{Configurable: ref},
		Metadata:   checkpointMetadata(t.ID, k),
		CreatedAt:  k.UpdatedAt,
		ThreadID:   t.ID,
	}
	if runInput(k) {
		cs.Next = []string{nodeAgent} // the run's input is in; the model answers next
	}
	cs.ParentCheckpoint, cs.ParentConfig = parentOf(t.ID, k)
	return cs
}

// parentOf is the reference to the parent of k, or nil for none.
func parentOf(threadID string, k store.Checkpoint) (*lgCheckpoint, *stateConfig) {
	if k.ParentID == "" {
		return nil, nil
	}
	parent := newCheckpointRef(threadID, k.ParentID)
	return &parent, &stateConfig{Configurable: parent}
}

// checkpointMetadata is LangGraph's metadata of a kept checkpoint: what
// made it (source; for an update the node it was made as), its step and
// its run.
func checkpointMetadata(threadID string, k store.Checkpoint) map[string]any {
	source := sourceOf(k)
	switch {
	case source == "":
		source = store.SourceLoop
	case madeAs(k) == nodeInput:
		source = store.SourceInput
	}
	meta := map[string]any{"source": source, "step": k.Step, "thread_id": threadID, "parents": map[string]any{}}
	if k.RunID != "" {
		meta["run_id"] = k.RunID
		meta["graph_id"] = graphName(k.Route)
		meta["assistant_id"] = assistantID(k.Route)
	}
	return meta
}

// latestState is the thread's latest state cp as a checkpoint, kept as
// k (zero for a thread without a step): with Dawn's thread fields, and
// the interrupts it waits for or the error its last run failed with.
func (s *dialect) latestState(ctx context.Context, t store.Thread, cp, k store.Checkpoint) threadState {
	ref := newCheckpointRef(t.ID, cp.ID)
	step := cp.Head
	ref.Step, ref.RunID, ref.Route = &step, cp.RunID, cp.Route
	k.Step = cp.Head
	meta := checkpointMetadata(t.ID, k)
	if k.ID == "" {
		meta["source"] = store.SourceInput
	}
	created := cp.UpdatedAt
	if created.IsZero() {
		created = t.CreatedAt
	}
	updated := t.UpdatedAt
	pending, _ := capabilities.PendingInterrupts(cp.Values) // a value that is no list of interrupts parks nothing
	next, tasks := []string{}, s.failedTasks(ctx, t)
	if len(pending) > 0 {
		// Parked: the tools node waits for a person, as a LangGraph
		// graph waits at an interrupt().
		next, tasks = []string{nodeTools}, interruptTasks(t.ID, pending)
	} else if node := madeAs(k); node != "" {
		next = nextAfter(node, cp.Messages)
	}
	values := lcCheckpointValues(cp)
	if madeAs(k) == nodeInput {
		values = s.beforeInput(ctx, t.ID, k)
	}
	cs := threadState{
		Interrupts: pending,
		Values:     values,
		Next:       next,
		Tasks:      tasks,
		Checkpoint: ref,
		Config:     stateConfig{Configurable: ref},
		Metadata:   meta,
		CreatedAt:  created,
		ThreadID:   t.ID,
		Status:     t.Status,
		UpdatedAt:  &updated,
	}
	cs.ParentCheckpoint, cs.ParentConfig = parentOf(t.ID, k)
	return cs
}

// beforeInput is the state an update made as the graph's input (k) shows:
// its parent's, as LangGraph holds such an update for __start__.
func (s *dialect) beforeInput(ctx context.Context, threadID string, k store.Checkpoint) json.RawMessage {
	if k.ParentID != "" {
		if p, err := s.host.CheckpointAt(ctx, threadID, k.ParentID); err == nil {
			return lcCheckpointValues(p)
		}
	}
	return wire.MustJSON(map[string]any{"messages": []lcMessage{}})
}

// failedTasks is the failed task of a thread whose last run failed.
func (s *dialect) failedTasks(ctx context.Context, t store.Thread) []stateTask {
	if t.Status != store.StatusError {
		return []stateTask{}
	}
	runs, err := s.host.Runs(ctx, t.ID)
	if err != nil || len(runs) == 0 || runs[0].Status != store.RunError {
		return []stateTask{}
	}
	return []stateTask{{ID: runs[0].ID, Name: nodeAgent, Error: runs[0].Error, Interrupts: []any{}}}
}

// getThread is GET /threads/:id: the thread, with its state values and
// pending interrupts beside it as a LangGraph thread has them.
func (s *dialect) getThread(c echo.Context) error {
	ctx := c.Request().Context()
	t, err := s.host.GetThread(ctx, c.Param("id"))
	if err != nil {
		return err
	}
	cp, err := s.host.Latest(ctx, t.ID)
	if errors.Is(err, store.ErrNotFound) {
		return c.JSON(http.StatusOK, lgThread{Thread: t, Values: lcValues(t.ID, nil, nil), Interrupts: map[string]any{}})
	}
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, lgThread{Thread: t, Values: lcCheckpointValues(cp), Interrupts: threadInterrupts(t.ID, cp.Values)})
}

// lgGetState is GET /threads/:id/state: the latest state, in the shape
// both dialects read.
func (s *dialect) lgGetState(c echo.Context) error {
	cs, err := s.headState(c.Request().Context(), c.Param("id"))
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, cs)
}

// getCheckpoint is GET /threads/:id/state/:checkpoint.
func (s *dialect) getCheckpoint(c echo.Context) error {
	return s.stateAt(c, c.Param("checkpoint"))
}

// postCheckpoint is POST /threads/:id/state/checkpoint with
// {"checkpoint": {"checkpoint_id": ...}}.
func (s *dialect) postCheckpoint(c echo.Context) error {
	var body struct {
		Checkpoint struct {
			CheckpointID string `json:"checkpoint_id"`
		} `json:"checkpoint"`
	}
	if err := wire.Decode(c, &body); err != nil {
		return err
	}
	return s.stateAt(c, body.Checkpoint.CheckpointID)
}

// stateAt answers with the checkpoint id of the thread; "" is the latest
// state.
func (s *dialect) stateAt(c echo.Context, id string) error {
	ctx := c.Request().Context()
	threadID := c.Param("id")
	head, err := s.headState(ctx, threadID)
	if err != nil {
		return err
	}
	if id == "" || head.Checkpoint.CheckpointID == id {
		return c.JSON(http.StatusOK, head)
	}
	if cs, derived, err := s.nodeStateAt(ctx, threadID, id); derived {
		if errors.Is(err, store.ErrNotFound) {
			return checkpointNotFound(threadID, id)
		}
		if err != nil {
			return err
		}
		return c.JSON(http.StatusOK, cs)
	}
	k, err := s.host.CheckpointAt(ctx, threadID, id)
	if errors.Is(err, store.ErrNotFound) {
		return checkpointNotFound(threadID, id)
	}
	if err != nil {
		return err
	}
	t, err := s.host.GetThread(ctx, threadID)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, s.withRun(ctx, k, keptState(t, k)))
}

// historyBody is the body of POST /threads/:id/history.
type historyBody struct {
	Limit  int             `json:"limit"`
	Before json.RawMessage `json:"before"`
	// Metadata keeps checkpoints whose metadata has each key with an equal
	// value.
	Metadata map[string]any `json:"metadata"`
	// Checkpoint keeps the checkpoint with this checkpoint_id.
	Checkpoint struct {
		CheckpointID string `json:"checkpoint_id"`
	} `json:"checkpoint"`
}

// maxHistory bounds one page of history.
const maxHistory = 1000

func (s *dialect) threadHistory(c echo.Context) error {
	var body historyBody
	if err := wire.Decode(c, &body); err != nil {
		return err
	}
	limit := body.Limit
	switch {
	case limit <= 0:
		limit = 10
	case limit > maxHistory:
		limit = maxHistory
	}
	before, err := beforeID(body.Before)
	if err != nil {
		return err
	}
	filtered := len(body.Metadata) > 0 || body.Checkpoint.CheckpointID != ""
	fetch := limit
	if filtered {
		fetch = maxHistory
	}
	list, err := s.nodeHistory(c.Request().Context(), c.Param("id"), fetch, before)
	if err != nil {
		return err
	}
	out := make([]threadState, 0, len(list))
	for _, cs := range list {
		if body.Checkpoint.CheckpointID != "" && cs.Checkpoint.CheckpointID != body.Checkpoint.CheckpointID {
			continue
		}
		if !metadataMatches(cs.Metadata, body.Metadata) {
			continue
		}
		out = append(out, cs)
		if len(out) == limit {
			break
		}
	}
	return c.JSON(http.StatusOK, out)
}

// beforeID reads history's before: a checkpoint id, a checkpoint, or a
// config whose configurable names one.
func beforeID(raw json.RawMessage) (string, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return "", nil
	}
	var id string
	if json.Unmarshal(raw, &id) == nil {
		return id, nil
	}
	var v struct {
		CheckpointID string `json:"checkpoint_id"`
		Configurable struct {
			CheckpointID string `json:"checkpoint_id"`
		} `json:"configurable"`
	}
	if err := json.Unmarshal(raw, &v); err != nil {
		return "", wire.BadBody(`before must be a checkpoint id or a config like {"configurable":{"checkpoint_id":"..."}}`)
	}
	if v.CheckpointID != "" {
		return v.CheckpointID, nil
	}
	return v.Configurable.CheckpointID, nil
}

func metadataMatches(have, want map[string]any) bool {
	for k, w := range want {
		h, ok := have[k]
		if !ok || string(wire.MustJSON(h)) != string(wire.MustJSON(w)) {
			return false
		}
	}
	return true
}

// stateOutput is a finished run's output as the LangGraph dialect returns
// it from runs/wait and join: the state values with LangChain messages
// named as names says, or the output as it is when it holds no state.
func stateOutput(names messageNames, output json.RawMessage) json.RawMessage {
	msgs, fields, ok := splitValues(output)
	if !ok {
		return output
	}
	return namedValues(names, msgs, fields)
}
