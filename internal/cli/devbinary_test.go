package cli_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"github.com/dawn-go/dawn/internal/gomod"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/google/uuid"
)

// The tests in this package drive the real dawn binary, built once per test
// binary into binDir.
var (
	binDir    string
	buildOnce sync.Once
	buildErr  error
	dawnPath  string
)

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "dawn-cli-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	binDir = dir
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// dawnBinary builds ./cmd/dawn on first use and returns its path.
func dawnBinary(t testing.TB) string {
	t.Helper()
	buildOnce.Do(func() {
		dawnPath = filepath.Join(binDir, "dawn")
		if runtime.GOOS == "windows" {
			dawnPath += ".exe"
		}
		cmd := exec.Command("go", "build", "-o", dawnPath, "../../cmd/dawn")
		if out, err := cmd.CombinedOutput(); err != nil {
			buildErr = fmt.Errorf("go build ./cmd/dawn: %v\n%s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return dawnPath
}

// repoRoot is the module's root folder.
func repoRoot(t testing.TB) string {
	t.Helper()
	root, ok := gomod.Root(".")
	if !ok {
		t.Fatal("no go.mod above the test's folder")
	}
	return root
}

// offlineEnv is the test process's environment without any model settings,
// so every route runs on the offline model.
func offlineEnv(extra ...string) []string {
	var env []string
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		switch {
		case strings.HasPrefix(name, "DAWN_"), strings.HasPrefix(name, "OPENAI_"),
			strings.HasPrefix(name, "ANTHROPIC_"), strings.HasPrefix(name, "OLLAMA_"):
			continue
		}
		env = append(env, kv)
	}
	return append(env, extra...)
}

// dawnResult is a finished dawn command.
type dawnResult struct {
	code           int
	stdout, stderr string
}

// runDawn runs the binary to the end, for at most a minute.
func runDawn(t *testing.T, args ...string) dawnResult {
	t.Helper()
	cmd := exec.Command(dawnBinary(t), args...)
	cmd.Env = offlineEnv()
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case <-done:
	case <-time.After(time.Minute):
		cmd.Process.Kill()
		<-done
		t.Fatalf("dawn %v did not finish within a minute", args)
	}
	return dawnResult{code: cmd.ProcessState.ExitCode(), stdout: stdout.String(), stderr: stderr.String()}
}

// dawnServer is a dawn process that serves until the test ends.
type dawnServer struct {
	cmd     *exec.Cmd
	url     string
	started time.Time
	ready   time.Time
	exited  chan struct{}
	out     *lockedBuffer // stdout and stderr, interleaved
}

// lockedBuffer is a bytes.Buffer safe for concurrent use.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// readyURL finds the server's address in one line of its output: dev's
// ready line, or start's JSON "dawn server ready" log line.
func readyURL(line string) (string, bool) {
	if u, ok := strings.CutPrefix(line, "Dawn dev ready at "); ok {
		return strings.TrimSpace(u), true
	}
	var log struct {
		Msg string `json:"msg"`
		URL string `json:"url"`
	}
	if json.Unmarshal([]byte(line), &log) == nil && log.Msg == "dawn server ready" {
		return log.URL, true
	}
	return "", false
}

// startDawn starts the binary with args and env and waits, up to timeout,
// for it to say where it serves. At the end of the test it gets SIGTERM,
// and is killed if it has not exited 15 seconds later.
func startDawn(t *testing.T, env []string, timeout time.Duration, args ...string) *dawnServer {
	t.Helper()
	s := &dawnServer{cmd: exec.Command(dawnBinary(t), args...), exited: make(chan struct{}), out: &lockedBuffer{}}
	s.cmd.Env = env
	pr, pw := io.Pipe()
	s.cmd.Stdout, s.cmd.Stderr = pw, pw
	urls := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(pr)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		for sc.Scan() {
			line := sc.Text()
			fmt.Fprintln(s.out, line)
			if u, ok := readyURL(line); ok {
				select {
				case urls <- u:
				default:
				}
			}
		}
		io.Copy(io.Discard, pr)
	}()
	s.started = time.Now()
	if err := s.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		s.cmd.Wait()
		pw.Close()
		close(s.exited)
	}()
	t.Cleanup(func() {
		s.stop(t)
		if t.Failed() {
			t.Logf("output of dawn %v:\n%s", args, s.out)
		}
	})
	select {
	case s.url = <-urls:
		s.ready = time.Now()
	case <-s.exited:
		t.Fatalf("dawn %v exited before it was ready:\n%s", args, s.out)
	case <-time.After(timeout):
		t.Fatalf("dawn %v was not ready within %s:\n%s", args, timeout, s.out)
	}
	return s
}

