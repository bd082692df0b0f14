package workspace_test

import (
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dawn-go/dawn/dawntest"
	"github.com/dawn-go/dawn/internal/apptest"
	"github.com/tmc/langchaingo/llms"
)

// get fetches url and returns the status, the Content-Type and the body.
func get(t *testing.T, url string) (int, string, string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header.Get("Content-Type"), string(data)
}

// errorKind reads the API's JSON error.
func errorKind(t *testing.T, body string) string {
	t.Helper()
	var e apptest.APIError
	if err := json.Unmarshal([]byte(body), &e); err != nil || e.Error.Kind == "" {
		t.Fatalf("not a JSON error: %s", body)
	}
	return e.Error.Kind
}

type fileList struct {
	Workspace string `json:"workspace"`
	Files     []struct {
		Path string `json:"path"`
		Size int64  `json:"size"`
	} `json:"files"`
}

// scribeScript writes, edits and lists files, then answers.
func scribeScript() *dawntest.ScriptedModel {
	return dawntest.Script().
		CallTool("writeFile", map[string]string{"path": "notes/plan.md", "content": "# Plan\n- draft\n"}).
		CallTool("editFile", map[string]string{"path": "notes/plan.md", "oldString": "- draft", "newString": "- draft\n- review"}).
		CallTool("writeFile", map[string]string{"path": "README.md", "content": "hello"}).
		CallTool("listDir", map[string]string{"path": "notes"}).
		Reply("Files written.")
}

// TestThreadFilesOverHTTP: a scripted model writes, edits and lists files
// in a thread's workspace over the real HTTP API; the files are in the
// thread's state and GET /threads/:id/files lists them, /files/*path
// serves each; an unknown thread, a missing file and a bad path get the
// API's errors, and another thread has its own tree.
func TestThreadFilesOverHTTP(t *testing.T) {
	dir := apptest.WriteApp(t, map[string]string{
		"scribe/agent.md": "---\nworkspace: thread\n---\nYou keep notes in files.",
		"plain/agent.md":  "You answer.",
	})
	model := scribeScript()
	srv := dawntest.New(t, dir, model, dawntest.Options{})
	res := srv.Run(t, "t1", "/scribe", "write the plan")
	if res.Err != nil {
		t.Fatal(res.Err)
	}
	if got := strings.Join(dawntest.Types(res.Events), ","); strings.Count(got, "tool_result") != 4 {
		t.Fatalf("events: %s", got)
	}
	// The model saw listDir's answer.
	reqs := model.Requests()
	if last := reqs[len(reqs)-1]; !strings.Contains(toolResults(last), `[{"name":"plan.md","type":"file","size":24}]`) {
		t.Fatalf("listDir result in the last request: %s", toolResults(last))
	}
	var tree map[string]struct {
		Content string `json:"content"`
	}
	if err := json.Unmarshal(res.Values["files"], &tree); err != nil || tree["notes/plan.md"].Content != "# Plan\n- draft\n- review\n" || tree["README.md"].Content != "hello" {
		t.Fatalf("state files: %s (%v)", res.Values["files"], err)
	}

	var list fileList
	if code := apptest.GetJSON(t, srv.URL+"/threads/t1/files", &list); code != http.StatusOK {
		t.Fatalf("GET files: %d", code)
	}
	if list.Workspace != "thread" || len(list.Files) != 2 || list.Files[0].Path != "README.md" || list.Files[0].Size != 5 || list.Files[1].Path != "notes/plan.md" || list.Files[1].Size != 24 {
		t.Fatalf("GET files: %+v", list)
	}
	code, ctype, body := get(t, srv.URL+"/threads/t1/files/notes/plan.md")
	if code != http.StatusOK || body != "# Plan\n- draft\n- review\n" || !strings.HasPrefix(ctype, "text/markdown") {
		t.Fatalf("GET files/notes/plan.md: %d %s %q", code, ctype, body)
	}

	tests := []struct {
		name, path string
		code       int
		kind       string
	}{
		{"unknown thread", "/threads/nope/files", http.StatusNotFound, "thread_not_found"},
		{"unknown thread's file", "/threads/nope/files/README.md", http.StatusNotFound, "thread_not_found"},
		{"missing file", "/threads/t1/files/notes/none.md", http.StatusNotFound, "file_not_found"},
		{"a folder", "/threads/t1/files/notes", http.StatusNotFound, "file_not_found"},
		{"climbing out", "/threads/t1/files/notes/%2e%2e/%2e%2e/x", http.StatusBadRequest, "invalid_path"},
	}
	for _, tt := range tests {
		code, _, body := get(t, srv.URL+tt.path)
		if code != tt.code || errorKind(t, body) != tt.kind {
			t.Errorf("%s: GET %s = %d %s, want %d %s", tt.name, tt.path, code, body, tt.code, tt.kind)
		}
	}

	// A thread on a route without a workspace.
	plain := dawntest.New(t, dir, dawntest.Script().Reply("hi"), dawntest.Options{})
	if res := plain.Run(t, "p1", "/plain", "hi"); res.Err != nil {
		t.Fatal(res.Err)
	}
	if code, _, body := get(t, plain.URL+"/threads/p1/files"); code != http.StatusNotFound || errorKind(t, body) != "workspace_not_found" {
		t.Fatalf("route without a workspace: %d %s", code, body)
	}

	// Another thread starts empty.
	srv2 := dawntest.New(t, dir, dawntest.Script().CallTool("listDir", map[string]string{}).Reply("empty"), dawntest.Options{})
	if res := srv2.Run(t, "t2", "/scribe", "list"); res.Err != nil {
		t.Fatal(res.Err)
	}
	if apptest.GetJSON(t, srv2.URL+"/threads/t2/files", &list); len(list.Files) != 0 {
		t.Fatalf("a new thread's files: %+v", list)
	}
}

