package agui

import (
	"context"
	"encoding/json"
	"github.com/dawn-go/dawn/markers"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/dawn-go/dawn/capabilities"
	"github.com/dawn-go/dawn/internal/app"
	"github.com/dawn-go/dawn/internal/server/wire"
	"github.com/dawn-go/dawn/router"
	"github.com/dawn-go/dawn/stream"
	"github.com/dawn-go/dawn/thread"
)

// ev is a Dawn event with its data written as JSON text.
func ev(typ, data string) stream.Event { return stream.Event{Type: typ, Data: json.RawMessage(data)} }

const (
	todosA = `[{"content":"A","status":"in_progress"},{"content":"B","status":"pending"}]`
	todosB = `[{"content":"A","status":"completed"},{"content":"B","status":"in_progress"}]`
	// harnessUpdate is a harness-owned plan_update: items with ids and
	// attempts, and the lifecycle fields.
	harnessUpdate = `{"todos":[{"id":"1","content":"A","status":"completed","evidence":"ran it","attempts":1},{"id":"2","content":"B","status":"in_progress","attempts":0}],"state":"running","current":1,"postconditions":[],"advance":"auto","budget_left":3}`
)

// routeFields returns the shared-state fields of an app's route "open",
// whose plan.md keeps a plain todo list, and of its route "job", whose plan
// the harness owns, as the stock markers mirror them, plus extra state
// fields as if state.yaml declared them.
func routeFields(t *testing.T, extra ...string) (plain, enforced aguiFields) {
	t.Helper()
	dir := t.TempDir()
	for name, body := range map[string]string{
		"open/agent.md": "No harness here.",
		"open/plan.md":  "- [ ] Step 1\n",
		"job/agent.md":  "You do the job.",
		"job/plan.md":   "---\nenforce: true\n---\n- [ ] Step 1\n",
	} {
		path := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	a, err := app.Load(context.Background(), dir, app.Options{Markers: markers.All()})
	if err != nil {
		t.Fatal(err)
	}
	of := func(key string) aguiFields {
		route, _, err := a.Resolve(key)
		if err != nil {
			t.Fatal(err)
		}
		f := aguiFieldsOf(route, a.Config.Markers)
		f.names = append(f.names, extra...)
		return f
	}
	return of("open"), of("job")
}

// TestAGUITranslate checks the AG-UI events for Dawn event sequences. The
// translator has started with an empty shared state on a route whose state
// fields are todos and plan_revisions (plan, for the harness cases); each
// case lists every
// event the sequence gives, as JSON.
func TestAGUITranslate(t *testing.T) {
	plain, enforced := routeFields(t)
	if !slices.Equal(plain.names, []string{"todos", "plan_revisions"}) || !slices.Equal(enforced.names, []string{"todos", "plan"}) {
		t.Fatalf("fields: plain %v, enforced %v", plain.names, enforced.names)
	}
	withNotes, _ := routeFields(t, "notes")
	finished := `{"type":"RUN_FINISHED","threadId":"t","runId":"r","outcome":{"type":"success"},"result":{"messages":[]}}`
	cases := []struct {
		name   string
		fields aguiFields
		events []stream.Event
		want   []string
	}{
		{
			name:   "text in either chunk shape is one message",
			fields: plain,
			events: []stream.Event{ev("chunk", `"Hel"`), ev("chunk", `"lo"`), ev("chunk", `""`), ev("done", `{"output":{"messages":[]}}`)},
			want: []string{
				`{"type":"TEXT_MESSAGE_START","messageId":"msg-d-1","role":"assistant"}`,
				`{"type":"TEXT_MESSAGE_CONTENT","messageId":"msg-d-1","delta":"Hel"}`,
				`{"type":"TEXT_MESSAGE_CONTENT","messageId":"msg-d-1","delta":"lo"}`,
				`{"type":"TEXT_MESSAGE_END","messageId":"msg-d-1"}`,
				finished,
			},
		},
		{
			name:   "a tool call closes the text; results keep the call id",
			fields: plain,
			events: []stream.Event{
				ev("chunk", `"Looking"`),
				ev("tool_call", `{"id":"c1","name":"lookup","input":{"email":"a@b.c"}}`),
				ev("tool_call", `{"id":"c2","name":"fetch","input":null}`),
				ev("tool_result", `{"id":"c1","name":"lookup","output":{"plan":"pro"}}`),
				ev("tool_result", `{"id":"c2","name":"fetch","output":"plain text"}`),
				ev("chunk", `"Done"`),
				ev("done", `{"output":{"messages":[]}}`),
			},
			want: []string{
				`{"type":"TEXT_MESSAGE_START","messageId":"msg-d-1","role":"assistant"}`,
				`{"type":"TEXT_MESSAGE_CONTENT","messageId":"msg-d-1","delta":"Looking"}`,
				`{"type":"TEXT_MESSAGE_END","messageId":"msg-d-1"}`,
				`{"type":"TOOL_CALL_START","toolCallId":"c1","toolCallName":"lookup"}`,
				`{"type":"TOOL_CALL_ARGS","toolCallId":"c1","delta":"{\"email\":\"a@b.c\"}"}`,
				`{"type":"TOOL_CALL_END","toolCallId":"c1"}`,
				`{"type":"TOOL_CALL_START","toolCallId":"c2","toolCallName":"fetch"}`,
				`{"type":"TOOL_CALL_ARGS","toolCallId":"c2","delta":"{}"}`,
				`{"type":"TOOL_CALL_END","toolCallId":"c2"}`,
				`{"type":"TOOL_CALL_RESULT","messageId":"result-d-2","toolCallId":"c1","content":"{\"plan\":\"pro\"}","role":"tool"}`,
				`{"type":"TOOL_CALL_RESULT","messageId":"result-d-3","toolCallId":"c2","content":"plain text","role":"tool"}`,
				`{"type":"TEXT_MESSAGE_START","messageId":"msg-d-4","role":"assistant"}`,
				`{"type":"TEXT_MESSAGE_CONTENT","messageId":"msg-d-4","delta":"Done"}`,
				`{"type":"TEXT_MESSAGE_END","messageId":"msg-d-4"}`,
				finished,
			},
		},
		{
			name:   "calls without ids get one, and their results find it by name; a failed call's result is its error",
			fields: plain,
			events: []stream.Event{
				ev("tool_call", `{"name":"lookup","input":{}}`),
				ev("tool_call", `{"name":"lookup","input":{"n":2}}`),
				ev("tool_result", `{"name":"lookup","output":null,"error":"no such account"}`),
				ev("tool_result", `{"name":"lookup","output":null}`),
			},
			want: []string{
				`{"type":"TOOL_CALL_START","toolCallId":"call-d-1","toolCallName":"lookup"}`,
				`{"type":"TOOL_CALL_ARGS","toolCallId":"call-d-1","delta":"{}"}`,
				`{"type":"TOOL_CALL_END","toolCallId":"call-d-1"}`,
				`{"type":"TOOL_CALL_START","toolCallId":"call-d-2","toolCallName":"lookup"}`,
				`{"type":"TOOL_CALL_ARGS","toolCallId":"call-d-2","delta":"{\"n\":2}"}`,
				`{"type":"TOOL_CALL_END","toolCallId":"call-d-2"}`,
				`{"type":"TOOL_CALL_RESULT","messageId":"result-d-3","toolCallId":"call-d-1","content":"no such account","role":"tool"}`,
				`{"type":"TOOL_CALL_RESULT","messageId":"result-d-4","toolCallId":"call-d-2","content":"","role":"tool"}`,
			},
		},
		{
			name:   "plan_update replaces todos; the same list again changes nothing",
			fields: plain,
			events: []stream.Event{
				ev("plan_update", `{"todos":`+todosA+`}`),
				ev("plan_update", `{"todos":`+todosA+`}`),
				ev("plan_update", `{"todos":`+todosB+`}`),
				ev("done", `{"output":{"messages":[],"todos":`+todosB+`}}`),
			},
			want: []string{
				`{"type":"STATE_DELTA","delta":[{"op":"add","path":"/todos","value":` + todosA + `}]}`,
				`{"type":"STATE_DELTA","delta":[{"op":"replace","path":"/todos","value":` + todosB + `}]}`,
				`{"type":"RUN_FINISHED","threadId":"t","runId":"r","outcome":{"type":"success"},"result":{"messages":[],"todos":` + todosB + `}}`,
			},
		},
		{
			name:   "a harness plan: Dawn-shaped todos, the plan view, and its lifecycle",
			fields: enforced,
			events: []stream.Event{
				ev("plan_update", harnessUpdate),
				ev("plan_paused", `{"state":"paused","goal":"","pause_reason":"budget","reason":"","done":1,"total":2}`),
			},
			want: []string{
				`{"type":"STATE_DELTA","delta":[` +
					`{"op":"add","path":"/plan","value":{"advance":"auto","budget_left":3,"current":1,"items":[{"id":"1","content":"A","status":"completed","evidence":"ran it","attempts":1},{"id":"2","content":"B","status":"in_progress","attempts":0}],"postconditions":[],"state":"running"}},` +
					`{"op":"add","path":"/todos","value":[{"content":"A","status":"completed","evidence":"ran it"},{"content":"B","status":"in_progress"}]}]}`,
				`{"type":"STATE_DELTA","delta":[{"op":"add","path":"/plan/pause_reason","value":"budget"},{"op":"replace","path":"/plan/state","value":"paused"}]}`,
			},
		},
		{
			name:   "a subagent's plan lives under its call id, escaped as a JSON Pointer",
			fields: plain,
			events: []stream.Event{
				ev("subagent.plan_update", `{"todos":`+todosA+`,"call_id":"c/1","subagent":"researcher","route_id":"/research/subagents/researcher","depth":1}`),
				ev("subagent.plan_update", `{"todos":`+todosB+`,"call_id":"c/1","subagent":"researcher","route_id":"/research/subagents/researcher","depth":1}`),
				ev("subagent.chunk", `"ignored"`),
				ev("subagent.plan_update", `{"todos":[]}`),
			},
			want: []string{
				`{"type":"STATE_DELTA","delta":[{"op":"add","path":"/subagents","value":{"c/1":{"depth":1,"route_id":"/research/subagents/researcher","subagent":"researcher","todos":` + todosA + `}}}]}`,
				`{"type":"STATE_DELTA","delta":[{"op":"replace","path":"/subagents/c~11/todos","value":` + todosB + `}]}`,
			},
		},
		{
			name:   "a failed run ends with RUN_ERROR only",
			fields: plain,
			events: []stream.Event{ev("chunk", `"Hi"`), ev("done", `{"output":{"error":"model offline: connection refused"}}`), ev("chunk", `"late"`)},
			want: []string{
				`{"type":"TEXT_MESSAGE_START","messageId":"msg-d-1","role":"assistant"}`,
				`{"type":"TEXT_MESSAGE_CONTENT","messageId":"msg-d-1","delta":"Hi"}`,
				`{"type":"TEXT_MESSAGE_END","messageId":"msg-d-1"}`,
				`{"type":"RUN_ERROR","message":"model offline: connection refused"}`,
			},
		},
		{
			name:   "a cancelled run finishes with the cancelled outcome",
			fields: plain,
			events: []stream.Event{ev("done", `{"output":{"cancelled":true}}`)},
			want:   []string{`{"type":"RUN_FINISHED","threadId":"t","runId":"r","outcome":{"type":"cancelled"}}`},
		},
		{
			name:   "a parked run finishes with the interrupt outcome and skips what follows",
			fields: plain,
			events: []stream.Event{
				ev("interrupt", `{"interruptId":"perm-1","type":"permission-request","kind":"tool","detail":{"toolName":"refund"}}`),
				ev("tool_call", `{"id":"c9","name":"refund","input":{}}`),
				ev("done", `{"output":{"messages":[]}}`),
			},
			want: []string{`{"type":"RUN_FINISHED","threadId":"t","runId":"r","outcome":{"type":"interrupt","interrupts":[{"id":"perm-1","reason":"tool","metadata":{"interruptId":"perm-1","type":"permission-request","kind":"tool","detail":{"toolName":"refund"}}}]}}`},
		},
		{
			name:   "other events close the text and are not sent",
			fields: plain,
			events: []stream.Event{ev("chunk", `"Premature"`), ev("answer_rejected", `{"reason":"Step 1 is open"}`), ev("chunk", `"Final"`)},
			want: []string{
				`{"type":"TEXT_MESSAGE_START","messageId":"msg-d-1","role":"assistant"}`,
				`{"type":"TEXT_MESSAGE_CONTENT","messageId":"msg-d-1","delta":"Premature"}`,
				`{"type":"TEXT_MESSAGE_END","messageId":"msg-d-1"}`,
				`{"type":"TEXT_MESSAGE_START","messageId":"msg-d-2","role":"assistant"}`,
				`{"type":"TEXT_MESSAGE_CONTENT","messageId":"msg-d-2","delta":"Final"}`,
			},
		},
		{
			name:   "the final values bring a state field no event reported up to date",
			fields: withNotes,
			events: []stream.Event{ev("done", `{"output":{"messages":[],"notes":["called back"],"todos":[]}}`)},
			want: []string{
				`{"type":"STATE_DELTA","delta":[{"op":"add","path":"/notes","value":["called back"]},{"op":"add","path":"/todos","value":[]}]}`,
				`{"type":"RUN_FINISHED","threadId":"t","runId":"r","outcome":{"type":"success"},"result":{"messages":[],"notes":["called back"],"todos":[]}}`,
			},
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			a := newAGUIStream("t", "r", "d", c.fields)
			var got []aguiEvent
			for _, e := range c.events {
				got = append(got, a.translate(e)...)
			}
			checkEvents(t, got, c.want)
		})
	}
}

