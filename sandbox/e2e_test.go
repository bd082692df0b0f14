package sandbox_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/dawn-go/dawn/dawntest"
	"github.com/dawn-go/dawn/internal/apptest"
	"github.com/dawn-go/dawn/internal/sandbox/sandboxtest"
	"github.com/dawn-go/dawn/stream"
	"github.com/tmc/langchaingo/llms"
)

// provider is a sandbox provider under test: its dawn.yaml lines and the
// check that this host runs it.
type provider struct {
	name    string
	require func(testing.TB)
	yaml    string
}

var providers = []provider{
	{"local", sandboxtest.Bwrap, "  provider: local\n"},
	{"docker", sandboxtest.Docker, "  provider: docker\n  image: " + sandboxtest.Image + "\n"},
}

// directive is what the commanding model's user message asks: one tool
// call.
type directive struct {
	Tool string          `json:"tool"`
	Args json.RawMessage `json:"args"`
}

// commander is a model that makes the tool call each user message spells
// out as a directive, and answers "done" once the call has a result.
func commander() llms.Model {
	n := 0
	return dawntest.Script().Then(func(msgs []llms.MessageContent, _ llms.CallOptions) (*llms.ContentResponse, error) {
		last := msgs[len(msgs)-1]
		choice := &llms.ContentChoice{Content: "done", StopReason: "stop"}
		if last.Role == llms.ChatMessageTypeHuman {
			var d directive
			if err := json.Unmarshal([]byte(last.Parts[0].(llms.TextContent).Text), &d); err != nil {
				return nil, err
			}
			n++
			call := llms.ToolCall{ID: fmt.Sprintf("call_%d", n), Type: "function", FunctionCall: &llms.FunctionCall{Name: d.Tool, Arguments: string(d.Args)}}
			choice = &llms.ContentChoice{StopReason: "tool_calls", ToolCalls: []llms.ToolCall{call}, FuncCall: call.FunctionCall}
		}
		return &llms.ContentResponse{Choices: []*llms.ContentChoice{choice}}, nil
	}).Repeat()
}

// server is a Dawn API over loopback HTTP with the app in dir.
type server struct {
	url string
	h   *apptest.Harness
}

// sandboxApp writes an app whose /coder route has a thread workspace and
// whose dawn.yaml configures the sandbox with lines. These tests are about
// the box, not the permissions gate in front of it (approval's tests put
// the gate before this runBash), so the mode is bypass: without it every
// command would park on a person's answer.
func sandboxApp(t *testing.T, p provider, lines string) string {
	t.Helper()
	return apptest.WriteApp(t, map[string]string{
		"dawn.yaml":      "sandbox:\n" + p.yaml + lines + "permissions: {mode: bypass}\n" + "context:\n  tool_output_max_bytes: 8192\n",
		"coder/agent.md": "---\nworkspace: thread\n---\nYou run commands.\n",
	})
}

func serve(t *testing.T, dir, storePath string) *server {
	t.Helper()
	t.Cleanup(func() { sandboxtest.RemoveAll(t) })
	h := apptest.New(t, dir, commander(), apptest.Options{StorePath: storePath})
	srv := httptest.NewServer(h.API)
	t.Cleanup(srv.Close)
	return &server{url: srv.URL, h: h}
}

// call runs one turn on thread that calls tool with args, and returns the
// tool_result's output and the run's events.
func (s *server) call(t *testing.T, thread, tool string, args any) (json.RawMessage, []stream.Event) {
	t.Helper()
	a, _ := json.Marshal(args)
	d, _ := json.Marshal(directive{Tool: tool, Args: a})
	body, _ := json.Marshal(map[string]any{"route": "/coder", "input": map[string]any{"messages": []map[string]string{{"role": "user", "content": string(d)}}}})
	events := apptest.ReadSSE(t, apptest.PostJSON(t, s.url+"/threads/"+thread+"/runs/stream", string(body)))
	var out json.RawMessage
	for _, ev := range events {
		if ev.Type == "tool_result" {
			var r struct {
				Name   string          `json:"name"`
				Output json.RawMessage `json:"output"`
			}
			if err := json.Unmarshal(ev.Data, &r); err != nil {
				t.Fatal(err)
			}
			out = r.Output
		}
	}
	if last := events[len(events)-1]; last.Type != "done" || !strings.Contains(string(last.Data), "done") {
		t.Fatalf("the run did not finish with the model's answer: %s %s", last.Type, last.Data)
	}
	if out == nil {
		t.Fatalf("no tool_result for %s: %s", tool, dawntest.Types(events))
	}
	return out, events
}

