package reliability

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/dawn-go/dawn/internal/gomod"
	"github.com/dawn-go/dawn/internal/pgtest"
)

// dawnBin is the stock binary (./cmd/dawn) that TestMain builds once.
var dawnBin string

// repoDir is the module root.
var repoDir string

func TestMain(m *testing.M) {
	code := runTests(m)
	pgtest.StopShared()
	os.Exit(code)
}

func runTests(m *testing.M) int {
	var err error
	if repoDir, err = findRepo(); err != nil {
		fmt.Fprintln(os.Stderr, "reliability:", err)
		return 1
	}
	tmp, err := os.MkdirTemp("", "dawn-reliability-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "reliability:", err)
		return 1
	}
	defer os.RemoveAll(tmp)
	dawnBin = filepath.Join(tmp, "dawn")
	if err := goBuild(dawnBin, "./cmd/dawn"); err != nil {
		fmt.Fprintln(os.Stderr, "reliability:", err)
		return 1
	}
	buildDir = tmp
	return m.Run()
}

// buildDir holds the binaries tests build.
var buildDir string

// goBuild builds the package pkg of this module into out.
func goBuild(out, pkg string) error {
	cmd := exec.Command("go", "build", "-o", out, pkg)
	cmd.Dir = repoDir
	if data, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("go build %s: %v\n%s", pkg, err, data)
	}
	return nil
}

// findRepo is the nearest folder above the working directory with a go.mod.
func findRepo() (string, error) {
	root, ok := gomod.Root(".")
	if !ok {
		return "", errors.New("no go.mod above the working directory")
	}
	return root, nil
}

// writeApp writes files (slash paths) under a new temp folder.
func writeApp(t testing.TB, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	writeFiles(t, dir, files)
	return dir
}

func writeFiles(t testing.TB, dir string, files map[string]string) {
	t.Helper()
	for name, body := range files {
		path := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// logBuffer collects a process's output.
type logBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *logBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *logBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// process is a dawn server the test started.
type process struct {
	cmd    *exec.Cmd
	url    string
	logs   *logBuffer // stdout and stderr, interleaved
	exited chan struct{}
}

// devReady starts the line `dawn dev` prints once it serves.
const devReady = "Dawn dev ready at "

// startDawn runs the dawn binary with args (e.g. "start", "--app", dir,
// "--host", "127.0.0.1", "--port", "0") and env added to a clean
// environment, and waits for the URL it prints. The process is killed when
// the test ends if it still runs.
func startDawn(t testing.TB, env []string, args ...string) *process {
	t.Helper()
	return startBinary(t, dawnBin, env, args...)
}

// startBinary is startDawn with the app binary bin (one dawn.Main builds)
// in place of the stock one.
func startBinary(t testing.TB, bin string, env []string, args ...string) *process {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Env = append(cleanEnv(), env...)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting dawn %s: %v", strings.Join(args, " "), err)
	}
	p := &process{cmd: cmd, logs: &logBuffer{}, exited: make(chan struct{})}
	urls := make(chan string, 2)
	var readers sync.WaitGroup
	for _, r := range []io.Reader{stdout, stderr} {
		readers.Add(1)
		go func() {
			defer readers.Done()
			sc := bufio.NewScanner(r)
			sc.Buffer(make([]byte, 64<<10), 4<<20)
			for sc.Scan() {
				line := sc.Text()
				p.logs.Write([]byte(line + "\n"))
				if u := readyURL(line); u != "" {
					select {
					case urls <- u:
					default:
					}
				}
			}
			_, _ = io.Copy(p.logs, r)
		}()
	}
	go func() {
		readers.Wait()
		_ = cmd.Wait()
		close(p.exited)
	}()
	t.Cleanup(p.kill)
	select {
	case p.url = <-urls:
		return p
	case <-p.exited:
		t.Fatalf("dawn %s exited before it was ready; its output:\n%s", strings.Join(args, " "), p.logs)
	case <-time.After(30 * time.Second):
		p.kill()
		t.Fatalf("dawn %s printed no URL within 30s; its output:\n%s", strings.Join(args, " "), p.logs)
	}
	return nil
}

// readyURL returns the URL in dawn start's JSON "ready" log line or in dawn
// dev's ready line, or "".
func readyURL(line string) string {
	if rest, ok := strings.CutPrefix(line, devReady); ok {
		return strings.TrimSpace(rest)
	}
	var l struct {
		Msg string `json:"msg"`
		URL string `json:"url"`
	}
	if strings.HasPrefix(line, "{") && json.Unmarshal([]byte(line), &l) == nil && l.URL != "" {
		return l.URL
	}
	return ""
}

// kill ends the process with SIGKILL, as a crash would, and waits for it.
func (p *process) kill() {
	select {
	case <-p.exited:
		return
	default:
	}
	_ = p.cmd.Process.Signal(syscall.SIGKILL)
	<-p.exited
}

// stop asks the process to shut down (SIGTERM) and waits up to grace
// before killing it. It reports whether it stopped by itself.
func (p *process) stop(grace time.Duration) bool {
	select {
	case <-p.exited:
		return true
	default:
	}
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.exited:
		return true
	case <-time.After(grace):
		p.kill()
		return false
	}
}

// cleanEnv is the test's environment without what would pick another
// model, key, origin list or address for the servers it starts.
func cleanEnv() []string {
	var out []string
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(name, "OPENAI_") || strings.HasPrefix(name, "ANTHROPIC_") || strings.HasPrefix(name, "DAWN_") || name == "OLLAMA_HOST" {
			continue
		}
		out = append(out, kv)
	}
	return out
}

// envInt reads a positive integer from the environment, or gives def.
func envInt(t *testing.T, name string, def int) int {
	t.Helper()
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 {
		t.Fatalf("%s=%q: want a positive integer", name, v)
	}
	return n
}

// envSeed reads a seed from the environment, or makes one from the clock.
func envSeed(t *testing.T, name string) int64 {
	t.Helper()
	v := os.Getenv(name)
	if v == "" {
		return time.Now().UnixNano()
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		t.Fatalf("%s=%q: want an integer", name, v)
	}
	return n
}