// checkEvents compares events with want, each as JSON (key order aside).
func checkEvents(t *testing.T, got []aguiEvent, want []string) {
	t.Helper()
	if len(got) != len(want) {
		t.Errorf("got %d events, want %d", len(got), len(want))
	}
	for i := range max(len(got), len(want)) {
		var g, w any
		if i < len(got) {
			g = decodeAny(wire.MustJSON(got[i]))
		}
		if i < len(want) {
			if err := json.Unmarshal([]byte(want[i]), &w); err != nil {
				t.Fatalf("want[%d] is not JSON: %v", i, err)
			}
		}
		if !jsonEqual(wire.MustJSON(g), wire.MustJSON(w)) {
			t.Errorf("event %d:\n got %s\nwant %s", i, wire.MustJSON(g), wire.MustJSON(w))
		}
	}
}

// TestAGUIStartSnapshot checks the run's opening events: the snapshot keeps
// the client's own keys, takes the thread's state fields over the client's
// copy, shows a harness plan as its plan_update view and drops the
// subagent plans of earlier runs.
func TestAGUIStartSnapshot(t *testing.T) {
	_, enforced := routeFields(t, "notes")
	a := newAGUIStream("t", "r", "d", enforced)
	client := map[string]json.RawMessage{
		"ui":        json.RawMessage(`{"open":true}`),
		"todos":     json.RawMessage(`[{"content":"stale","status":"pending"}]`),
		"subagents": json.RawMessage(`{"old":{}}`),
		"notes":     json.RawMessage(`["client copy"]`),
	}
	values := thread.State{
		"todos": json.RawMessage(`[{"content":"A","status":"completed","evidence":"ran it"}]`),
		"plan":  json.RawMessage(`{"state":"done","items":[{"id":"1","content":"A","status":"completed","evidence":"ran it","attempts":1}],"postconditions":[],"revisions":[{"n":1,"source":"model","change":"x"}],"advance":"auto","budget":5,"auto_steps":1,"corrections":0,"next_id":2,"revision_n":1}`),
		"notes": json.RawMessage(`["saved"]`),
	}
	checkEvents(t, a.start(client, values), []string{
		`{"type":"RUN_STARTED","threadId":"t","runId":"r"}`,
		`{"type":"STATE_SNAPSHOT","snapshot":{` +
			`"notes":["saved"],` +
			`"plan":{"advance":"auto","budget_left":4,"current":-1,"items":[{"id":"1","content":"A","status":"completed","evidence":"ran it","attempts":1}],"postconditions":[],"state":"done"},` +
			`"todos":[{"content":"A","status":"completed","evidence":"ran it"}],` +
			`"ui":{"open":true}}}`,
	})
}

