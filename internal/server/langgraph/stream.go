package langgraph

import (
	"bytes"
	"cmp"
	"encoding/json"
	"strings"

	"github.com/dawn-go/dawn/capabilities"
	"github.com/dawn-go/dawn/internal/app"
	"github.com/dawn-go/dawn/internal/server/wire"
	"github.com/dawn-go/dawn/stream"
	"github.com/dawn-go/dawn/thread"
)

// This file translates a run's Dawn events into the LangGraph Agent
// Server's stream parts. It reads the one internal event stream and never
// touches the run.
//
// A Dawn run is an agent loop; as a LangGraph graph it has two nodes: the
// model ("agent") and the tools ("tools"). The translator rebuilds the
// state the events imply (the run's starting messages, the model's
// messages, the tool results, the plan) and emits what each stream mode
// wants:
//   - values: the whole state at the start, after each tools step, after
//     a state change outside one, and at the end (the run's final output,
//     which the store also holds);
//   - updates: {"agent": {"messages": [ai]}} when a model message is
//     complete, {"tools": {"messages": [...], "todos": ...}} after tools,
//     and {"tools": {"todos": ...}} for a change after the tools step was
//     reported;
//   - messages-tuple (event "messages"): [message chunk, metadata] for every
//     text delta and tool call chunk, and each tool message whole;
//   - messages: messages/metadata, messages/partial and messages/complete;
//   - custom: every other Dawn event, as {"event": type, "data": data}:
//     plan_update, the harness's plan events, plan previews;
//   - with subgraphs, a subagent's events as a subgraph's, under the
//     namespace "tools:<task call id>" (nested: "tools:a|tools:b"), which is
//     where LangGraph SDKs look for subagents.
//
// Message ids are positional (see messageID), so the ids streamed during a
// run are the ids GET /threads/:id/state shows afterwards.
//
// The parts are a function of the events alone, never of when a reader
// reads them: a tools step is reported at the result of its last call, a
// state change when it comes (or with its tools step, if one is still
// waiting for results). So a client that reconnects with Last-Event-ID
// gets from a replay of the run's log exactly the parts the live stream
// sent after that id, and a client watching a run that now waits (for a
// slow model, or parked for a person) has the state after the last tools
// step already.

// Stream modes of the LangGraph dialect.
const (
	modeValues        = "values"
	modeUpdates       = "updates"
	modeMessages      = "messages"
	modeMessagesTuple = "messages-tuple"
	modeCustom        = "custom"
)

// knownModes are the stream modes a request may name: every mode the
// dialect streams (parseModes's error lists them).
var knownModes = map[string]bool{
	modeValues: true, modeUpdates: true, modeMessages: true, modeMessagesTuple: true, modeCustom: true,
	"events": true, "debug": true, "tasks": true, "checkpoints": true,
}

// Node names of a route's loop as a graph.
const (
	nodeAgent = "agent"
	nodeTools = "tools"
	nodeStart = "__start__" // takes the graph's input into its state
	nodeInput = "__input__" // the graph's input itself
)

// lgTranslator turns one run's events into LangGraph stream parts. It is
// used by one goroutine.
type lgTranslator struct {
	modes       map[string]bool
	subgraphs   bool
	threadID    string
	runID       string
	graphID     string
	routeID     string // Dawn's name of the graph, for checkpoint refs
	assistantID string
	// runMetadata is what the run was started with, which its
	// checkpoints' metadata carry as history's do.
	runMetadata map[string]any
	app         *app.App
	top         *lgGraph
	subs        map[string]*lgGraph // subagents running, by task call id
	tasks       map[string]taskCall // task calls seen, by call id
	saved       func() ([]thread.Message, thread.State, bool)
	// input is how many of the run's starting messages its input brought.
	input int
	// origin names the run's checkpoints; last is the id of the one
	// streamed last, the parent of the next.
	origin runOrigin
	last   string
	// parked is set when the run parks: its last checkpoint is the step
	// stored with the calls it holds back.
	parked bool
	out    []stream.Event
	names  messageNames // of the top graph's messages
}

