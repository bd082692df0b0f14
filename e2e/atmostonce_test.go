package e2e

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dawn-go/dawn/stream"
)

// The tests here check what happens to an approved tool call when the
// server dies while the call runs. The server is goapp, an app binary
// with Go tools (dawn.Main), serving routes on openai:gpt-4o-mini against
// aimock, with the stdio MCP server testdata/blockmcp. Each tool appends a
// line per run to a log file, so the test counts the runs, and its first
// run never returns: the test SIGKILLs the server while it runs, before
// the turn is saved, and starts it again on the same app folder and store.

// buildBinary builds the main package pkg (a path from the repository
// root), once per test binary.
func buildBinary(t *testing.T, pkg string) string {
	t.Helper()
	return built(t, pkg)
}

// deliveryApp writes an app whose dawn.yaml (with extra added) serves
// blockmcp as server blk, logging to the returned file, with the route
// /ops that needs approval for four tools: blk_apply, blk_sync (annotated
// idempotent by its server), charge and refresh (goapp's Go tools; refresh
// is declared idempotent), and the route /desk that needs none.
func deliveryApp(t *testing.T, mcpBin, extra string) (dir, calls string) {
	t.Helper()
	dir = t.TempDir()
	calls = filepath.Join(t.TempDir(), "calls.log")
	files := map[string]string{
		"dawn.yaml":     fmt.Sprintf("mcp:\n  blk:\n    command: %q\n    args: [%q]\n%s", mcpBin, calls, extra),
		"ops/agent.md":  "---\nmodel: openai:gpt-4o-mini\napprove: [blk_apply, blk_sync, charge, refresh]\n---\nYou apply changes.\n",
		"desk/agent.md": "---\nmodel: openai:gpt-4o-mini\n---\nYou help.\n",
	}
	for name, body := range files {
		writeFile(t, filepath.Join(dir, filepath.FromSlash(name)), body)
	}
	return dir, calls
}

// callLines returns the lines of the calls log: one "tool key" per run.
func callLines(t *testing.T, path string) []string {
	t.Helper()
	data, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	text := strings.TrimSpace(string(data))
	if text == "" {
		return nil
	}
	return strings.Split(text, "\n")
}

// waitCalls waits until the calls log has n lines.
func waitCalls(t *testing.T, path string, n int) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for len(callLines(t, path)) < n {
		if time.Now().After(deadline) {
			t.Fatalf("the calls log has %v, want %d lines", callLines(t, path), n)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// postInBackground posts body and reads the answer to its end, whatever
// happens to the server: the caller kills it meanwhile.
func postInBackground(url, body string) {
	go func() {
		resp, err := http.Post(url, "application/json", strings.NewReader(body))
		if err == nil {
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
	}()
}

// TestApprovedCallAtMostOnce: an approved call that the server's crash
// cuts off after it started is not offered for approval again and does
// not run again; the next run tells the model (a tool result) and the
// client (a tool_result event with "outcome":"unknown") that its outcome
// is unknown. A tool declared idempotent runs again instead.
func TestApprovedCallAtMostOnce(t *testing.T) {
	bin := buildBinary(t, "e2e/testdata/goapp")
	mcpBin := buildBinary(t, "e2e/testdata/blockmcp")
	for _, tc := range []struct {
		tool       string
		idempotent bool
	}{
		{"blk_apply", false},
		{"charge", false},
		{"blk_sync", true},
		{"refresh", true},
	} {
		t.Run(tc.tool, func(t *testing.T) {
			mock := startAimock(t, "testdata/tool_delivery.json")
			app, calls := deliveryApp(t, mcpBin, "")
			env := append(aimockEnv(mock), "GOAPP_LOG="+calls)
			url, kill := launchDawn(t, bin, app, env...)
			in := parkRun(t, url, "t1", "/ops", "Use "+tc.tool, "tool_call,interrupt,done")

			// Approve it; the tool starts, logs its run and never returns:
			// the server dies before the turn is saved.
			postInBackground(url+"/threads/t1/resume", resumeAnswer("/ops", in.ID, "resolved", `"once"`))
			waitCalls(t, calls, 1)
			kill()

			url = startDawn(t, bin, app, env...)
			if st := getState(t, url, "t1"); len(st.Interrupts) != 0 {
				t.Fatalf("after the crash the thread is parked again on %s; the approved call must not be offered again: %s", st.Interrupts[0].ID, st.raw)
			}
			status, body := postStatus(t, url+"/threads/t1/resume", resumeAnswer("/ops", in.ID, "resolved", `"once"`))
			if status != http.StatusConflict || !strings.Contains(body, "no_interrupt_pending") {
				t.Fatalf("a second answer to the approved call: %d %s, want 409 no_interrupt_pending", status, body)
			}

			events := readEvents(t, postJSON(t, url+"/threads/t1/runs/stream", userRun("/ops", "What happened?")))
			if got := lastAnswer(t, events); got != "Checked what happened." {
				t.Fatalf("answer after the crash: %q (events %v)", got, eventTypes(events))
			}
			result := toolResultEvent(t, events, tc.tool)
			reqs := chatRequests(t, mock)
			toolMsg := lastToolMessage(t, reqs[len(reqs)-1])
			lines := callLines(t, calls)
			if tc.idempotent {
				if len(lines) != 2 || !strings.Contains(string(result), "(run 2)") || !strings.Contains(toolMsg, "applied k1 (run 2)") {
					t.Fatalf("an idempotent tool's cut-off call must run again: runs %v, event %s, model got %q", lines, result, toolMsg)
				}
				return
			}
			if len(lines) != 1 {
				t.Fatalf("the approved call ran %d times: %v", len(lines), lines)
			}
			if !strings.Contains(string(result), `"outcome":"unknown"`) || !strings.Contains(toolMsg, "outcome is unknown") {
				t.Fatalf("the cut-off call must reach the client as outcome unknown (event %s) and the model too (it got %q)", result, toolMsg)
			}
		})
	}
}

// toolResultEvent returns the data of the one tool_result event for tool.
func toolResultEvent(t *testing.T, events []stream.Event, tool string) json.RawMessage {
	t.Helper()
	var found []json.RawMessage
	for _, e := range events {
		var d struct {
			Name string `json:"name"`
		}
		if e.Type == stream.TypeToolResult && json.Unmarshal(e.Data, &d) == nil && d.Name == tool {
			found = append(found, e.Data)
		}
	}
	if len(found) != 1 {
		t.Fatalf("the run after the crash has %d tool_result events for %s, want 1: %v", len(found), tool, eventTypes(events))
	}
	return found[0]
}

// lastToolMessage returns the text of the last tool message of a chat
// request.
func lastToolMessage(t *testing.T, req chatRequest) string {
	t.Helper()
	for i := len(req.Messages) - 1; i >= 0; i-- {
		if m := req.Messages[i]; m.Role == "tool" {
			return m.text()
		}
	}
	t.Fatalf("the model's request has no tool message: %+v", req.Messages)
	return ""
}
