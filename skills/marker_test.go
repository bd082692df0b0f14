package skills_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dawn-go/dawn/capabilities"
	"github.com/dawn-go/dawn/router"
	"github.com/dawn-go/dawn/skills"
	"github.com/dawn-go/dawn/thread"
)

func writeApp(t testing.TB, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, body := range files {
		path := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func skillMD(name, description, body string) string {
	return "---\nname: " + name + "\ndescription: " + description + "\n---\n" + body + "\n"
}

// prepare discovers the app and prepares route id with the skills marker.
func prepare(t *testing.T, dir, id string) (*capabilities.Prepared, error) {
	t.Helper()
	tree, err := router.Discover(dir)
	if err != nil {
		t.Fatal(err)
	}
	r := tree.Route(id)
	if r == nil {
		t.Fatalf("no route %s", id)
	}
	return capabilities.Prepare(context.Background(), r, capabilities.Input{Markers: []capabilities.Marker{skills.Marker()}})
}

func call(t *testing.T, p *capabilities.Prepared, tool, input string) (string, error) {
	t.Helper()
	tl := p.Tool(tool)
	if tl == nil {
		t.Fatalf("route %s has no tool %s", p.Route.ID, tool)
	}
	res, err := tl.Call(context.Background(), capabilities.Invocation{Input: json.RawMessage(input)})
	if err != nil {
		return "", err
	}
	var s string
	if err := json.Unmarshal(res.Output, &s); err != nil {
		t.Fatalf("output %s is not a JSON string", res.Output)
	}
	return s, nil
}

// TestSkillsOfARoute: a route sees the app's skills and its own, its own
// replacing an app skill of the same name; the prompt lists names and
// descriptions only, and readSkill returns the body of the one the route
// sees.
func TestSkillsOfARoute(t *testing.T) {
	dir := writeApp(t, map[string]string{
		"skills/tone/SKILL.md":                          skillMD("tone", "The house tone of voice.", "Be kind and brief."),
		"skills/refunds/SKILL.md":                       skillMD("refunds", "App-wide refunds.", "APP REFUNDS BODY"),
		"support/agent.md":                              "You help customers.",
		"support/skills/refunds/SKILL.md":               skillMD("refunds", "How to handle a refund request.", "ROUTE REFUNDS BODY: read references/policy.md."),
		"support/skills/refunds/references/policy.md":   "Refunds within 30 days.",
		"support/skills/_draft/SKILL.md":                "not parsed",
		"billing/agent.md":                              "You bill.",
		"billing/skills/.hidden/notes.txt":              "skipped",
		"research/agent.md":                             "You research.",
		"research/subagents/finder/agent.md":            "---\ndescription: finds\n---\nFind.",
		"research/subagents/finder/skills/web/SKILL.md": skillMD("web", "Search the web.", "Use the search tool."),
	})
	tests := []struct {
		route  string
		prompt string // the skill lines of the prompt
		bodies map[string]string
	}{
		{"/support", "- refunds: How to handle a refund request.\n- tone: The house tone of voice.\n", map[string]string{"refunds": "ROUTE REFUNDS BODY: read references/policy.md.", "tone": "Be kind and brief."}},
		{"/research", "- refunds: App-wide refunds.\n- tone: The house tone of voice.\n", map[string]string{"refunds": "APP REFUNDS BODY"}},
		{"/research/subagents/finder", "- refunds: App-wide refunds.\n- tone: The house tone of voice.\n- web: Search the web.\n", map[string]string{"web": "Use the search tool."}},
	}
	for _, tt := range tests {
		t.Run(tt.route, func(t *testing.T) {
			p, err := prepare(t, dir, tt.route)
			if err != nil {
				t.Fatal(err)
			}
			prompt := p.Prompts[0](thread.State{})
			if _, lines, _ := strings.Cut(prompt, "\n\n- "); "- "+lines != tt.prompt {
				t.Errorf("prompt:\n%s\nwant the lines\n%s", prompt, tt.prompt)
			}
			if strings.Contains(prompt, "BODY") || strings.Contains(prompt, "Be kind") {
				t.Errorf("the prompt holds a skill's body:\n%s", prompt)
			}
			for name, want := range tt.bodies {
				if got, err := call(t, p, "readSkill", `{"name":"`+name+`"}`); err != nil || got != want {
					t.Errorf("readSkill %s = %q, %v; want %q", name, got, err, want)
				}
			}
		})
	}
	p, err := prepare(t, dir, "/support")
	if err != nil {
		t.Fatal(err)
	}
	if got, err := call(t, p, "readSkillFile", `{"name":"refunds","path":"references/policy.md"}`); err != nil || got != "Refunds within 30 days." {
		t.Errorf("readSkillFile = %q, %v", got, err)
	}
	if _, err := call(t, p, "readSkill", `{"name":"draft"}`); err == nil || err.Error() != `no skill is named "draft"; the skills are: refunds, tone` {
		t.Errorf("readSkill of an unknown skill: %v", err)
	}
	if len(p.Capabilities) != 1 || p.Capabilities[0].File != filepath.Join(p.Route.Dir, "skills") {
		t.Fatalf("capabilities %+v", p.Capabilities)
	}
	details, _ := json.Marshal(p.Capabilities[0].Details)
	if want := `{"skills":[{"name":"refunds","description":"How to handle a refund request.","file":"support/skills/refunds/SKILL.md"},{"name":"tone","description":"The house tone of voice.","file":"skills/tone/SKILL.md"}]}`; string(details) != want {
		t.Errorf("details %s\nwant    %s", details, want)
	}
}

// TestSkillsProblems: what `dawn check` reports about skills, each naming
// the file and what to do; warnings leave the route running.
func TestSkillsProblems(t *testing.T) {
	tests := []struct {
		name    string
		files   map[string]string
		err     string // a part of the error; "" when the route prepares
		warning string // a part of a warning
	}{
		{name: "name is not the folder's", files: map[string]string{"a/skills/refunds/SKILL.md": skillMD("refund", "d", "b")}, err: filepath.Join("a", "skills", "refunds", "SKILL.md") + `: name "refund" is not the skill's folder name "refunds": a skill's name must be its folder's; rename one`},
		{name: "folder without SKILL.md", files: map[string]string{"a/skills/refunds/skill.md": "x"}, err: filepath.Join("a", "skills", "refunds") + " has no SKILL.md: add one with the skill's name and description, or move the folder out of skills/"},
		{name: "no front matter", files: map[string]string{"a/skills/refunds/SKILL.md": "# Refunds"}, err: "no front matter"},
		{name: "a broken app skill breaks every route", files: map[string]string{"skills/tone/SKILL.md": "---\nname: tone\n---\n"}, err: filepath.Join("skills", "tone", "SKILL.md") + `: front matter has no "description"`},
		{name: "every problem at once", files: map[string]string{"a/skills/x/SKILL.md": "#", "a/skills/y/SKILL.md": "#"}, err: filepath.Join("skills", "y", "SKILL.md") + ": no front matter"},
		{name: "oversize reference", files: map[string]string{"a/skills/big/SKILL.md": skillMD("big", "d", "b"), "a/skills/big/references/huge.txt": strings.Repeat("x", skills.MaxReadSize+1)}, warning: filepath.Join("references", "huge.txt") + " is 257 KiB, over the 256 KiB readSkillFile returns, so the model cannot read it: split it into smaller files"},
		{name: "empty skills folder", files: map[string]string{"a/skills/README.txt": "x"}, warning: "[skills] the skills/ folder holds no skill: add skills/<name>/SKILL.md or remove the folder"},
		{name: "a route folder under skills/ is not a skill", files: map[string]string{"skills/ops/agent.md": "Ops.", "skills/tone/SKILL.md": skillMD("tone", "d", "b")}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.files["a/agent.md"] = "You help."
			dir := writeApp(t, tt.files)
			p, err := prepare(t, dir, "/a")
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) || !strings.Contains(err.Error(), "route /a: [skills#load]") {
					t.Fatalf("error %v, want [skills#load] with %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			warnings := strings.Join(p.Warnings, "\n")
			if tt.warning != "" && !strings.Contains(warnings, tt.warning) {
				t.Errorf("warnings %q, want one with %q", warnings, tt.warning)
			}
			if tt.warning == "" && warnings != "" {
				t.Errorf("warnings %q", warnings)
			}
		})
	}
}