// taskCall is a call of the task tool: what its subagent is asked, and the
// namespace of the graph that called it.
type taskCall struct {
	input string
	ns    string
}

// lgGraph is the state of the run's own graph or of one subagent's.
type lgGraph struct {
	ns      string // "" for the run; "tools:<call id>" for a subagent
	msgs    []lcMessage
	fields  thread.State
	changed thread.State // fields changed since the last update
	ai      int          // index of the model message being built; -1 if none
	// text is that message's content so far: chunks are appended here,
	// not to a string copied whole on every chunk.
	text    strings.Builder
	calls   int         // tool calls of that message
	results int         // tool results seen for them
	tools   []lcMessage // the tool messages of the current tools step
	step    int
	// node is the node whose step is open ("" between steps).
	node string
	// completed are the ids of the messages the messages mode completed.
	completed map[string]bool
	// reported is set once the model step's tools step was reported: a
	// state change after that is reported on its own, as the tools
	// node's.
	reported bool
}

// open reports whether g's tools step waits for results: a state change
// now is the step's and is reported with it.
func (g *lgGraph) open() bool { return g.results < g.calls }

// lgRunView is what the translator needs to know of a run.
type lgRunView struct {
	ThreadID, RunID, RouteID string
	// AssistantID is the assistant the run was started with; "" for the
	// route's default one.
	AssistantID string
	Modes       map[string]bool
	Subgraphs   bool
	// Prefix is the thread's messages the run started from, its input
	// included; Fields the state fields then.
	Prefix []thread.Message
	Fields thread.State
	// Input is how many of Prefix's last messages are the run's input.
	Input int
	// Saved, when set, reads the state the run saved last, if it is still
	// the thread's latest: what a parked run's final values show.
	Saved func() ([]thread.Message, thread.State, bool)
	// Names names the thread's messages; zero for a thread never forked
	// or copied.
	Names messageNames
	// Origin names the checkpoints the run's steps are stored as.
	Origin runOrigin
	// Metadata is the run's metadata (a JSON object, or nil for none).
	Metadata json.RawMessage
}

func newTranslator(a *app.App, v lgRunView) *lgTranslator {
	t := &lgTranslator{
		modes: v.Modes, subgraphs: v.Subgraphs, threadID: v.ThreadID, runID: v.RunID, graphID: graphName(v.RouteID), routeID: v.RouteID, assistantID: cmpOr(v.AssistantID, assistantID(v.RouteID)),
		app: a, subs: map[string]*lgGraph{}, tasks: map[string]taskCall{}, saved: v.Saved, input: v.Input,
		origin: v.Origin, last: v.Origin.From,
	}
	_ = json.Unmarshal(v.Metadata, &t.runMetadata) // an object as the run was started with, or none
	fields := v.Fields.Clone()
	t.names = v.Names
	if t.names.base == "" {
		t.names.base = v.ThreadID
	}
	t.top = &lgGraph{msgs: t.names.messages(v.Prefix), fields: fields, changed: thread.State{}, ai: -1, completed: map[string]bool{}}
	if v.Origin.First > 0 {
		t.top.step = 2*v.Origin.First - 2 // LangGraph's step of the input applied (see nodes.go)
	}
	// A run that goes on with a parked run's held-back calls starts in
	// that run's tools step: it ends when they all have their results.
	t.top.calls = len(unansweredCalls(v.Prefix))
	return t
}

