package router

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestDiscoverRoutes(t *testing.T) {
	dir := writeApp(t, map[string]string{
		"agent.md":                                                "Root prompt.",
		"dawn.yaml":                                               "model: offline\n",
		"support/[tenant]/agent.md":                               "---\nmodel: offline\ntools: [lookup]\n---\nHelp the tenant.\n",
		"support/[tenant]/plan.md":                                "- [ ] Step 1\n",
		"docs/[...slug]/agent.md":                                 agentMD,
		"files/[[...path]]/agent.md":                              agentMD,
		"(marketing)/blog/agent.md":                               agentMD,
		"(marketing)/(inner)/about/agent.md":                      agentMD,
		"research/agent.md":                                       agentMD,
		"research/subagents/researcher/agent.md":                  agentMD,
		"research/subagents/researcher/subagents/critic/agent.md": agentMD,
		"research/subagents/notes.md":                             "not a route",
		"support/[tenant]/subagents/helper/agent.md":              agentMD,
		"loose/subagents/x/agent.md":                              agentMD, // no route above: a plain agent
		"notes/readme.md":                                         "no agent.md here",
		"_drafts/wip/agent.md":                                    agentMD,
		".hidden/agent.md":                                        agentMD,
		"node_modules/pkg/agent.md":                               agentMD,
		"blog2/_private/agent.md":                                 agentMD,
	})
	tree, err := Discover(dir)
	if err != nil {
		t.Fatalf("Discover() error = %v", err)
	}
	if tree.Dir != dir {
		t.Errorf("Dir = %q, want %q", tree.Dir, dir)
	}
	type want struct {
		id, relDir, kind, parent string
		params                   []string
		subagents                map[string]string
	}
	wants := []want{
		{id: "/", relDir: "", kind: KindAgent},
		{id: "/about", relDir: "(marketing)/(inner)/about", kind: KindAgent},
		{id: "/blog", relDir: "(marketing)/blog", kind: KindAgent},
		{id: "/docs/[...slug]", relDir: "docs/[...slug]", kind: KindAgent, params: []string{"slug"}},
		{id: "/files/[[...path]]", relDir: "files/[[...path]]", kind: KindAgent, params: []string{"path"}},
		{id: "/loose/subagents/x", relDir: "loose/subagents/x", kind: KindAgent},
		{id: "/research", relDir: "research", kind: KindAgent, subagents: map[string]string{"researcher": "/research/subagents/researcher"}},
		{id: "/research/subagents/researcher", relDir: "research/subagents/researcher", kind: KindSubagent, parent: "/research",
			subagents: map[string]string{"critic": "/research/subagents/researcher/subagents/critic"}},
		{id: "/research/subagents/researcher/subagents/critic", relDir: "research/subagents/researcher/subagents/critic", kind: KindSubagent, parent: "/research/subagents/researcher"},
		{id: "/support/[tenant]", relDir: "support/[tenant]", kind: KindAgent, params: []string{"tenant"},
			subagents: map[string]string{"helper": "/support/[tenant]/subagents/helper"}},
		{id: "/support/[tenant]/subagents/helper", relDir: "support/[tenant]/subagents/helper", kind: KindSubagent, parent: "/support/[tenant]", params: []string{"tenant"}},
	}
	if len(tree.Routes) != len(wants) {
		var ids []string
		for _, r := range tree.Routes {
			ids = append(ids, r.ID)
		}
		t.Fatalf("got %d routes %q, want %d", len(ids), ids, len(wants))
	}
	for i, w := range wants {
		r := tree.Routes[i]
		if r.ID != w.id || r.RelDir != w.relDir || r.Kind != w.kind || r.Parent != w.parent ||
			!reflect.DeepEqual(r.Params, w.params) || !reflect.DeepEqual(r.Subagents, w.subagents) {
			t.Errorf("route %d = {ID:%q RelDir:%q Kind:%q Parent:%q Params:%q Subagents:%v}, want %+v",
				i, r.ID, r.RelDir, r.Kind, r.Parent, r.Params, r.Subagents, w)
		}
		if wantDir := filepath.Join(dir, filepath.FromSlash(w.relDir)); r.Dir != wantDir {
			t.Errorf("route %s Dir = %q, want %q", r.ID, r.Dir, wantDir)
		}
		if r.Agent.File != filepath.Join(r.Dir, "agent.md") {
			t.Errorf("route %s Agent.File = %q", r.ID, r.Agent.File)
		}
		if tree.Route(w.id) != r {
			t.Errorf("Route(%q) did not return the route", w.id)
		}
	}
	support := tree.Route("/support/[tenant]")
	if support.Agent.Prompt != "Help the tenant." || support.Agent.Model != "offline" || !reflect.DeepEqual(support.Agent.Tools, []string{"lookup"}) {
		t.Errorf("support agent = %+v", support.Agent)
	}
	if got := tree.Route("/").Agent.Prompt; got != "Root prompt." {
		t.Errorf("root prompt = %q", got)
	}
	if want := []Segment{{Static, "support"}, {Dynamic, "tenant"}}; !reflect.DeepEqual(support.Segments, want) {
		t.Errorf("segments = %+v, want %+v", support.Segments, want)
	}
	if tree.Route("/nope") != nil {
		t.Error("Route(/nope) is not nil")
	}
}

