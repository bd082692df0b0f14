package workspace_test

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dawn-go/dawn/internal/app"
	"github.com/dawn-go/dawn/internal/apptest"
	"github.com/dawn-go/dawn/markers"
)

// TestSettings: what each form of the workspace key gives a route, and the
// errors, naming agent.md and its line, of the forms that are wrong.
func TestSettings(t *testing.T) {
	outside := filepath.ToSlash(t.TempDir())
	tests := []struct {
		name, front string
		details     string // the capability's details; "" for none
		err         string // part of the load error
	}{
		{"thread", "workspace: thread", `{"workspace":"thread"}`, ""},
		{"true", "workspace: true", `{"workspace":"thread"}`, ""},
		{"false", "workspace: false", "", ""},
		{"null", "workspace:", "", ""},
		{"a folder", "workspace: _files", `{"dir":"_files","workspace":"folder"}`, ""},
		{"a hidden folder", "workspace: .work/files", `{"dir":".work/files","workspace":"folder"}`, ""},
		{"outside the app", "workspace: " + outside, `{"dir":"` + outside + `","workspace":"folder"}`, ""},
		{"long form", "workspace:\n  dir: _files\n  approve: [\"*.go\", \"deploy/**\"]", `{"approve":["*.go","deploy/**"],"dir":"_files","workspace":"folder"}`, ""},
		{"long form, thread", "workspace: {approve: [\"*.md\"]}", `{"approve":["*.md"],"workspace":"thread"}`, ""},
		{"beside approve:", "approve: [writeFile]\nworkspace: thread", `{"workspace":"thread"}`, ""},
		{"the app folder", "workspace: .", "", `agent.md:2: workspace folder "." is inside the app folder`},
		{"a plain folder in the app", "workspace: files", "", `name a folder starting with _ (route discovery skips it), e.g. _files`},
		{"a number", "workspace: 3", "", `agent.md:2: front matter key "workspace" must be workspace: thread`},
		{"a list", "workspace: [a]", "", `front matter key "workspace" must be`},
		{"unknown key", "workspace: {folder: x}", "", `workspace: unknown key "folder"; allowed keys are dir and approve`},
		{"approve not a list", "workspace: {approve: \"*.go\"}", "", `workspace.approve must be a list of path globs`},
		{"malformed glob", "workspace: {approve: [\"[a-\"]}", "", `pattern "[a-" is malformed`},
		{"misspelt key", "workspce: thread", "", `agent.md:2: unknown front matter key "workspce"; allowed keys: model, description, tools, max_turns, temperature, approve, context, memory, permissions, workspace`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := apptest.WriteApp(t, map[string]string{"r/agent.md": "---\n" + tt.front + "\n---\nHi."})
			a, err := app.Load(context.Background(), dir, app.Options{Markers: markers.All()})
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("error %v, want %q in it", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			p := a.Routes["/r"]
			var got string
			approval := false
			for _, c := range p.Capabilities {
				if c.Name == "workspace" {
					raw, _ := json.Marshal(c.Details)
					got = string(raw)
				}
				approval = approval || c.Name == "approval"
			}
			// The approval capability gates every route with a workspace
			// (runBash's commands), so approve: works there too.
			if want := tt.details != "" || strings.Contains(tt.front, "approve: [writeFile]"); approval != want {
				t.Fatalf("approval capability on: %v, want %v", approval, want)
			}
			if got != tt.details {
				t.Fatalf("details %s, want %s", got, tt.details)
			}
			if (tt.details != "") != (p.Tool("glob") != nil) {
				t.Fatalf("tools of the route: glob present %v", p.Tool("glob") != nil)
			}
		})
	}
}