// unansweredCalls returns the tool calls of the last model message of msgs
// that no tool message after it answers, when only tool messages follow
// it: the calls a parked run held back.
func unansweredCalls(msgs []thread.Message) []thread.ToolCall {
	answered := map[string]bool{}
	for i := len(msgs) - 1; i >= 0; i-- {
		m := msgs[i]
		if m.Role == thread.RoleTool {
			answered[m.ToolCallID] = true
			continue
		}
		if m.Role != thread.RoleAssistant {
			return nil
		}
		var calls []thread.ToolCall
		for _, c := range m.ToolCalls {
			if !answered[c.ID] {
				calls = append(calls, c)
			}
		}
		return calls
	}
	return nil
}

// begin returns the parts that open a stream: the state the run starts
// from.
func (t *lgTranslator) begin() []stream.Event {
	t.out = nil
	t.rootEvent("on_chain_start", map[string]any{"input": stateOf(t.top)})
	t.inputCheckpoint(t.top, t.input)
	next := []string{nodeAgent}
	if t.top.calls > 0 {
		next = []string{nodeTools}
	}
	t.stepDone(t.top, next)
	return t.out
}

// feed returns the parts for one Dawn event, possibly none.
func (t *lgTranslator) feed(e stream.Event) []stream.Event {
	t.out = nil
	switch {
	case e.Type == stream.TypeModelCall:
		// LangGraph has no part for a model call's duration and tokens.
	case e.Type == stream.SubagentPrefix+stream.TypeModelCall:
	case strings.HasPrefix(e.Type, stream.SubagentPrefix):
		t.subagentEvent(e)
	case e.Type == stream.TypeDone:
		t.done(e.Data)
	default:
		t.event(t.top, e.Type, e.Data)
	}
	return t.out
}

// emit adds a part of mode named name for graph g, if the mode was asked
// for (and, for a subagent, subgraphs were).
func (t *lgTranslator) emit(g *lgGraph, mode, name string, data any) {
	if !t.wants(g, mode) {
		return
	}
	if g.ns != "" {
		name += "|" + g.ns
	}
	t.out = append(t.out, stream.Event{Type: name, Data: wire.MustJSON(data)})
}

// wants reports whether parts of mode are sent for graph g.
func (t *lgTranslator) wants(g *lgGraph, mode string) bool {
	return t.modes[mode] && (g.ns == "" || t.subgraphs)
}

func (t *lgTranslator) event(g *lgGraph, typ string, data json.RawMessage) {
	switch typ {
	case stream.TypeChunk:
		t.chunk(g, stream.ChunkText(data))
	case stream.TypeToolCall:
		var c struct {
			ID    string          `json:"id"`
			Name  string          `json:"name"`
			Tool  string          `json:"tool"` // a subagent's, as Dawn names it
			Input json.RawMessage `json:"input"`
		}
		_ = json.Unmarshal(data, &c)
		t.toolCall(g, thread.ToolCall{ID: c.ID, Name: cmp.Or(c.Tool, c.Name), Input: c.Input})
	case stream.TypeToolResult:
		var r struct {
			ID     string          `json:"id"`
			Name   string          `json:"name"`
			Tool   string          `json:"tool"` // a subagent's, as Dawn names it
			Output json.RawMessage `json:"output"`
			Error  string          `json:"error"`
		}
		_ = json.Unmarshal(data, &r)
		t.toolResult(g, r.ID, cmp.Or(r.Tool, r.Name), r.Output, r.Error)
	default:
		if typ == "plan_update" {
			planUpdate(g, data)
		}
		t.emit(g, modeCustom, modeCustom, map[string]any{"event": typ, "data": json.RawMessage(orNull(data))})
		t.changedState(g)
	}
}

// changedState reports a change of g's state fields that came outside a
// tools step waiting for results (a capability's event after the step's
// last result, or before the first model step): after the reported tools
// step it is that node's update too; in any case the state after it.
func (t *lgTranslator) changedState(g *lgGraph) {
	if len(g.changed) == 0 || g.open() {
		return
	}
	if g.reported {
		t.emit(g, modeUpdates, modeUpdates, map[string]any{nodeTools: g.changed})
	}
	g.changed = thread.State{}
	t.values(g)
}