func TestDiscoverProblems(t *testing.T) {
	tests := []struct {
		name      string
		files     map[string]string
		wantErrs  []string // each must appear in the joined error
		problems  int      // how many problems
		wantIDs   []string // the routes that are still in the tree
		wantRoute string   // Problem.Route of the first problem, when set
	}{
		{
			name:     "duplicate ids name both folders",
			files:    map[string]string{"(a)/x/agent.md": agentMD, "(b)/x/agent.md": agentMD, "y/agent.md": agentMD},
			wantErrs: []string{"(a)/x: route id /x is also the id of folder ", "(b)/x: route id /x is also the id of folder ", "(group)"},
			problems: 2,
			wantIDs:  []string{"/y"},
		},
		{
			name:     "group at the root clashes with the root route",
			files:    map[string]string{"agent.md": agentMD, "(a)/agent.md": agentMD},
			wantErrs: []string{"route id / is also the id of folder "},
			problems: 2,
		},
		{
			name:     "malformed folder names are named once each",
			files:    map[string]string{"[bad/agent.md": agentMD, "[bad/deeper/agent.md": agentMD, "a[b]/agent.md": agentMD, "ok/agent.md": agentMD},
			wantErrs: []string{`[bad: folder name "[bad"`, `a[b]: folder name "a[b]"`, "accepted forms"},
			problems: 2,
			wantIDs:  []string{"/ok"},
		},
		{
			name:     "optional non-catch-all",
			files:    map[string]string{"x/[[id]]/agent.md": agentMD},
			wantErrs: []string{"[[id]]", "write [[...id]]"},
			problems: 1,
		},
		{
			name:      "unknown front matter key names the key and the file",
			files:     map[string]string{"s/agent.md": "---\ntemprature: 1\n---\nHi", "ok/agent.md": agentMD},
			wantErrs:  []string{filepath.Join("s", "agent.md") + `:2: unknown front matter key "temprature"`, "allowed keys"},
			problems:  1,
			wantIDs:   []string{"/ok"},
			wantRoute: "/s",
		},
		{
			name:     "unterminated front matter names the file",
			files:    map[string]string{"s/agent.md": "---\nmodel: x\n"},
			wantErrs: []string{filepath.Join("s", "agent.md") + ":1: ", "no closing"},
			problems: 1,
		},
		{
			name:     "param used twice",
			files:    map[string]string{"[id]/x/[id]/agent.md": agentMD},
			wantErrs: []string{`route /[id]/x/[id] uses the param "id" twice`},
			problems: 1,
		},
		{
			name:     "catch-all not last",
			files:    map[string]string{"docs/[...slug]/edit/agent.md": agentMD, "docs/[...slug]/agent.md": agentMD},
			wantErrs: []string{"catch-all [...slug] must be the last part"},
			problems: 1,
			wantIDs:  []string{"/docs/[...slug]"},
		},
		{
			name:     "two param names for one pattern",
			files:    map[string]string{"a/[x]/agent.md": agentMD, "a/[y]/agent.md": agentMD, "a/b/agent.md": agentMD},
			wantErrs: []string{"route /a/[x] matches the same paths as route /a/[y]", "route /a/[y] matches the same paths as route /a/[x]"},
			problems: 2,
			wantIDs:  []string{"/a/b"},
		},
		{
			name:     "subagent folder named as a param",
			files:    map[string]string{"r/agent.md": agentMD, "r/subagents/[x]/agent.md": agentMD},
			wantErrs: []string{"subagent folder needs a plain name"},
			problems: 1,
			wantIDs:  []string{"/r"},
		},
		{
			name:     "agent.md too big",
			files:    map[string]string{"big/agent.md": strings.Repeat("x", MaxAgentFileSize+10)},
			wantErrs: []string{filepath.Join("big", "agent.md") + ": ", "256 KiB"},
			problems: 1,
		},
		{
			name: "every problem at once",
			files: map[string]string{
				"(a)/x/agent.md": agentMD, "(b)/x/agent.md": agentMD,
				"[oops/agent.md": agentMD,
				"k/agent.md":     "---\nmax_turns: many\n---\n",
				"fine/agent.md":  agentMD,
			},
			wantErrs: []string{"also the id of folder", `"[oops"`, `"max_turns"`},
			problems: 4,
			wantIDs:  []string{"/fine"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := writeApp(t, tt.files)
			tree, err := Discover(dir)
			if err == nil {
				t.Fatal("Discover() error = nil")
			}
			checkProblems(t, err, dir, tt.wantErrs, tt.problems, tt.wantRoute)
			if tree == nil {
				t.Fatal("Discover() returned no tree")
			}
			if ids := routeIDs(tree); !reflect.DeepEqual(ids, tt.wantIDs) {
				t.Errorf("routes = %q, want %q", ids, tt.wantIDs)
			}
		})
	}
}

