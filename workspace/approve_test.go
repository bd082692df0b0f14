package workspace_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/dawn-go/dawn/dawntest"
	"github.com/dawn-go/dawn/internal/apptest"
	"github.com/dawn-go/dawn/stream"
)

type pathInterrupt struct {
	ID     string `json:"interruptId"`
	Type   string `json:"type"`
	Kind   string `json:"kind"`
	Detail struct {
		ToolName         string `json:"toolName"`
		Path             string `json:"path"`
		Pattern          string `json:"pattern"`
		ArgsPreview      string `json:"argsPreview"`
		SuggestedPattern string `json:"suggestedPattern"`
	} `json:"detail"`
}

// coderApp has a thread workspace whose writes to Go files need approval.
const coderAgent = "---\nworkspace:\n  approve: [\"*.go\"]\n---\nYou write code."

// coderScript writes notes.md (no approval needed), then main.go.
func coderScript() *dawntest.ScriptedModel {
	return dawntest.Script().
		CallTool("writeFile", map[string]string{"path": "notes.md", "content": "notes"}).
		CallTool("writeFile", map[string]string{"path": "cmd/main.go", "content": "package main"}).
		Reply("done")
}

// files returns the thread's virtual tree, path to content.
func files(t *testing.T, raw json.RawMessage) map[string]string {
	t.Helper()
	var tree map[string]struct {
		Content string `json:"content"`
	}
	if err := json.Unmarshal(raw, &tree); err != nil {
		t.Fatalf("files: %v in %s", err, raw)
	}
	out := map[string]string{}
	for p, f := range tree {
		out[p] = f.Content
	}
	return out
}

// parkOnWrite runs the coder route on thread id until the write of
// cmd/main.go parks it, and returns the interrupt.
func parkOnWrite(t *testing.T, url, id string) pathInterrupt {
	t.Helper()
	events := apptest.ReadSSE(t, apptest.PostJSON(t, url+"/threads/"+id+"/runs/stream", apptest.RunBody("/coder", "write main")))
	if got := strings.Join(dawntest.Types(events), ","); !strings.HasSuffix(got, "tool_call,interrupt,done") {
		t.Fatalf("events of a parked run: %s", got)
	}
	var in pathInterrupt
	if err := json.Unmarshal(events[len(events)-2].Data, &in); err != nil {
		t.Fatal(err)
	}
	if in.Type != "permission-request" || in.Kind != "path" || in.Detail.ToolName != "writeFile" || in.Detail.Path != "cmd/main.go" || in.Detail.Pattern != "*.go" || in.Detail.SuggestedPattern != "cmd/main.go" || !strings.Contains(in.Detail.ArgsPreview, "package main") {
		t.Fatalf("interrupt: %s", events[len(events)-2].Data)
	}
	var st struct {
		Status string                     `json:"status"`
		Values map[string]json.RawMessage `json:"values"`
	}
	apptest.GetJSON(t, url+"/threads/"+id+"/state", &st)
	if got := files(t, st.Values["files"]); st.Status != "interrupted" || len(got) != 1 || got["notes.md"] != "notes" {
		t.Fatalf("parked thread: status %s, files %v", st.Status, got)
	}
	return in
}

func resume(t *testing.T, url, id, interruptID, status, payload string) []stream.Event {
	t.Helper()
	body := fmt.Sprintf(`{"route":"/coder","resume":[{"interruptId":%q,"status":%q,"payload":%s}]}`, interruptID, status, payload)
	return apptest.ReadSSE(t, apptest.PostJSON(t, url+"/threads/"+id+"/resume", body))
}

// doneFiles is the files of a finished run's done event.
func doneFiles(t *testing.T, events []stream.Event) map[string]string {
	t.Helper()
	last := events[len(events)-1]
	var done struct {
		Output map[string]json.RawMessage `json:"output"`
	}
	if last.Type != "done" || json.Unmarshal(last.Data, &done) != nil || done.Output["files"] == nil {
		t.Fatalf("last event %s %s", last.Type, last.Data)
	}
	return files(t, done.Output["files"])
}

