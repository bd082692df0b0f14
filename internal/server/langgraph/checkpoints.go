package langgraph

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"maps"
	"net/http"
	"slices"
	"strconv"

	"github.com/dawn-go/dawn/internal/runner"
	"github.com/dawn-go/dawn/internal/server/wire"
	"github.com/dawn-go/dawn/internal/store"
	"github.com/dawn-go/dawn/thread"
	"github.com/google/uuid"
	"github.com/labstack/echo/v4"
)

// messageNames names the messages of a thread's branch. A message keeps
// its name in every checkpoint and on every branch that shares it: the
// name is made of the thread (the one a copy was made from, for a copy),
// the branch key it is stored under and its index. Messages of a thread
// never forked are named as they always were.
type messageNames struct {
	base    string
	origins []int64 // the branch keys of the first messages; nil: all 0
	branch  int64   // the key of messages after them
}

// namesOf are the names of cp's messages and of those added after them.
func namesOf(cp store.Checkpoint) messageNames {
	return messageNames{base: cmp.Or(cp.CopyOf, cp.ThreadID), origins: cp.Origins, branch: cp.Branch}
}

// id names the i-th message.
func (n messageNames) id(i int) string {
	key := n.branch
	if i < len(n.origins) {
		key = n.origins[i]
	}
	if key == 0 {
		return messageID(n.base, "", i)
	}
	return messageID(n.base, "branch:"+strconv.FormatInt(key, 10), i)
}

// messages converts msgs, the branch's first messages.
func (n messageNames) messages(msgs []thread.Message) []lcMessage {
	out := make([]lcMessage, len(msgs))
	for i, m := range msgs {
		out[i] = toLC(m, n.id(i))
	}
	return out
}

// lcCheckpointValues is lcValues for a checkpoint: its messages named
// for their branch.
func lcCheckpointValues(cp store.Checkpoint) json.RawMessage {
	out := make(map[string]json.RawMessage, len(cp.Values)+1)
	for k, v := range cp.Values {
		out[k] = v
	}
	out["messages"] = wire.MustJSON(namesOf(cp).messages(cp.Messages))
	return wire.MustJSON(out)
}

// stateUpdateBody is POST /threads/:id/state: values to merge into the
// thread's state (an object, or a list of objects applied in turn), as
// node as_node, on the latest state or on checkpoint.
type stateUpdateBody struct {
	Values       json.RawMessage `json:"values"`
	AsNode       string          `json:"as_node"`
	CheckpointID string          `json:"checkpoint_id"`
	Checkpoint   struct {
		CheckpointID string `json:"checkpoint_id"`
	} `json:"checkpoint"`
}

// updateState is POST /threads/:id/state: a new checkpoint on the thread's
// branch (or on a new branch from checkpoint), its values merged through
// the route's state reducers: messages are added, every other field goes
// through its reducer. It answers with the new checkpoint.
func (s *dialect) updateState(c echo.Context) error {
	var body stateUpdateBody
	if err := wire.Decode(c, &body); err != nil {
		return err
	}
	if err := checkAsNode(body.AsNode); err != nil {
		return err
	}
	values, err := stateUpdates(body.Values)
	if err != nil {
		return err
	}
	updates := make([]nodeUpdate, len(values))
	for i, v := range values {
		updates[i] = nodeUpdate{Values: v, AsNode: body.AsNode}
	}
	threadID := c.Param("id")
	if err := s.refuseQueued(c.Request().Context(), threadID); err != nil {
		return err
	}
	from, err := s.forkPoint(c.Request().Context(), threadID, cmp.Or(body.Checkpoint.CheckpointID, body.CheckpointID))
	if err != nil {
		return err
	}
	cp, err := s.applyUpdates(c.Request().Context(), threadID, "", from, store.SourceUpdate, updates)
	if err != nil {
		return err
	}
	ref := newCheckpointRef(threadID, cp.ID)
	return c.JSON(http.StatusOK, map[string]any{"checkpoint": ref, "configurable": ref})
}

// refuseQueued fails with 409 run_in_flight while a run waits to start on
// the thread (after_seconds, or queued behind another): LangGraph counts
// the thread busy then, and the update would slip in under the run. The
// store refuses an update during a running run itself.
func (s *dialect) refuseQueued(ctx context.Context, threadID string) error {
	runs, err := s.host.Runs(ctx, threadID)
	if err != nil {
		return nil // the update reports an unknown thread itself
	}
	for _, r := range runs {
		if r.Status == store.RunPending {
			return updateError(threadID, "", store.ErrBusy)
		}
	}
	return nil
}

