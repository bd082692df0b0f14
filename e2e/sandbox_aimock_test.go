package e2e

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/dawn-go/dawn/internal/sandbox/sandboxtest"
	"github.com/dawn-go/dawn/stream"
)

// bashFixtures is the aimock fixture file of the runBash tests: each user
// message names a turn, and each turn's calls follow from its last tool
// result. hostURL is a loopback server of the test.
func bashFixtures(t *testing.T, hostURL string) string {
	t.Helper()
	call := func(tool string, args map[string]string) map[string]any {
		return map[string]any{"toolCalls": []map[string]any{{"name": tool, "arguments": args}}}
	}
	text := func(s string) map[string]any { return map[string]any{"content": s} }
	type fixture struct {
		Match    map[string]any `json:"match"`
		Response map[string]any `json:"response"`
	}
	fixtures := []fixture{
		{map[string]any{"userMessage": "Run the build", "hasToolResult": false}, call("runBash", map[string]string{"command": "echo built by the box > out.txt && echo wrote"})},
		{map[string]any{"userMessage": "Run the build", "toolResultContains": "wrote"}, call("runBash", map[string]string{"command": "cat /etc/shadow"})},
		{map[string]any{"userMessage": "Run the build", "hasToolResult": true}, text("Build done.")},
		{map[string]any{"userMessage": "Read the output", "hasToolResult": false}, call("readFile", map[string]string{"path": "out.txt"})},
		{map[string]any{"userMessage": "Read the output", "hasToolResult": true}, text("Read it.")},
		{map[string]any{"userMessage": "Reach the host", "hasToolResult": false}, call("runBash", map[string]string{"command": "wget -q -T 3 -O- " + hostURL + "/"})},
		{map[string]any{"userMessage": "Reach the host", "hasToolResult": true}, text("Tried.")},
		{map[string]any{"userMessage": "Show the routes", "hasToolResult": false}, call("runBash", map[string]string{"command": "cat /proc/net/route"})},
		{map[string]any{"userMessage": "Show the routes", "hasToolResult": true}, text("Shown.")},
	}
	data, err := json.Marshal(map[string]any{"fixtures": fixtures})
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "bash.json")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// bashOutcome is runBash's result.
type bashOutcome struct {
	ExitCode int    `json:"exit_code"`
	Stdout   string `json:"stdout"`
	Stderr   string `json:"stderr"`
}

// sandboxServer is a stock dawn start serving /coder (a thread workspace)
// with the sandbox settings sandbox, on openai:gpt-4o-mini pointed at
// aimock.
type sandboxServer struct {
	url string
}

func startSandboxServer(t *testing.T, bin, mock, sandbox string) *sandboxServer {
	t.Helper()
	app := t.TempDir()
	writeFiles(t, app, map[string]string{
		// The gate in front of runBash is the permissions tests' (the
		// LangGraph SDK's); these are about the box.
		"dawn.yaml":      "sandbox:\n" + sandbox + "permissions: {mode: bypass}\n",
		"coder/agent.md": "---\nmodel: openai:gpt-4o-mini\nworkspace: thread\n---\nYou run commands.\n",
	})
	env := append(aimockEnv(mock), "DAWN_STORE="+filepath.Join(t.TempDir(), "dawn.db"))
	return &sandboxServer{url: startDawn(t, bin, app, env...)}
}

// turn runs one turn on thread and returns its tool results' outputs.
func (s *sandboxServer) turn(t *testing.T, thread, message string) []json.RawMessage {
	t.Helper()
	events := readEvents(t, postJSON(t, s.url+"/threads/"+thread+"/runs/stream", userRun("/coder", message)))
	if types := strings.Join(eventTypes(events), ","); !strings.HasSuffix(types, "done") || strings.Contains(types, "error") {
		t.Fatalf("turn %q: %s", message, types)
	}
	return toolOutputs(t, events)
}

func toolOutputs(t *testing.T, events []stream.Event) []json.RawMessage {
	t.Helper()
	var out []json.RawMessage
	for _, e := range events {
		if e.Type != "tool_result" {
			continue
		}
		var r struct {
			Output json.RawMessage `json:"output"`
		}
		if err := json.Unmarshal(e.Data, &r); err != nil {
			t.Fatal(err)
		}
		out = append(out, r.Output)
	}
	return out
}

func bashOf(t *testing.T, out json.RawMessage) bashOutcome {
	t.Helper()
	var r bashOutcome
	if err := json.Unmarshal(out, &r); err != nil || !strings.Contains(string(out), `"exit_code"`) {
		t.Fatalf("not a runBash result: %s", out)
	}
	return r
}