// toolResults joins the tool results of a request's messages.
func toolResults(msgs []llms.MessageContent) string {
	var b strings.Builder
	for _, m := range msgs {
		for _, p := range m.Parts {
			if r, ok := p.(llms.ToolCallResponse); ok {
				b.WriteString(r.Content)
				b.WriteString("\n")
			}
		}
	}
	return b.String()
}

// TestFolderFilesOverHTTP: on a route whose workspace is a folder, the
// files the model writes land in the folder, and GET /threads/:id/files
// lists the folder.
func TestFolderFilesOverHTTP(t *testing.T) {
	dir := apptest.WriteApp(t, map[string]string{
		"scribe/agent.md":       "---\nworkspace: _files\n---\nYou keep notes in files.",
		"_files/existing.txt":   "was here",
		"_files/sub/nested.txt": "deep",
	})
	srv := dawntest.New(t, dir, scribeScript(), dawntest.Options{})
	if res := srv.Run(t, "t1", "/scribe", "write the plan"); res.Err != nil {
		t.Fatal(res.Err)
	} else if _, ok := res.Values["files"]; ok {
		t.Fatalf("a folder workspace has a files state field: %s", res.Values["files"])
	}
	data, err := os.ReadFile(filepath.Join(dir, "_files", "notes", "plan.md"))
	if err != nil || string(data) != "# Plan\n- draft\n- review\n" {
		t.Fatalf("on disk: %q %v", data, err)
	}
	var list fileList
	apptest.GetJSON(t, srv.URL+"/threads/t1/files", &list)
	var paths []string
	for _, f := range list.Files {
		paths = append(paths, f.Path)
	}
	if list.Workspace != "folder" || strings.Join(paths, ",") != "README.md,existing.txt,notes/plan.md,sub/nested.txt" {
		t.Fatalf("GET files: %+v", list)
	}
	if code, _, body := get(t, srv.URL+"/threads/t1/files/existing.txt"); code != http.StatusOK || body != "was here" {
		t.Fatalf("GET files/existing.txt: %d %q", code, body)
	}
}

// TestFilesAcrossServers: two servers on one store (as replicas share
// one): the files a run writes through the first are listed and served by
// the second, and a run on the second reads them.
func TestFilesAcrossServers(t *testing.T) {
	dir := apptest.WriteApp(t, map[string]string{"scribe/agent.md": "---\nworkspace: thread\n---\nYou keep notes in files."})
	db := filepath.Join(t.TempDir(), "dawn.db")
	a := dawntest.New(t, dir, scribeScript(), dawntest.Options{StorePath: db})
	if res := a.Run(t, "t1", "/scribe", "write the plan"); res.Err != nil {
		t.Fatal(res.Err)
	}
	model := dawntest.Script().CallTool("readFile", map[string]string{"path": "notes/plan.md"}).Reply("read")
	b := dawntest.New(t, dir, model, dawntest.Options{StorePath: db})
	var list fileList
	if apptest.GetJSON(t, b.URL+"/threads/t1/files", &list); len(list.Files) != 2 {
		t.Fatalf("files on the second server: %+v", list)
	}
	if res := b.Run(t, "t1", "/scribe", "read the plan"); res.Err != nil {
		t.Fatal(res.Err)
	}
	reqs := model.Requests()
	if got := toolResults(reqs[len(reqs)-1]); !strings.HasSuffix(got, "]\n# Plan\n- draft\n- review\n\n") {
		t.Fatalf("readFile on the second server: %q", got)
	}
}
