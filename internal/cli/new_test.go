package cli

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/dawn-go/dawn/internal/devserver"
	"github.com/dawn-go/dawn/internal/gomod"
)

// TestNewAppRunsAndPassesItsTest is `dawn new` end to end, as on a new
// machine: it writes an app replacing Dawn with this checkout, go mod tidy
// fetches the modules (GOFLAGS=-mod=mod), the app's own go test passes, and
// `go run . dev` serves /assistant on the offline model, then serves an
// edit of its Go tool.
func TestNewAppRunsAndPassesItsTest(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a new app and fetches its modules")
	}
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("go is not on PATH")
	}
	root, ok := gomod.Root(".")
	if !ok {
		t.Fatal("no go.mod above the test")
	}
	t.Setenv("GOFLAGS", "-mod=mod")
	dir := filepath.Join(t.TempDir(), "hello")
	var stdout, stderr bytes.Buffer
	if code := Run([]string{"new", dir, "--replace", root}, Config{Stdout: &stdout, Stderr: &stderr}); code != ExitOK {
		t.Fatalf("dawn new exited %d:\n%s%s", code, stdout.String(), stderr.String())
	}
	for _, f := range []string{"go.mod", "go.sum", "main.go", "main_test.go", "README.md", ".gitignore", "app/dawn.yaml", "app/assistant/agent.md", "app/assistant/plan.md"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Errorf("dawn new did not write %s: %v", f, err)
		}
	}

	test := exec.Command(goBin, "test", "./...")
	test.Dir = dir
	if out, err := test.CombinedOutput(); err != nil {
		t.Fatalf("go test ./... in the new app failed: %v\n%s", err, out)
	}

	url := goRunDev(t, goBin, dir)
	body := `{"route":"/assistant","input":{"messages":[{"role":"user","content":"Count the words of: hello brave new world"}]}}`
	resp, err := http.Post(url+"/threads/demo/runs/wait", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	data, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(data), "Write the answer") {
		t.Fatalf("runs/wait on the new app = %d %s, want 200 with the plan.md todos", resp.StatusCode, data)
	}
	// The offline model calls the app's Go tool with the user's text.
	if answer := lastMessage(t, data); !strings.Contains(answer, `countWords answered "{\"words\":8}"`) {
		t.Errorf("the offline answer = %q, want it to quote countWords counting 8 words", answer)
	}

	// go run . dev rebuilds and restarts the app on a .go edit, on the
	// same address.
	mainGo := filepath.Join(dir, "main.go")
	src := readFile(t, mainGo)
	edited := strings.Replace(src, "Words: len(strings.Fields(in.Text))", "Words: 100 * len(strings.Fields(in.Text))", 1)
	if edited == src {
		t.Fatal("main.go's countWords is not as the test expects")
	}
	if err := os.WriteFile(mainGo, []byte(edited), 0o644); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(2 * time.Minute)
	for n := 0; ; n++ {
		resp, err := http.Post(url+"/threads/edit-"+strconv.Itoa(n)+"/runs/wait", "application/json", strings.NewReader(body))
		if err == nil {
			data, _ = io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK && strings.Contains(lastMessage(t, data), `countWords answered "{\"words\":800}"`) {
				break
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("go run . dev did not serve the edited countWords within 2 minutes; last answer: %s", data)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// lastMessage returns the content of the last message of a runs/wait
// answer.
func lastMessage(t *testing.T, values []byte) string {
	t.Helper()
	var v struct {
		Messages []struct {
			Content string `json:"content"`
		} `json:"messages"`
	}
	if err := json.Unmarshal(values, &v); err != nil || len(v.Messages) == 0 {
		t.Fatalf("runs/wait answered %s: %v", values, err)
	}
	return v.Messages[len(v.Messages)-1].Content
}

// TestNewRefusesAFolderWithFiles keeps dawn new from writing over work.
func TestNewRefusesAFolderWithFiles(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("mine"), 0o644); err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	code := Run([]string{"new", dir, "--replace", "..", "--no-tidy"}, Config{Stdout: io.Discard, Stderr: &stderr})
	if code == ExitOK || !strings.Contains(stderr.String(), "is not empty") {
		t.Fatalf("dawn new into a folder with files: exit %d, %s", code, stderr.String())
	}
	if data, _ := os.ReadFile(filepath.Join(dir, "notes.txt")); string(data) != "mine" {
		t.Error("dawn new changed a file in a folder it refused")
	}
}

// goRunDev runs `go run . dev --port 0` in dir until the test ends and
// returns the address it prints.
func goRunDev(t *testing.T, goBin, dir string) string {
	t.Helper()
	cmd := exec.Command(goBin, "run", ".", "dev", "--port", "0")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "DAWN_MODEL=")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} // go run's child too
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var logs bytes.Buffer
	cmd.Stderr = &logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	urls := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			if u, ok := strings.CutPrefix(sc.Text(), devserver.ReadyPrefix); ok {
				urls <- u
			}
		}
		_ = cmd.Wait()
		close(exited)
	}()
	t.Cleanup(func() {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(10 * time.Second):
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			<-exited
		}
	})
	select {
	case u := <-urls:
		return strings.TrimSpace(u)
	case <-exited:
		t.Fatalf("go run . dev exited before it was ready:\n%s", logs.String())
	case <-time.After(3 * time.Minute):
		t.Fatalf("go run . dev printed no ready line within 3 minutes:\n%s", logs.String())
	}
	return ""
}