// checkProblems checks the error Discover gave for the app in dir: its
// text has every part of wantErrs, it joins n problems, each with a path
// in dir, and the first names wantRoute when that is set.
func checkProblems(t *testing.T, err error, dir string, wantErrs []string, n int, wantRoute string) {
	t.Helper()
	for _, want := range wantErrs {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error does not contain %q:\n%v", want, err)
		}
	}
	problems := problemsOf(t, err)
	if len(problems) != n {
		t.Errorf("got %d problems, want %d:\n%v", len(problems), n, err)
	}
	for _, p := range problems {
		if !strings.HasPrefix(p.Path, dir) {
			t.Errorf("problem path %q does not start with the app folder", p.Path)
		}
	}
	if wantRoute != "" && problems[0].Route != wantRoute {
		t.Errorf("Problem.Route = %q, want %q", problems[0].Route, wantRoute)
	}
}

// routeIDs lists the ids of tree's routes, in order.
func routeIDs(tree *Tree) []string {
	var ids []string
	for _, r := range tree.Routes {
		ids = append(ids, r.ID)
	}
	return ids
}

// problemsOf unpacks the *Problem values Discover joined.
func problemsOf(t *testing.T, err error) []*Problem {
	t.Helper()
	joined, ok := err.(interface{ Unwrap() []error })
	if !ok {
		t.Fatalf("error %T is not joined", err)
	}
	var problems []*Problem
	for _, e := range joined.Unwrap() {
		p, ok := e.(*Problem)
		if !ok {
			t.Fatalf("error %T (%v) is not a *Problem", e, e)
		}
		problems = append(problems, p)
	}
	return problems
}