func orNull(data json.RawMessage) json.RawMessage {
	if len(bytes.TrimSpace(data)) == 0 {
		return json.RawMessage(`null`)
	}
	return data
}

// meta is the metadata of a messages part.
func (t *lgTranslator) meta(g *lgGraph, node string) map[string]any {
	return map[string]any{
		"run_id": t.runID, "thread_id": t.threadID, "graph_id": t.graphID, "assistant_id": t.assistantID,
		"langgraph_node": node, "langgraph_step": g.step, "langgraph_checkpoint_ns": g.ns, "checkpoint_ns": g.ns,
	}
}

// openAI starts the model message of a new model step.
func (t *lgTranslator) openAI(g *lgGraph) {
	t.startNode(g, nodeAgent)
	g.reported = false
	g.msgs = append(g.msgs, lcMessage{Type: "ai", Role: thread.RoleAssistant, ID: t.messageID(g, len(g.msgs))})
	g.ai = len(g.msgs) - 1
	g.text.Reset()
}

func (t *lgTranslator) chunk(g *lgGraph, text string) {
	first := g.ai < 0
	if first {
		t.openAI(g)
	}
	m := &g.msgs[g.ai]
	g.text.WriteString(text)
	m.Content = g.text.String() // shares the builder's bytes: no copy
	t.emit(g, modeMessagesTuple, modeMessages, []any{aiChunk(m.ID, text, nil), t.meta(g, nodeAgent)})
	if t.wants(g, modeEvents) {
		t.runEvent(g, "on_chat_model_stream", "model", t.stepID(g, g.step, "model"), map[string]any{"chunk": aiChunk(m.ID, text, nil)}, nodeAgent)
	}
	if first {
		t.emit(g, modeMessages, "messages/metadata", map[string]any{m.ID: map[string]any{"metadata": t.meta(g, nodeAgent)}})
	}
	if t.wants(g, modeMessages) {
		// LangGraph's messages mode sends the whole message so far on
		// every chunk: its cost grows with the answer's square by design,
		// so it is built only for a client that asked for it.
		t.emit(g, modeMessages, "messages/partial", []any{lcDict(*m)})
	}
}

func (t *lgTranslator) toolCall(g *lgGraph, c thread.ToolCall) {
	if g.ai < 0 {
		t.openAI(g)
	}
	m := &g.msgs[g.ai]
	index := len(m.ToolCalls)
	m.ToolCalls = append(m.ToolCalls, toLCCall(c))
	g.calls++
	if c.Name == capabilities.ReservedToolName {
		var in struct {
			Input string `json:"input"`
		}
		_ = json.Unmarshal(c.Input, &in)
		t.tasks[c.ID] = taskCall{input: in.Input, ns: g.ns}
	}
	args := string(c.Input)
	if args == "" {
		args = "{}"
	}
	chunk := []map[string]any{{"name": c.Name, "args": args, "id": c.ID, "index": index, "type": "tool_call_chunk"}}
	t.emit(g, modeMessagesTuple, modeMessages, []any{aiChunk(m.ID, "", chunk), t.meta(g, nodeAgent)})
	t.emit(g, modeMessages, "messages/partial", []any{lcDict(*m)})
}

func (t *lgTranslator) toolResult(g *lgGraph, id, name string, output json.RawMessage, errText string) {
	if g.results == 0 {
		if g.ai >= 0 {
			t.completeAI(g)
		}
		t.startNode(g, nodeTools)
	}
	if sub, ok := t.subs[id]; ok {
		t.endSubagent(id, sub, output)
	}
	msg := lcMessage{Type: "tool", Role: thread.RoleTool, ID: t.messageID(g, len(g.msgs)), ToolCallID: id, Name: name, Content: outputText(output)}
	if errText != "" {
		msg.Content, msg.IsError, msg.Status = "error: "+errText, true, "error"
	}
	g.msgs = append(g.msgs, msg)
	g.tools = append(g.tools, msg)
	g.results++
	t.emit(g, modeMessagesTuple, modeMessages, []any{lcDict(msg), t.meta(g, nodeTools)})
	t.toolEvents(g, msg)
	if !g.open() {
		t.endTools(g)
	}
}