// TestAGUIEnd: a stream that closes without done still ends with one
// terminal event, and nothing follows a terminal event.
func TestAGUIEnd(t *testing.T) {
	a := newAGUIStream("t", "r", "d", aguiFields{})
	got := a.translate(ev("chunk", `"cut"`))
	got = append(got, a.end()...)
	got = append(got, a.end()...)
	got = append(got, a.translate(ev("done", `{"output":{}}`))...)
	checkEvents(t, got, []string{
		`{"type":"TEXT_MESSAGE_START","messageId":"msg-d-1","role":"assistant"}`,
		`{"type":"TEXT_MESSAGE_CONTENT","messageId":"msg-d-1","delta":"cut"}`,
		`{"type":"TEXT_MESSAGE_END","messageId":"msg-d-1"}`,
		`{"type":"RUN_ERROR","message":"the run's event stream ended without a result; read the thread's state for what was saved"}`,
	})
}

// TestJSONPatch checks the patches between documents, applied with a small
// RFC 6902 applier, and their pointer escaping.
func TestJSONPatch(t *testing.T) {
	cases := []struct{ old, new, want string }{
		{`{}`, `{}`, `null`},
		{`{"a":1}`, `{"a":1}`, `null`},
		{`{"a":1}`, `{"a":2}`, `[{"op":"replace","path":"/a","value":2}]`},
		{`{"a":1,"b":2}`, `{"b":2}`, `[{"op":"remove","path":"/a"}]`},
		{`{"x":{"y":[1,2]}}`, `{"x":{"y":[1,2,3],"z":null}}`, `[{"op":"replace","path":"/x/y","value":[1,2,3]},{"op":"add","path":"/x/z","value":null}]`},
		{`{"a/b":{"c~d":1}}`, `{"a/b":{"c~d":2}}`, `[{"op":"replace","path":"/a~1b/c~0d","value":2}]`},
		{`{"a":{"b":1}}`, `{"a":[1]}`, `[{"op":"replace","path":"/a","value":[1]}]`},
	}
	for _, c := range cases {
		old, new := decodeAny(json.RawMessage(c.old)), decodeAny(json.RawMessage(c.new))
		ops := jsonPatch(nil, "", old, new)
		if !jsonEqual(wire.MustJSON(ops), json.RawMessage(c.want)) {
			t.Errorf("patch %s -> %s = %s, want %s", c.old, c.new, wire.MustJSON(ops), c.want)
		}
	}
}

