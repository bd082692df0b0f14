package langgraph

import (
	"context"
	"encoding/json"
	"errors"
	"github.com/dawn-go/dawn/capabilities"
	"net/http"
	"strconv"
	"time"

	"github.com/dawn-go/dawn/internal/server/wire"
	"github.com/dawn-go/dawn/internal/store"
	"github.com/google/uuid"
	"github.com/labstack/echo/v4"
)

// A thread's checkpoints, as GET /threads/:id/state and POST
// /threads/:id/history show them, are the states it has been in between
// runs: the state each successful run left (its done event keeps it, and
// the run id is the checkpoint id) and the thread's latest state, when a
// run is in flight, failed, or a supervisor changed it since. Steps inside
// a run are not kept apart by the store, so they are not checkpoints here.

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
// route (step only for the latest state; the store numbers no others).
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

// stepSpace is the UUID namespace of the ids of latest states that are
// not a run's end.
var stepSpace = uuid.MustParse("0e6f4b39-2d6b-4c55-8a43-0c2a3f5e9b71")

func stepCheckpointID(threadID string, step int) string {
	return uuid.NewSHA1(stepSpace, []byte(threadID+"\x00"+strconv.Itoa(step))).String()
}

func newCheckpointRef(threadID, id string) lgCheckpoint {
	return lgCheckpoint{ThreadID: threadID, CheckpointID: id}
}

// checkpoints returns up to limit checkpoints of a thread, newest first,
// from the one after before (a checkpoint id; "" starts at the latest).
// Each links to its parent.
func (s *dialect) checkpoints(ctx context.Context, threadID string, limit int, before string) ([]threadState, error) {
	st := s.host
	t, err := st.GetThread(ctx, threadID)
	if err != nil {
		return nil, err
	}
	cp, err := st.Latest(ctx, threadID)
	if err != nil {
		return nil, err
	}
	newest, err := st.FinishedRuns(ctx, store.FinishedQuery{ThreadID: threadID, Limit: 1})
	if err != nil {
		return nil, err
	}
	// The latest state is the newest run's end when that run wrote it last:
	// the store stamps the last step and the end of a run alike.
	headIsRun := len(newest) == 1 && newest[0].ID == cp.RunID && newest[0].UpdatedAt.Equal(cp.UpdatedAt)
	var list []threadState
	var from string // the finished runs to list start before this run
	switch {
	case before == "" && !headIsRun:
		head := s.latestState(ctx, t, cp)
		list = append(list, head)
	case before == "":
	case before == stepCheckpointID(threadID, cp.Step) && !headIsRun:
	default:
		from = before
		if r, err := st.FinishedRuns(ctx, store.FinishedQuery{ThreadID: threadID, RunID: before}); err != nil || len(r) == 0 {
			return []threadState{}, err // not a checkpoint of this thread: nothing before it
		}
	}
	runs, err := st.FinishedRuns(ctx, store.FinishedQuery{ThreadID: threadID, Before: from, Limit: limit + 1})
	if err != nil {
		return nil, err
	}
	for _, r := range runs {
		var cs threadState
		switch {
		case headIsRun && len(list) == 0 && r.ID == cp.RunID:
			// The latest state: shown from the thread itself, with Dawn's
			// step and thread fields.
			cs = runCheckpoint(t, r, lcValues(t.ID, cp.Messages, cp.Values))
			step := cp.Step
			cs.Checkpoint.Step, cs.Config.Configurable.Step = &step, &step
			cs.Metadata["step"] = step
			cs.Status, cs.UpdatedAt = t.Status, &t.UpdatedAt
			cs.Tasks = s.failedTasks(ctx, t)
		case len(list) < limit:
			values, ok, err := s.runValues(ctx, t.ID, r.ID)
			if err != nil {
				return nil, err
			}
			if !ok {
				continue
			}
			cs = runCheckpoint(t, r, values)
		default:
			// Only the parent of the last one listed: its id is enough.
			cs = runCheckpoint(t, r, nil)
		}
		list = append(list, cs)
	}
	for i := range list {
		if i+1 < len(list) {
			parent := list[i+1].Checkpoint
			parent.Step = nil
			list[i].ParentCheckpoint = &parent
			list[i].ParentConfig = &stateConfig{Configurable: parent}
		}
	}
	if len(list) > limit {
		list = list[:limit]
	}
	return list, nil
}

