package capabilities

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/dawn-go/dawn/router"
)

func TestPrepareErrors(t *testing.T) {
	const id = "/support/[tenant]"
	withTool := func(name string) fakeMarker {
		m := checklist()
		m.contrib.Tools = []Tool{namedTool(name)}
		m.contrib.Fields = nil
		return m
	}
	other := withTool("writeChecklist")
	other.name = "other"
	other.file = "other.md"
	tests := []struct {
		name     string
		files    map[string]string
		markers  []Marker
		appTools []AppTool
		tools    []string // agent.md tools:
		known    bool
		// want are the exact error messages; {dir} stands for the route folder.
		want []string
	}{
		{
			name:     "capability tool vs shared app tool",
			files:    map[string]string{"checklist.md": ""},
			markers:  []Marker{checklist()},
			appTools: []AppTool{{Tool: namedTool("writeChecklist")}},
			want:     []string{`route /support/[tenant]: capability conflict: capability "checklist" (marker file {dir}/checklist.md) contributes tool "writeChecklist", and the app's shared tool "writeChecklist" (dawn.Tool) has the same name; rename your tool or remove checklist.md`},
		},
		{
			name:     "capability tool vs scoped app tool",
			files:    map[string]string{"checklist.md": ""},
			markers:  []Marker{checklist()},
			appTools: []AppTool{{Tool: namedTool("writeChecklist"), Route: id}},
			want:     []string{`route /support/[tenant]: capability conflict: capability "checklist" (marker file {dir}/checklist.md) contributes tool "writeChecklist", and the app's tool "writeChecklist" scoped to /support/[tenant] (dawn.RouteTool) has the same name; rename your tool or remove checklist.md`},
		},
		{
			name:    "capability field vs state.yaml field",
			files:   map[string]string{"checklist.md": "", "state.yaml": "checklist:\n  type: array\n"},
			markers: []Marker{checklist()},
			want:    []string{`route /support/[tenant]: capability conflict: capability "checklist" (marker file {dir}/checklist.md) contributes state field "checklist", which {dir}/state.yaml also declares; remove the field from state.yaml or remove checklist.md`},
		},
		{
			name:     "app tool named task",
			appTools: []AppTool{{Tool: namedTool("task")}},
			want:     []string{`route /support/[tenant]: the app's shared tool "task" (dawn.Tool) is named "task", which is reserved for Dawn's built-in tools (readFile, writeFile, editFile, listDir, glob, readSkill, readSkillFile, remember, recall, readToolOutput, task, writeTodos, runBash); rename the tool`},
		},
		{
			name:     "scoped app tool named task",
			appTools: []AppTool{{Tool: namedTool("task"), Route: id}},
			want:     []string{`route /support/[tenant]: the app's tool "task" scoped to /support/[tenant] (dawn.RouteTool) is named "task", which is reserved for Dawn's built-in tools (readFile, writeFile, editFile, listDir, glob, readSkill, readSkillFile, remember, recall, readToolOutput, task, writeTodos, runBash); rename the tool`},
		},
		{
			name:     "two app tools with one name",
			appTools: []AppTool{{Tool: namedTool("lookup")}, {Tool: namedTool("lookup"), Route: id}},
			want:     []string{`route /support/[tenant]: the app's shared tool "lookup" (dawn.Tool) and the app's tool "lookup" scoped to /support/[tenant] (dawn.RouteTool) have the same name; rename one`},
		},
		{
			name:    "marker load error",
			files:   map[string]string{"checklist.md": ""},
			markers: []Marker{fakeMarker{name: "checklist", file: "checklist.md", loadErr: errors.New("checklist.md is not valid")}},
			want:    []string{`route /support/[tenant]: [checklist#load] checklist.md is not valid`},
		},
		{
			name:    "marker load panic",
			files:   map[string]string{"checklist.md": ""},
			markers: []Marker{fakeMarker{name: "checklist", file: "checklist.md", loadPanic: "index out of range"}},
			want:    []string{`route /support/[tenant]: [checklist#load] panic: index out of range`},
		},
		{
			name:    "marker detect panic",
			markers: []Marker{fakeMarker{name: "checklist", file: "checklist.md", detectPanic: fmt.Errorf("bad dir")}},
			want:    []string{`route /support/[tenant]: [checklist#detect] panic: bad dir`},
		},
		{
			name:    "two capabilities contribute one tool",
			files:   map[string]string{"checklist.md": "", "other.md": ""},
			markers: []Marker{withTool("writeChecklist"), other},
			want:    []string{`route /support/[tenant]: [other#apply] capability "other" (marker file {dir}/other.md) contributes tool "writeChecklist", which another capability or the runtime already provides`},
		},
		{
			name:    "capability contributes task",
			files:   map[string]string{"checklist.md": ""},
			markers: []Marker{withTool("task")},
			want:    []string{`route /support/[tenant]: [checklist#apply] capability "checklist" (marker file {dir}/checklist.md) contributes tool "task", which another capability or the runtime already provides`},
		},
		{
			name:  "agent.md lists an unknown tool",
			tools: []string{"lookup"},
			known: true,
			want:  []string{`route /support/[tenant]: {dir}/agent.md lists tool "lookup" in tools:, but no such tool is registered; register it with dawn.Tool or dawn.RouteTool, or remove it from the list`},
		},
		{
			name:    "bad state.yaml",
			files:   map[string]string{"state.yaml": "messages:\n  type: array\n"},
			markers: []Marker{checklist()},
			want:    []string{`route /support/[tenant]: {dir}/state.yaml:1: field "messages": "messages" is kept by the runtime; choose another name`},
		},
		{
			name:     "every problem reported together",
			files:    map[string]string{"checklist.md": "", "state.yaml": "checklist:\n  type: array\n"},
			markers:  []Marker{fakeMarker{name: "broken", file: "checklist.md", loadErr: errors.New("boom")}, checklist()},
			appTools: []AppTool{{Tool: namedTool("writeChecklist")}, {Tool: namedTool("task")}},
			want: []string{
				`route /support/[tenant]: the app's shared tool "task" (dawn.Tool) is named "task", which is reserved for Dawn's built-in tools (readFile, writeFile, editFile, listDir, glob, readSkill, readSkillFile, remember, recall, readToolOutput, task, writeTodos, runBash); rename the tool`,
				`route /support/[tenant]: [broken#load] boom`,
				`route /support/[tenant]: capability conflict: capability "checklist" (marker file {dir}/checklist.md) contributes tool "writeChecklist", and the app's shared tool "writeChecklist" (dawn.Tool) has the same name; rename your tool or remove checklist.md`,
				`route /support/[tenant]: capability conflict: capability "checklist" (marker file {dir}/checklist.md) contributes state field "checklist", which {dir}/state.yaml also declares; remove the field from state.yaml or remove checklist.md`,
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			route := routeDir(t, id, tt.files)
			route.Agent.Tools = tt.tools
			p, err := Prepare(context.Background(), route, Input{Markers: tt.markers, AppTools: tt.appTools, AppToolsKnown: tt.known})
			if err == nil {
				t.Fatalf("Prepare succeeded (%d tools), want errors", len(p.Tools))
			}
			if p != nil {
				t.Error("Prepare returned a route with its errors")
			}
			var want []string
			for _, w := range tt.want {
				want = append(want, strings.ReplaceAll(w, "{dir}", route.Dir))
			}
			if got := errorList(err); !slices.Equal(got, want) {
				t.Errorf("errors\n got %q\nwant %q", got, want)
			}
			var prepErr *Error
			if !errors.As(err, &prepErr) || prepErr.Route != id {
				t.Errorf("error is not an *Error for route %s: %#v", id, err)
			}
		})
	}
}

