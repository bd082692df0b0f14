package agui

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"

	"github.com/dawn-go/dawn/capabilities"
	"github.com/dawn-go/dawn/internal/server/wire"
	"github.com/dawn-go/dawn/stream"
	"github.com/dawn-go/dawn/thread"
)

// aguiEvent is one AG-UI event: a JSON object whose "type" names it, with
// the protocol's own field names.
type aguiEvent map[string]any

// AG-UI event types this endpoint sends.
const (
	aguiRunStarted         = "RUN_STARTED"
	aguiRunFinished        = "RUN_FINISHED"
	aguiRunError           = "RUN_ERROR"
	aguiTextMessageStart   = "TEXT_MESSAGE_START"
	aguiTextMessageContent = "TEXT_MESSAGE_CONTENT"
	aguiTextMessageEnd     = "TEXT_MESSAGE_END"
	aguiToolCallStart      = "TOOL_CALL_START"
	aguiToolCallArgs       = "TOOL_CALL_ARGS"
	aguiToolCallEnd        = "TOOL_CALL_END"
	aguiToolCallResult     = "TOOL_CALL_RESULT"
	aguiStateSnapshot      = "STATE_SNAPSHOT"
	aguiStateDelta         = "STATE_DELTA"
)

// aguiSubagents is the shared-state key under which subagent plans live,
// one object per task call id.
const aguiSubagents = "subagents"

// typeInterrupt is the Dawn event of a run parked for a human.
const typeInterrupt = "interrupt"

// aguiIdentity are the fields a forwarded subagent event's data carries
// about the subagent (see stream.Forward).
var aguiIdentity = []string{"call_id", "subagent", "route_id", "depth"}

// aguiFields says which of a route's state fields the shared state
// mirrors, and how.
type aguiFields struct {
	// names are every state field of the route.
	names []string
	// views show a field's stored value as its capability shows it to a
	// mirror, by field name (capabilities.StateMirror).
	views map[string]func(raw json.RawMessage) (json.RawMessage, bool)
	// mirrors are the app's capabilities whose events carry state fields,
	// the run's own or a subagent's.
	mirrors []capabilities.StateMirror
}

// aguiFieldsOf returns the fields of route, shown as the app's markers
// mirror them.
func aguiFieldsOf(route *capabilities.Prepared, markers []capabilities.Marker) aguiFields {
	f := aguiFields{views: map[string]func(json.RawMessage) (json.RawMessage, bool){}}
	byName := map[string]capabilities.StateMirror{}
	for _, mk := range markers {
		if m, ok := mk.(capabilities.StateMirror); ok {
			f.mirrors = append(f.mirrors, m)
			byName[mk.Name()] = m
		}
	}
	for _, field := range route.Fields {
		f.names = append(f.names, field.Name)
		if m, ok := byName[field.Capability]; ok && field.Capability != "" {
			f.views[field.Name] = func(raw json.RawMessage) (json.RawMessage, bool) {
				return m.MirrorField(route, field.Name, raw)
			}
		}
	}
	return f
}

func (f aguiFields) has(name string) bool { return slices.Contains(f.names, name) }

// mirror returns doc with the state fields event typ sets at base, as the
// first capability that mirrors the event gives them; ok is false when no
// capability mirrors it.
func (f aguiFields) mirror(doc map[string]any, base []string, typ string, data json.RawMessage) (map[string]any, bool) {
	current := func(field string) json.RawMessage {
		v := lookup(doc, pathOf(base, field))
		if v == nil {
			return nil
		}
		raw, _ := json.Marshal(v)
		return raw
	}
	for _, m := range f.mirrors {
		fields, ok := m.MirrorEvent(typ, data, current)
		if !ok {
			continue
		}
		next := doc
		for _, name := range slices.Sorted(maps.Keys(fields)) {
			next = with(next, pathOf(base, name), decodeAny(fields[name]))
		}
		return next, true
	}
	return doc, false
}

