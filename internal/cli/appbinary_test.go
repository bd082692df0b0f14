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
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/dawn-go/dawn/internal/gomod"
	"github.com/dawn-go/dawn/internal/scaffold"
)

// TestStockBinaryServesTheAppsTools: the stock dawn binary, given an app
// whose main package registers Go tools, runs the command in the app's own
// binary, so the routes it lists (and serves) have those tools: the
// example app's main.go beside its routes, and a `dawn new` app whose
// main.go sits at the module root beside app/.
func TestStockBinaryServesTheAppsTools(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the apps' binaries")
	}
	root, ok := gomod.Root(".")
	if !ok {
		t.Fatal("no go.mod above the test")
	}
	t.Setenv("GOFLAGS", "-mod=mod")
	newApp := filepath.Join(t.TempDir(), "hello")
	if _, err := scaffold.Write(newApp, scaffold.Options{Replace: root}); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ app, route, tool string }{
		{filepath.Join(root, "examples", "app"), "/support/[tenant]", "lookupAccount"},
		{filepath.Join(newApp, "app"), "/assistant", "countWords"},
	} {
		var stdout, stderr bytes.Buffer
		code := Run([]string{"routes", "--app", c.app, "--json"}, Config{Stock: true, Stdout: &stdout, Stderr: &stderr})
		if code != ExitOK {
			t.Fatalf("dawn routes --app %s exited %d:\n%s", c.app, code, stderr.String())
		}
		if tools := routeTools(t, stdout.Bytes(), c.route); !slices.Contains(tools, c.tool) {
			t.Errorf("stock dawn routes --app %s: %s has tools %q, want %s among them", c.app, c.route, tools, c.tool)
		}
		if !strings.Contains(stderr.String(), "built the app in") {
			t.Errorf("stderr does not say the app's binary was built:\n%s", stderr.String())
		}
	}
}

// routeTools returns the tool names dawn routes --json lists for route.
func routeTools(t *testing.T, data []byte, route string) []string {
	t.Helper()
	var routes []struct {
		ID    string   `json:"id"`
		Tools []string `json:"tools"`
	}
	if err := json.Unmarshal(data, &routes); err != nil {
		t.Fatalf("dawn routes --json: %v\n%s", err, data)
	}
	for _, r := range routes {
		if r.ID == route {
			return r.Tools
		}
	}
	return nil
}

// TestStockBinaryRunsEveryCommandInTheApp: check, typegen, run and start of
// the stock binary on a `dawn new` app all run in the app's own binary:
// check passes (the tool is known), typegen writes the tool's input type,
// run calls the tool through the offline model, and start serves the route
// with it.
func TestStockBinaryRunsEveryCommandInTheApp(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the app's binary")
	}
	root, ok := gomod.Root(".")
	if !ok {
		t.Fatal("no go.mod above the test")
	}
	t.Setenv("GOFLAGS", "-mod=mod")
	dir := filepath.Join(t.TempDir(), "hello")
	if _, err := scaffold.Write(dir, scaffold.Options{Replace: root}); err != nil {
		t.Fatal(err)
	}
	appDir := filepath.Join(dir, "app")
	stock := func(args ...string) (string, string) {
		t.Helper()
		var stdout, stderr bytes.Buffer
		if code := Run(args, Config{Stock: true, Stdout: &stdout, Stderr: &stderr}); code != ExitOK {
			t.Fatalf("stock dawn %s exited %d:\n%s%s", strings.Join(args, " "), code, stdout.String(), stderr.String())
		}
		return stdout.String(), stderr.String()
	}
	if _, stderr := stock("check", "--app", appDir); strings.Contains(stderr, "countWords") {
		t.Errorf("check warns about the app's own tool:\n%s", stderr)
	}
	stock("typegen", "--app", appDir)
	gen, err := os.ReadFile(filepath.Join(appDir, "dawngen", "dawngen.go"))
	if err != nil || !strings.Contains(string(gen), "CountWords") {
		t.Errorf("typegen did not write the countWords input type (%v)", err)
	}
	if stdout, _ := stock("run", "/assistant", "--app", appDir, "--input", "Count the words of: hello brave new world", "--plain"); !strings.Contains(stdout, "countWords") {
		t.Errorf("run did not call countWords through the offline model:\n%s", stdout)
	}
	checkStartServesTool(t, root, appDir)
}

// checkStartServesTool starts the stock binary's start on appDir and checks
// GET /routes lists countWords for /assistant.
func checkStartServesTool(t *testing.T, root, appDir string) {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "dawn")
	if out, err := exec.Command("go", "build", "-o", bin, filepath.Join(root, "cmd", "dawn")).CombinedOutput(); err != nil {
		t.Fatalf("go build ./cmd/dawn: %v\n%s", err, out)
	}
	cmd := exec.Command(bin, "start", "--app", appDir, "--host", "127.0.0.1", "--port", "0")
	cmd.Env = append(os.Environ(), "DAWN_STORE="+filepath.Join(t.TempDir(), "dawn.db"), "DAWN_API_KEY=", "DAWN_MODEL=")
	out, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	url := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			var ready struct {
				Msg, URL string
			}
			if json.Unmarshal(sc.Bytes(), &ready) == nil && ready.Msg == "dawn server ready" {
				url <- ready.URL
			}
		}
	}()
	var base string
	select {
	case base = <-url:
	case <-time.After(3 * time.Minute):
		t.Fatal("stock dawn start on the app printed no ready line within 3 minutes")
	}
	resp, err := http.Get(base + "/routes")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if !strings.Contains(string(body), "countWords") {
		t.Errorf("GET /routes of the stock binary's start does not list countWords:\n%s", body)
	}
	if runtime.GOOS == "linux" {
		checkAppStopsWithWrapper(t, cmd, base)
	}
}

// checkAppStopsWithWrapper kills the stock binary that runs the app's
// binary, as a supervisor's SIGKILL would, and checks the app's server at
// base stops too instead of serving on as an orphan.
func checkAppStopsWithWrapper(t *testing.T, wrapper *exec.Cmd, base string) {
	t.Helper()
	_ = wrapper.Process.Kill()
	deadline := time.Now().Add(15 * time.Second)
	for time.Now().Before(deadline) {
		resp, err := http.Get(base + "/healthz")
		if err != nil {
			return // nothing serves there any more
		}
		resp.Body.Close()
		time.Sleep(100 * time.Millisecond)
	}
	t.Errorf("the app's server at %s still serves 15 s after the stock dawn that ran it was killed", base)
}
