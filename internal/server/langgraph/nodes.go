package langgraph

import (
	"context"
	"encoding/json"
	"errors"
	"maps"
	"strconv"
	"strings"

	"github.com/dawn-go/dawn/capabilities"
	"github.com/dawn-go/dawn/internal/runner"
	"github.com/dawn-go/dawn/internal/server/wire"
	"github.com/dawn-go/dawn/internal/store"
	"github.com/dawn-go/dawn/thread"
	"github.com/google/uuid"
)

// LangGraph's prebuilt agent graph keeps a checkpoint after every node:
// the run's input (step -1, next __start__), the input applied (next
// agent), each model turn (next tools, when it called tools), each tools
// step (next agent). Dawn stores one checkpoint per step, a model turn
// with its tool calls, and one where a run's input was added; the
// LangGraph view derives the checkpoints in between from them, without
// storing anything more:
//   - a run's input checkpoint is two: before the input (the parent's
//     state, next __start__), then with it (the stored checkpoint, next
//     agent);
//   - a step whose model turn called tools that answered is two: after
//     the model's turn (its messages up to the model's, next tools), then
//     after the tools (the stored checkpoint, next agent);
//   - every other checkpoint is itself.
//
// The derived checkpoint's id is the stored one's with nodeFlag set in the
// step bits of the id (see store.CheckpointID), so it names the thread and
// the stored checkpoint it comes from, and getState and forks resolve it.
// LangGraph's metadata.step counts nodes: a step n of Dawn's is 2n-1 after
// the model, 2n after its tools; a run whose first step is n has its input
// at 2n-3 and applied at 2n-2, so a thread's first run has LangGraph's
// -1, 0, 1, 2, 3.

// nodeFlag marks a derived checkpoint's number (see above). Bit 46 is the
// store's own input flag; the number has 48 bits.
const nodeFlag = 1 << 47

// derivedID is the id of the checkpoint derived before the stored one id.
func derivedID(threadID, id string) string {
	n, ok := store.ParseCheckpointID(threadID, id)
	if !ok {
		return ""
	}
	return store.CheckpointID(threadID, n|nodeFlag)
}

// storedID resolves a checkpoint id of the LangGraph view: the stored
// checkpoint it is or comes from, and whether it is the derived one.
func storedID(threadID, id string) (string, bool) {
	n, ok := store.ParseCheckpointID(threadID, id)
	if !ok || n&nodeFlag == 0 {
		return id, false
	}
	return store.CheckpointID(threadID, n&^nodeFlag), true
}

// runInput reports whether k is where a run's input was added.
func runInput(k store.Checkpoint) bool {
	return sourceOf(k) == store.SourceInput && k.RunID != ""
}

// updateSource is the source a state update made as node asNode is kept
// with: source, then the node after a colon, so the view can show what
// LangGraph's graph would run next from it.
func updateSource(source, asNode string) string {
	if asNode == "" {
		return source
	}
	return source + ":" + asNode
}

// sourceOf is what made k, without the node an update was made as.
func sourceOf(k store.Checkpoint) string {
	source, _, _ := strings.Cut(k.Source, ":")
	return source
}

// madeAs is the node the state update k was made as, "" when none.
func madeAs(k store.Checkpoint) string {
	_, node, _ := strings.Cut(k.Source, ":")
	return node
}

// nextAfter is what LangGraph's prebuilt agent graph runs after node
// updated the state to msgs: its input goes to __start__, __start__ and
// tools lead to the agent, and the agent to the tools when its message
// calls any, else to the end.
func nextAfter(node string, msgs []thread.Message) []string {
	switch node {
	case nodeInput:
		return []string{nodeStart}
	case nodeStart, nodeTools:
		return []string{nodeAgent}
	}
	if len(msgs) > 0 && len(unansweredCalls(msgs)) > 0 {
		return []string{nodeTools}
	}
	return []string{}
}

// toolsAnswered returns the index of the last model message of msgs when
// it called tools and only their results follow it, or -1.
func toolsAnswered(msgs []thread.Message) int {
	for i := len(msgs) - 1; i >= 0; i-- {
		switch m := msgs[i]; {
		case m.Role == thread.RoleTool:
			continue
		case m.Role == thread.RoleAssistant && len(m.ToolCalls) > 0 && i < len(msgs)-1:
			return i
		}
		return -1
	}
	return -1
}

// splits reports whether stored checkpoint k stands for two checkpoints
// in the LangGraph view.
func splits(k store.Checkpoint) bool {
	if runInput(k) {
		return true
	}
	source := sourceOf(k)
	return source != store.SourceUpdate && source != store.SourceInput && toolsAnswered(k.Messages) >= 0
}

