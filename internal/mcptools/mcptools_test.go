package mcptools_test

import (
	"context"
	"encoding/json"
	"fmt"
	"github.com/dawn-go/dawn/markers"
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
	_, err := app.Load(t.Context(), dir, app.Options{ToolsKnown: true, Markers: markers.All()})
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
	_, err := app.Load(t.Context(), dir, app.Options{Tools: tools, ToolsKnown: true, Markers: markers.All()})
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
		{"mcp:\n  x:\n    command: a\n    timeout: soon\n", `mcp.x.timeout: must be a positive duration such as 30s or 2m, not "soon"`},
		{"mcp:\n  x:\n    command: a\n    idempotent: maybe\n", "mcp.x.idempotent: must be true or false"},
		{"mcp:\n  x:\n    command: ./no-such-server\n", "starting stdio ./no-such-server"},
	} {
		dir := writeApp(t, tc.yaml, "")
		_, err := app.Load(t.Context(), dir, app.Options{ToolsKnown: true, Markers: markers.All()})
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

// pids reads the ids the test server wrote to pidfile, one per start.
func pids(t *testing.T, pidfile string) []int {
	t.Helper()
	data, err := os.ReadFile(pidfile)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	var out []int
	for _, f := range strings.Fields(string(data)) {
		var pid int
		fmt.Sscan(f, &pid)
		out = append(out, pid)
	}
	return out
}

func running(pid int) bool { return syscall.Kill(pid, 0) == nil }

// callPID runs /desk calling tool (a test server's pid tool) once per
// thread and returns the pid each call reported.
func callPID(t *testing.T, srv *dawntest.Server, tool string, thread string) int {
	t.Helper()
	got := results(t, srv.Run(t, thread, "/desk", "go"))
	if len(got) != 1 || got[0].Error != "" {
		t.Fatalf("%s results %+v, want one pid", tool, got)
	}
	var out struct{ PID int }
	if err := json.Unmarshal(got[0].Output, &out); err != nil || out.PID == 0 {
		t.Fatalf("%s output %s, want a pid", tool, got[0].Output)
	}
	return out.PID
}

// TestServerStartsAtFirstCall: loading the app lists the server's tools
// with a session it closes at once, so after load no server process runs;
// the first tool call starts the server and the second reuses it.
func TestServerStartsAtFirstCall(t *testing.T) {
	pidfile := filepath.Join(t.TempDir(), "pids")
	dir := writeApp(t, "mcp:\n  test:\n    command: "+testServer(t)+"\n    env: {PIDFILE: "+pidfile+"}\n", "tools: [test_pid]\n")
	model := dawntest.Script().CallTool("test_pid", nil).Reply("Done.").CallTool("test_pid", nil).Reply("Done.")
	srv := dawntest.New(t, dir, model, dawntest.Options{})
	listed := pids(t, pidfile)
	if len(listed) != 1 {
		t.Fatalf("server started %d times at load (pids %v), want once, to list its tools", len(listed), listed)
	}
	if running(listed[0]) {
		t.Errorf("server process %d, started at load to list the tools, still runs after load", listed[0])
	}
	// Loading again with the same settings reuses the listing.
	if _, err := app.Load(t.Context(), dir, app.Options{ToolsKnown: true, Markers: markers.All()}); err != nil {
		t.Fatal(err)
	}
	if got := pids(t, pidfile); len(got) != 1 {
		t.Errorf("a second load started the server again (pids %v); want the listing reused", got)
	}

	first := callPID(t, srv, "test_pid", "t1")
	second := callPID(t, srv, "test_pid", "t2")
	if first == listed[0] || !running(first) {
		t.Errorf("the first call ran in process %d (load's was %d, running %v), want a new process that stays up", first, listed[0], running(first))
	}
	if second != first {
		t.Errorf("the second call ran in process %d, want the first call's %d reused", second, first)
	}
	if got := pids(t, pidfile); len(got) != 2 {
		t.Errorf("server started %d times (pids %v), want twice: the listing at load and the first call", len(got), got)
	}
}

// TestReloadStopsRemovedServers: loading the app again after dawn.yaml
// drops one server and changes another stops both old processes and keeps
// the unchanged one.
func TestReloadStopsRemovedServers(t *testing.T) {
	tmp := t.TempDir()
	server := func(name string, extra string) string {
		return "  " + name + ":\n    command: " + testServer(t) + "\n    env: {PIDFILE: " + filepath.Join(tmp, name) + extra + "}\n"
	}
	dir := writeApp(t, "mcp:\n"+server("keep", "")+server("gone", "")+server("changed", ""), "")
	model := dawntest.Script().
		CallTool("keep_pid", nil).Reply("Done.").
		CallTool("gone_pid", nil).Reply("Done.").
		CallTool("changed_pid", nil).Reply("Done.").
		CallTool("gone_pid", nil).Reply("Done.")
	srv := dawntest.New(t, dir, model, dawntest.Options{})
	keep := callPID(t, srv, "keep_pid", "t1")
	gone := callPID(t, srv, "gone_pid", "t2")
	changed := callPID(t, srv, "changed_pid", "t3")

	yaml := "mcp:\n" + server("keep", "") + "  changed:\n    command: " + testServer(t) + "\n    env: {PIDFILE: " + filepath.Join(tmp, "changed") + ", MORE: x}\n"
	if err := os.WriteFile(filepath.Join(dir, "dawn.yaml"), []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := app.Load(t.Context(), dir, app.Options{ToolsKnown: true, Markers: markers.All()}); err != nil {
		t.Fatal(err)
	}
	if running(gone) {
		t.Errorf("server %q (process %d) still runs after a reload without it in dawn.yaml", "gone", gone)
	}
	if running(changed) {
		t.Errorf("server %q (process %d) still runs after a reload that changed its settings", "changed", changed)
	}
	if !running(keep) {
		t.Errorf("server %q (process %d) was stopped by a reload that left it as it was", "keep", keep)
	}

	// The old app's tool for the removed server does not start it again.
	got := results(t, srv.Run(t, "t4", "/desk", "go"))
	if len(got) != 1 || !strings.Contains(got[0].Error, "dawn.yaml") {
		t.Errorf("calling the removed server through the old app = %+v, want an error saying dawn.yaml no longer names it", got)
	}
	if started := pids(t, filepath.Join(tmp, "gone")); len(started) != 2 {
		t.Errorf("server %q started %d times (%v), want twice (listing, first call); a removed server is not started again", "gone", len(started), started)
	}

	if err := os.WriteFile(filepath.Join(dir, "dawn.yaml"), []byte("mcp:\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := app.Load(t.Context(), dir, app.Options{ToolsKnown: true, Markers: markers.All()}); err != nil {
		t.Fatal(err)
	}
	if running(keep) {
		t.Errorf("server %q (process %d) still runs after a reload with an empty mcp:", "keep", keep)
	}
}
