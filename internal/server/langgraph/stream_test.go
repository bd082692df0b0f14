package langgraph

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/labstack/echo/v4"

	"github.com/dawn-go/dawn/internal/app"
	"github.com/dawn-go/dawn/internal/server/wire"
	"github.com/dawn-go/dawn/router"
	"github.com/dawn-go/dawn/stream"
	"github.com/dawn-go/dawn/thread"
)

// nestedRun is a run whose subagent (call c1) hands work to its own
// subagent (call c2), as the runner streams it.
var nestedRun = []stream.Event{
	{ID: 1, Type: "tool_call", Data: json.RawMessage(`{"id":"c1","name":"task","input":{"subagent":"researcher","input":"dig"}}`)},
	{ID: 2, Type: "subagent.tool_call", Data: json.RawMessage(`{"id":"c2","name":"task","input":{"subagent":"deep","input":"deeper"},"call_id":"c1","subagent":"researcher","route_id":"/r/subagents/researcher","depth":1}`)},
	{ID: 3, Type: "subagent.chunk", Data: json.RawMessage(`{"data":"found","call_id":"c2","subagent":"deep","route_id":"/r/subagents/researcher/subagents/deep","depth":2}`)},
	{ID: 4, Type: "subagent.plan_update", Data: json.RawMessage(`{"todos":[{"content":"Dig","status":"completed"}],"call_id":"c2","subagent":"deep","route_id":"/r/subagents/researcher/subagents/deep","depth":2}`)},
	{ID: 5, Type: "subagent.tool_result", Data: json.RawMessage(`{"id":"c2","name":"task","output":"found","call_id":"c1","subagent":"researcher","route_id":"/r/subagents/researcher","depth":1}`)},
	{ID: 6, Type: "subagent.chunk", Data: json.RawMessage(`{"data":"done","call_id":"c1","subagent":"researcher","route_id":"/r/subagents/researcher","depth":1}`)},
	{ID: 7, Type: "tool_result", Data: json.RawMessage(`{"id":"c1","name":"task","output":"done"}`)},
	{ID: 8, Type: "chunk", Data: json.RawMessage(`"All done"`)},
	{ID: 9, Type: "done", Data: json.RawMessage(`{"output":{"messages":[` +
		`{"role":"user","content":"hi"},` +
		`{"role":"assistant","content":"","tool_calls":[{"id":"c1","name":"task","input":{"subagent":"researcher","input":"dig"}}]},` +
		`{"role":"tool","content":"done","tool_call_id":"c1","name":"task"},` +
		`{"role":"assistant","content":"All done"}],"todos":[]}}`)},
}