// bashResult is runBash's result.
type bashResult struct {
	ExitCode   int    `json:"exit_code"`
	Stdout     string `json:"stdout"`
	Stderr     string `json:"stderr"`
	Truncated  bool   `json:"truncated"`
	DurationMS int64  `json:"duration_ms"`
}

func (s *server) bash(t *testing.T, thread, command string) bashResult {
	t.Helper()
	out, _ := s.call(t, thread, "runBash", map[string]string{"command": command})
	var r bashResult
	if err := json.Unmarshal(out, &r); err != nil || !strings.Contains(string(out), `"exit_code"`) {
		t.Fatalf("runBash %q: the result is not runBash's: %v: %s", command, err, out)
	}
	return r
}

func (s *server) readFile(t *testing.T, thread, path string) string {
	t.Helper()
	out, _ := s.call(t, thread, "readFile", map[string]string{"path": path})
	var text string
	if err := json.Unmarshal(out, &text); err != nil {
		t.Fatalf("readFile %s: %s", path, out)
	}
	return text
}

// TestRunBashFilesOutliveTheBox: a file a command writes is read by
// readFile on the next turn; a file writeFile writes is seen by the next
// command; after a restart on the same store (a new, cold box) both are
// still there for readFile and for commands.
func TestRunBashFilesOutliveTheBox(t *testing.T) {
	for _, p := range providers {
		t.Run(p.name, func(t *testing.T) {
			p.require(t)
			dir := sandboxApp(t, p, "")
			storePath := filepath.Join(t.TempDir(), "dawn.db")
			s := serve(t, dir, storePath)
			r := s.bash(t, "t1", "mkdir -p out && echo hello > out/a.txt && echo made")
			if r.ExitCode != 0 || r.Stdout != "made\n" {
				t.Fatalf("writing a file: %+v", r)
			}
			if got := s.readFile(t, "t1", "out/a.txt"); got != "hello\n" {
				t.Fatalf("readFile of what the command wrote: %q", got)
			}
			s.call(t, "t1", "writeFile", map[string]string{"path": "notes.md", "content": "from the file tool\n"})
			if r := s.bash(t, "t1", "cat notes.md; rm out/a.txt; echo gone > out/b.txt"); r.Stdout != "from the file tool\n" {
				t.Fatalf("the command's view of writeFile's file: %+v", r)
			}

			s2 := serve(t, dir, storePath) // a restart: a new pool, a cold box
			if got := s2.readFile(t, "t1", "out/b.txt"); got != "gone\n" {
				t.Fatalf("readFile after the restart: %q", got)
			}
			r = s2.bash(t, "t1", "cat notes.md out/b.txt; ls out")
			if r.ExitCode != 0 || r.Stdout != "from the file tool\ngone\nb.txt\n" {
				t.Fatalf("a cold box after the restart: %+v", r)
			}
			if r := s2.bash(t, "t2", "ls -A"); r.Stdout != "" {
				t.Fatalf("another thread's box sees files: %+v", r)
			}
		})
	}
}