// checkAsNode accepts the nodes Dawn's loop has, as LangGraph's prebuilt
// agent graph names them, and the graph's input.
func checkAsNode(node string) error {
	switch node {
	case "", nodeAgent, nodeTools, nodeStart, nodeInput:
		return nil
	}
	return wire.BadBody("as_node " + strconv.Quote(node) + " is no node of a Dawn route: use " + nodeAgent + " or " + nodeTools)
}

// MaxStateUpdates is the most updates one request may apply: the list
// of POST /threads/:id/state's values, or all the updates of
// threads.create's supersteps. Each update may keep a checkpoint.
const MaxStateUpdates = 100

// tooManyUpdates is the 400 of a request with n updates in field.
func tooManyUpdates(field string, n int) error {
	return wire.BadBody(field + " holds " + strconv.Itoa(n) + " updates; one request may apply at most " +
		strconv.Itoa(MaxStateUpdates) + ": send the rest in another request")
}

// stateUpdates reads values: one object, or a list of at most
// MaxStateUpdates of them.
func stateUpdates(raw json.RawMessage) ([]json.RawMessage, error) {
	if isNull(raw) {
		return nil, wire.BadBody(`values is required: the state fields to change, like {"messages":[{"type":"human","content":"Hello"}]}`)
	}
	var one map[string]json.RawMessage
	if json.Unmarshal(raw, &one) == nil {
		return []json.RawMessage{raw}, nil
	}
	var list []map[string]json.RawMessage
	if err := json.Unmarshal(raw, &list); err != nil {
		return nil, wire.BadBody("values must be an object of state fields, or a list of them")
	}
	if len(list) > MaxStateUpdates {
		return nil, tooManyUpdates("values", len(list))
	}
	out := make([]json.RawMessage, len(list))
	for i, v := range list {
		out[i] = wire.MustJSON(v)
	}
	return out, nil
}

// nodeUpdate is one state update: values, as made by node AsNode.
type nodeUpdate struct {
	Values json.RawMessage
	AsNode string
}

// applyUpdates keeps one checkpoint per update on the thread, the first on
// a new branch from checkpoint when set, its source naming the node it was
// made as (see updateSource). route names the route whose reducers apply
// when the thread has had no run yet ("": none, and fields are replaced).
func (s *dialect) applyUpdates(ctx context.Context, threadID, route, checkpoint, source string, updates []nodeUpdate) (store.Checkpoint, error) {
	var cp store.Checkpoint
	// Every update is read before the first is kept: a bad one keeps none.
	inputs := make([]lcInput, len(updates))
	for i, u := range updates {
		in, err := parseLCInput(u.Values)
		if err != nil {
			return cp, err
		}
		inputs[i] = in
	}
	for i, u := range updates {
		in := inputs[i]
		from := ""
		if i == 0 {
			from = checkpoint
		}
		var err error
		cp, err = s.host.UpdateState(ctx, store.StateUpdate{ThreadID: threadID, Checkpoint: from, Source: updateSource(source, u.AsNode),
			Rewrite: func(cp store.Checkpoint) (int, []thread.Message, thread.State, error) {
				values, err := s.mergeValues(cmp.Or(cp.Route, route), cp.Values, in.Values)
				if err != nil {
					return 0, nil, nil, err
				}
				keep, tail, err := byID(cp, in.Messages)
				return keep, tail, values, err
			}})
		if err := updateError(threadID, checkpoint, err); err != nil {
			return cp, err
		}
	}
	return cp, nil
}

// mergeValues applies update to values through the reducers of route, or
// replaces each field when route is "".
func (s *dialect) mergeValues(route string, values, update thread.State) (thread.State, error) {
	if route == "" {
		next := values.Clone()
		for k, v := range update {
			next[k] = v
		}
		return next, nil
	}
	p, _, err := s.host.App().Resolve(route)
	if err != nil {
		return nil, wire.BadBody("the thread's route " + route + " is gone: " + err.Error())
	}
	// Each value must be of its field's type, as a run's input must, so
	// that the thread's state keeps its route's types.
	for _, name := range slices.Sorted(maps.Keys(update)) {
		if f, ok := p.Field(name); ok {
			if err := f.Check(update[name]); err != nil {
				return nil, wire.BadBody("values." + err.Error())
			}
		}
	}
	next, err := p.ApplyEdit(withDefaults(p.InitialState(), values), update)
	if err != nil {
		return nil, wire.BadBody("values: " + err.Error())
	}
	return next, nil
}