// aguiStream translates one run's Dawn events to AG-UI events. It frames
// the text Dawn streams as chunks into messages, turns tool calls and
// results into their AG-UI events, and keeps the AG-UI shared state: the
// route's state fields (todos, the harness plan, state.yaml fields) as the
// thread has them, kept live from the events that carry them (see
// capabilities.StateMirror), with each subagent's under subagents/<call id>. It ends with exactly one RUN_FINISHED or
// RUN_ERROR.
type aguiStream struct {
	threadID string
	// runID is the AG-UI run id from the request.
	runID string
	// idPrefix makes the ids this side invents (messages, tool results)
	// unique across runs: the Dawn run id.
	idPrefix string
	n        int
	fields   aguiFields

	state map[string]any
	// text is the id of the text message being streamed, or "".
	text string
	// unnamed holds, per tool name, the ids made up for calls that came
	// without one, so their results find them.
	unnamed    map[string][]string
	interrupts []any
	done       bool
}

func newAGUIStream(threadID, runID, idPrefix string, fields aguiFields) *aguiStream {
	return &aguiStream{threadID: threadID, runID: runID, idPrefix: idPrefix, fields: fields, state: map[string]any{}, unnamed: map[string][]string{}}
}

func (a *aguiStream) newID(kind string) string {
	a.n++
	return fmt.Sprintf("%s-%s-%d", kind, a.idPrefix, a.n)
}

// finished reports whether the terminal event was sent.
func (a *aguiStream) finished() bool { return a.done }

// start opens the run: RUN_STARTED, then STATE_SNAPSHOT of the client's
// state (its own keys are kept) with the thread's state fields as the run
// starts from them. Subagent plans of earlier runs are dropped.
func (a *aguiStream) start(client map[string]json.RawMessage, values thread.State) []aguiEvent {
	doc := map[string]any{}
	for k, raw := range client {
		if k != aguiSubagents && !a.fields.has(k) {
			doc[k] = decodeAny(raw)
		}
	}
	for _, name := range a.fields.names {
		if raw, ok := values[name]; ok {
			doc[name] = a.fieldView(name, raw)
		}
	}
	a.state = doc
	return []aguiEvent{
		{"type": aguiRunStarted, "threadId": a.threadID, "runId": a.runID},
		{"type": aguiStateSnapshot, "snapshot": doc},
	}
}

// fieldView is a state field's value as the shared state shows it.
func (a *aguiStream) fieldView(name string, raw json.RawMessage) any {
	if view, ok := a.fields.views[name]; ok {
		if v, ok := view(raw); ok {
			return decodeAny(v)
		}
	}
	return decodeAny(raw)
}

// translate returns the AG-UI events for one Dawn event.
func (a *aguiStream) translate(e stream.Event) []aguiEvent {
	if a.done {
		return nil
	}
	if e.Type == stream.TypeModelCall || e.Type == stream.SubagentPrefix+stream.TypeModelCall {
		return nil // AG-UI has no event for a model call's duration and tokens
	}
	if e.Type == stream.TypeChunk {
		return a.chunk(e.Data)
	}
	if len(a.interrupts) > 0 && e.Type != stream.TypeDone && e.Type != typeInterrupt {
		return nil // a parked run: only its end matters
	}
	out := a.closeText()
	sub, isSub := strings.CutPrefix(e.Type, stream.SubagentPrefix)
	switch {
	case e.Type == stream.TypeToolCall:
		out = append(out, a.toolCall(e.Data)...)
	case e.Type == stream.TypeToolResult:
		out = append(out, a.toolResult(e.Data)...)
	case isSub:
		out = append(out, a.subagentState(sub, e.Data)...)
	case e.Type == typeInterrupt:
		out = append(out, a.interrupt(e.Data)...)
	case e.Type == stream.TypeDone:
		out = append(out, a.finish(e.Data)...)
	default:
		if next, ok := a.fields.mirror(a.state, nil, e.Type, e.Data); ok {
			out = append(out, a.setState(next)...)
		}
	}
	return out
}

// end finishes a stream that closed without Dawn's done event.
func (a *aguiStream) end() []aguiEvent {
	if a.done {
		return nil
	}
	a.done = true
	return append(a.closeText(), aguiEvent{"type": aguiRunError, "message": "the run's event stream ended without a result; read the thread's state for what was saved"})
}

// subagentState keeps a subagent's state fields that its event typ
// carries under subagents/<call id>, with the subagent's identity.
func (a *aguiStream) subagentState(typ string, raw json.RawMessage) []aguiEvent {
	data := decodeObject(raw)
	callID, _ := data["call_id"].(string)
	if callID == "" {
		return nil
	}
	own := maps.Clone(data)
	for _, k := range aguiIdentity {
		delete(own, k)
	}
	base := []string{aguiSubagents, callID}
	next, ok := a.fields.mirror(a.state, base, typ, wire.MustJSON(own))
	if !ok {
		return nil
	}
	for _, k := range aguiIdentity[1:] {
		if v, ok := data[k]; ok {
			next = with(next, pathOf(base, k), v)
		}
	}
	return a.setState(next)
}