// nodeStates is stored checkpoint k, shown as cs, in the LangGraph view:
// one checkpoint or two, newest first. parent reads k's parent (for the
// state before a run's input).
func nodeStates(threadID string, k store.Checkpoint, cs threadState, head bool, parent func() (store.Checkpoint, bool)) []threadState {
	setStep(&cs, 2*k.Step)
	switch {
	case runInput(k):
		before := cs
		before.Checkpoint = withID(cs.Checkpoint, derivedID(threadID, k.ID))
		before.Config = stateConfig{Configurable: before.Checkpoint}
		before.Next, before.Tasks = []string{nodeStart}, []stateTask{}
		before.Values = wire.MustJSON(map[string]any{"messages": []lcMessage{}})
		if p, ok := parent(); ok {
			before.Values = lcCheckpointValues(p)
		}
		before.Status, before.UpdatedAt, before.Interrupts = "", nil, nil
		setStep(&before, 2*k.Step-3)
		cs.Metadata = cloneMeta(cs.Metadata)
		cs.Metadata["source"] = store.SourceLoop
		setStep(&cs, 2*k.Step-2)
		linkParent(&cs, before.Checkpoint)
		if !head {
			cs.Next = []string{nodeAgent}
		}
		return []threadState{cs, before}
	case splits(k):
		a := toolsAnswered(k.Messages)
		agent := cs
		agent.Checkpoint = withID(cs.Checkpoint, derivedID(threadID, k.ID))
		agent.Config = stateConfig{Configurable: agent.Checkpoint}
		short := k
		short.Messages = k.Messages[:a+1]
		agent.Values = lcCheckpointValues(short)
		agent.Next, agent.Tasks = []string{nodeTools}, []stateTask{}
		agent.Status, agent.UpdatedAt, agent.Interrupts = "", nil, nil
		setStep(&agent, 2*k.Step-1)
		linkParent(&cs, agent.Checkpoint)
		if !head {
			cs.Next = []string{nodeAgent}
		}
		return []threadState{cs, agent}
	}
	if sourceOf(k) != store.SourceUpdate {
		setStep(&cs, 2*k.Step-1)
	}
	if !head && len(unansweredCalls(k.Messages)) > 0 {
		cs.Next = []string{nodeTools}
	}
	if node := madeAs(k); node != "" && (!head || len(cs.Next) == 0) {
		cs.Next = nextAfter(node, k.Messages)
	}
	if madeAs(k) == nodeInput {
		// LangGraph holds an update made as the graph's input for
		// __start__: the state shows it once __start__ has run. Dawn
		// keeps it applied, so a run from here starts with it.
		cs.Values = wire.MustJSON(map[string]any{"messages": []lcMessage{}})
		if p, ok := parent(); ok {
			cs.Values = lcCheckpointValues(p)
		}
	}
	return []threadState{cs}
}

// withID is ref naming checkpoint id.
func withID(ref lgCheckpoint, id string) lgCheckpoint {
	ref.CheckpointID = id
	return ref
}

// setStep sets cs's metadata.step (a copy of its metadata).
func setStep(cs *threadState, step int) {
	cs.Metadata = cloneMeta(cs.Metadata)
	cs.Metadata["step"] = step
}

// linkParent makes parent the parent of cs.
func linkParent(cs *threadState, parent lgCheckpoint) {
	p := newCheckpointRef(parent.ThreadID, parent.CheckpointID)
	cs.ParentCheckpoint, cs.ParentConfig = &p, &stateConfig{Configurable: p}
}

// cloneMeta is a copy of m with room for one more key, never nil.
func cloneMeta(m map[string]any) map[string]any {
	out := make(map[string]any, len(m)+1)
	maps.Copy(out, m)
	return out
}

// nodeHistory is the LangGraph view of up to limit checkpoints of a
// thread, newest first, from the one before before (an id of the view;
// "" starts at the newest).
func (s *dialect) nodeHistory(ctx context.Context, threadID string, limit int, before string) ([]threadState, error) {
	var list []threadState
	var err error
	switch from, derived := storedID(threadID, before); {
	case before == "" || derived:
		// A derived checkpoint is the older of its pair: the stored ones
		// before its own come next.
		list, err = s.expanded(ctx, threadID, limit, from)
	default:
		list, err = s.checkpointsFrom(ctx, threadID, before, limit)
	}
	if err != nil {
		return nil, err
	}
	return list[:min(limit, len(list))], nil
}