// tally is a capability the runtime has never heard of: its "tally" events
// add n to its count field, which a mirror shows as {"value": count}.
type tally struct{}

func (tally) Name() string                 { return "tally" }
func (tally) Detect(string) (string, bool) { return "", false }
func (tally) Load(context.Context, *router.Route, string) (*capabilities.Contribution, error) {
	return nil, nil
}

func (tally) MirrorEvent(typ string, data json.RawMessage, current func(string) json.RawMessage) (map[string]json.RawMessage, bool) {
	if typ != "tally" {
		return nil, false
	}
	var d struct {
		N      int
		CallID *string `json:"call_id"`
	}
	var have struct{ Value int }
	if json.Unmarshal(data, &d) != nil || d.CallID != nil {
		return nil, false // not the event as the capability emitted it
	}
	_ = json.Unmarshal(current("count"), &have)
	return map[string]json.RawMessage{"count": wire.MustJSON(map[string]int{"value": have.Value + d.N})}, true
}

func (tally) MirrorField(_ *capabilities.Prepared, field string, raw json.RawMessage) (json.RawMessage, bool) {
	var n int
	if field != "count" || json.Unmarshal(raw, &n) != nil {
		return nil, false
	}
	return wire.MustJSON(map[string]int{"value": n}), true
}

