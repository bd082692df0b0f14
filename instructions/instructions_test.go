package instructions_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dawn-go/dawn/capabilities"
	"github.com/dawn-go/dawn/instructions"
	"github.com/dawn-go/dawn/router"
	"github.com/dawn-go/dawn/thread"
)

func writeApp(t *testing.T, files map[string]string) string {
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

// prepare discovers the app and prepares route id with the standing-instructions marker.
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
	return capabilities.Prepare(context.Background(), r, capabilities.Input{Markers: []capabilities.Marker{instructions.Marker()}})
}

// prompt renders every prompt fragment of p.
func prompt(p *capabilities.Prepared) string {
	var parts []string
	for _, render := range p.Prompts {
		parts = append(parts, render(thread.State{}))
	}
	return strings.Join(parts, "\n---\n")
}

const agentMD = "You help.\n"

func TestStandingInstructions(t *testing.T) {
	const both = "## Standing instructions\n\nThe app's authors wrote these instructions; follow them on every turn.\n\nFrom AGENTS.md (the whole app):\n\nAnswer in British English.\n\nFrom memory.md (this route):\n\nRefunds over 100 EUR need a manager.\n"
	tests := []struct {
		name  string
		files map[string]string
		route string
		// want is the rendered prompt; on false, the capability is off
		// for the route.
		want string
		on   bool
		file string // the capability's marker file, relative to the app
		// details are the files Details lists, as JSON strings.
		details string
	}{
		{
			name:  "AGENTS.md and memory.md, app first",
			files: map[string]string{"AGENTS.md": "Answer in British English.\n", "support/agent.md": agentMD, "support/memory.md": "\r\nRefunds over 100 EUR need a manager.\r\n"},
			route: "/support", want: both, on: true, file: "support/memory.md", details: `"AGENTS.md","support/memory.md"`,
		},
		{
			name:  "AGENTS.md reaches every route",
			files: map[string]string{"AGENTS.md": "Be brief.", "(marketing)/blog/agent.md": agentMD},
			route: "/blog", want: "## Standing instructions\n\nThe app's authors wrote these instructions; follow them on every turn.\n\nFrom AGENTS.md (the whole app):\n\nBe brief.\n", on: true, file: "AGENTS.md", details: `"AGENTS.md"`,
		},
		{
			name:  "AGENTS.md reaches subagents",
			files: map[string]string{"AGENTS.md": "Be brief.", "research/agent.md": agentMD, "research/subagents/finder/agent.md": "---\ndescription: finds\n---\nFind."},
			route: "/research/subagents/finder", want: "## Standing instructions\n\nThe app's authors wrote these instructions; follow them on every turn.\n\nFrom AGENTS.md (the whole app):\n\nBe brief.\n", on: true, file: "AGENTS.md", details: `"AGENTS.md"`,
		},
		{
			name:  "memory.md of another route does not apply",
			files: map[string]string{"a/agent.md": agentMD, "a/memory.md": "Only a.", "b/agent.md": agentMD},
			route: "/b",
		},
		{
			name:  "an AGENTS.md below the app folder is not the app's",
			files: map[string]string{"a/agent.md": agentMD, "a/AGENTS.md": "Not read."},
			route: "/a",
		},
		{
			name:  "empty files switch it on with nothing to say",
			files: map[string]string{"a/agent.md": agentMD, "a/memory.md": " \n"},
			route: "/a", want: "", on: true, file: "a/memory.md", details: `"a/memory.md"`,
		},
		{
			name:  "the app folder's own route reads both",
			files: map[string]string{"agent.md": agentMD, "AGENTS.md": "Answer in British English.", "memory.md": "Refunds over 100 EUR need a manager."},
			route: "/", want: both, on: true, file: "memory.md", details: `"AGENTS.md","memory.md"`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := writeApp(t, tt.files)
			p, err := prepare(t, dir, tt.route)
			if err != nil {
				t.Fatal(err)
			}
			if !tt.on {
				if len(p.Capabilities) != 0 || len(p.Prompts) != 0 {
					t.Fatalf("capabilities %+v, want none", p.Capabilities)
				}
				return
			}
			if len(p.Capabilities) != 1 || p.Capabilities[0].Name != instructions.Name {
				t.Fatalf("capabilities %+v", p.Capabilities)
			}
			real, _ := filepath.EvalSymlinks(dir)
			if got := p.Capabilities[0].File; got != filepath.Join(dir, tt.file) && got != filepath.Join(real, tt.file) {
				t.Errorf("marker file %s, want %s", got, tt.file)
			}
			details, _ := json.Marshal(p.Capabilities[0].Details)
			if want := `{"files":[` + tt.details + `]}`; string(details) != want {
				t.Errorf("details %s, want %s", details, want)
			}
			if got := prompt(p); got != tt.want {
				t.Errorf("prompt:\n%q\nwant\n%q", got, tt.want)
			}
			if len(p.Tools) != 0 || len(p.Fields) != 0 {
				t.Errorf("tools %d, fields %d: standing instructions add neither", len(p.Tools), len(p.Fields))
			}
		})
	}
}

func TestStandingInstructionsErrors(t *testing.T) {
	tests := []struct {
		name  string
		files map[string]string
		want  []string
	}{
		{"oversize memory.md", map[string]string{"a/memory.md": strings.Repeat("x", instructions.MaxFileSize+1)}, []string{"[memory#load]", filepath.Join("a", "memory.md") + " is 65 KiB, over the 64 KiB limit", "shorten it"}},
		{"oversize AGENTS.md", map[string]string{"AGENTS.md": strings.Repeat("x", instructions.MaxFileSize+1)}, []string{"AGENTS.md is 65 KiB", "shorten it"}},
		{"not UTF-8", map[string]string{"a/memory.md": "caf\xe9"}, []string{filepath.Join("a", "memory.md") + " is not UTF-8 text: save it as UTF-8"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.files["a/agent.md"] = agentMD
			dir := writeApp(t, tt.files)
			_, err := prepare(t, dir, "/a")
			if err == nil {
				t.Fatal("the route prepared")
			}
			for _, w := range append(tt.want, "route /a:") {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not say %q", err, w)
				}
			}
		})
	}
}