// checkpointsFrom is the view from before, a stored checkpoint id: its
// derived checkpoint, if any, and those of the stored ones before it.
func (s *dialect) checkpointsFrom(ctx context.Context, threadID, before string, limit int) ([]threadState, error) {
	all, err := s.expanded(ctx, threadID, limit, before)
	if err != nil {
		return nil, err
	}
	if _, ok := store.ParseCheckpointID(threadID, before); !ok {
		return all, nil
	}
	k, err := s.host.CheckpointAt(ctx, threadID, before)
	if err != nil || !splits(k) {
		return all, nil //nolint:nilerr // a checkpoint that is gone has nothing derived before it
	}
	t, err := s.host.GetThread(ctx, threadID)
	if err != nil {
		return nil, err
	}
	pair := s.viewStates(ctx, threadID, k, keptState(t, k))
	return append([]threadState{pair[1]}, all...), nil
}

// expanded is the view of up to limit stored checkpoints from before (a
// stored id, "" for the newest): each one's checkpoints.
func (s *dialect) expanded(ctx context.Context, threadID string, limit int, before string) ([]threadState, error) {
	t, cp, kept, err := s.keptCheckpoints(ctx, threadID, limit, before)
	if err != nil || kept == nil {
		return []threadState{}, err
	}
	byID := make(map[string]store.Checkpoint, len(kept))
	for _, k := range kept {
		byID[k.ID] = k
	}
	runs := s.runsOf(ctx, threadID)
	list := make([]threadState, 0, 2*len(kept))
	for _, k := range kept {
		cs, head := keptState(t, k), k.ID == cp.ID
		if head {
			cs = s.latestState(ctx, t, cp, k)
		}
		cs.Metadata = runs[k.RunID].checkpointMetadata(cs.Metadata)
		list = append(list, nodeStates(threadID, k, cs, head, s.parentReader(ctx, threadID, k, byID))...)
	}
	return list, nil
}

// withRun is cs, stored checkpoint k, with its run's metadata and
// assistant in its metadata, as history shows them.
func (s *dialect) withRun(ctx context.Context, k store.Checkpoint, cs threadState) threadState {
	if k.RunID != "" {
		if r, err := s.host.GetRun(ctx, k.RunID); err == nil {
			cs.Metadata = runInfoOf(r).checkpointMetadata(cs.Metadata)
		}
	}
	return cs
}

// viewStates is stored checkpoint k, shown as cs, as LangGraph's history
// shows it: with its run's metadata and assistant, as one checkpoint or
// two (see nodeStates), newest first.
func (s *dialect) viewStates(ctx context.Context, threadID string, k store.Checkpoint, cs threadState) []threadState {
	return nodeStates(threadID, k, s.withRun(ctx, k, cs), false, s.parentReader(ctx, threadID, k, nil))
}

// runInfo is what a run's checkpoints show of the run: the metadata it
// was started with and its assistant ("" when not known).
type runInfo struct {
	metadata  map[string]any
	assistant string
}

func runInfoOf(r store.Run) runInfo {
	var info runInfo
	if len(r.Metadata) > 0 {
		_ = json.Unmarshal(r.Metadata, &info.metadata) // kept as the run was started: an object
	}
	var kept runAttrs
	if len(r.Attrs) > 0 && json.Unmarshal(r.Attrs, &kept) == nil {
		info.assistant = kept.AssistantID
	}
	return info
}

// runsOf is what each run of the thread shows in its checkpoints, by run
// id.
func (s *dialect) runsOf(ctx context.Context, threadID string) map[string]runInfo {
	runs, err := s.host.Runs(ctx, threadID)
	if err != nil {
		return nil
	}
	out := make(map[string]runInfo, len(runs))
	for _, r := range runs {
		out[r.ID] = runInfoOf(r)
	}
	return out
}

// checkpointMetadata is a checkpoint's metadata meta with its run's
// under it, as LangGraph keeps a run's metadata in its checkpoints': the
// checkpoint's own keys (source, step, run_id, ...) win, and assistant_id
// names the assistant the run was started with.
func (r runInfo) checkpointMetadata(meta map[string]any) map[string]any {
	if len(r.metadata) == 0 && r.assistant == "" {
		return meta
	}
	out := make(map[string]any, len(meta)+len(r.metadata))
	maps.Copy(out, r.metadata)
	maps.Copy(out, meta)
	if r.assistant != "" {
		out["assistant_id"] = r.assistant
	}
	return out
}

// parentReader reads k's parent from byID, else from the store.
func (s *dialect) parentReader(ctx context.Context, threadID string, k store.Checkpoint, byID map[string]store.Checkpoint) func() (store.Checkpoint, bool) {
	return func() (store.Checkpoint, bool) {
		if k.ParentID == "" {
			return store.Checkpoint{}, false
		}
		if p, ok := byID[k.ParentID]; ok {
			return p, true
		}
		p, err := s.host.CheckpointAt(ctx, threadID, k.ParentID)
		return p, err == nil
	}
}