// TestRunBashIsolation: a command cannot read /etc/shadow nor write
// outside its workspace and /tmp (the kernel refuses: read-only mounts and
// file modes), its /tmp is its own, and it sees only sandbox.env of the
// environment.
func TestRunBashIsolation(t *testing.T) {
	for _, p := range providers {
		t.Run(p.name, func(t *testing.T) {
			p.require(t)
			t.Setenv("DAWN_HOST_SECRET", "leaked")
			s := serve(t, sandboxApp(t, p, "  env: {GREETING: hi}\n"), "")
			r := s.bash(t, "iso", "cat /etc/shadow")
			if r.ExitCode == 0 || !strings.Contains(r.Stderr, "Permission denied") {
				t.Fatalf("reading /etc/shadow: %+v", r)
			}
			probe := fmt.Sprintf("dawn-escape-%d", time.Now().UnixNano())
			for _, target := range []string{"/" + probe, "/etc/" + probe, "/usr/" + probe, "/bin/" + probe} {
				r := s.bash(t, "iso", "echo x > "+target)
				if r.ExitCode == 0 || !(strings.Contains(r.Stderr, "Read-only file system") || strings.Contains(r.Stderr, "Permission denied")) {
					t.Errorf("writing %s: %+v", target, r)
				}
				if _, err := os.Stat(target); err == nil {
					t.Errorf("%s exists on the host", target)
				}
			}
			if r := s.bash(t, "iso", "echo x > /tmp/"+probe+" && cat /tmp/"+probe); r.Stdout != "x\n" {
				t.Errorf("the box's own /tmp: %+v", r)
			}
			if _, err := os.Stat("/tmp/" + probe); err == nil {
				t.Errorf("the box's /tmp file is on the host's /tmp")
			}
			r = s.bash(t, "iso", "env")
			if strings.Contains(r.Stdout, "DAWN_HOST_SECRET") || !strings.Contains(r.Stdout, "GREETING=hi") {
				t.Errorf("environment: %q", r.Stdout)
			}
		})
	}
}

// loopback is an HTTP server of the test on 127.0.0.1 that counts hits.
func loopback(t *testing.T) (string, *atomic.Int32) {
	t.Helper()
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		hits.Add(1)
		fmt.Fprint(w, "reached")
	}))
	t.Cleanup(srv.Close)
	return srv.URL, &hits
}

// TestRunBashNetwork: with network deny a command cannot reach a loopback
// server of the test; with allow (local only: docker's allow is its
// bridge, which tests here must not touch) it can.
func TestRunBashNetwork(t *testing.T) {
	for _, p := range providers {
		t.Run(p.name+"/deny", func(t *testing.T) {
			p.require(t)
			url, hits := loopback(t)
			s := serve(t, sandboxApp(t, p, "  network: {mode: deny}\n"), "")
			r := s.bash(t, "net", "wget -q -T 3 -O- "+url+"/")
			if r.ExitCode == 0 || strings.Contains(r.Stdout, "reached") || hits.Load() != 0 {
				t.Fatalf("network deny reached the loopback server (%d hits): %+v", hits.Load(), r)
			}
		})
	}
	t.Run("local/allow", func(t *testing.T) {
		sandboxtest.Bwrap(t)
		url, hits := loopback(t)
		s := serve(t, sandboxApp(t, providers[0], "  network: {mode: allow}\n"), "")
		r := s.bash(t, "net", "wget -q -T 3 -O- "+url+"/")
		if r.ExitCode != 0 || r.Stdout != "reached" || hits.Load() != 1 {
			t.Fatalf("network allow did not reach the loopback server (%d hits): %+v", hits.Load(), r)
		}
	})
}

// limits are the tight resources of the limit tests.
const limits = "  resources: {memory_mb: 128, timeout: 3s, pids: 64, disk_mb: 64}\n"