func TestPrepareErrorPhases(t *testing.T) {
	route := routeDir(t, "/r", map[string]string{"checklist.md": ""})
	_, err := Prepare(context.Background(), route, Input{Markers: []Marker{fakeMarker{name: "checklist", file: "checklist.md", loadPanic: 42}}})
	var prepErr *Error
	if !errors.As(err, &prepErr) {
		t.Fatalf("error %v is not an *Error", err)
	}
	if prepErr.Capability != "checklist" || prepErr.Phase != "load" || prepErr.Msg != "panic: 42" {
		t.Errorf("error = %+v", prepErr)
	}
}

func TestPrepareContributions(t *testing.T) {
	route := routeDir(t, "/support/[tenant]", map[string]string{"checklist.md": "", "state.yaml": "tier:\n  type: string\n  default: free\n"})
	var loaded []string
	m := checklist()
	m.loaded = &loaded
	m.contrib.Warnings = []string{"checklist.md is long"}
	absent := fakeMarker{name: "absent", file: "absent.md", loadErr: errors.New("must not load")}
	p, err := Prepare(context.Background(), route, Input{
		Markers:  []Marker{absent, m},
		AppTools: []AppTool{{Tool: namedTool("search")}},
	})
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{filepath.Join(route.Dir, "checklist.md")}; !slices.Equal(loaded, want) {
		t.Errorf("Load called with %q, want %q", loaded, want)
	}
	if got := toolNames(p.Tools); !slices.Equal(got, []string{"search", "writeChecklist"}) {
		t.Errorf("tools = %q, want app tools then capability tools", got)
	}
	var fields []string
	for _, f := range p.Fields {
		fields = append(fields, f.Name+"/"+f.Capability)
	}
	if !slices.Equal(fields, []string{"tier/", "checklist/checklist"}) {
		t.Errorf("fields = %q", fields)
	}
	if f, _ := p.Field("checklist"); f.Source != filepath.Join(route.Dir, "checklist.md") {
		t.Errorf("capability field source = %q, want the marker file", f.Source)
	}
	if len(p.Prompts) != 1 || len(p.Transformers) != 1 {
		t.Errorf("prompts %d, transformers %d", len(p.Prompts), len(p.Transformers))
	}
	if len(p.Capabilities) != 1 || p.Capabilities[0].Name != "checklist" || p.Capabilities[0].File != filepath.Join(route.Dir, "checklist.md") {
		t.Errorf("capabilities = %+v", p.Capabilities)
	}
	if want := []string{"route /support/[tenant]: [checklist] checklist.md is long"}; !slices.Equal(p.Warnings, want) {
		t.Errorf("warnings = %q, want %q", p.Warnings, want)
	}
	state := p.InitialState()
	if string(state["tier"]) != `"free"` || string(state["checklist"]) != `[]` {
		t.Errorf("initial state = %v", state)
	}
	if p.Tool("missing") != nil {
		t.Error("Tool(missing) is not nil")
	}
}

