package mcptools_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/dawn-go/dawn"
	"github.com/dawn-go/dawn/dawntest"
	"github.com/dawn-go/dawn/internal/app"
	"github.com/dawn-go/dawn/internal/mcptools"
	"github.com/dawn-go/dawn/internal/nodetool"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// testServer builds the SDK server in testdata once per test binary.
var testServer = sync1(func(t *testing.T) string {
	bin := filepath.Join(os.TempDir(), fmt.Sprintf("dawn-mcp-test-server-%d", os.Getpid()))
	out, err := exec.Command("go", "build", "-o", bin, "./testdata/server").CombinedOutput()
	if err != nil {
		t.Fatalf("building testdata/server: %v\n%s", err, out)
	}
	return bin
})

func sync1(build func(t *testing.T) string) func(t *testing.T) string {
	var path string
	return func(t *testing.T) string {
		t.Helper()
		if path == "" {
			path = build(t)
		}
		return path
	}
}

func TestMain(m *testing.M) {
	code := m.Run()
	mcptools.Shutdown()
	os.Remove(filepath.Join(os.TempDir(), fmt.Sprintf("dawn-mcp-test-server-%d", os.Getpid())))
	os.Exit(code)
}

// writeApp writes an app with dawn.yaml and one route /desk whose agent.md
// has front matter front.
func writeApp(t *testing.T, dawnYAML, front string) string {
	t.Helper()
	dir := t.TempDir()
	route := filepath.Join(dir, "desk")
	if err := os.MkdirAll(route, 0o755); err != nil {
		t.Fatal(err)
	}
	agent := "---\ndescription: desk\n" + front + "---\nYou help."
	if err := os.WriteFile(filepath.Join(route, "agent.md"), []byte(agent), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "dawn.yaml"), []byte(dawnYAML), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(mcptools.Shutdown)
	return dir
}

// toolResult is a tool_result event's data.
type toolResult struct {
	Name   string          `json:"name"`
	Output json.RawMessage `json:"output"`
	Error  string          `json:"error"`
}

func results(t *testing.T, res *dawntest.Result) []toolResult {
	t.Helper()
	if res.Err != nil {
		t.Fatalf("run failed: %v", res.Err)
	}
	var out []toolResult
	for _, e := range res.Events {
		if e.Type == "tool_result" {
			var r toolResult
			if err := json.Unmarshal(e.Data, &r); err != nil {
				t.Fatal(err)
			}
			out = append(out, r)
		}
	}
	return out
}

// TestStdioToolsBecomeRouteTools runs a route whose agent.md lists two
// tools of a stdio server: the model sees just those, with the server's
// schema; a text result, a structured result and an error reach it.
func TestStdioToolsBecomeRouteTools(t *testing.T) {
	dir := writeApp(t, "mcp:\n  test:\n    command: "+testServer(t)+"\n", "tools: [test_echo, test_add, test_fail]\n")
	model := dawntest.Script().
		CallTools(
			dawntest.ToolCall{Name: "test_echo", Args: map[string]any{"text": "hi"}},
			dawntest.ToolCall{Name: "test_add", Args: map[string]any{"a": 2, "b": 3}},
			dawntest.ToolCall{Name: "test_fail"},
		).
		Reply("Done.")
	srv := dawntest.New(t, dir, model, dawntest.Options{})
	got := results(t, srv.Run(t, "t1", "/desk", "go"))
	if len(got) != 3 {
		t.Fatalf("tool results %+v, want 3", got)
	}
	if got[0].Name != "test_echo" || string(got[0].Output) != `"echo: hi"` {
		t.Errorf("echo result = %+v, want the server's text", got[0])
	}
	if string(got[1].Output) != `{"sum":5}` {
		t.Errorf("add result = %s, want the structured content {\"sum\":5}", got[1].Output)
	}
	if !strings.Contains(got[2].Error, "the fail tool failed") {
		t.Errorf("fail result = %+v, want the server's error text for the model", got[2])
	}

	tools := model.Tools()[0]
	var names []string
	for _, tl := range tools {
		names = append(names, tl.Function.Name)
	}
	slices.Sort(names)
	if want := []string{"test_add", "test_echo", "test_fail"}; !slices.Equal(names, want) {
		t.Errorf("the model saw tools %v, want %v (agent.md tools: filters out test_pid and test_exit)", names, want)
	}
	for _, tl := range tools {
		if tl.Function.Name != "test_echo" {
			continue
		}
		schema, _ := json.Marshal(tl.Function.Parameters)
		if !strings.Contains(string(schema), `"the text to echo"`) {
			t.Errorf("test_echo schema %s does not carry the server's property description", schema)
		}
	}
}

// TestServerRestartsAfterItDies: a server that exits mid-call gives the
// model an error, and the next call starts it again.
func TestServerRestartsAfterItDies(t *testing.T) {
	dir := writeApp(t, "mcp:\n  test:\n    command: "+testServer(t)+"\n", "")
	model := dawntest.Script().
		CallTool("test_pid", nil).
		CallTool("test_exit", nil).
		CallTool("test_pid", nil).
		Reply("Done.")
	srv := dawntest.New(t, dir, model, dawntest.Options{})
	got := results(t, srv.Run(t, "t1", "/desk", "go"))
	if len(got) != 3 {
		t.Fatalf("tool results %+v, want 3", got)
	}
	if got[1].Error == "" || !strings.Contains(got[1].Error, `MCP server "test"`) {
		t.Errorf("exit result = %+v, want an error naming the server", got[1])
	}
	var before, after struct{ PID int }
	json.Unmarshal(got[0].Output, &before)
	json.Unmarshal(got[2].Output, &after)
	if before.PID == 0 || after.PID == 0 || before.PID == after.PID {
		t.Errorf("pid before %s, after %+v: want a new server process after the exit", got[0].Output, got[2])
	}
	mcptools.Shutdown()
	if err := syscall.Kill(after.PID, 0); err == nil {
		t.Errorf("server process %d still runs after Shutdown", after.PID)
	}
}

