package e2e

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
)

// TestWorkspaceSurvivesSIGKILL: the stock binary, on aimock, runs a route
// with a thread workspace whose Go files need approval: the model writes
// notes.md, then the write of cmd/main.go parks the run. The server is
// SIGKILLed; a new server on the same app folder (and store) still lists
// notes.md with its content under GET /threads/:id/files, and resumed with
// "once" writes cmd/main.go and finishes.
func TestWorkspaceSurvivesSIGKILL(t *testing.T) {
	mock := startAimock(t, "testdata/workspace_files.json")
	bin := buildDawn(t)
	app := t.TempDir()
	writeFiles(t, app, map[string]string{
		"coder/agent.md": "---\nmodel: openai:gpt-4o-mini\nworkspace:\n  approve: [\"*.go\"]\n---\nYou write notes and code in files.\n",
	})
	env := []string{"OPENAI_BASE_URL=" + mock + "/v1", "OPENAI_API_KEY=test", "DAWN_API_KEY="}
	url, kill := launchDawn(t, bin, app, env...)

	body := `{"route":"/coder","input":{"messages":[{"role":"user","content":"Write the notes and the code"}]}}`
	events := readEvents(t, postJSON(t, url+"/threads/w1/runs/stream", body))
	if got := strings.Join(eventTypes(events), ","); !strings.HasSuffix(got, "tool_call,tool_result,model_call,tool_call,interrupt,done") {
		t.Fatalf("events of the parked run: %s", got)
	}
	var in struct {
		ID     string `json:"interruptId"`
		Kind   string `json:"kind"`
		Detail struct {
			Path string `json:"path"`
		} `json:"detail"`
	}
	if err := json.Unmarshal(events[len(events)-2].Data, &in); err != nil || in.Kind != "path" || in.Detail.Path != "cmd/main.go" {
		t.Fatalf("interrupt: %s", events[len(events)-2].Data)
	}
	kill()

	url2 := startDawn(t, bin, app, env...)
	if got := fileList(t, url2, "w1"); got != "notes.md:28" {
		t.Fatalf("files after SIGKILL and restart: %s", got)
	}
	if got := fileContent(t, url2+"/threads/w1/files/notes.md"); got != "# Notes\nkept across a crash\n" {
		t.Fatalf("notes.md after restart: %q", got)
	}
	resume := fmt.Sprintf(`{"route":"/coder","resume":[{"interruptId":%q,"status":"resolved","payload":"once"}]}`, in.ID)
	events = readEvents(t, postJSON(t, url2+"/threads/w1/resume", resume))
	if last := string(events[len(events)-1].Data); !strings.Contains(last, "Wrote the notes and the code.") {
		t.Fatalf("done of the resumed run: %s (%s)", last, strings.Join(eventTypes(events), ","))
	}
	if got := fileList(t, url2, "w1"); got != "cmd/main.go:13,notes.md:28" {
		t.Fatalf("files after the resume: %s", got)
	}
}

// fileList is GET /threads/:id/files as "path:size,…".
func fileList(t *testing.T, url, thread string) string {
	t.Helper()
	var list struct {
		Files []struct {
			Path string `json:"path"`
			Size int    `json:"size"`
		} `json:"files"`
	}
	resp, err := http.Get(url + "/threads/" + thread + "/files")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if err := json.NewDecoder(resp.Body).Decode(&list); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET files: %d %v", resp.StatusCode, err)
	}
	var out []string
	for _, f := range list.Files {
		out = append(out, fmt.Sprintf("%s:%d", f.Path, f.Size))
	}
	return strings.Join(out, ",")
}

func fileContent(t *testing.T, url string) string {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %d %s", url, resp.StatusCode, data)
	}
	return string(data)
}
