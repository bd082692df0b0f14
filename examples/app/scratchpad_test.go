package main

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/dawn-go/dawn/dawntest"
	"github.com/dawn-go/dawn/internal/apptest"
)

// TestScratchpadKeepsFiles: the /scratchpad route keeps a draft in its
// thread's workspace, which GET /threads/:id/files lists; a write under
// published/ waits for a person's approval.
func TestScratchpadKeepsFiles(t *testing.T) {
	model := dawntest.Script().
		CallTool("writeFile", map[string]string{"path": "drafts/launch.md", "content": "# Launch\n"}).
		CallTool("editFile", map[string]string{"path": "drafts/launch.md", "oldString": "# Launch\n", "newString": "# Launch\nMonday.\n"}).
		Reply("Drafted.").
		CallTool("writeFile", map[string]string{"path": "published/launch.md", "content": "# Launch\nMonday.\n"})
	srv := dawntest.New(t, ".", model, dawntest.Options{Tools: appTools(), Markers: appMarkers(), StorePath: t.TempDir() + "/dawn.db"})
	if res := srv.Run(t, "s1", "/scratchpad", "draft the launch note"); res.Err != nil {
		t.Fatal(res.Err)
	}
	var list struct {
		Files []struct {
			Path string `json:"path"`
			Size int    `json:"size"`
		} `json:"files"`
	}
	if code := apptest.GetJSON(t, srv.URL+"/threads/s1/files", &list); code != http.StatusOK || len(list.Files) != 1 || list.Files[0].Path != "drafts/launch.md" || list.Files[0].Size != 17 {
		t.Fatalf("GET files: %d %+v", code, list)
	}
	res := srv.Run(t, "s1", "/scratchpad", "publish it")
	last := res.Events[len(res.Events)-1]
	var done struct {
		Output struct {
			Interrupts []struct {
				Kind string `json:"kind"`
			} `json:"interrupts"`
		} `json:"output"`
	}
	if err := json.Unmarshal(last.Data, &done); err != nil || len(done.Output.Interrupts) != 1 || done.Output.Interrupts[0].Kind != "path" {
		t.Fatalf("publishing did not ask: %s (%s)", last.Data, strings.Join(dawntest.Types(res.Events), ","))
	}
}

// TestScratchpadHasItsSkill: /scratchpad uses a skill beside its
// workspace: the model reads the skill and its reference, then writes a
// file, on one route.
func TestScratchpadHasItsSkill(t *testing.T) {
	model := dawntest.Script().
		CallTool("readSkill", map[string]string{"name": "house-style"}).
		CallTool("readSkillFile", map[string]string{"name": "house-style", "path": "references/words.md"}).
		CallTool("writeFile", map[string]string{"path": "drafts/note.md", "content": "# Note\n"}).
		Reply("Drafted in the house style.")
	srv := dawntest.New(t, ".", model, dawntest.Options{Tools: appTools(), Markers: appMarkers(), StorePath: t.TempDir() + "/dawn.db"})
	res := srv.Run(t, "s2", "/scratchpad", "draft a note")
	if res.Err != nil {
		t.Fatal(res.Err)
	}
	var results []string
	for _, e := range res.Events {
		if e.Type == "tool_result" {
			results = append(results, string(e.Data))
		}
	}
	if len(results) != 3 || !strings.Contains(results[0], "Start with a level-one heading") || !strings.Contains(results[1], "utilize") || strings.Contains(results[2], `"error"`) {
		t.Fatalf("tool results = %q, want the skill, its reference and the written file", results)
	}
}
