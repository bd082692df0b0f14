// Package newcomer follows the README on a fresh copy of the checkout, as a
// new user on a new machine would. It is a package of its own so that its
// slow first build has its own test timeout and runs beside the other
// end-to-end tests.
package newcomer

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"io/fs"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/dawn-go/dawn/internal/devserver"
	"github.com/dawn-go/dawn/internal/nodetool"
)

// The commands of the README's newcomer path, as it prints them: the test
// fails when the README stops showing one, so it runs what a reader types.
const (
	installCmd = "go install ./cmd/dawn"
	devCmd     = "go run ./cmd/dawn dev --app examples/app"
	newCmd     = "go run ./cmd/dawn new ../hello"
	newDevCmd  = "cd ../hello && go run . dev"
)

// TestNewcomerPath follows the README on a fresh copy of this checkout with
// an empty module cache and GOBIN, as a new machine would: install dawn,
// serve the example app and run the stream example against it, write an
// app with dawn new (from the checkout, and with the installed binary from
// outside it), then test and serve that app.
func TestNewcomerPath(t *testing.T) {
	if testing.Short() {
		t.Skip("downloads every module into an empty cache and builds from scratch")
	}
	if raceEnabled {
		t.Skip("runs in the plain test pass: the programs it builds are not under the race detector")
	}
	readme, err := os.ReadFile(filepath.Join(repoRoot(t), "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, cmd := range []string{installCmd, devCmd, newCmd, newDevCmd, "go test ./..."} {
		if !strings.Contains(string(readme), cmd) {
			t.Fatalf("the README no longer shows %q; update this test to the README's newcomer path", cmd)
		}
	}
	work := t.TempDir()
	checkout := filepath.Join(work, "dawn")
	copyCheckout(t, repoRoot(t), checkout)
	env := newcomerEnv(t)

	goCmd(t, env, checkout, "install", "./cmd/dawn")
	dawn := filepath.Join(env.gobin, "dawn")
	if _, err := os.Stat(dawn); err != nil {
		t.Fatalf("%s put no dawn into GOBIN: %v", installCmd, err)
	}

	t.Run("the example app streams a plan", func(t *testing.T) {
		url := serveDev(t, env, checkout, "go", "run", "./cmd/dawn", "dev", "--app", "examples/app")
		body := postRun(t, url+"/threads/demo/runs/stream", `{"route":"/support/acme","input":{"messages":[{"role":"user","content":"Help me with my account"}]}}`)
		for _, want := range []string{"event: plan_update", "event: done"} {
			if !strings.Contains(body, want) {
				t.Errorf("the README's stream example has no %q:\n%s", want, body)
			}
		}
	})
	t.Run("dawn new from the checkout", func(t *testing.T) {
		goCmd(t, env, checkout, "run", "./cmd/dawn", "new", "../hello")
		checkNewApp(t, env, filepath.Join(work, "hello"))
	})
	t.Run("dawn new from the installed binary, outside the checkout", func(t *testing.T) {
		outside := t.TempDir()
		run(t, env, outside, dawn, "new", "hi")
		checkNewApp(t, env, filepath.Join(outside, "hi"))
	})
}

// checkNewApp runs a new app's own test and serves it with go run . dev.
func checkNewApp(t *testing.T, env newcomer, dir string) {
	t.Helper()
	goCmd(t, env, dir, "test", "./...")
	url := serveDev(t, env, dir, "go", "run", ".", "dev")
	body := postRun(t, url+"/threads/demo/runs/wait", `{"route":"/assistant","input":{"messages":[{"role":"user","content":"Count the words of: hello brave new world"}]}}`)
	if !strings.Contains(body, "Write the answer") {
		t.Errorf("runs/wait on the new app has no plan.md todos:\n%s", body)
	}
	// The offline model calls the app's Go tool with the user's text.
	var values struct {
		Messages []struct {
			Content string `json:"content"`
		} `json:"messages"`
	}
	if err := json.Unmarshal([]byte(body), &values); err != nil || len(values.Messages) == 0 {
		t.Fatalf("runs/wait on the new app answered %s: %v", body, err)
	}
	if answer := values.Messages[len(values.Messages)-1].Content; !strings.Contains(answer, `countWords answered "{\"words\":8}"`) {
		t.Errorf("the offline answer = %q, want it to quote countWords counting 8 words", answer)
	}
}

// newcomer is the environment of a machine that never built Dawn: its own
// module cache and GOBIN, no model configured.
type newcomer struct {
	vars  []string
	gobin string
}

func newcomerEnv(t *testing.T) newcomer {
	t.Helper()
	n := newcomer{gobin: t.TempDir()}
	cache := t.TempDir()
	for _, kv := range os.Environ() {
		if k, _, _ := strings.Cut(kv, "="); k == "GOMODCACHE" || k == "GOBIN" || k == "GOFLAGS" || strings.HasPrefix(k, "DAWN_") {
			continue
		}
		n.vars = append(n.vars, kv)
	}
	// -modcacherw lets the test remove the cache it filled.
	n.vars = append(n.vars, "GOMODCACHE="+cache, "GOBIN="+n.gobin, "GOFLAGS=-modcacherw", "PATH="+n.gobin+string(os.PathListSeparator)+os.Getenv("PATH"))
	return n
}

// goCmd runs the go command in dir and fails the test with its output.
func goCmd(t *testing.T, env newcomer, dir string, args ...string) {
	t.Helper()
	run(t, env, dir, "go", args...)
}

func run(t *testing.T, env newcomer, dir, name string, args ...string) {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir, cmd.Env = dir, env.vars
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s %s in %s: %v\n%s", name, strings.Join(args, " "), dir, err, out)
	}
}

