package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/dawn-go/dawn/internal/gomod"
)

// proc is a child process the tool started: aimock or a dawn server.
type proc struct {
	name string
	cmd  *exec.Cmd
	// url is the root URL the process serves.
	url    string
	exited chan struct{}
	logs   *tail
}

// tail keeps the last lines a process printed, for error messages.
type tail struct {
	mu    sync.Mutex
	lines []string
}

func (t *tail) add(line string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.lines = append(t.lines, line)
	if len(t.lines) > 20 {
		t.lines = t.lines[len(t.lines)-20:]
	}
}

func (t *tail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return strings.Join(t.lines, "\n")
}

// pid is the process id, for /proc.
func (p *proc) pid() int { return p.cmd.Process.Pid }

// stop asks the process to end (SIGTERM, so a dawn server closes its store
// cleanly) and kills it if it has not ended after grace.
func (p *proc) stop(grace time.Duration) {
	select {
	case <-p.exited:
		return
	default:
	}
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.exited:
	case <-time.After(grace):
		_ = p.cmd.Process.Kill()
		<-p.exited
	}
}

// ready watches lines for the address a process prints when it is up: dawn
// start's JSON log line with "url", dawn dev's "Dawn dev ready at URL", or
// aimock's "listening on URL".
func ready(line string) string {
	var logLine struct {
		URL string `json:"url"`
	}
	if strings.HasPrefix(line, "{") && json.Unmarshal([]byte(line), &logLine) == nil && logLine.URL != "" {
		return logLine.URL
	}
	for _, marker := range []string{"Dawn dev ready at ", "listening on "} {
		if _, after, ok := strings.Cut(line, marker); ok {
			return strings.TrimSpace(after)
		}
	}
	return ""
}

// start runs bin with args and env (added to a clean copy of the tool's
// environment) and waits up to timeout for it to print its address.
func start(ctx context.Context, name, bin string, args, env []string, timeout time.Duration) (*proc, error) {
	return startIn(ctx, "", name, bin, args, env, timeout)
}

// startIn is start with the working directory dir ("" for the tool's).
func startIn(ctx context.Context, dir, name, bin string, args, env []string, timeout time.Duration) (*proc, error) {
	cmd := exec.Command(bin, args...)
	cmd.Dir = dir
	cmd.Env = append(childEnv(), env...)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting %s (%s): %w", name, bin, err)
	}
	p := &proc{name: name, cmd: cmd, exited: make(chan struct{}), logs: &tail{}}
	urls := make(chan string, 2)
	var readers sync.WaitGroup
	for _, r := range []io.Reader{stdout, stderr} {
		readers.Add(1)
		go func() {
			defer readers.Done()
			sc := bufio.NewScanner(r)
			sc.Buffer(make([]byte, 64<<10), 1<<20)
			for sc.Scan() {
				p.logs.add(sc.Text())
				if u := ready(sc.Text()); u != "" {
					select {
					case urls <- u:
					default:
					}
				}
			}
		}()
	}
	go func() {
		readers.Wait()
		_ = cmd.Wait()
		close(p.exited)
	}()
	select {
	case p.url = <-urls:
		return p, nil
	case <-p.exited:
		return nil, fmt.Errorf("%s exited before it was ready; its last output:\n%s", name, p.logs)
	case <-time.After(timeout):
	case <-ctx.Done():
	}
	p.stop(time.Second)
	return nil, fmt.Errorf("%s printed no address within %s; its last output:\n%s", name, timeout, p.logs)
}

// childEnv is the tool's environment without the variables that would pick
// another model, key or address for the servers it starts.
func childEnv() []string {
	var out []string
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(name, "OPENAI_") || strings.HasPrefix(name, "ANTHROPIC_") ||
			name == "DAWN_MODEL" || name == "DAWN_API_KEY" || name == "DAWN_CORS_ORIGINS" || name == "OLLAMA_HOST" {
			continue
		}
		out = append(out, kv)
	}
	return out
}

// waitHealthy polls url (a fresh connection each time) until it answers 200.
func waitHealthy(ctx context.Context, url string, timeout time.Duration) error {
	client := &http.Client{Timeout: time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	deadline := time.Now().Add(timeout)
	for {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		resp, err := client.Do(req)
		if err == nil {
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return fmt.Errorf("%s did not answer 200 within %s (last error: %v)", url, timeout, err)
		}
		time.Sleep(200 * time.Microsecond)
	}
}

// freePort returns a loopback port that nothing listens on right now.
func freePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}

// startAimock serves fixtures with no latency and whole-message chunks, and
// a journal just long enough to read back one run's two requests.
func startAimock(ctx context.Context, bin, fixtures string) (*proc, error) {
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	return startAimockOn(ctx, bin, fixtures, port)
}

// buildDawn builds the stock binary from the module at repo into dir.
func buildDawn(ctx context.Context, repo, dir string) (string, error) {
	bin := filepath.Join(dir, "dawn")
	cmd := exec.CommandContext(ctx, "go", "build", "-o", bin, "./cmd/dawn")
	cmd.Dir = repo
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build ./cmd/dawn in %s: %v\n%s", repo, err, out)
	}
	return bin, nil
}

// repoRoot is the nearest folder at or above the working directory with a
// go.mod.
func repoRoot() (string, error) {
	root, ok := gomod.Root(".")
	if !ok {
		return "", fmt.Errorf("no go.mod at or above the working directory; run from the dawn repository, or pass --url")
	}
	return root, nil
}