// outputText is a tool output as the model reads it: a string as it is,
// anything else as JSON.
func outputText(output json.RawMessage) string {
	output = bytes.TrimSpace(output)
	var s string
	switch {
	case len(output) == 0 || bytes.Equal(output, []byte("null")):
		return ""
	case output[0] == '"' && json.Unmarshal(output, &s) == nil:
		return s
	}
	return string(output)
}

// completeAI ends the model message being built, which calls tools: it
// ends the agent node's step, and the tools step is next.
func (t *lgTranslator) completeAI(g *lgGraph) {
	t.endAgent(g, g.msgs[g.ai])
	t.stepDone(g, []string{nodeTools})
}

// endAgent ends the agent node's step, which made message m.
func (t *lgTranslator) endAgent(g *lgGraph, m lcMessage) {
	t.endNode(g, nodeAgent, map[string]any{"messages": []lcMessage{m}})
}

// endTools reports a tools step whose every call has its result: an update
// of the tools node with the state changes made during the step, then the
// state after it. This is the one deterministic point where the step is
// known to be over; what its last call's hooks change after its result is
// reported on its own (see changedState).
func (t *lgTranslator) endTools(g *lgGraph) {
	t.endToolsNode(g)
	t.stepDone(g, []string{nodeAgent})
}

// endToolsNode ends the tools node's step with its update: its tool
// messages and the state changes made during it.
func (t *lgTranslator) endToolsNode(g *lgGraph) {
	g.reported = true
	update := map[string]any{"messages": g.tools}
	for k, v := range g.changed {
		update[k] = v
	}
	t.endNode(g, nodeTools, update)
	g.changed = thread.State{}
	g.ai, g.calls, g.results, g.tools = -1, 0, 0, nil
}

// values reports g's state, and completes the messages it brings.
func (t *lgTranslator) values(g *lgGraph) {
	t.emit(g, modeValues, modeValues, stateOf(g))
	t.completeMessages(g)
}

// done ends the run's graph: the final answer, then the final state from
// the done event, which is what the store keeps. A failed run ends with an
// error part; a cancelled one just ends.
func (t *lgTranslator) done(data json.RawMessage) {
	g := t.top
	var d struct {
		Output json.RawMessage `json:"output"`
	}
	_ = json.Unmarshal(data, &d)
	var failed struct {
		Error     string `json:"error"`
		ErrorName string `json:"error_name"`
		Cancelled bool   `json:"cancelled"`
	}
	msgs, fields, ok := splitValues(d.Output)
	var parked struct {
		Interrupted bool                     `json:"interrupted"`
		Interrupts  []capabilities.Interrupt `json:"interrupts"`
	}
	// A run a crash cut off is "interrupted" too, with an error and no
	// interrupts: it fails below.
	if !ok && json.Unmarshal(d.Output, &parked) == nil && parked.Interrupted && len(parked.Interrupts) > 0 {
		t.park(parked.Interrupts)
		return
	}
	if !ok {
		if json.Unmarshal(d.Output, &failed) == nil && failed.Error != "" {
			if g.node != "" {
				t.failNode(g, errorNameOr(failed.ErrorName)+": "+failed.Error)
			}
			t.out = append(t.out, stream.Event{Type: "error", Data: wire.MustJSON(map[string]string{"error": errorNameOr(failed.ErrorName), "message": failed.Error})})
		}
		return
	}
	final := t.names.messages(msgs)
	if n := len(final); n > 0 && final[n-1].Type == "ai" && len(final[n-1].ToolCalls) == 0 && (g.ai >= 0 || n > len(g.msgs)) {
		last := final[n-1]
		if g.ai < 0 {
			// The answer was not streamed (runs/wait, or no text deltas):
			// it comes whole.
			t.startNode(g, nodeAgent)
			t.emit(g, modeMessagesTuple, modeMessages, []any{aiChunk(last.ID, last.Content, nil), t.meta(g, nodeAgent)})
			if t.wants(g, modeEvents) {
				t.runEvent(g, "on_chat_model_stream", "model", t.stepID(g, g.step, "model"), map[string]any{"chunk": aiChunk(last.ID, last.Content, nil)}, nodeAgent)
			}
		}
		t.endAgent(g, last)
	}
	g.msgs, g.fields = final, fields
	t.stepDone(g, nil)
	t.rootEvent("on_chain_end", map[string]any{"output": stateOf(g)})
}

