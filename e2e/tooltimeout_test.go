package e2e

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestHungToolCallTimesOut: a tool call that never answers fails at its
// deadline with an error the model sees, the run ends normally and the
// thread takes the next message. The MCP tool blk_hang (a stdio server
// that accepts tools/call and never answers) is bounded by its server's
// timeout: in dawn.yaml, the Go tool stall (which ignores its context) by
// tools.timeout. The server is goapp, a real app binary, on aimock.
func TestHungToolCallTimesOut(t *testing.T) {
	bin := buildBinary(t, "e2e/testdata/goapp")
	mcpBin := buildBinary(t, "e2e/testdata/blockmcp")
	mock := startAimock(t, "testdata/tool_delivery.json")
	app, _ := deliveryApp(t, mcpBin, "    timeout: 1s\ntools:\n  timeout: 1500ms\n")
	url := startDawn(t, bin, app, aimockEnv(mock)...)

	for _, tc := range []struct{ thread, message, answer, limit string }{
		{"mcp-hang", "Call the hanging tool", "The MCP tool timed out.", "1s"},
		{"go-stall", "Call the stalling tool", "The Go tool timed out.", "1.5s"},
	} {
		t.Run(tc.thread, func(t *testing.T) {
			status, body := waitRun(t, url+"/threads/"+tc.thread+"/runs/wait", userRun("/desk", tc.message))
			if status != http.StatusOK || !strings.Contains(body, tc.answer) {
				t.Fatalf("runs/wait: %d %s, want 200 with %q", status, body, tc.answer)
			}
			if !strings.Contains(body, "did not finish within "+tc.limit) {
				t.Fatalf("the tool's error does not name its %s deadline: %s", tc.limit, body)
			}
			status, body = waitRun(t, url+"/threads/"+tc.thread+"/runs/wait", userRun("/desk", "Thanks"))
			if status != http.StatusOK || !strings.Contains(body, "You're welcome.") {
				t.Fatalf("the next message on the thread: %d %s", status, body)
			}
		})
	}
}

// waitRun posts a runs/wait request and gives up after 30 seconds, so a
// run that never ends fails the test instead of hanging it.
func waitRun(t *testing.T, url, body string) (int, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("POST %s: %v (a hung tool call must not hold the run)", url, err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	var v any
	if resp.StatusCode == http.StatusOK && json.Unmarshal(data, &v) != nil {
		t.Fatalf("runs/wait answered %s", data)
	}
	return resp.StatusCode, string(data)
}