// defaultRoute reports whether /proc/net/route text has a default route
// (destination 00000000) on an interface other than lo.
func defaultRoute(table string) bool {
	for _, line := range strings.Split(table, "\n")[1:] {
		f := strings.Fields(line)
		if len(f) > 1 && f[0] != "lo" && f[1] == "00000000" {
			return true
		}
	}
	return false
}

// TestAimockRunBash runs the stock dawn binary with each sandbox provider
// on a model over the OpenAI wire (aimock) that calls runBash: a file a
// command writes is read by readFile on the next turn and served by
// GET /threads/:id/files; reading /etc/shadow is refused by the kernel;
// with network deny a command cannot reach a loopback server of the test
// and the box has no default route; the model is sent each result.
// With allow, the local box reaches that server; the docker box, whose
// allow is Docker's bridge (which tests here must not send to), is shown
// to have a default route on an interface of its own, read from
// /proc/net/route without sending a packet.
func TestAimockRunBash(t *testing.T) {
	var hits atomic.Int32
	host := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		hits.Add(1)
		fmt.Fprint(w, "reached")
	}))
	t.Cleanup(host.Close)
	mock := startAimock(t, bashFixtures(t, host.URL))
	bin := buildDawn(t)
	for _, p := range []struct {
		name    string
		require func(testing.TB)
		yaml    string
	}{
		{"local", sandboxtest.Bwrap, "  provider: local\n"},
		{"docker", sandboxtest.Docker, "  provider: docker\n  image: " + sandboxtest.Image + "\n"},
	} {
		t.Run(p.name, func(t *testing.T) {
			p.require(t)
			t.Cleanup(func() { sandboxtest.RemoveAll(t) })
			checkDenyBox(t, startSandboxServer(t, bin, mock, p.yaml+"  network: {mode: deny}\n"), mock, &hits)
			checkAllowBox(t, startSandboxServer(t, bin, mock, p.yaml+"  network: {mode: allow}\n"), p.name, &hits)
		})
	}
}

// checkDenyBox runs the build, read, reach and routes turns on s, whose
// box has network deny.
func checkDenyBox(t *testing.T, s *sandboxServer, mock string, hits *atomic.Int32) {
	t.Helper()
	outs := s.turn(t, "b1", "Run the build")
	if len(outs) != 2 {
		t.Fatalf("the build turn had %d tool results, want 2", len(outs))
	}
	if r := bashOf(t, outs[0]); r.ExitCode != 0 || r.Stdout != "wrote\n" {
		t.Errorf("writing out.txt: %+v", r)
	}
	if r := bashOf(t, outs[1]); r.ExitCode == 0 || !strings.Contains(r.Stderr, "Permission denied") {
		t.Errorf("reading /etc/shadow: %+v", r)
	}
	outs = s.turn(t, "b1", "Read the output")
	if len(outs) != 1 || !strings.Contains(string(outs[0]), "built by the box") {
		t.Errorf("readFile of what the command wrote: %s", outs)
	}
	if got := fileContent(t, s.url+"/threads/b1/files/out.txt"); got != "built by the box\n" {
		t.Errorf("GET /threads/b1/files/out.txt = %q", got)
	}
	before := hits.Load()
	outs = s.turn(t, "b1", "Reach the host")
	if r := bashOf(t, outs[0]); r.ExitCode == 0 || strings.Contains(r.Stdout, "reached") || hits.Load() != before {
		t.Errorf("network deny reached the loopback server: %+v", r)
	}
	outs = s.turn(t, "b1", "Show the routes")
	if r := bashOf(t, outs[0]); defaultRoute(r.Stdout) {
		t.Errorf("network deny: the box has a default route:\n%s", r.Stdout)
	}
	sent := false
	for _, r := range chatRequests(t, mock) {
		for _, m := range r.Messages {
			sent = sent || (m.Role == "tool" && strings.Contains(m.text(), "Permission denied") && strings.Contains(m.text(), `"exit_code"`))
		}
	}
	if !sent {
		t.Errorf("no request to the model carried the /etc/shadow result")
	}
}

// checkAllowBox checks network allow on s: the local box reaches the
// test's loopback server; the docker box has a default route of its own.
func checkAllowBox(t *testing.T, s *sandboxServer, provider string, hits *atomic.Int32) {
	t.Helper()
	if provider == "local" {
		before := hits.Load()
		outs := s.turn(t, "a1", "Reach the host")
		if r := bashOf(t, outs[0]); r.ExitCode != 0 || r.Stdout != "reached" || hits.Load() != before+1 {
			t.Errorf("network allow did not reach the loopback server: %+v", r)
		}
		return
	}
	outs := s.turn(t, "a1", "Show the routes")
	if r := bashOf(t, outs[0]); r.ExitCode != 0 || !defaultRoute(r.Stdout) {
		t.Errorf("network allow: the docker box has no default route of its own: %+v", r)
	}
}