// withDefaults is values over the route's initial state.
func withDefaults(initial, values thread.State) thread.State {
	for k, v := range values {
		initial[k] = v
	}
	return initial
}

// updateError turns a store error of a state update into the answer.
func updateError(threadID, checkpoint string, err error) error {
	var we *wire.Error
	switch {
	case err == nil:
		return nil
	case errors.As(err, &we):
		return err
	case errors.Is(err, store.ErrBusy):
		return wire.NewError(http.StatusConflict, "run_in_flight", "thread "+threadID+" has a run in flight: its state can be changed once the run ends")
	case checkpoint != "" && errors.Is(err, store.ErrNotFound):
		return wire.NewError(http.StatusNotFound, "checkpoint_not_found", "thread "+threadID+" has no checkpoint "+strconv.Quote(checkpoint)+"; list them with POST /threads/"+threadID+"/history")
	case errors.Is(err, store.ErrInvalid):
		return wire.BadBody(err.Error())
	}
	return err
}

// copyThread is POST /threads/:id/copy: a new thread with the same state
// and history.
func (s *dialect) copyThread(c echo.Context) error {
	ctx := c.Request().Context()
	t, err := s.host.CopyThread(ctx, c.Param("id"), uuid.NewString())
	if err != nil {
		return err
	}
	cp, err := s.host.Latest(ctx, t.ID)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, lgThread{Thread: t, Values: lcCheckpointValues(cp), Interrupts: threadInterrupts(t.ID, cp.Values)})
}

// superstep is one of threads.create's supersteps: updates applied as if
// nodes had run.
type superstep struct {
	Updates []struct {
		Values  json.RawMessage `json:"values"`
		Command json.RawMessage `json:"command"`
		AsNode  string          `json:"as_node"`
	} `json:"updates"`
}

// parseSupersteps reads threads.create's supersteps into the updates to
// apply, in order.
func parseSupersteps(raw json.RawMessage) ([]nodeUpdate, error) {
	var steps []superstep
	if err := json.Unmarshal(raw, &steps); err != nil {
		return nil, wire.BadBody(`supersteps must be a list like [{"updates":[{"values":{"messages":[…]},"as_node":"agent"}]}]: ` + wire.JSONError(err, "supersteps"))
	}
	var updates []nodeUpdate
	for i, st := range steps {
		for j, u := range st.Updates {
			switch {
			case !isNull(u.Command):
				return nil, wire.BadBody("supersteps[" + strconv.Itoa(i) + "].updates[" + strconv.Itoa(j) + "].command is not supported: give values")
			case isNull(u.Values):
				continue
			}
			if err := checkAsNode(u.AsNode); err != nil {
				return nil, err
			}
			updates = append(updates, nodeUpdate{Values: u.Values, AsNode: u.AsNode})
		}
	}
	if len(updates) > MaxStateUpdates {
		return nil, tooManyUpdates("supersteps", len(updates))
	}
	return updates, nil
}

// commandUpdate applies to the thread what a run request asks of its state
// before the run: checkpoint_id (or checkpoint) starts a new branch there,
// and command.update is kept as a checkpoint on it. The update's user
// messages become the run's input, which its first step saves; an update
// with other messages, or none, is kept whole, and the run goes on from
// the updated state (with its own input, if any).
func (s *dialect) commandUpdate(ctx context.Context, run *lgRun, req *runner.Request, body lgRunBody) error {
	from, err := s.forkPoint(ctx, run.ThreadID, cmp.Or(body.Checkpoint.CheckpointID, body.CheckpointID))
	if err != nil {
		return err
	}
	var cmd lgCommand
	if !isNull(body.Command) {
		_ = json.Unmarshal(body.Command, &cmd) // parseCommand checked it
	}
	if isNull(cmd.Update) {
		req.Checkpoint = from
		return nil
	}
	in, err := parseLCInput(cmd.Update)
	if err != nil {
		return err
	}
	asInput := len(in.Messages) > 0
	for _, m := range in.Messages {
		asInput = asInput && (m.Role == thread.RoleUser || m.Role == thread.RoleSystem)
	}
	update := cmd.Update
	if asInput {
		fields := map[string]json.RawMessage{}
		for k, v := range in.Values {
			fields[k] = v
		}
		update = wire.MustJSON(fields)
	}
	if asInput && len(in.Values) == 0 {
		req.Checkpoint = from
	} else {
		if _, err := s.applyUpdates(ctx, run.ThreadID, run.RouteID, from, store.SourceUpdate, []nodeUpdate{{Values: update}}); err != nil {
			return err
		}
	}
	if asInput {
		req.Messages = append(in.Messages, req.Messages...)
	}
	return nil
}