// TestRunBashLimits: a fork bomb is stopped by the pids limit, an
// allocation past the memory cap fails, a command past its timeout is
// killed with exit 124 while the run goes on; the server answers and the
// next command runs after each.
func TestRunBashLimits(t *testing.T) {
	for _, p := range providers {
		t.Run(p.name, func(t *testing.T) {
			p.require(t)
			s := serve(t, sandboxApp(t, p, limits), "")
			alive := func(step string) {
				t.Helper()
				var health map[string]any
				if code := apptest.GetJSON(t, s.url+"/healthz", &health); code != http.StatusOK {
					t.Fatalf("after %s: /healthz %d", step, code)
				}
				if r := s.bash(t, "lim", "echo ok"); r.ExitCode != 0 || r.Stdout != "ok\n" {
					t.Fatalf("after %s: the next command: %+v", step, r)
				}
			}

			r := s.bash(t, "lim", "f(){ f|f& }; f; sleep 1; echo survived")
			if !strings.Contains(strings.ToLower(r.Stderr), "fork") {
				t.Errorf("fork bomb: no fork refused: %+v", short(r))
			}
			alive("the fork bomb")

			r = s.bash(t, "lim", "dd if=/dev/zero of=/dev/null bs=300M count=1")
			if r.ExitCode == 0 {
				t.Errorf("allocating 300 MB under a 128 MB cap succeeded: %+v", r)
			}
			alive("the allocation")

			start := time.Now()
			r = s.bash(t, "lim", "sleep 37; echo woke")
			if r.ExitCode != 124 || strings.Contains(r.Stdout, "woke") || !strings.Contains(r.Stderr, "timeout") || time.Since(start) > 20*time.Second {
				t.Errorf("sleep past the timeout: %+v after %s", r, time.Since(start))
			}
			if pids := processes("sleep 37"); len(pids) > 0 {
				t.Errorf("the timed-out command still runs on the host: pids %v", pids)
			}
			alive("the timeout")

		})
	}
}

// TestRunBashOutput: 50 MB of output is cut to what the result keeps,
// says truncated, and the result, over the context's limit, is stored
// with the thread for readToolOutput; the server answers after it.
func TestRunBashOutput(t *testing.T) {
	for _, p := range providers {
		t.Run(p.name, func(t *testing.T) {
			p.require(t)
			s := serve(t, sandboxApp(t, p, ""), "")
			out, _ := s.call(t, "out", "runBash", map[string]string{"command": "head -c 50000000 /dev/zero | tr '\\0' a"})
			if len(out) > 1<<20 {
				t.Errorf("50 MB of output: the tool_result event carries %d bytes", len(out))
			}
			id := storedID(t, s, "out")
			// The event carries what the model saw; the whole result is
			// the stored output.
			whole := getText(t, s.url+"/threads/out/tool-outputs/"+id)
			var big bashResult
			if err := json.Unmarshal(whole, &big); err != nil || !big.Truncated || big.ExitCode != 0 || len(big.Stdout) > 1<<20 || !strings.HasPrefix(big.Stdout, "aaaa") {
				t.Fatalf("50 MB of output: truncated=%v exit=%d stdout %d bytes (%v)", big.Truncated, big.ExitCode, len(big.Stdout), err)
			}
			page, _ := s.call(t, "out", "readToolOutput", map[string]any{"id": id, "offset": 0, "limit": 64})
			if !strings.Contains(string(page), "exit_code") {
				t.Errorf("readToolOutput page: %s", page)
			}
			if r := s.bash(t, "out", "echo ok"); r.Stdout != "ok\n" {
				t.Fatalf("after 50 MB of output: %+v", r)
			}
		})
	}
}

// short cuts a result's streams for a failure message.
func short(r bashResult) bashResult {
	r.Stdout, r.Stderr = cut(r.Stdout), cut(r.Stderr)
	return r
}

func cut(s string) string {
	if len(s) > 300 {
		return s[:300] + "…"
	}
	return s
}

// processes returns the host's processes whose command line contains
// text.
func processes(text string) []string {
	var out []string
	dirs, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	for _, f := range dirs {
		data, err := os.ReadFile(f)
		if err == nil && strings.Contains(strings.ReplaceAll(string(data), "\x00", " "), text) {
			out = append(out, filepath.Base(filepath.Dir(f)))
		}
	}
	return out
}