// TestHTTPServerGetsHeadersFromEnv serves the same SDK over streamable
// HTTP behind a bearer check; dawn.yaml takes the token from $MCP_TOKEN.
func TestHTTPServerGetsHeadersFromEnv(t *testing.T) {
	server := mcp.NewServer(&mcp.Implementation{Name: "http-test", Version: "v1"}, nil)
	type in struct {
		Q string `json:"q"`
	}
	mcp.AddTool(server, &mcp.Tool{Name: "search", Description: "Search."}, func(ctx context.Context, r *mcp.CallToolRequest, in in) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "found " + in.Q}}}, nil, nil
	})
	handler := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return server }, nil)
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer s3cret" {
			http.Error(w, "no token", http.StatusUnauthorized)
			return
		}
		handler.ServeHTTP(w, r)
	}))
	defer ts.Close()
	yaml := "mcp:\n  docs:\n    url: " + ts.URL + "\n    headers:\n      Authorization: Bearer ${MCP_TOKEN}\n"

	dir := writeApp(t, yaml, "tools: [docs_search]\n")
	_, err := app.Load(t.Context(), dir, app.Options{ToolsKnown: true})
	if err == nil || !strings.Contains(err.Error(), "dawn.yaml") || !strings.Contains(err.Error(), "mcp.docs") || !strings.Contains(err.Error(), "MCP_TOKEN") {
		t.Fatalf("load without MCP_TOKEN: %v, want an error naming dawn.yaml, mcp.docs and MCP_TOKEN", err)
	}

	t.Setenv("MCP_TOKEN", "s3cret")
	model := dawntest.Script().CallTool("docs_search", map[string]any{"q": "mcp"}).Reply("Done.")
	srv := dawntest.New(t, dir, model, dawntest.Options{})
	got := results(t, srv.Run(t, "t1", "/desk", "go"))
	if len(got) != 1 || string(got[0].Output) != `"found mcp"` {
		t.Errorf("tool results %+v, want docs_search's text", got)
	}
}

// TestNameConflictNamesDawnYAML: an MCP tool with the name of a Go tool is
// an error naming both and dawn.yaml.
func TestNameConflictNamesDawnYAML(t *testing.T) {
	dir := writeApp(t, "mcp:\n  test:\n    command: "+testServer(t)+"\n", "")
	tools := dawn.Tools(dawn.Tool("test_echo", "mine", func(ctx context.Context, in struct{}) (string, error) { return "", nil }))
	_, err := app.Load(t.Context(), dir, app.Options{Tools: tools, ToolsKnown: true})
	if err == nil || !strings.Contains(err.Error(), "dawn.yaml mcp.test") || !strings.Contains(err.Error(), "dawn.Tool") {
		t.Fatalf("load = %v, want a conflict naming dawn.yaml mcp.test and the Go tool", err)
	}
}

// TestBadConfig reports dawn.yaml mistakes with the file and the key.
func TestBadConfig(t *testing.T) {
	for _, tc := range []struct{ yaml, want string }{
		{"mcp:\n  x:\n    command: a\n    url: http://b\n", "mcp.x sets both command and url"},
		{"mcp:\n  x:\n    cmd: a\n", "field mcp.x.cmd not found"},
		{"mcp:\n  x: {}\n", "mcp.x needs command"},
		{"mcp:\n  x.y:\n    command: a\n", "mcp.x.y: a server name"},
		{"mcp:\n  x:\n    url: ftp://b\n", "must start with http://"},
		{"mcp:\n  x:\n    command: ./no-such-server\n", "starting stdio ./no-such-server"},
	} {
		dir := writeApp(t, tc.yaml, "")
		_, err := app.Load(t.Context(), dir, app.Options{ToolsKnown: true})
		if err == nil || !strings.Contains(err.Error(), "dawn.yaml") || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("dawn.yaml %q: load = %v, want an error naming dawn.yaml and %q", tc.yaml, err, tc.want)
		}
	}
}

// TestEverythingServer runs the reference server from npm,
// @modelcontextprotocol/server-everything, pinned in tools/mcp.
func TestEverythingServer(t *testing.T) {
	const entry = "@modelcontextprotocol/server-everything/dist/index.js"
	pkg := nodetool.Package(t, "mcp", entry, "DAWN_REQUIRE_NODE")
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node is not on PATH")
	}
	script := filepath.Join(pkg, "node_modules", entry)
	yaml := fmt.Sprintf("mcp:\n  everything:\n    command: %s\n    args: [%q, stdio]\n", node, script)
	dir := writeApp(t, yaml, "tools: [everything_echo]\n")
	model := dawntest.Script().CallTool("everything_echo", map[string]any{"message": "hello"}).Reply("Done.")
	srv := dawntest.New(t, dir, model, dawntest.Options{})
	got := results(t, srv.Run(t, "t1", "/desk", "go"))
	if len(got) != 1 || !strings.Contains(string(got[0].Output), "hello") || got[0].Error != "" {
		t.Errorf("everything_echo results %+v, want the echoed message", got)
	}
}