func TestTranslatorSubgraphs(t *testing.T) {
	all := map[string]bool{modeValues: true, modeUpdates: true, modeMessagesTuple: true, modeCustom: true}
	tests := []struct {
		name      string
		modes     map[string]bool
		subgraphs bool
		want      [][]string // parts per event, begin first
	}{
		{
			name: "subgraphs", modes: all, subgraphs: true,
			want: [][]string{
				{"values"},
				{"messages"},
				{"values|tools:c1", "messages|tools:c1"},
				{"values|tools:c1|tools:c2", "messages|tools:c1|tools:c2"},
				{"custom|tools:c1|tools:c2", "values|tools:c1|tools:c2"},
				{"updates|tools:c1", "values|tools:c1", "updates|tools:c1|tools:c2", "values|tools:c1|tools:c2", "messages|tools:c1", "updates|tools:c1", "values|tools:c1"},
				{"messages|tools:c1"},
				{"updates", "values", "updates|tools:c1", "values|tools:c1", "messages", "updates", "values"},
				{"messages"},
				{"updates", "values"},
			},
		},
		{
			name: "no subgraphs", modes: all,
			want: [][]string{
				{"values"}, {"messages"}, nil, nil, {"custom"}, nil, nil, {"updates", "values", "messages", "updates", "values"}, {"messages"}, {"updates", "values"},
			},
		},
		{
			name: "values only", modes: map[string]bool{modeValues: true}, subgraphs: true,
			want: [][]string{
				{"values"}, nil, {"values|tools:c1"}, {"values|tools:c1|tools:c2"}, {"values|tools:c1|tools:c2"}, {"values|tools:c1", "values|tools:c1|tools:c2", "values|tools:c1"}, nil, {"values", "values|tools:c1", "values"}, nil, {"values"},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tr := newTranslator(&app.App{}, lgRunView{
				ThreadID: "t", RunID: "r", RouteID: "/r", Modes: tt.modes, Subgraphs: tt.subgraphs,
				Prefix: []thread.Message{{Role: thread.RoleUser, Content: "hi"}}, Fields: thread.State{},
			})
			got := [][]string{names(tr.begin())}
			var parts []stream.Event
			for _, e := range nestedRun {
				out := tr.feed(e)
				parts = append(parts, out...)
				got = append(got, names(out))
			}
			for i := range got {
				if !slices.Equal(got[i], tt.want[i]) {
					t.Errorf("parts for %s = %q, want %q", eventName(i), got[i], tt.want[i])
				}
			}
			if tt.name != "subgraphs" {
				return
			}
			// The deepest subagent starts from its task and ends with its
			// answer; the custom part carries the Dawn event.
			var first, last struct {
				Messages []lcMessage `json:"messages"`
			}
			subValues := filter(parts, "values|tools:c1|tools:c2")
			_ = json.Unmarshal(subValues[0].Data, &first)
			_ = json.Unmarshal(subValues[len(subValues)-1].Data, &last)
			if len(first.Messages) != 1 || first.Messages[0].Content != "deeper" || first.Messages[0].Type != "human" {
				t.Errorf("the subagent starts from %+v", first.Messages)
			}
			if n := len(last.Messages); n != 2 || last.Messages[1].Content != "found" {
				t.Errorf("the subagent ends with %+v", last.Messages)
			}
			custom := filter(parts, "custom|tools:c1|tools:c2")[0]
			if !strings.Contains(string(custom.Data), `"event":"plan_update"`) {
				t.Errorf("custom part %s", custom.Data)
			}
			var tuple []map[string]any
			_ = json.Unmarshal(filter(parts, "messages|tools:c1|tools:c2")[0].Data, &tuple)
			if tuple[1]["langgraph_checkpoint_ns"] != "tools:c1|tools:c2" {
				t.Errorf("metadata %v", tuple[1])
			}
		})
	}
}

func names(parts []stream.Event) []string {
	var out []string
	for _, p := range parts {
		out = append(out, p.Type)
	}
	return out
}

func filter(parts []stream.Event, typ string) []stream.Event {
	var out []stream.Event
	for _, p := range parts {
		if p.Type == typ {
			out = append(out, p)
		}
	}
	return out
}

func eventName(i int) string {
	if i == 0 {
		return "begin"
	}
	return nestedRun[i-1].Type
}