// TestPathApproval: a write to a path an approve glob matches parks the
// run with a "path" interrupt, after the write that needs none ran;
// "once" writes the file, "deny" (and a cancel) does not and tells the
// model, and a decision that is none is refused with the choices.
func TestPathApproval(t *testing.T) {
	tests := []struct {
		name, status, payload string
		wantWritten           bool
		wantResult            string
	}{
		{"once", "resolved", `"once"`, true, "wrote 12 bytes to cmd/main.go"},
		{"once as an object", "resolved", `{"decision":"once"}`, true, "wrote 12 bytes to cmd/main.go"},
		{"deny", "resolved", `"deny"`, false, "a person denied writing cmd/main.go"},
		{"cancelled", "cancelled", `null`, false, "a person denied writing cmd/main.go"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := apptest.WriteApp(t, map[string]string{"coder/agent.md": coderAgent})
			model := coderScript()
			h := apptest.New(t, dir, model, apptest.Options{})
			url := h.Serve(t)
			in := parkOnWrite(t, url, "t1")
			events := resume(t, url, "t1", in.ID, tt.status, tt.payload)
			got := doneFiles(t, events)
			if _, written := got["cmd/main.go"]; written != tt.wantWritten || got["notes.md"] != "notes" {
				t.Fatalf("files after %s: %v", tt.name, got)
			}
			reqs := model.Requests()
			if res := toolResults(reqs[len(reqs)-1]); !strings.Contains(res, tt.wantResult) {
				t.Fatalf("the model got %q, want %q in it", res, tt.wantResult)
			}
		})
	}
}

// TestPathApprovalBadDecision: an answer that is not a decision is
// refused with the choices, and the thread stays parked.
func TestPathApprovalBadDecision(t *testing.T) {
	dir := apptest.WriteApp(t, map[string]string{"coder/agent.md": coderAgent})
	h := apptest.New(t, dir, coderScript(), apptest.Options{})
	url := h.Serve(t)
	in := parkOnWrite(t, url, "t1")
	resp := apptest.PostJSON(t, url+"/threads/t1/resume", fmt.Sprintf(`{"route":"/coder","resume":[{"interruptId":%q,"status":"resolved","payload":"maybe"}]}`, in.ID))
	if e := apptest.DecodeError(t, resp); resp.StatusCode != 400 || !strings.Contains(e.Error.Message, `"once", "always" or "deny"`) {
		t.Fatalf("bad decision: %d %+v", resp.StatusCode, e)
	}
	// Still parked: "once" goes through.
	if got := doneFiles(t, resume(t, url, "t1", in.ID, "resolved", `"once"`)); got["cmd/main.go"] != "package main" {
		t.Fatalf("files: %v", got)
	}
}

// TestPathApprovalAlways: "always" writes the file and lets later writes
// to the same path through without asking; another Go file still asks.
func TestPathApprovalAlways(t *testing.T) {
	dir := apptest.WriteApp(t, map[string]string{"coder/agent.md": coderAgent})
	model := coderScript().
		CallTool("editFile", map[string]string{"path": "cmd/main.go", "oldString": "main", "newString": "app"}).
		Reply("edited").
		CallTool("writeFile", map[string]string{"path": "other.go", "content": "package other"})
	h := apptest.New(t, dir, model, apptest.Options{})
	url := h.Serve(t)
	in := parkOnWrite(t, url, "t1")
	resume(t, url, "t1", in.ID, "resolved", `"always"`)
	events := apptest.ReadSSE(t, apptest.PostJSON(t, url+"/threads/t1/runs/stream", apptest.RunBody("/coder", "rename")))
	if got := doneFiles(t, events); got["cmd/main.go"] != "package app" {
		t.Fatalf("the edit after always: %v (%s)", got, strings.Join(dawntest.Types(events), ","))
	}
	events = apptest.ReadSSE(t, apptest.PostJSON(t, url+"/threads/t1/runs/stream", apptest.RunBody("/coder", "another")))
	if got := strings.Join(dawntest.Types(events), ","); !strings.HasSuffix(got, "interrupt,done") {
		t.Fatalf("a write to another Go file did not ask: %s", got)
	}
}