// inputByID applies a run's input messages whose ids name messages the
// thread has (at req.Checkpoint, or its latest state) as LangGraph's
// add_messages does: each replaces the message of its id, in place, in a
// state update kept before the run; the run goes on from it, with the
// rest of its input.
func (s *dialect) inputByID(ctx context.Context, run *lgRun, req *runner.Request) error {
	var named bool
	for _, m := range req.Messages {
		named = named || ownID(m) != ""
	}
	if !named {
		return nil
	}
	cp, err := s.host.Latest(ctx, run.ThreadID)
	if err == nil && req.Checkpoint != "" && req.Checkpoint != cp.ID {
		cp, err = s.host.CheckpointAt(ctx, run.ThreadID, req.Checkpoint)
	}
	if err != nil {
		return nil //nolint:nilerr // a thread yet to be created has no message to replace
	}
	names := namesOf(cp)
	have := make(map[string]bool, len(cp.Messages))
	for i, m := range cp.Messages {
		have[idOr(m, names.id(i))] = true
	}
	var replace, rest []thread.Message
	for _, m := range req.Messages {
		if id := ownID(m); id != "" && have[id] {
			replace = append(replace, m)
			continue
		}
		rest = append(rest, m)
	}
	if len(replace) == 0 {
		return nil
	}
	update := wire.MustJSON(map[string][]lcMessage{"messages": names.messages(replace)})
	if _, err := s.applyUpdates(ctx, run.ThreadID, run.RouteID, req.Checkpoint, store.SourceUpdate, []nodeUpdate{{Values: update}}); err != nil {
		return err
	}
	req.Checkpoint = "" // the update is the thread's latest state now
	req.Messages, run.Input = rest, rest
	return nil
}

// createWithSupersteps creates a thread (wire.CreateThread), then keeps
// each update of supersteps as a checkpoint of it, through the reducers
// of the route graphID names ("": fields are replaced). A thread whose
// updates fail is deleted again.
func (s *dialect) createWithSupersteps(c echo.Context, raw json.RawMessage, graphID string) error {
	updates, err := parseSupersteps(raw)
	if err != nil {
		return err
	}
	route := ""
	if graphID != "" {
		r, _, err := findAssistant(s.host.App(), graphID)
		if err != nil {
			return err
		}
		route = r.ID
	}
	t, err := wire.CreateThread(c, s.host)
	if err != nil {
		return err
	}
	ctx := c.Request().Context()
	// As LangGraph's bulk update: an update made as the graph's input is
	// the input, any other an update (see checkpointMetadata).
	if _, err := s.applyUpdates(ctx, t.ID, route, "", store.SourceUpdate, updates); err != nil {
		_ = s.host.DeleteThread(ctx, t.ID) // the thread was new: nothing else is lost
		return err
	}
	return c.JSON(http.StatusOK, t)
}

// threadNames are the names of the messages of the thread's latest state
// and of those a run adds to it; zero when it cannot be read.
func (s *dialect) threadNames(ctx context.Context, threadID string) messageNames {
	cp, err := s.host.Latest(ctx, threadID)
	if err != nil {
		return messageNames{}
	}
	return namesOf(cp)
}

// getHistory is GET /threads/:id/history?limit=N&before=ID, Dawn's wire
// for POST /threads/:id/history: the thread's kept checkpoints, newest
// first, in the shape of GET /threads/:id/state.
func (s *dialect) getHistory(c echo.Context) error {
	limit := 10
	if v := c.QueryParam("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			return wire.BadBody("limit must be a positive number of checkpoints, not " + strconv.Quote(v))
		}
		limit = min(n, maxHistory)
	}
	list, err := s.checkpoints(c.Request().Context(), c.Param("id"), limit, c.QueryParam("before"))
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, list)
}