// TestTranslatorToolsStep: a model step is reported, with the state after
// it, when its tools step begins; a tools step is reported at the result
// of its last call, with the plan changes made during it; a plan change that
// comes after that report is reported on its own, one before any model
// step as the state; the next model step does not report the step again.
func TestTranslatorToolsStep(t *testing.T) {
	all := map[string]bool{modeValues: true, modeUpdates: true}
	tr := newTranslator(&app.App{}, lgRunView{ThreadID: "t", RunID: "r", RouteID: "/r", Modes: all, Fields: thread.State{"todos": json.RawMessage(`[]`)},
		Prefix: []thread.Message{{Role: thread.RoleUser, Content: "hi"}}})
	tr.begin()
	steps := []struct {
		feed stream.Event
		want []string
	}{
		{stream.Event{ID: 1, Type: "plan_update", Data: json.RawMessage(`{"todos":[{"content":"A","status":"pending"}]}`)}, []string{"values"}},
		{stream.Event{ID: 2, Type: "tool_call", Data: json.RawMessage(`{"id":"c1","name":"writeTodos","input":{"todos":[]}}`)}, nil},
		{stream.Event{ID: 3, Type: "tool_call", Data: json.RawMessage(`{"id":"c2","name":"lookup","input":{}}`)}, nil},
		{stream.Event{ID: 4, Type: "tool_result", Data: json.RawMessage(`{"id":"c1","name":"writeTodos","output":{"todos":[]}}`)}, []string{"updates", "values"}},
		{stream.Event{ID: 5, Type: "plan_update", Data: json.RawMessage(`{"todos":[{"content":"A","status":"in_progress"}]}`)}, nil},
		{stream.Event{ID: 6, Type: "tool_result", Data: json.RawMessage(`{"id":"c2","name":"lookup","output":"ok"}`)}, []string{"updates", "values"}},
		{stream.Event{ID: 7, Type: "plan_update", Data: json.RawMessage(`{"todos":[{"content":"A","status":"completed"}]}`)}, []string{"updates", "values"}},
		{stream.Event{ID: 8, Type: "chunk", Data: json.RawMessage(`"ok"`)}, nil},
	}
	var parts []stream.Event
	for i, s := range steps {
		got := tr.feed(s.feed)
		parts = append(parts, got...)
		if !slices.Equal(names(got), s.want) {
			t.Errorf("step %d: parts %q, want %q", i, names(got), s.want)
		}
	}
	// The step's update has both tool messages and the plan as it was
	// after the step.
	var update struct {
		Tools struct {
			Messages []lcMessage         `json:"messages"`
			Todos    []map[string]string `json:"todos"`
		} `json:"tools"`
	}
	_ = json.Unmarshal(filter(parts, "updates")[1].Data, &update)
	if len(update.Tools.Messages) != 2 || len(update.Tools.Todos) != 1 || update.Tools.Todos[0]["status"] != "in_progress" {
		t.Errorf("tools update %s", filter(parts, "updates")[1].Data)
	}
	var v struct {
		Todos []map[string]string `json:"todos"`
	}
	end := filter(tr.feed(stream.Event{ID: 9, Type: "done", Data: json.RawMessage(`{"output":{"messages":[],"todos":[{"content":"A","status":"completed"}]}}`)}), "values")
	_ = json.Unmarshal(end[0].Data, &v)
	if len(v.Todos) != 1 || v.Todos[0]["status"] != "completed" {
		t.Errorf("final todos %v", v.Todos)
	}
}

func TestPlanUpdate(t *testing.T) {
	tests := []struct {
		name         string
		fields       thread.State
		event        string
		todos, plan  string
		changedCount int
	}{
		{"dawn's planning", thread.State{"todos": json.RawMessage(`[]`)}, `{"todos":[{"content":"A","status":"pending"}]}`,
			`[{"content":"A","status":"pending"}]`, ``, 1},
		{"harness", thread.State{"plan": json.RawMessage(`{"state":"draft","items":[],"revisions":[],"pause_reason":"x"}`)},
			`{"todos":[{"id":"s1","content":"A","status":"in_progress"}],"state":"running","goal":"G","current":0,"postconditions":[],"advance":"auto","budget_left":2}`,
			`[{"id":"s1","content":"A","status":"in_progress"}]`,
			`{"advance":"auto","goal":"G","items":[{"id":"s1","content":"A","status":"in_progress"}],"postconditions":[],"revisions":[],"state":"running"}`, 2},
		{"harness event, no plan field", thread.State{}, `{"todos":[],"state":"running"}`, `[]`, ``, 1},
		{"not JSON", thread.State{}, `nope`, ``, ``, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := &lgGraph{fields: tt.fields, changed: thread.State{}}
			planUpdate(g, json.RawMessage(tt.event))
			if got := string(g.fields["todos"]); got != tt.todos {
				t.Errorf("todos = %s, want %s", got, tt.todos)
			}
			if got := string(g.fields["plan"]); tt.plan != "" && got != tt.plan {
				t.Errorf("plan = %s, want %s", got, tt.plan)
			}
			if len(g.changed) != tt.changedCount {
				t.Errorf("changed %v, want %d fields", g.changed, tt.changedCount)
			}
		})
	}
}