// stop ends the server gracefully, or kills it after 15 seconds.
func (s *dawnServer) stop(t *testing.T) {
	select {
	case <-s.exited:
		return
	default:
	}
	s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-s.exited:
	case <-time.After(15 * time.Second):
		s.cmd.Process.Kill()
		<-s.exited
		t.Errorf("dawn did not exit within 15s of SIGTERM:\n%s", s.out)
	}
}

// alive reports whether the process started is still running.
func (s *dawnServer) alive() bool {
	select {
	case <-s.exited:
		return false
	default:
		return s.cmd.Process.Signal(syscall.Signal(0)) == nil
	}
}

// waitOutput waits up to timeout for the output to hold every one of want.
func (s *dawnServer) waitOutput(t *testing.T, timeout time.Duration, want ...string) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		out := s.out.String()
		missing := ""
		for _, w := range want {
			if !strings.Contains(out, w) {
				missing = w
				break
			}
		}
		if missing == "" {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the output does not show %q after %s:\n%s", missing, timeout, out)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

var client = &http.Client{Timeout: 30 * time.Second}

// getJSON GETs url and decodes the JSON answer into v.
func getJSON(t *testing.T, url string, v any) {
	t.Helper()
	resp, err := client.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %s: %s", url, resp.Status, body)
	}
	if err := json.Unmarshal(body, v); err != nil {
		t.Fatalf("GET %s: %v: %s", url, err, body)
	}
}

// todo is one planning item.
type todo struct {
	Content string `json:"content"`
	Status  string `json:"status"`
}

// runValues runs route on a new thread with runs/wait and returns the final
// state values.
func runValues(t *testing.T, base, route string) map[string]json.RawMessage {
	t.Helper()
	body := fmt.Sprintf(`{"route":%q,"input":{"messages":[{"role":"user","content":"Help me, please."}]}}`, route)
	resp, err := client.Post(base+"/threads/"+uuid.NewString()+"/runs/wait", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("run %s: %s: %s", route, resp.Status, data)
	}
	var values map[string]json.RawMessage
	if err := json.Unmarshal(data, &values); err != nil {
		t.Fatalf("run %s: %v: %s", route, err, data)
	}
	return values
}

// runTodos runs route and returns the todos it ended with.
func runTodos(t *testing.T, base, route string) []todo {
	t.Helper()
	var todos []todo
	if err := json.Unmarshal(runValues(t, base, route)["todos"], &todos); err != nil {
		t.Fatalf("run %s: todos: %v", route, err)
	}
	return todos
}

// routeInfo is the part of a GET /routes or routes --json entry the tests
// look at.
type routeInfo struct {
	ID           string            `json:"id"`
	Dir          string            `json:"dir"`
	Kind         string            `json:"kind"`
	Params       []string          `json:"params"`
	Description  string            `json:"description"`
	Tools        []string          `json:"tools"`
	Capabilities []string          `json:"capabilities"`
	Subagents    map[string]string `json:"subagents"`
	Parent       string            `json:"parent"`
	Seed         []todo            `json:"seed"`
	Error        string            `json:"error"`
}

func routes(t *testing.T, base string) map[string]routeInfo {
	t.Helper()
	var list []routeInfo
	getJSON(t, base+"/routes", &list)
	out := map[string]routeInfo{}
	for _, r := range list {
		out[r.ID] = r
	}
	return out
}

// waitFor polls cond every 10ms until it holds, failing after timeout, and
// returns how long that took.
func waitFor(t *testing.T, timeout time.Duration, what string, cond func() bool) time.Duration {
	t.Helper()
	start := time.Now()
	for !cond() {
		if time.Since(start) > timeout {
			t.Fatalf("%s: not after %s", what, timeout)
		}
		time.Sleep(10 * time.Millisecond)
	}
	return time.Since(start)
}

// writeFiles writes files (slash-separated paths under dir to contents).
func writeFiles(t testing.TB, dir string, files map[string]string) {
	t.Helper()
	for name, text := range files {
		path := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// runDawnEnv runs the binary with env to the end; it is killed after 30
// seconds (a server that should have refused to start).
func runDawnEnv(t *testing.T, env []string, args ...string) dawnResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, dawnBinary(t), args...)
	cmd.Env = env
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil && cmd.ProcessState == nil {
		t.Fatal(err)
	}
	return dawnResult{code: cmd.ProcessState.ExitCode(), stdout: stdout.String(), stderr: stderr.String()}
}