// latestState is the thread's latest state as a checkpoint that is not
// the end of a run.
func (s *dialect) latestState(ctx context.Context, t store.Thread, cp store.Checkpoint) threadState {
	id := stepCheckpointID(t.ID, cp.Step)
	ref := newCheckpointRef(t.ID, id)
	step := cp.Step
	ref.Step, ref.RunID, ref.Route = &step, cp.RunID, cp.Route
	meta := map[string]any{"source": "loop", "step": cp.Step, "thread_id": t.ID}
	if cp.RunID != "" {
		meta["run_id"] = cp.RunID
		meta["graph_id"] = cp.Route
		meta["assistant_id"] = assistantID(cp.Route)
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
	}
	return threadState{
		Interrupts: pending,
		Values:     lcValues(t.ID, cp.Messages, cp.Values),
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
}

// runValues reads the state a finished run left, from its done event; ok
// is false when the event holds no state.
func (s *dialect) runValues(ctx context.Context, threadID, runID string) (json.RawMessage, bool, error) {
	runs, err := s.host.FinishedRuns(ctx, store.FinishedQuery{ThreadID: threadID, RunID: runID, Done: true})
	if err != nil || len(runs) == 0 {
		return nil, false, err
	}
	var done struct {
		Output json.RawMessage `json:"output"`
	}
	if json.Unmarshal(runs[0].Done, &done) != nil {
		return nil, false, nil
	}
	msgs, fields, ok := splitValues(done.Output)
	if !ok {
		return nil, false, nil
	}
	return lcValues(threadID, msgs, fields), true, nil
}

// runCheckpoint is the checkpoint a finished run left, with its values.
func runCheckpoint(t store.Thread, r store.FinishedRun, values json.RawMessage) threadState {
	ref := newCheckpointRef(t.ID, r.ID)
	ref.RunID, ref.Route = r.ID, r.Route
	return threadState{
		Values:     values,
		Next:       []string{},
		Tasks:      []stateTask{},
		Checkpoint: ref,
		Config:     stateConfig{Configurable: ref},
		Metadata:   map[string]any{"source": "loop", "run_id": r.ID, "thread_id": t.ID, "graph_id": r.Route, "assistant_id": assistantID(r.Route)},
		CreatedAt:  r.UpdatedAt,
		ThreadID:   t.ID,
	}
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
	return c.JSON(http.StatusOK, lgThread{Thread: t, Values: lcValues(t.ID, cp.Messages, cp.Values), Interrupts: threadInterrupts(t.ID, cp.Values)})
}

// lgGetState is GET /threads/:id/state: the latest checkpoint, in the shape
// both dialects read.
func (s *dialect) lgGetState(c echo.Context) error {
	list, err := s.checkpoints(c.Request().Context(), c.Param("id"), 1, "")
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, list[0])
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

func (s *dialect) stateAt(c echo.Context, id string) error {
	ctx := c.Request().Context()
	threadID := c.Param("id")
	list, err := s.checkpoints(ctx, threadID, 1, "")
	if err != nil {
		return err
	}
	if id == "" || list[0].Checkpoint.CheckpointID == id {
		return c.JSON(http.StatusOK, list[0])
	}
	// A run's end, linked to the checkpoint before it.
	values, ok, err := s.runValues(ctx, threadID, id)
	if err != nil {
		return err
	}
	if ok {
		t, err := s.host.GetThread(ctx, threadID)
		if err != nil {
			return err
		}
		runs, err := s.host.FinishedRuns(ctx, store.FinishedQuery{ThreadID: threadID, RunID: id})
		if err != nil || len(runs) == 0 {
			return err
		}
		cs := runCheckpoint(t, runs[0], values)
		older, err := s.host.FinishedRuns(ctx, store.FinishedQuery{ThreadID: threadID, Before: id, Limit: 1})
		if err != nil {
			return err
		}
		if len(older) == 1 {
			parent := newCheckpointRef(threadID, older[0].ID)
			parent.RunID, parent.Route = older[0].ID, older[0].Route
			cs.ParentCheckpoint, cs.ParentConfig = &parent, &stateConfig{Configurable: parent}
		}
		return c.JSON(http.StatusOK, cs)
	}
	return wire.NewError(http.StatusNotFound, "checkpoint_not_found", "thread "+threadID+" has no checkpoint "+strconv.Quote(id)+"; list them with POST /threads/"+threadID+"/history")
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
	list, err := s.checkpoints(c.Request().Context(), c.Param("id"), fetch, before)
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

// headCheckpointID is the id of the thread's latest checkpoint, which a run
// may name as the one to continue from.
func (s *dialect) headCheckpointID(ctx context.Context, threadID string) (string, error) {
	list, err := s.checkpoints(ctx, threadID, 1, "")
	if errors.Is(err, store.ErrNotFound) {
		return "", nil
	}
	if err != nil || len(list) == 0 {
		return "", err
	}
	return list[0].Checkpoint.CheckpointID, nil
}

// stateOutput is a finished run's output as the LangGraph dialect returns
// it from runs/wait and join: the state values with LangChain messages, or
// the output as it is when it holds no state.
func stateOutput(threadID string, output json.RawMessage) json.RawMessage {
	msgs, fields, ok := splitValues(output)
	if !ok {
		return output
	}
	return lcValues(threadID, msgs, fields)
}