func TestWithParams(t *testing.T) {
	route := func(id string, segs ...router.Segment) *router.Route {
		r := &router.Route{ID: id, Segments: segs}
		for _, s := range segs {
			if s.Kind != router.Static {
				r.Params = append(r.Params, s.Value)
			}
		}
		return r
	}
	support := route("/support/[tenant]", router.Segment{Kind: router.Static, Value: "support"}, router.Segment{Kind: router.Dynamic, Value: "tenant"})
	docs := route("/docs/[[...slug]]", router.Segment{Kind: router.Static, Value: "docs"}, router.Segment{Kind: router.OptionalCatchAll, Value: "slug"})
	tests := []struct {
		r             *router.Route
		path          string
		configurable  map[string]any
		context, want string
	}{
		{support, "/support/[tenant]", map[string]any{"tenant": "acme"}, "", "/support/acme"},
		{support, "/support/[tenant]", nil, "globex", "/support/globex"},
		{support, "/support/[tenant]", nil, "", "/support/[tenant]"}, // no param: the id, as Dawn runs it
		{support, "/support/initech", map[string]any{"tenant": "acme"}, "", "/support/initech"},
		{support, "/support/[tenant]", map[string]any{"tenant": 7}, "", "/support/[tenant]"},
		{docs, "/docs/[[...slug]]", nil, "", "/docs"},
		{docs, "/docs/[[...slug]]", map[string]any{"slug": "a/b"}, "", "/docs/a/b"},
	}
	for _, tt := range tests {
		ctx := map[string]any{}
		if tt.context != "" {
			ctx["tenant"] = tt.context
		}
		if got := withParams(tt.r, tt.path, tt.configurable, ctx); got != tt.want {
			t.Errorf("withParams(%s, %v, %v) = %s, want %s", tt.path, tt.configurable, ctx, got, tt.want)
		}
	}
}

// TestTranslatorEnds: a run that parked ends with the model's held-back
// call as the agent's update, the state, then __interrupt__ in values and
// updates; a run a crash cut off (done says interrupted, with an error and
// no interrupts) ends with an error part and no __interrupt__.
func TestTranslatorEnds(t *testing.T) {
	all := map[string]bool{modeValues: true, modeUpdates: true}
	call := stream.Event{ID: 1, Type: "tool_call", Data: json.RawMessage(`{"id":"c1","name":"release","input":{}}`)}
	for _, tt := range []struct {
		name, done string
		want       []string
	}{
		{"parked", `{"output":{"interrupted":true,"interrupts":[{"interruptId":"perm-1","type":"permission-request","kind":"tool","detail":{},"callId":"c1"}]}}`,
			[]string{"updates", "values", "values", "updates"}},
		{"cut off", `{"output":{"error":"the server stopped","interrupted":true}}`, []string{"error"}},
	} {
		tr := newTranslator(&app.App{}, lgRunView{ThreadID: "t", RunID: "r", RouteID: "/r", Modes: all, Prefix: []thread.Message{{Role: thread.RoleUser, Content: "hi"}}})
		tr.begin()
		tr.feed(call)
		parts := tr.feed(stream.Event{ID: 2, Type: "done", Data: json.RawMessage(tt.done)})
		if !slices.Equal(names(parts), tt.want) {
			t.Errorf("%s: parts %q, want %q", tt.name, names(parts), tt.want)
			continue
		}
		if tt.name == "parked" {
			if got := string(parts[2].Data); got != `{"__interrupt__":[{"value":{"interruptId":"perm-1","type":"permission-request","kind":"tool","detail":{},"callId":"c1"},"id":"perm-1"}]}` {
				t.Errorf("interrupt values part %s", got)
			}
			if string(parts[3].Data) != string(parts[2].Data) {
				t.Errorf("interrupt updates part %s", parts[3].Data)
			}
		}
	}
}