func TestPrepareLoadReturnsNil(t *testing.T) {
	route := routeDir(t, "/r", map[string]string{"x.md": ""})
	p, err := Prepare(context.Background(), route, Input{Markers: []Marker{nilMarker{}}})
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Capabilities) != 1 {
		t.Errorf("capabilities = %+v", p.Capabilities)
	}
}

type nilMarker struct{}

func (nilMarker) Name() string                                                       { return "nil" }
func (nilMarker) Detect(string) (string, bool)                                       { return "x.md", true }
func (nilMarker) Load(context.Context, *router.Route, string) (*Contribution, error) { return nil, nil }

func TestPrepareAppTools(t *testing.T) {
	const id = "/support/[tenant]"
	tests := []struct {
		name         string
		appTools     []AppTool
		agentTools   []string
		known        bool
		wantTools    []string
		wantWarnings []string
	}{
		{
			name:      "shared and scoped to this route",
			appTools:  []AppTool{{Tool: namedTool("search")}, {Tool: namedTool("refund"), Route: id}},
			wantTools: []string{"search", "refund", "writeChecklist"},
		},
		{
			name:      "scoped to another route left out",
			appTools:  []AppTool{{Tool: namedTool("search")}, {Tool: namedTool("publish"), Route: "/blog"}},
			wantTools: []string{"search", "writeChecklist"},
		},
		{
			name:      "same name scoped to different routes",
			appTools:  []AppTool{{Tool: namedTool("lookup"), Route: "/blog"}, {Tool: namedTool("lookup"), Route: id}},
			wantTools: []string{"lookup", "writeChecklist"},
		},
		{
			name:       "agent.md tools list keeps only those",
			appTools:   []AppTool{{Tool: namedTool("search")}, {Tool: namedTool("refund"), Route: id}},
			agentTools: []string{"refund"},
			wantTools:  []string{"refund", "writeChecklist"},
		},
		{
			name:       "agent.md may list a capability tool",
			appTools:   []AppTool{{Tool: namedTool("search")}},
			agentTools: []string{"writeChecklist"},
			known:      true,
			wantTools:  []string{"writeChecklist"},
		},
		{
			name:         "unknown listed tool is a warning when the app's tools are not known",
			appTools:     []AppTool{{Tool: namedTool("search")}},
			agentTools:   []string{"search", "lookup"},
			wantTools:    []string{"search", "writeChecklist"},
			wantWarnings: []string{`route /support/[tenant]: {dir}/agent.md lists tool "lookup" in tools:, but no such tool is registered; register it with dawn.Tool or dawn.RouteTool, or remove it from the list (ignore this if the app registers it in Go: run the app's own binary to check)`},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			route := routeDir(t, id, map[string]string{"checklist.md": ""})
			route.Agent.Tools = tt.agentTools
			p, err := Prepare(context.Background(), route, Input{Markers: []Marker{checklist()}, AppTools: tt.appTools, AppToolsKnown: tt.known})
			if err != nil {
				t.Fatal(err)
			}
			if got := toolNames(p.Tools); !slices.Equal(got, tt.wantTools) {
				t.Errorf("tools = %q, want %q", got, tt.wantTools)
			}
			var want []string
			for _, w := range tt.wantWarnings {
				want = append(want, strings.ReplaceAll(w, "{dir}", route.Dir))
			}
			if !slices.Equal(p.Warnings, want) {
				t.Errorf("warnings\n got %q\nwant %q", p.Warnings, want)
			}
		})
	}
}

