package langgraph

import (
	"slices"
	"strconv"
	"time"

	"github.com/dawn-go/dawn/internal/store"
	"github.com/google/uuid"
)

// This file gives the translator LangGraph's step-level stream modes, for
// Dawn's loop as the prebuilt agent graph (node "agent" for a model turn,
// node "tools" for its tool calls):
//   - tasks: a node's task when it starts ({id, name, input, triggers,
//     interrupts}) and its result when it ends ({id, name, result,
//     interrupts}, result being the node's writes by channel);
//   - checkpoints: the state after each step, with the nodes to run next;
//   - debug: both, as {type: "task" | "task_result" | "checkpoint",
//     timestamp, step, payload};
//   - events: LangChain's run events (on_chain_*, on_chat_model_*,
//     on_tool_*), the run as the root chain "LangGraph".
//
// Task and event run ids are derived from the run's id, the graph's
// namespace, the step and the node, so a replay of the run's log gives
// the same ids. The run's checkpoints name the ids history shows them by
// (see nodes.go), from the step the run's first step is stored as.

// modes of the step-level parts.
const (
	modeTasks       = "tasks"
	modeCheckpoints = "checkpoints"
	modeDebug       = "debug"
	modeEvents      = "events"
)

// stepID is the id of the task (or event run) what at step of graph g.
func (t *lgTranslator) stepID(g *lgGraph, step int, what string) string {
	return uuid.NewSHA1(uuid.NameSpaceURL, []byte(t.runID+"|"+g.ns+"|"+strconv.Itoa(step)+"|"+what)).String()
}

// stateOf is g's state as values shows it.
func stateOf(g *lgGraph) map[string]any {
	v := make(map[string]any, len(g.fields)+1)
	for k, f := range g.fields {
		v[k] = f
	}
	v["messages"] = g.msgs
	return v
}

// timestamp is when a debug part is sent: the one member of a part that
// depends on when, not on the events.
func timestamp() string { return time.Now().UTC().Format(time.RFC3339Nano) }

// startNode opens node's step in g: its task, and its chain's start.
func (t *lgTranslator) startNode(g *lgGraph, node string) {
	g.step++
	g.node = node
	task := map[string]any{
		"id": t.stepID(g, g.step, node), "name": node, "input": stateOf(g),
		"triggers": []string{"branch:to:" + node}, "interrupts": []any{},
	}
	t.emit(g, modeTasks, modeTasks, task)
	t.emit(g, modeDebug, modeDebug, map[string]any{"type": "task", "timestamp": timestamp(), "step": g.step, "payload": task})
	if t.wants(g, modeEvents) {
		t.runEvent(g, "on_chain_start", node, t.stepID(g, g.step, node), map[string]any{"input": stateOf(g)}, node)
		if node == nodeAgent {
			t.runEvent(g, "on_chat_model_start", "model", t.stepID(g, g.step, "model"), map[string]any{"input": map[string]any{"messages": [][]lcMessage{g.msgs}}}, node)
		}
	}
}

// endNode closes node's step in g with the update it made: the updates
// part, the task's result and its chain's end.
func (t *lgTranslator) endNode(g *lgGraph, node string, update map[string]any) {
	t.emit(g, modeUpdates, modeUpdates, map[string]any{node: update})
	// The result is the node's writes by channel, as LangGraph folds a
	// task's writes (each channel written once here).
	task := map[string]any{"id": t.stepID(g, g.step, node), "name": node, "result": update, "interrupts": []any{}}
	t.emit(g, modeTasks, modeTasks, task)
	t.emit(g, modeDebug, modeDebug, map[string]any{"type": "task_result", "timestamp": timestamp(), "step": g.step, "payload": task})
	if t.wants(g, modeEvents) {
		if msgs, ok := update["messages"].([]lcMessage); ok && node == nodeAgent && len(msgs) == 1 {
			t.runEvent(g, "on_chat_model_end", "model", t.stepID(g, g.step, "model"), map[string]any{"output": lcDict(msgs[0])}, node)
		}
		t.runEvent(g, "on_chain_end", node, t.stepID(g, g.step, node), map[string]any{"output": update}, node)
	}
	g.node = ""
}

// failNode ends the open step of g with an error: the task's error
// result.
func (t *lgTranslator) failNode(g *lgGraph, msg string) {
	task := map[string]any{"id": t.stepID(g, g.step, g.node), "name": g.node, "error": msg, "interrupts": []any{}}
	t.emit(g, modeTasks, modeTasks, task)
	t.emit(g, modeDebug, modeDebug, map[string]any{"type": "task_result", "timestamp": timestamp(), "step": g.step, "payload": task})
	g.node = ""
}

// stepDone reports the state after a step: values (and the messages it
// completes), and the checkpoint with the nodes next.
func (t *lgTranslator) stepDone(g *lgGraph, next []string) {
	t.values(g)
	t.checkpoint(g, next)
}

// inputCheckpoint reports the state before the run's input as the
// checkpoint of step -1, whose next node is __start__, as LangGraph
// saves the input before the first step; input is how many of the
// graph's messages the input brought.
func (t *lgTranslator) inputCheckpoint(g *lgGraph, input int) {
	if !t.wants(g, modeCheckpoints) && !t.wants(g, modeDebug) {
		return
	}
	before := &lgGraph{ns: g.ns, msgs: g.msgs[:len(g.msgs)-min(input, len(g.msgs))], fields: g.fields, step: g.step - 1}
	t.emitCheckpoint(before, []string{nodeStart}, "input")
}

// checkpoint reports g's state as a checkpoint whose next nodes are next.
func (t *lgTranslator) checkpoint(g *lgGraph, next []string) {
	if !t.wants(g, modeCheckpoints) && !t.wants(g, modeDebug) {
		return
	}
	t.emitCheckpoint(g, next, "loop")
}