// serveDev starts a dev server with the command and returns the address of
// its ready line; the server is stopped when the test ends.
func serveDev(t *testing.T, env newcomer, dir, name string, args ...string) string {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir, cmd.Env = dir, env.vars
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} // go run's child too
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var logs lockedBuffer
	cmd.Stderr = &logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	urls := make(chan string, 1)
	exited := make(chan struct{})
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			if u, ok := strings.CutPrefix(sc.Text(), devserver.ReadyPrefix); ok {
				urls <- strings.TrimSpace(u)
			}
		}
		_ = cmd.Wait()
		close(exited)
	}()
	t.Cleanup(func() {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(15 * time.Second):
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			<-exited
		}
	})
	select {
	case u := <-urls:
		return u
	case <-exited:
		t.Fatalf("%s %s exited before it was ready:\n%s", name, strings.Join(args, " "), logs.String())
	case <-time.After(5 * time.Minute):
		t.Fatalf("%s %s printed no ready line within 5 minutes:\n%s", name, strings.Join(args, " "), logs.String())
	}
	return ""
}

// postRun posts a run request and returns the response body; a status
// other than 200 fails the test.
func postRun(t *testing.T, url, body string) string {
	t.Helper()
	resp, err := http.Post(url, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("POST %s = %d: %s", url, resp.StatusCode, data)
	}
	return string(data)
}

// copyCheckout copies the files of a checkout a newcomer would have, leaving
// out what builds and tests leave behind (node_modules, .dawn) and .git.
func copyCheckout(t *testing.T, from, to string) {
	t.Helper()
	err := filepath.WalkDir(from, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(from, path)
		if d.IsDir() && (d.Name() == "node_modules" || d.Name() == ".dawn" || d.Name() == ".git") {
			return filepath.SkipDir
		}
		target := filepath.Join(to, rel)
		if d.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		if !d.Type().IsRegular() {
			return nil
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		return os.WriteFile(target, data, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
}

func repoRoot(t *testing.T) string { return nodetool.RepoRoot(t) }

// lockedBuffer is a buffer a process's output goes to while the test
// reads it.
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