func toolNames(tools []Tool) []string {
	var names []string
	for _, t := range tools {
		names = append(names, t.Spec().Name)
	}
	return names
}

func TestErrorString(t *testing.T) {
	tests := []struct {
		err  Error
		want string
	}{
		{Error{Route: "/r", Msg: "m"}, "route /r: m"},
		{Error{Route: "/r", Capability: "planning", Phase: "load", Msg: "m"}, "route /r: [planning#load] m"},
		{Error{Route: "/r", Capability: "planning", Phase: "conflict", Msg: "m"}, "route /r: capability conflict: m"},
	}
	for _, tt := range tests {
		if got := tt.err.Error(); got != tt.want {
			t.Errorf("got %q, want %q", got, tt.want)
		}
	}
}

// remoteSub is a RemoteSubagent that is never run.
type remoteSub string

func (r remoteSub) Address() string { return string(r) }

func (remoteSub) Run(context.Context, RemoteTask) (string, error) { return "", nil }

// TestRemoteSubagentNames: a capability's remote subagent may not take
// the name of a subagent route or of another capability's.
func TestRemoteSubagentNames(t *testing.T) {
	const id = "/lead"
	give := func(name, file string) fakeMarker {
		return fakeMarker{name: name, file: file, contrib: Contribution{RemoteSubagents: map[string]RemoteSubagent{"pricing": remoteSub("http://h/card")}}}
	}
	route := routeDir(t, id, map[string]string{"a.md": "", "b.md": ""})
	route.Subagents = map[string]string{"pricing": "/lead/subagents/pricing"}
	_, err := Prepare(context.Background(), route, Input{Markers: []Marker{give("one", "a.md")}})
	want := `route /lead: capability conflict: ` + filepath.Join(route.Dir, "a.md") + ` names subagent "pricing", and so does the subagent route /lead/subagents/pricing; keep one`
	if got := errorList(err); !slices.Equal(got, []string{want}) {
		t.Errorf("route subagent: %q; want %q", got, want)
	}
	route.Subagents = nil
	_, err = Prepare(context.Background(), route, Input{Markers: []Marker{give("one", "a.md"), give("two", "b.md")}})
	want = `route /lead: [two#apply] ` + filepath.Join(route.Dir, "b.md") + ` names subagent "pricing", which another capability already gives`
	if got := errorList(err); !slices.Equal(got, []string{want}) {
		t.Errorf("two capabilities: %q; want %q", got, want)
	}
	p, err := Prepare(context.Background(), route, Input{Markers: []Marker{give("one", "a.md")}})
	if err != nil || p.RemoteSubagents["pricing"].Address() != "http://h/card" {
		t.Errorf("one capability: %v, %+v", err, p)
	}
}