// chunk streams a text delta, opening a message first. Its data is the
// text as a JSON string, or {"content": text}.
func (a *aguiStream) chunk(data json.RawMessage) []aguiEvent {
	delta := stream.ChunkText(data)
	if delta == "" {
		return nil
	}
	var out []aguiEvent
	if a.text == "" {
		a.text = a.newID("msg")
		out = append(out, aguiEvent{"type": aguiTextMessageStart, "messageId": a.text, "role": "assistant"})
	}
	return append(out, aguiEvent{"type": aguiTextMessageContent, "messageId": a.text, "delta": delta})
}

// closeText ends the text message being streamed, if any.
func (a *aguiStream) closeText() []aguiEvent {
	if a.text == "" {
		return nil
	}
	id := a.text
	a.text = ""
	return []aguiEvent{{"type": aguiTextMessageEnd, "messageId": id}}
}

type toolEventData struct {
	ID     string          `json:"id"`
	Name   string          `json:"name"`
	Input  json.RawMessage `json:"input"`
	Output json.RawMessage `json:"output"`
	Error  string          `json:"error"`
}

// toolCall is a whole tool call: Dawn sends it once its arguments are
// complete, so start, arguments and end follow each other.
func (a *aguiStream) toolCall(data json.RawMessage) []aguiEvent {
	var tc toolEventData
	if json.Unmarshal(data, &tc) != nil || tc.Name == "" {
		return nil
	}
	id := tc.ID
	if id == "" {
		id = a.newID("call")
		a.unnamed[tc.Name] = append(a.unnamed[tc.Name], id)
	}
	args := compactJSON(tc.Input)
	if args == "" || args == "null" {
		args = "{}"
	}
	return []aguiEvent{
		{"type": aguiToolCallStart, "toolCallId": id, "toolCallName": tc.Name},
		{"type": aguiToolCallArgs, "toolCallId": id, "delta": args},
		{"type": aguiToolCallEnd, "toolCallId": id},
	}
}

// toolResult is the result of a call as a tool message. Its content is the
// output's text: a string output as it is, anything else as JSON, and a
// failed call's error.
func (a *aguiStream) toolResult(data json.RawMessage) []aguiEvent {
	var tr toolEventData
	if json.Unmarshal(data, &tr) != nil || tr.Name == "" {
		return nil
	}
	id := tr.ID
	if id == "" {
		if ids := a.unnamed[tr.Name]; len(ids) > 0 {
			id, a.unnamed[tr.Name] = ids[0], ids[1:]
		} else {
			id = a.newID("call")
		}
	}
	content := compactJSON(tr.Output)
	var s string
	switch {
	case tr.Error != "" && (content == "" || content == "null"):
		content = tr.Error
	case content == "null":
		content = ""
	case json.Unmarshal(tr.Output, &s) == nil:
		content = s
	}
	return []aguiEvent{{"type": aguiToolCallResult, "messageId": a.newID("result"), "toolCallId": id, "content": content, "role": "tool"}}
}

// interrupt records a parked run's interrupt; the run then finishes with
// the interrupt outcome, as Dawn's adapter does.
func (a *aguiStream) interrupt(data json.RawMessage) []aguiEvent {
	env := decodeObject(data)
	id, _ := env["interruptId"].(string)
	if id == "" {
		a.done = true
		return []aguiEvent{{"type": aguiRunError, "message": "the run parked with an interrupt that has no interruptId"}}
	}
	in := map[string]any{"id": id, "reason": "interrupt", "metadata": env}
	if kind, ok := env["kind"].(string); ok && kind != "" {
		in["reason"] = kind
	}
	for _, k := range []string{"message", "toolCallId"} {
		if s, ok := env[k].(string); ok {
			in[k] = s
		}
	}
	a.interrupts = append(a.interrupts, in)
	return nil
}

