package workspace_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dawn-go/dawn/dawntest"
	"github.com/dawn-go/dawn/internal/apptest"
)

// TestPathApprovalThroughSymlink: an approve glob holds back a write whose
// path reaches a matching file through a symbolic link inside the
// folder, as it holds back a write to the file's own path. notes links to
// secret and alias.txt to main.go: writing notes/key.txt writes
// secret/key.txt, and editing alias.txt edits main.go.
func TestPathApprovalThroughSymlink(t *testing.T) {
	tests := []struct {
		name, tool          string
		args                map[string]string
		wantPattern, wantAt string
		untouched           string // the real file that must not change while parked
	}{
		{"folder link", "writeFile", map[string]string{"path": "notes/key.txt", "content": "leaked"}, "secret/*", "secret/key.txt", "secret/key.txt"},
		{"file link", "editFile", map[string]string{"path": "alias.txt", "oldString": "package main", "newString": "package evil"}, "*.go", "main.go", "main.go"},
		{"link to a link", "writeFile", map[string]string{"path": "chain.txt", "content": "x"}, "*.go", "main.go", "main.go"},
		{"dangling link", "writeFile", map[string]string{"path": "later.txt", "content": "x"}, "secret/*", "secret/new.txt", "secret/new.txt"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := apptest.WriteApp(t, map[string]string{
				"coder/agent.md":     "---\nworkspace:\n  dir: _ws\n  approve: [\"secret/*\", \"*.go\"]\n---\nYou write code.",
				"_ws/secret/key.txt": "the key",
				"_ws/main.go":        "package main",
				"_ws/readme.txt":     "hi",
			})
			ws := filepath.Join(dir, "_ws")
			for link, target := range map[string]string{"notes": "secret", "alias.txt": "main.go", "chain.txt": "alias.txt", "later.txt": "notes/new.txt"} {
				if err := os.Symlink(target, filepath.Join(ws, link)); err != nil {
					t.Skipf("symbolic links: %v", err)
				}
			}
			before, _ := os.ReadFile(filepath.Join(ws, filepath.FromSlash(tt.untouched)))
			model := dawntest.Script().CallTool(tt.tool, tt.args).Reply("done")
			h := apptest.New(t, dir, model, apptest.Options{})
			url := h.Serve(t)
			events := apptest.ReadSSE(t, apptest.PostJSON(t, url+"/threads/t1/runs/stream", apptest.RunBody("/coder", "write")))
			if got := strings.Join(dawntest.Types(events), ","); !strings.HasSuffix(got, "tool_call,interrupt,done") {
				t.Fatalf("a write through a link did not park the run: %s", got)
			}
			var in struct {
				Detail struct {
					Path, Pattern, Resolved, SuggestedPattern string
				} `json:"detail"`
			}
			if err := json.Unmarshal(events[len(events)-2].Data, &in); err != nil {
				t.Fatal(err)
			}
			d := in.Detail
			if d.Path != tt.args["path"] || d.Pattern != tt.wantPattern || d.Resolved != tt.wantAt || d.SuggestedPattern != tt.wantAt {
				t.Fatalf("interrupt detail %+v, want path %s, pattern %s, resolved %s", d, tt.args["path"], tt.wantPattern, tt.wantAt)
			}
			if after, _ := os.ReadFile(filepath.Join(ws, filepath.FromSlash(tt.untouched))); string(after) != string(before) {
				t.Fatalf("%s changed while the write waited for a person: %q", tt.untouched, after)
			}
		})
	}
}

// TestPathApprovalLinkOutside: a link that does not reach an approve
// glob's files is not held; a write to a plain file is not held either.
func TestPathApprovalLinkOutside(t *testing.T) {
	dir := apptest.WriteApp(t, map[string]string{
		"coder/agent.md": "---\nworkspace:\n  dir: _ws\n  approve: [\"secret/*\", \"*.go\"]\n---\nYou write code.",
		"_ws/readme.txt": "hi",
	})
	if err := os.Symlink("readme.txt", filepath.Join(dir, "_ws", "docs.go.txt")); err != nil {
		t.Skipf("symbolic links: %v", err)
	}
	model := dawntest.Script().
		CallTool("writeFile", map[string]string{"path": "docs.go.txt", "content": "a"}).
		CallTool("writeFile", map[string]string{"path": "plain/new.txt", "content": "b"}).
		Reply("done")
	h := apptest.New(t, dir, model, apptest.Options{})
	events := apptest.ReadSSE(t, apptest.PostJSON(t, h.Serve(t)+"/threads/t1/runs/stream", apptest.RunBody("/coder", "write")))
	if got := strings.Join(dawntest.Types(events), ","); strings.Contains(got, "interrupt") {
		t.Fatalf("a write no glob matches was held: %s", got)
	}
	if data, _ := os.ReadFile(filepath.Join(dir, "_ws", "readme.txt")); string(data) != "a" {
		t.Fatalf("readme.txt through its link: %q", data)
	}
}