// nodeStateAt is the view's checkpoint id, derived: ok is false when id
// is no derived checkpoint.
func (s *dialect) nodeStateAt(ctx context.Context, threadID, id string) (threadState, bool, error) {
	stored, derived := storedID(threadID, id)
	if !derived {
		return threadState{}, false, nil
	}
	k, err := s.host.CheckpointAt(ctx, threadID, stored)
	if err != nil {
		return threadState{}, true, err
	}
	if !splits(k) {
		return threadState{}, true, checkpointNotFound(threadID, id)
	}
	t, err := s.host.GetThread(ctx, threadID)
	if err != nil {
		return threadState{}, true, err
	}
	return s.viewStates(ctx, threadID, k, keptState(t, k))[1], true, nil
}

// checkpointNotFound is the 404 of a checkpoint the thread does not have.
func checkpointNotFound(threadID, id string) error {
	return wire.NewError(404, "checkpoint_not_found", "thread "+threadID+" has no checkpoint "+strconv.Quote(id)+"; list them with POST /threads/"+threadID+"/history")
}

// runOrigin is where a run's checkpoints start: the thread's step its
// first step is, and the checkpoint it started from.
type runOrigin struct {
	First int    // 0: unknown, and streamed checkpoints name no id
	From  string // "" for none
}

// runOrigin reads run runID's origin from the thread's newest
// checkpoints (originScan of them): its earliest one. A run still to save
// its first step (live) starts after the thread's latest state, read
// first: the run may save its first step meanwhile. An ended run whose
// checkpoints are older than that streams its checkpoints without ids.
func (s *dialect) runOrigin(ctx context.Context, threadID, runID string, live bool) runOrigin {
	cp, err := s.host.Latest(ctx, threadID)
	if err != nil {
		return runOrigin{}
	}
	kept, err := s.host.History(ctx, threadID, store.HistoryQuery{Limit: originScan})
	if err != nil {
		return runOrigin{}
	}
	for i := len(kept) - 1; i >= 0; i-- {
		if k := kept[i]; k.RunID == runID {
			return runOrigin{First: k.Step, From: k.ParentID}
		}
	}
	if !live {
		return runOrigin{}
	}
	return runOrigin{First: cp.Step + 1, From: cp.ID}
}

// originScan bounds the checkpoints runOrigin reads: a run keeps two
// more than its tool turns.
const originScan = 64

// forkPoint resolves the checkpoint a run starts from, an id of the
// LangGraph view, to a stored one the store can start a branch at:
//   - before a run's input: the checkpoint before it (its parent);
//   - after a model turn whose calls ran: the step before it, with the
//     model's message added back by a state update that holds its calls
//     back as interrupt_after ["agent"] would (a pause before the tools),
//     so that a run with input null runs them first, as LangGraph's
//     tools node runs next from there.
//
// Every other id is itself. A fork from after a model turn keeps one
// checkpoint more, the update; runs themselves keep none more.
func (s *dialect) forkPoint(ctx context.Context, threadID, id string) (string, error) {
	stored, derived := storedID(threadID, id)
	if !derived {
		return id, nil
	}
	k, err := s.host.CheckpointAt(ctx, threadID, stored)
	if errors.Is(err, store.ErrNotFound) || (err == nil && !splits(k)) {
		return "", checkpointNotFound(threadID, id)
	}
	if err != nil {
		return "", err
	}
	if runInput(k) {
		if k.ParentID == "" {
			return "", wire.BadBody("checkpoint " + strconv.Quote(id) + " is the empty state before thread " + threadID + "'s first run: a run from it is a run on a new thread")
		}
		return k.ParentID, nil
	}
	if k.ParentID == "" {
		return "", wire.BadBody("checkpoint " + strconv.Quote(id) + " has no step before it to start a branch at")
	}
	model := carryingID(k, toolsAnswered(k.Messages)) // added back, it keeps its id
	pending := make([]capabilities.Interrupt, len(model.ToolCalls))
	for i, c := range model.ToolCalls {
		pending[i] = capabilities.Interrupt{ID: "pause-" + uuid.NewString(), Type: capabilities.InterruptType, Kind: runner.PauseKind,
			Detail: wire.MustJSON(map[string]string{"when": "before", "node": nodeTools}), CallID: c.ID}
	}
	cp, err := s.host.UpdateState(ctx, store.StateUpdate{ThreadID: threadID, Checkpoint: k.ParentID, Source: store.SourceUpdate,
		Merge: func(cp store.Checkpoint) ([]thread.Message, thread.State, error) {
			values := cp.Values.Clone()
			if values == nil {
				values = thread.State{}
			}
			values[capabilities.InterruptsKey] = wire.MustJSON(pending)
			return []thread.Message{model}, values, nil
		}})
	if err != nil {
		return "", updateError(threadID, id, err)
	}
	return cp.ID, nil
}