// TestNewFromInstalledBinary is `dawn new` from a binary built in this
// checkout (so stamped with git's pseudo-version, which no proxy serves),
// run outside the checkout: the app builds against this checkout instead of
// requiring that version.
func TestNewFromInstalledBinary(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the dawn binary")
	}
	root, ok := gomod.Root(".")
	if !ok {
		t.Fatal("no go.mod above the test")
	}
	bin := filepath.Join(t.TempDir(), "dawn")
	build := exec.Command("go", "build", "-o", bin, "./cmd/dawn")
	build.Dir = root
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build ./cmd/dawn: %v\n%s", err, out)
	}
	outside := t.TempDir()
	cmd := exec.Command(bin, "new", "hello", "--no-tidy")
	cmd.Dir = outside
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("dawn new outside the checkout: %v\n%s", err, out)
	}
	mod, err := os.ReadFile(filepath.Join(outside, "hello", "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(mod), "=> "+root+"\n") || !strings.Contains(string(mod), "v0.0.0-00010101000000-000000000000") {
		t.Errorf("go.mod of an app made by a checkout-built binary:\n%s\nwant the placeholder version and a replace to %s", mod, root)
	}
}

// TestNewLeavesNothingWhenTidyFails: a failed go mod tidy (here: no module
// proxy and an empty module cache) removes what dawn new wrote, so the same
// command can simply be run again.
func TestNewLeavesNothingWhenTidyFails(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("go is not on PATH")
	}
	root, ok := gomod.Root(".")
	if !ok {
		t.Fatal("no go.mod above the test")
	}
	t.Setenv("GOPROXY", "off")
	t.Setenv("GOFLAGS", "-mod=mod")
	t.Setenv("GOMODCACHE", t.TempDir())
	for _, existed := range []bool{false, true} {
		dir := filepath.Join(t.TempDir(), "hello")
		if existed {
			if err := os.Mkdir(dir, 0o755); err != nil {
				t.Fatal(err)
			}
		}
		var stderr bytes.Buffer
		code := Run([]string{"new", dir, "--replace", root}, Config{Stdout: io.Discard, Stderr: &stderr})
		if code == ExitOK {
			t.Fatalf("dawn new with no module proxy succeeded; the test cannot check the clean-up")
		}
		entries, err := os.ReadDir(dir)
		switch {
		case !existed && err == nil:
			t.Errorf("dawn new left %s behind after a failed tidy", dir)
		case existed && len(entries) > 0:
			t.Errorf("dawn new left %d files in %s after a failed tidy", len(entries), dir)
		}
		if !strings.Contains(stderr.String(), "go mod tidy") {
			t.Errorf("stderr does not say what failed:\n%s", stderr.String())
		}
	}
}