func TestDiscoverProblemPathAsGiven(t *testing.T) {
	parent := t.TempDir()
	if err := os.MkdirAll(filepath.Join(parent, "app", "[bad"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(parent, "app", "[bad", "agent.md"), []byte(agentMD), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Chdir(parent)
	_, err := Discover("app")
	want := filepath.Join("app", "[bad") + `: folder name "[bad"`
	if err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Errorf("error = %v, want it to start with %q", err, want)
	}
}

func TestDiscoverAppDir(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "file")
	if err := os.WriteFile(file, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, appDir string
		want         []string
	}{
		{"missing", filepath.Join(dir, "nope"), []string{"does not exist", "--app"}},
		{"a file", file, []string{"not a folder", "--app"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tree, err := Discover(tt.appDir)
			if err == nil || tree != nil {
				t.Fatalf("Discover() = %v, %v; want no tree and an error", tree, err)
			}
			for _, want := range append(tt.want, tt.appDir) {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q does not contain %q", err, want)
				}
			}
		})
	}
}

func TestDiscoverEmptyApp(t *testing.T) {
	tree, err := Discover(t.TempDir())
	if err != nil || len(tree.Routes) != 0 {
		t.Fatalf("Discover() = %v, %v; want an empty tree", tree.Routes, err)
	}
	if _, _, err := tree.Match("/x"); !errors.Is(err, ErrNotFound) {
		t.Errorf("Match() error = %v, want ErrNotFound", err)
	}
}

func TestDiscoverSymlinks(t *testing.T) {
	outside := writeApp(t, map[string]string{"ext/agent.md": agentMD})
	dir := writeApp(t, map[string]string{
		"real/[id]/agent.md": agentMD,
		"loop/agent.md":      agentMD,
	})
	links := map[string]string{
		"alias":           filepath.Join(dir, "real"),    // inside: followed
		"outside":         filepath.Join(outside, "ext"), // outside: reported
		"loop/back":       filepath.Join(dir, "loop"),    // loop: reported
		"_skipped":        filepath.Join(outside, "ext"), // private name: skipped silently
		"linked/agent.md": filepath.Join(outside, "ext", "agent.md"),
	}
	for link, target := range links {
		p := filepath.Join(dir, filepath.FromSlash(link))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(target, p); err != nil {
			t.Skipf("symlinks not supported: %v", err)
		}
	}
	tree, err := Discover(dir)
	if err == nil {
		t.Fatal("Discover() error = nil, want the outside link and the loop reported")
	}
	problems := problemsOf(t, err)
	if len(problems) != 2 {
		t.Fatalf("got %d problems, want 2:\n%v", len(problems), err)
	}
	if p := problems[0]; p.Path != filepath.Join(dir, "loop", "back") || !strings.Contains(p.Msg, "loop") {
		t.Errorf("loop problem = %v", p)
	}
	if p := problems[1]; p.Path != filepath.Join(dir, "outside") || !strings.Contains(p.Msg, "outside the app folder") {
		t.Errorf("outside problem = %v", p)
	}
	var ids []string
	for _, r := range tree.Routes {
		ids = append(ids, r.ID)
	}
	want := []string{"/alias/[id]", "/linked", "/loop", "/real/[id]"}
	if !reflect.DeepEqual(ids, want) {
		t.Errorf("routes = %q, want %q", ids, want)
	}
	if r := tree.Route("/alias/[id]"); r != nil && r.Dir != filepath.Join(dir, "alias", "[id]") {
		t.Errorf("alias Dir = %q", r.Dir)
	}
}

// TestDiscoverSkipsEvals: a route's evals/ folder holds its eval cases,
// never routes, even when a case file sits beside an agent.md (a fixture);
// an evals/ folder that is not beside an agent.md is an ordinary folder.
func TestDiscoverSkipsEvals(t *testing.T) {
	dir := writeApp(t, map[string]string{
		"support/agent.md":               agentMD,
		"support/evals/basic.yaml":       "cases: []\n",
		"support/evals/fixture/agent.md": agentMD,
		"evals/agent.md":                 agentMD,
	})
	tree, err := Discover(dir)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, r := range tree.Routes {
		ids = append(ids, r.ID)
	}
	if want := "/evals /support"; strings.Join(ids, " ") != want {
		t.Errorf("routes = %v, want %s", ids, want)
	}
}
