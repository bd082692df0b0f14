package cli_test

import (
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"testing"
)

func TestRoutesJSON(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"support/[tenant]/agent.md":              "---\ndescription: Support\n---\nYou help.\n",
		"support/[tenant]/plan.md":               "# Plan\n\n- [ ] Understand\n- [x] Check\n  - [ ] Nested\n",
		"(marketing)/blog/agent.md":              agentMD,
		"docs/[...slug]/agent.md":                agentMD,
		"research/agent.md":                      agentMD,
		"research/plan.md":                       "",
		"research/subagents/researcher/agent.md": agentMD,
		"research/subagents/researcher/plan.md":  "- [ ] Read\n",
		"_drafts/idea/agent.md":                  agentMD,
	})
	res := runDawn(t, "routes", "--app", dir, "--json")
	if res.code != 0 {
		t.Fatalf("routes --json exited %d\nstdout:\n%s\nstderr:\n%s", res.code, res.stdout, res.stderr)
	}
	var got []routeInfo
	if err := json.Unmarshal([]byte(res.stdout), &got); err != nil {
		t.Fatalf("routes --json printed no JSON array: %v\n%s", err, res.stdout)
	}
	ids := make([]string, len(got))
	for i, r := range got {
		ids[i] = r.ID
	}
	wantIDs := []string{"/blog", "/docs/[...slug]", "/research", "/research/subagents/researcher", "/support/[tenant]"}
	if !slices.Equal(ids, wantIDs) {
		t.Fatalf("ids = %v, want %v (sorted, _drafts skipped, groups dropped)", ids, wantIDs)
	}
	byID := map[string]routeInfo{}
	for _, r := range got {
		byID[r.ID] = r
	}
	tests := []struct {
		id           string
		dir, kind    string
		params       []string
		capabilities []string
		seed         []todo
	}{
		{"/blog", "(marketing)/blog", "agent", []string{}, []string{}, nil},
		{"/docs/[...slug]", "docs/[...slug]", "agent", []string{"slug"}, []string{}, nil},
		{"/research", "research", "agent", []string{}, []string{"planning"}, nil},
		{"/research/subagents/researcher", "research/subagents/researcher", "subagent", []string{}, []string{"planning"}, []todo{{"Read", "pending"}}},
		{"/support/[tenant]", "support/[tenant]", "agent", []string{"tenant"}, []string{"planning"},
			[]todo{{"Understand", "pending"}, {"Check", "completed"}, {"Nested", "pending"}}},
	}
	for _, tt := range tests {
		r := byID[tt.id]
		if r.Dir != tt.dir || r.Kind != tt.kind || !reflect.DeepEqual(r.Params, tt.params) || !reflect.DeepEqual(r.Capabilities, tt.capabilities) {
			t.Errorf("%s = dir %q kind %q params %#v capabilities %#v; want %q %q %#v %#v", tt.id, r.Dir, r.Kind, r.Params, r.Capabilities, tt.dir, tt.kind, tt.params, tt.capabilities)
		}
		if !slices.Equal(r.Seed, tt.seed) {
			t.Errorf("%s seed = %+v, want %+v", tt.id, r.Seed, tt.seed)
		}
	}
	if want := map[string]string{"researcher": "/research/subagents/researcher"}; !reflect.DeepEqual(byID["/research"].Subagents, want) {
		t.Errorf("/research subagents = %v, want %v", byID["/research"].Subagents, want)
	}
	if byID["/research/subagents/researcher"].Parent != "/research" {
		t.Errorf("the researcher's parent = %q, want /research", byID["/research/subagents/researcher"].Parent)
	}
	// An empty plan.md gives an empty seed; a route without planning has none.
	var raw []map[string]json.RawMessage
	if err := json.Unmarshal([]byte(res.stdout), &raw); err != nil {
		t.Fatal(err)
	}
	for _, r := range raw {
		var id string
		json.Unmarshal(r["id"], &id)
		switch seed, ok := r["seed"]; {
		case id == "/research" && string(seed) != "[]":
			t.Errorf("/research (empty plan.md) seed = %s, want []", seed)
		case id == "/blog" && ok:
			t.Errorf("/blog (no plan.md) has a seed: %s", seed)
		}
	}

	// The table lists the same routes.
	table := runDawn(t, "routes", "--app", dir)
	if table.code != 0 {
		t.Fatalf("routes exited %d: %s", table.code, table.stderr)
	}
	for _, id := range wantIDs {
		if !strings.Contains(table.stdout, id) {
			t.Errorf("the routes table lacks %s:\n%s", id, table.stdout)
		}
	}
	// It has a tools column: a route with plan.md lists writeTodos.
	lines := strings.Split(table.stdout, "\n")
	if !strings.Contains(lines[0], "TOOLS") {
		t.Errorf("the routes table has no TOOLS column:\n%s", table.stdout)
	}
	for _, line := range lines {
		if strings.HasPrefix(line, "/support/[tenant] ") && !strings.Contains(line, "writeTodos") {
			t.Errorf("the /support/[tenant] row names no writeTodos: %s", line)
		}
	}
}