// planRun is a run whose plan changes before its first model step, after a
// tools step's last result and in the middle of a tools step, as the
// runner streams it.
var planRun = []stream.Event{
	{ID: 1, Type: "plan_update", Data: json.RawMessage(`{"todos":[{"content":"A","status":"pending"}]}`)},
	{ID: 2, Type: "tool_call", Data: json.RawMessage(`{"id":"c1","name":"writeTodos","input":{"todos":[]}}`)},
	{ID: 3, Type: "model_call", Data: json.RawMessage(`{"model":"m","duration_ms":1}`)},
	{ID: 4, Type: "tool_result", Data: json.RawMessage(`{"id":"c1","name":"writeTodos","output":{"todos":[]}}`)},
	{ID: 5, Type: "plan_update", Data: json.RawMessage(`{"todos":[{"content":"A","status":"in_progress"}]}`)},
	{ID: 6, Type: "chunk", Data: json.RawMessage(`"Looking"`)},
	{ID: 7, Type: "tool_call", Data: json.RawMessage(`{"id":"c2","name":"writeTodos","input":{"todos":[]}}`)},
	{ID: 8, Type: "tool_call", Data: json.RawMessage(`{"id":"c3","name":"lookup","input":{}}`)},
	{ID: 9, Type: "tool_result", Data: json.RawMessage(`{"id":"c2","name":"writeTodos","output":{"todos":[]}}`)},
	{ID: 10, Type: "plan_update", Data: json.RawMessage(`{"todos":[{"content":"A","status":"completed"}]}`)},
	{ID: 11, Type: "tool_result", Data: json.RawMessage(`{"id":"c3","name":"lookup","output":"fine"}`)},
	{ID: 12, Type: "chunk", Data: json.RawMessage(`"All fine"`)},
	{ID: 13, Type: "done", Data: json.RawMessage(`{"output":{"messages":[` +
		`{"role":"user","content":"hi"},` +
		`{"role":"assistant","content":"","tool_calls":[{"id":"c1","name":"writeTodos","input":{"todos":[]}}]},` +
		`{"role":"tool","content":"{\"todos\":[]}","tool_call_id":"c1","name":"writeTodos"},` +
		`{"role":"assistant","content":"Looking","tool_calls":[{"id":"c2","name":"writeTodos","input":{"todos":[]}},{"id":"c3","name":"lookup","input":{}}]},` +
		`{"role":"tool","content":"{\"todos\":[]}","tool_call_id":"c2","name":"writeTodos"},` +
		`{"role":"tool","content":"fine","tool_call_id":"c3","name":"lookup"},` +
		`{"role":"assistant","content":"All fine"}],"todos":[{"content":"A","status":"completed"}]}}`)},
}

// TestLangGraphStreamIsDeterministic: the parts of a run are a function of
// its events: its live log and its stored events give the same parts, and a
// reconnect after any event id gets exactly the parts the first stream sent
// after that id, with the same ids. (TestLangGraphWaitingRunReconnects
// covers a reader that catches up with a waiting run.)
func TestLangGraphStreamIsDeterministic(t *testing.T) {
	for name, run := range map[string][]stream.Event{"plan": planRun, "subagents": nestedRun} {
		t.Run(name, func(t *testing.T) {
			log := stream.NewLog()
			for _, e := range run {
				log.Publish(e)
			}
			log.Close()
			live := writeParts(t, log.Subscribe(0), fromStart)
			replayed := writeParts(t, wire.Replay(run), fromStart)
			if !slices.EqualFunc(live, replayed, samePart) {
				t.Fatalf("live parts %q\nreplayed %q", names(live), names(replayed))
			}
			for i, p := range live {
				if p.ID == 0 {
					continue
				}
				tail := writeParts(t, wire.Replay(run), p.ID)
				if !slices.EqualFunc(tail, live[i+1:], samePart) {
					t.Errorf("after id %d: %q, want %q", p.ID, names(tail), names(live[i+1:]))
				}
			}
		})
	}
}

// writeParts writes the LangGraph stream of src after event id after, in
// every mode with subgraphs, and returns its parts after the metadata.
func writeParts(t *testing.T, src wire.EventSource, after int64) []stream.Event {
	t.Helper()
	modes := map[string]bool{modeValues: true, modeUpdates: true, modeMessages: true, modeMessagesTuple: true, modeCustom: true}
	tr := newTranslator(&app.App{}, lgRunView{
		ThreadID: "t", RunID: "r", RouteID: "/r", Modes: modes, Subgraphs: true,
		Prefix: []thread.Message{{Role: thread.RoleUser, Content: "hi"}}, Fields: thread.State{"todos": json.RawMessage(`[]`)},
	})
	rec := httptest.NewRecorder()
	c := echo.New().NewContext(httptest.NewRequest(http.MethodGet, "/", nil), rec)
	if err := (&dialect{}).writeLG(c, src, tr, "t", "r", after, nil); err != nil {
		t.Fatal(err)
	}
	var parts []stream.Event
	r := stream.NewReader(rec.Body)
	for {
		p, err := r.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("SSE does not parse after %d parts: %v", len(parts), err)
		}
		parts = append(parts, p)
	}
	if len(parts) == 0 || parts[0].Type != "metadata" {
		t.Fatalf("parts %q do not start with metadata", names(parts))
	}
	return parts[1:]
}