// TestAGUIStateMirror: the shared state follows whatever capability mirrors
// its fields (capabilities.StateMirror), for the run and for a subagent,
// with the field shown as its capability shows it; the subagent's event
// reaches the capability without the identity fields forwarding added.
func TestAGUIStateMirror(t *testing.T) {
	route := &capabilities.Prepared{Fields: []capabilities.Field{{Name: "count", Capability: "tally"}, {Name: "notes"}}}
	a := newAGUIStream("t", "r", "d", aguiFieldsOf(route, []capabilities.Marker{tally{}}))
	got := a.start(nil, thread.State{"count": json.RawMessage(`2`), "notes": json.RawMessage(`[]`)})
	for _, e := range []stream.Event{
		ev("tally", `{"n":3}`),
		stream.Forward(ev("tally", `{"n":4}`), stream.Subagent{CallID: "c/1", Name: "helper", RouteID: "/helper", Depth: 1}),
		stream.Forward(ev("other", `{"n":4}`), stream.Subagent{CallID: "c2", Name: "helper", RouteID: "/helper", Depth: 1}),
		ev("done", `{"output":{"count":9}}`),
	} {
		got = append(got, a.translate(e)...)
	}
	checkEvents(t, got, []string{
		`{"type":"RUN_STARTED","threadId":"t","runId":"r"}`,
		`{"type":"STATE_SNAPSHOT","snapshot":{"count":{"value":2},"notes":[]}}`,
		`{"type":"STATE_DELTA","delta":[{"op":"replace","path":"/count/value","value":5}]}`,
		`{"type":"STATE_DELTA","delta":[{"op":"add","path":"/subagents","value":{"c/1":{"count":{"value":4},"depth":1,"route_id":"/helper","subagent":"helper"}}}]}`,
		`{"type":"STATE_DELTA","delta":[{"op":"replace","path":"/count/value","value":9}]}`,
		`{"type":"RUN_FINISHED","threadId":"t","runId":"r","outcome":{"type":"success"},"result":{"count":9}}`,
	})
}