// finish turns Dawn's done event into the terminal AG-UI event. A finished
// run's final state values first bring the shared state up to date, so it
// ends equal to the thread's state.
func (a *aguiStream) finish(data json.RawMessage) []aguiEvent {
	a.done = true
	var done struct {
		Output json.RawMessage `json:"output"`
	}
	_ = json.Unmarshal(data, &done)
	var out struct {
		Error     *string `json:"error"`
		Cancelled bool    `json:"cancelled"`
	}
	_ = json.Unmarshal(done.Output, &out)
	finished := aguiEvent{"type": aguiRunFinished, "threadId": a.threadID, "runId": a.runID}
	switch {
	case out.Error != nil:
		return []aguiEvent{{"type": aguiRunError, "message": *out.Error}}
	case out.Cancelled:
		finished["outcome"] = map[string]any{"type": "cancelled"}
		return []aguiEvent{finished}
	}
	var events []aguiEvent
	var values map[string]json.RawMessage
	if json.Unmarshal(done.Output, &values) == nil {
		next := a.state
		for _, name := range a.fields.names {
			if raw, ok := values[name]; ok {
				next = with(next, []string{name}, a.fieldView(name, raw))
			}
		}
		events = a.setState(next)
	}
	if len(a.interrupts) > 0 {
		finished["outcome"] = map[string]any{"type": "interrupt", "interrupts": a.interrupts}
	} else {
		finished["outcome"] = map[string]any{"type": "success"}
		if v := decodeAny(done.Output); v != nil {
			finished["result"] = v
		}
	}
	return append(events, finished)
}

// setState makes next the shared state and returns the STATE_DELTA that
// takes a client from the old state to it, or nothing when they are equal.
func (a *aguiStream) setState(next map[string]any) []aguiEvent {
	ops := jsonPatch(nil, "", a.state, next)
	a.state = next
	if len(ops) == 0 {
		return nil
	}
	return []aguiEvent{{"type": aguiStateDelta, "delta": ops}}
}

// jsonPatch appends to ops the RFC 6902 operations that turn old into new
// at the JSON Pointer path: objects are compared member by member, and any
// other value that changed is replaced whole (a todo list is one replace).
func jsonPatch(ops []any, path string, old, new any) []any {
	om, oldIsObject := old.(map[string]any)
	nm, newIsObject := new.(map[string]any)
	if !oldIsObject || !newIsObject {
		if !reflect.DeepEqual(old, new) {
			ops = append(ops, map[string]any{"op": "replace", "path": path, "value": new})
		}
		return ops
	}
	for _, k := range slices.Sorted(maps.Keys(om)) {
		if _, ok := nm[k]; !ok {
			ops = append(ops, map[string]any{"op": "remove", "path": path + "/" + escapePointer(k)})
		}
	}
	for _, k := range slices.Sorted(maps.Keys(nm)) {
		ov, ok := om[k]
		if !ok {
			ops = append(ops, map[string]any{"op": "add", "path": path + "/" + escapePointer(k), "value": nm[k]})
			continue
		}
		ops = jsonPatch(ops, path+"/"+escapePointer(k), ov, nm[k])
	}
	return ops
}

// escapePointer escapes one JSON Pointer reference token (RFC 6901).
func escapePointer(k string) string {
	return strings.ReplaceAll(strings.ReplaceAll(k, "~", "~0"), "/", "~1")
}

// with returns doc with v at path, copying the objects along the path (doc
// itself is not changed) and creating those that are missing.
func with(doc map[string]any, path []string, v any) map[string]any {
	out := make(map[string]any, len(doc)+1)
	maps.Copy(out, doc)
	if len(path) == 1 {
		out[path[0]] = v
		return out
	}
	child, _ := doc[path[0]].(map[string]any)
	out[path[0]] = with(child, path[1:], v)
	return out
}

// lookup returns the value at path in doc, or nil.
func lookup(doc map[string]any, path []string) any {
	var v any = doc
	for _, k := range path {
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = m[k]
	}
	return v
}

func pathOf(base []string, key string) []string {
	return append(slices.Clip(base), key)
}

// decodeAny decodes JSON text to maps, slices and scalars; invalid or
// empty text is nil.
func decodeAny(raw json.RawMessage) any {
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return nil
	}
	return v
}

// decodeObject decodes a JSON object; anything else is nil.
func decodeObject(raw json.RawMessage) map[string]any {
	m, _ := decodeAny(raw).(map[string]any)
	return m
}

func compactJSON(raw json.RawMessage) string {
	var b bytes.Buffer
	if json.Compact(&b, raw) != nil {
		return string(raw)
	}
	return b.String()
}