func samePart(a, b stream.Event) bool {
	return a.ID == b.ID && a.Type == b.Type && string(a.Data) == string(b.Data)
}

// dawnNestedRun is nestedRun as the runner streams it now, in Dawn's
// subagent shapes: each subagent's events framed by subagent.start and
// subagent.end, its text as subagent.message {chunk}, its tool calls
// naming the tool as "tool" alone.
var dawnNestedRun = []stream.Event{
	nestedRun[0],
	{ID: 2, Type: "subagent.start", Data: json.RawMessage(`{"call_id":"c1","subagent":"researcher","route_id":"/r/subagents/researcher","depth":1}`)},
	{ID: 3, Type: "subagent.tool_call", Data: json.RawMessage(`{"id":"c2","tool":"task","input":{"subagent":"deep","input":"deeper"},"call_id":"c1","subagent":"researcher","route_id":"/r/subagents/researcher","depth":1}`)},
	{ID: 4, Type: "subagent.start", Data: json.RawMessage(`{"call_id":"c2","subagent":"deep","route_id":"/r/subagents/researcher/subagents/deep","depth":2}`)},
	{ID: 5, Type: "subagent.message", Data: json.RawMessage(`{"chunk":"found","call_id":"c2","subagent":"deep","route_id":"/r/subagents/researcher/subagents/deep","depth":2}`)},
	{ID: 6, Type: "subagent.plan_update", Data: nestedRun[3].Data},
	{ID: 7, Type: "subagent.end", Data: json.RawMessage(`{"final_message":"found","call_id":"c2","subagent":"deep","route_id":"/r/subagents/researcher/subagents/deep","depth":2}`)},
	{ID: 8, Type: "subagent.tool_result", Data: json.RawMessage(`{"id":"c2","tool":"task","output":"found","call_id":"c1","subagent":"researcher","route_id":"/r/subagents/researcher","depth":1}`)},
	{ID: 9, Type: "subagent.message", Data: json.RawMessage(`{"chunk":"done","call_id":"c1","subagent":"researcher","route_id":"/r/subagents/researcher","depth":1}`)},
	{ID: 10, Type: "subagent.end", Data: json.RawMessage(`{"final_message":"done","call_id":"c1","subagent":"researcher","route_id":"/r/subagents/researcher","depth":1}`)},
	nestedRun[6], nestedRun[7], nestedRun[8],
}

// TestTranslatorReadsDawnSubagentEvents: a run streamed in Dawn's
// subagent shapes gives the LangGraph parts a run in the earlier shapes
// (which logs recorded before still hold) gives, byte for byte, in every
// mode: start and end add no part, subagent.message is the subagent's
// text, and a tool named "tool" is the tool.
func TestTranslatorReadsDawnSubagentEvents(t *testing.T) {
	all := map[string]bool{modeValues: true, modeUpdates: true, modeMessagesTuple: true, modeCustom: true}
	for _, subgraphs := range []bool{true, false} {
		parts := func(run []stream.Event) []string {
			tr := newTranslator(&app.App{}, lgRunView{
				ThreadID: "t", RunID: "r", RouteID: "/r", Modes: all, Subgraphs: subgraphs,
				Prefix: []thread.Message{{Role: thread.RoleUser, Content: "hi"}}, Fields: thread.State{},
			})
			var out []string
			for _, p := range tr.begin() {
				out = append(out, p.Type+" "+string(p.Data))
			}
			for _, e := range run {
				for _, p := range tr.feed(e) {
					out = append(out, p.Type+" "+string(p.Data))
				}
			}
			return out
		}
		want, got := parts(nestedRun), parts(dawnNestedRun)
		if !slices.Equal(got, want) {
			t.Errorf("subgraphs %v: Dawn's shapes give parts\n%s\nwant\n%s", subgraphs, strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
	}
}