// park ends a run that parked for a person's decision, as LangGraph ends
// a graph stopped at an interrupt() in its tools node: the model message
// with the held-back calls is the agent's update (the tools step did not
// finish, so it has none), the last values are the state the run saved,
// and then values and updates each get {"__interrupt__": [...]}.
func (t *lgTranslator) park(interrupts []capabilities.Interrupt) {
	g := t.top
	next := []string{nodeTools}
	if g.ai >= 0 && g.results == 0 {
		t.endAgent(g, g.msgs[g.ai])
	} else if g.calls == 0 {
		next = []string{nodeAgent}
	}
	if t.saved != nil {
		if msgs, fields, ok := t.saved(); ok {
			g.msgs, g.fields = t.names.messages(msgs), fields
		}
	}
	t.parked = true
	t.stepDone(g, next)
	list := map[string]any{interruptKey: lgInterrupts(interrupts)}
	t.emit(g, modeValues, modeValues, list)
	t.emit(g, modeUpdates, modeUpdates, list)
}

// subagentEvent handles a subagent's event. With subgraphs it is the
// subagent graph's own; without, LangGraph streams nothing of a subgraph,
// but Dawn's own events of a subagent (its plan) still reach custom.
func (t *lgTranslator) subagentEvent(e stream.Event) {
	var who struct {
		CallID  string `json:"call_id"`
		RouteID string `json:"route_id"`
	}
	_ = json.Unmarshal(e.Data, &who)
	inner := strings.TrimPrefix(e.Type, stream.SubagentPrefix)
	switch e.Type {
	case stream.TypeSubagentStart, stream.TypeSubagentEnd:
		// The subagent's graph opens with its first part and closes with
		// the task call's result.
		return
	case stream.TypeSubagentMessage:
		inner = stream.TypeChunk
	}
	if !t.subgraphs {
		switch inner {
		case stream.TypeChunk, stream.TypeToolCall, stream.TypeToolResult:
		default:
			t.emit(t.top, modeCustom, modeCustom, map[string]any{"event": e.Type, "data": json.RawMessage(orNull(e.Data))})
		}
		return
	}
	t.event(t.subagent(who.CallID, who.RouteID), inner, e.Data)
}

// subagent returns the graph of the subagent started by task call callID,
// opening it with its first values: the task as a human message and the
// subagent route's initial state.
func (t *lgTranslator) subagent(callID, routeID string) *lgGraph {
	if g, ok := t.subs[callID]; ok {
		return g
	}
	call := t.tasks[callID]
	ns := "tools:" + callID
	if call.ns != "" {
		ns = call.ns + "|" + ns
	}
	fields := thread.State{}
	if p, ok := t.app.Routes[routeID]; ok {
		fields = p.InitialState()
	}
	g := &lgGraph{ns: ns, fields: fields, changed: thread.State{}, ai: -1, completed: map[string]bool{}}
	g.msgs = lcMessages(t.threadID, ns, []thread.Message{{Role: thread.RoleUser, Content: call.input}})
	t.subs[callID] = g
	t.values(g)
	return g
}