// storedID finds the id of the last stored tool output in the preview the
// model saw on thread.
func storedID(t *testing.T, s *server, thread string) string {
	t.Helper()
	var st struct {
		Values struct {
			Messages []struct {
				Role    string `json:"role"`
				Content string `json:"content"`
			} `json:"messages"`
		} `json:"values"`
	}
	apptest.GetJSON(t, s.url+"/threads/"+thread+"/state", &st)
	for i := len(st.Values.Messages) - 1; i >= 0; i-- {
		c := st.Values.Messages[i].Content
		if _, rest, ok := strings.Cut(c, "it is stored as \""); ok {
			id, _, _ := strings.Cut(rest, "\"")
			return id
		}
	}
	t.Fatalf("no stored output in the thread's messages")
	return ""
}

// hostCopies counts the places on the host that hold a box's file named
// name: the local provider's workspace folders, or the running
// containers labelled as sandboxes that have it.
func hostCopies(t *testing.T, p provider, name string) int {
	t.Helper()
	if p.name == "local" {
		found, _ := filepath.Glob(filepath.Join(os.TempDir(), "dawn-sandbox-*", "box-*", name))
		return len(found)
	}
	return sandboxtest.ContainersWith(t, name)
}

// TestRunBashBoxLifecycle: a box idle past idle_timeout is released (its
// copy of the files leaves the host) and the next command finds the
// files again from the store; deleting the thread destroys its box.
func TestRunBashBoxLifecycle(t *testing.T) {
	for _, p := range providers {
		t.Run(p.name, func(t *testing.T) {
			p.require(t)
			s := serve(t, sandboxApp(t, p, "  idle_timeout: 1s\n"), "")
			name := fmt.Sprintf("kept-%d.txt", time.Now().UnixNano())
			if r := s.bash(t, "life", "echo kept > "+name); r.ExitCode != 0 {
				t.Fatalf("writing: %+v", r)
			}
			if n := hostCopies(t, p, name); n != 1 {
				t.Fatalf("a warm box: %d copies of the file on the host, want 1", n)
			}
			waitFor(t, "the idle box to be released", func() bool { return hostCopies(t, p, name) == 0 })
			if r := s.bash(t, "life", "cat "+name); r.Stdout != "kept\n" {
				t.Fatalf("after the idle release: %+v", r)
			}
			if n := hostCopies(t, p, name); n != 1 {
				t.Fatalf("the box started again: %d copies, want 1", n)
			}
			apptest.DeleteThread(s.h.API, "life")
			if n := hostCopies(t, p, name); n != 0 {
				t.Fatalf("after DELETE of the thread: %d copies of its file remain on the host", n)
			}
		})
	}
}

// TestRunBashBoxLost: a box lost behind the server's back (its container
// removed, its folder deleted) is replaced on the next command, which
// finds the thread's files from the store.
func TestRunBashBoxLost(t *testing.T) {
	for _, p := range providers {
		t.Run(p.name, func(t *testing.T) {
			p.require(t)
			s := serve(t, sandboxApp(t, p, ""), "")
			name := fmt.Sprintf("lost-%d.txt", time.Now().UnixNano())
			if r := s.bash(t, "lost", "echo survived > "+name); r.ExitCode != 0 {
				t.Fatalf("writing: %+v", r)
			}
			if p.name == "local" {
				found, _ := filepath.Glob(filepath.Join(os.TempDir(), "dawn-sandbox-*", "box-*", name))
				if len(found) != 1 {
					t.Fatalf("%d local boxes hold the file", len(found))
				}
				if err := os.RemoveAll(filepath.Dir(found[0])); err != nil {
					t.Fatal(err)
				}
			} else if n := sandboxtest.RemoveContainersWith(t, name); n != 1 {
				t.Fatalf("%d containers held the file", n)
			}
			if r := s.bash(t, "lost", "cat "+name); r.ExitCode != 0 || r.Stdout != "survived\n" {
				t.Fatalf("after the box was lost: %+v", r)
			}
		})
	}
}

func waitFor(t *testing.T, what string, ok func() bool) {
	t.Helper()
	for deadline := time.Now().Add(15 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		if ok() {
			return
		}
	}
	t.Fatalf("timed out waiting for %s", what)
}

// getText reads url's body, failing the test unless it answers 200.
func getText(t *testing.T, url string) []byte {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %d %v: %.300s", url, resp.StatusCode, err, body)
	}
	return body
}