// emitCheckpoint emits the checkpoints and debug parts of g's state, made
// by source ("input" or "loop"), with the nodes next.
func (t *lgTranslator) emitCheckpoint(g *lgGraph, next []string, source string) {
	tasks := make([]map[string]any, len(next))
	for i, node := range next {
		tasks[i] = map[string]any{"id": t.stepID(g, g.step+1, node), "name": node, "error": nil, "interrupts": []any{}, "checkpoint": nil, "state": nil, "result": nil}
	}
	if next == nil {
		next = []string{}
	}
	cp := map[string]any{
		"values": stateOf(g), "next": next, "tasks": tasks,
		"config": map[string]any{"configurable": map[string]any{"thread_id": t.threadID, "checkpoint_ns": g.ns}},
		"metadata": runInfo{metadata: t.runMetadata, assistant: t.assistantID}.checkpointMetadata(
			map[string]any{"source": source, "step": g.step, "run_id": t.runID, "thread_id": t.threadID, "graph_id": t.graphID, "parents": map[string]any{}}),
	}
	if ref, ok := t.checkpointRef(g, next, source); ok {
		// The run's own checkpoints name the ids history shows them by.
		cp["checkpoint"], cp["config"] = ref, stateConfig{Configurable: ref}
		cp["parent_checkpoint"], cp["parent_config"] = nil, nil
		if t.last != "" {
			parent := newCheckpointRef(t.threadID, t.last)
			cp["parent_checkpoint"], cp["parent_config"] = parent, stateConfig{Configurable: parent}
		}
		t.last = ref.CheckpointID
	}
	t.emit(g, modeCheckpoints, modeCheckpoints, cp)
	t.emit(g, modeDebug, modeDebug, map[string]any{"type": "checkpoint", "timestamp": timestamp(), "step": g.step, "payload": cp})
}

// runEvent adds an events part: a LangChain run event of run id, named
// name, under the run's root chain and, within a node, the node's.
func (t *lgTranslator) runEvent(g *lgGraph, event, name, id string, data map[string]any, node string) {
	parents := []string{t.runID}
	tags := []string{}
	meta := map[string]any{"run_id": t.runID, "thread_id": t.threadID, "graph_id": t.graphID, "assistant_id": t.assistantID}
	if node != "" {
		meta = t.meta(g, node)
		tags = []string{"graph:step:" + strconv.Itoa(g.step)}
		if id != t.stepID(g, g.step, node) {
			parents = append(parents, t.stepID(g, g.step, node))
		}
	}
	t.emit(g, modeEvents, modeEvents, map[string]any{
		"event": event, "name": name, "run_id": id, "tags": tags, "metadata": meta, "parent_ids": parents, "data": data,
	})
}

// rootEvent adds the root chain's start or end.
func (t *lgTranslator) rootEvent(event string, data map[string]any) {
	if t.wants(t.top, modeEvents) {
		t.runEvent(t.top, event, "LangGraph", t.runID, data, "")
	}
}

// toolEvents adds the events of one tool call of g's tools step: its
// start and its end with the tool's message.
func (t *lgTranslator) toolEvents(g *lgGraph, msg lcMessage) {
	if !t.wants(g, modeEvents) {
		return
	}
	var input any = map[string]any{}
	if g.ai >= 0 {
		for _, c := range g.msgs[g.ai].ToolCalls {
			if c.ID == msg.ToolCallID {
				input = c.Args
			}
		}
	}
	id := t.stepID(g, g.step, "tool:"+msg.ToolCallID)
	t.runEvent(g, "on_tool_start", msg.Name, id, map[string]any{"input": input}, nodeTools)
	t.runEvent(g, "on_tool_end", msg.Name, id, map[string]any{"input": input, "output": lcDict(msg)}, nodeTools)
}

// completeMessages adds, for the messages mode, messages/complete with
// the messages of g's state not completed before, as LangGraph completes
// the messages each values chunk brings.
func (t *lgTranslator) completeMessages(g *lgGraph) {
	if !t.wants(g, modeMessages) {
		return
	}
	var fresh []map[string]any
	for _, m := range g.msgs {
		if m.ID == "" || g.completed[m.ID] {
			continue
		}
		g.completed[m.ID] = true
		fresh = append(fresh, lcDict(m))
	}
	if len(fresh) > 0 {
		t.emit(g, modeMessages, "messages/complete", fresh)
	}
}

// checkpointRef names the checkpoint of g's state with the nodes next,
// made by source, as history shows it (see nodes.go): only the run's own
// graph has stored checkpoints, and only when the run's origin is known.
func (t *lgTranslator) checkpointRef(g *lgGraph, next []string, source string) (lgCheckpoint, bool) {
	first := t.origin.First
	if g.ns != "" || first == 0 {
		return lgCheckpoint{}, false
	}
	var id string
	step := (g.step + 1) / 2 // Dawn's step n: 2n-1 after the model, 2n after its tools
	switch {
	case (source == "input" || g.step == 2*first-2) && t.input == 0:
		return lgCheckpoint{}, false // a run without input keeps no checkpoint for it
	case source == "input":
		step, id = first, derivedID(t.threadID, store.InputCheckpointID(t.threadID, first))
	case g.step == 2*first-2:
		step, id = first, store.InputCheckpointID(t.threadID, first)
	case g.step%2 != 0 && slices.Equal(next, []string{nodeTools}) && !t.parked:
		id = derivedID(t.threadID, store.CheckpointID(t.threadID, step))
	default:
		id = store.CheckpointID(t.threadID, step)
	}
	ref := newCheckpointRef(t.threadID, id)
	ref.Step, ref.RunID, ref.Route = &step, t.runID, t.routeID
	return ref, true
}