// endSubagent closes a subagent's graph when its task call returns, with
// the subagent's answer (the call's output) as its last message.
func (t *lgTranslator) endSubagent(callID string, g *lgGraph, output json.RawMessage) {
	if g.ai < 0 {
		t.openAI(g)
		g.msgs[g.ai].Content = outputText(output)
	}
	t.endAgent(g, g.msgs[g.ai])
	t.stepDone(g, nil)
	delete(t.subs, callID)
}

// aiChunk is a streamed piece of a model message, as LangChain serializes
// an AIMessageChunk.
func aiChunk(id, text string, toolCallChunks []map[string]any) map[string]any {
	if toolCallChunks == nil {
		toolCallChunks = []map[string]any{}
	}
	return map[string]any{"type": "AIMessageChunk", "id": id, "content": text, "tool_call_chunks": toolCallChunks, "additional_kwargs": map[string]any{}, "response_metadata": map[string]any{}}
}

// lcDict is m as LangChain serializes a message, without Dawn's fields, for
// the parts a LangChain client turns into message objects.
func lcDict(m lcMessage) map[string]any {
	d := map[string]any{"type": m.Type, "id": m.ID, "content": m.Content, "additional_kwargs": map[string]any{}, "response_metadata": map[string]any{}}
	switch m.Type {
	case "ai":
		calls := make([]map[string]any, len(m.ToolCalls))
		for i, c := range m.ToolCalls {
			calls[i] = map[string]any{"id": c.ID, "name": c.Name, "args": c.Args, "type": "tool_call"}
		}
		d["tool_calls"], d["invalid_tool_calls"] = calls, []any{}
	case "tool":
		d["tool_call_id"], d["name"] = m.ToolCallID, m.Name
		d["status"] = "success"
		if m.Status != "" {
			d["status"] = m.Status
		}
	}
	return d
}

// planKeys are the members of a harness plan_update that are the harness
// plan's own (the "plan" state field), by the plan's key; "todos" are its
// items.
var planKeys = map[string]string{
	"items": "todos", "state": "state", "goal": "goal", "postconditions": "postconditions",
	"advance": "advance", "pause_reason": "pause_reason", "reason": "reason",
}

// planUpdate applies a plan_update event to a graph's fields: its todos
// are the todos field, and on a route whose harness owns the plan (whose
// state has a "plan" object and whose event a lifecycle "state") the plan
// field's items and lifecycle too, so values show the plan as it moves
// and not only at the end.
func planUpdate(g *lgGraph, data json.RawMessage) {
	var update map[string]json.RawMessage
	if json.Unmarshal(data, &update) != nil {
		return
	}
	if todos, ok := update["todos"]; ok && len(todos) > 0 {
		g.fields["todos"], g.changed["todos"] = todos, todos
	}
	var plan map[string]json.RawMessage
	if _, harness := update["state"]; !harness || json.Unmarshal(g.fields["plan"], &plan) != nil || plan == nil {
		return
	}
	for key, from := range planKeys {
		if v, ok := update[from]; ok {
			plan[key] = v
		} else if key == "pause_reason" || key == "reason" {
			delete(plan, key) // left out of the event when empty
		}
	}
	raw := wire.MustJSON(plan)
	g.fields["plan"], g.changed["plan"] = raw, raw
}

// messageID names the i-th message of graph g: a subagent's by its
// namespace, the thread's by its branch.
func (t *lgTranslator) messageID(g *lgGraph, i int) string {
	if g.ns != "" {
		return messageID(t.threadID, g.ns, i)
	}
	return t.names.id(i)
}

// errorNameOr is the name of a failed run's error as LangGraph sends it:
// the one its output carries, else RunError.
func errorNameOr(name string) string {
	if name == "" {
		return "RunError"
	}
	return name
}
