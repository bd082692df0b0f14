package cli

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dawn-go/dawn/dawntest"
	"github.com/dawn-go/dawn/internal/apptest"
	"github.com/dawn-go/dawn/internal/models"
	"github.com/dawn-go/dawn/internal/planview"
	"github.com/dawn-go/dawn/internal/store"
)

// writeRunApp writes a one-route app with a three-item plan and returns its
// folder.
func writeRunApp(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	route := filepath.Join(dir, "support", "[tenant]")
	if err := os.MkdirAll(route, 0o755); err != nil {
		t.Fatal(err)
	}
	files := map[string]string{
		"agent.md": "---\ndescription: Support for one tenant.\n---\nYou answer support questions for the tenant.\n",
		"plan.md": "- [ ] Understand the customer request\n" +
			"- [ ] Check account context\n" +
			"- [ ] Write the final response\n",
	}
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(route, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// runCLI runs the CLI with no environment and returns its exit code and
// output.
func runCLI(t *testing.T, env map[string]string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code = Run(args, Config{Stdout: &out, Stderr: &errOut, Stock: true, Env: func(k string) string { return env[k] }})
	return code, out.String(), errOut.String()
}

// wantPlainRun checks the plain output of a run of writeRunApp's route.
func wantPlainRun(t *testing.T, stdout, input string) {
	t.Helper()
	for _, want := range []string{
		"plan: [>] Understand the customer request | [ ] Check account context | [ ] Write the final response\n",
		"plan: [x] Understand the customer request | [>] Check account context | [ ] Write the final response\n",
		"plan: [x] Understand the customer request | [x] Check account context | [x] Write the final response\n",
		`Offline model: worked through 3 plan items for "` + input + `".`,
	} {
		if !strings.Contains(stdout, want) {
			t.Errorf("stdout lacks %q; got:\n%s", want, stdout)
		}
	}
	if !strings.HasSuffix(stdout, ".\n") {
		t.Errorf("stdout does not end with the answer and a newline: %q", stdout)
	}
}

func TestRunInProcess(t *testing.T) {
	dir := writeRunApp(t)
	code, stdout, stderr := runCLI(t, nil, "run", "/support/acme", "--app", dir, "--input", "hi")
	if code != ExitOK {
		t.Fatalf("exit %d, stderr:\n%s", code, stderr)
	}
	wantPlainRun(t, stdout, "hi")
	if !strings.Contains(stderr, "thread: ") || !strings.Contains(stderr, "offline") {
		t.Errorf("stderr should name the thread and the offline model; got:\n%s", stderr)
	}
	if _, err := os.Stat(filepath.Join(dir, ".dawn", "dawn.db")); err != nil {
		t.Errorf("the run should be stored in the app's store: %v", err)
	}
}

func TestRunContinuesThread(t *testing.T) {
	dir := writeRunApp(t)
	for i, input := range []string{"first", "second"} {
		code, _, stderr := runCLI(t, nil, "run", "/support/acme", "--app", dir, "--input", input, "--thread", "t-1")
		if code != ExitOK {
			t.Fatalf("run %d: exit %d, stderr:\n%s", i, code, stderr)
		}
		if !strings.Contains(stderr, "thread: t-1\n") {
			t.Errorf("run %d: stderr should name thread t-1; got:\n%s", i, stderr)
		}
	}
	st, err := store.Open(filepath.Join(dir, ".dawn", "dawn.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	cp, err := st.Latest(t.Context(), "t-1")
	if err != nil {
		t.Fatal(err)
	}
	users := 0
	for _, m := range cp.Messages {
		if m.Role == "user" {
			users++
		}
	}
	if users != 2 {
		t.Errorf("thread t-1 holds %d user messages, want 2", users)
	}
}

func TestRunJSON(t *testing.T) {
	dir := writeRunApp(t)
	code, stdout, stderr := runCLI(t, nil, "run", "/support/acme", "--app", dir, "--input", "hi", "--json")
	if code != ExitOK {
		t.Fatalf("exit %d, stderr:\n%s", code, stderr)
	}
	var types []string
	sc := bufio.NewScanner(strings.NewReader(stdout))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var e struct {
			ID    int64           `json:"id"`
			Event string          `json:"event"`
			Data  json.RawMessage `json:"data"`
		}
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			t.Fatalf("line %q is not JSON: %v", sc.Text(), err)
		}
		if e.ID != int64(len(types)+1) || e.Event == "" || len(e.Data) == 0 {
			t.Errorf("line %q lacks id %d, event or data", sc.Text(), len(types)+1)
		}
		types = append(types, e.Event)
	}
	if len(types) == 0 || types[len(types)-1] != "done" {
		t.Fatalf("events %v do not end with done", types)
	}
	if !strings.Contains(strings.Join(types, " "), "plan_update") {
		t.Errorf("events %v hold no plan_update", types)
	}
}

func TestRunURL(t *testing.T) {
	dir := writeRunApp(t)
	url := dawntest.New(t, dir, models.NewOffline(), dawntest.Options{}).URL
	code, stdout, stderr := runCLI(t, nil, "run", "/support/acme", "--url", url, "--input", "hello there")
	if code != ExitOK {
		t.Fatalf("exit %d, stderr:\n%s", code, stderr)
	}
	wantPlainRun(t, stdout, "hello there")
	if !strings.Contains(stderr, "thread: ") {
		t.Errorf("stderr should name the thread; got:\n%s", stderr)
	}
}

func TestRunBadRoute(t *testing.T) {
	dir := writeRunApp(t)
	url := dawntest.New(t, dir, models.NewOffline(), dawntest.Options{}).URL
	for _, where := range [][]string{{"--app", dir}, {"--url", url}} {
		t.Run(where[0], func(t *testing.T) {
			args := append([]string{"run", "/nope/here", "--input", "hi"}, where...)
			code, _, stderr := runCLI(t, nil, args...)
			if code != ExitProblem {
				t.Errorf("exit %d, want %d", code, ExitProblem)
			}
			if !strings.Contains(stderr, "/nope/here") {
				t.Errorf("stderr should name the route; got:\n%s", stderr)
			}
		})
	}
}

// withStdin makes os.Stdin a file holding text for the test.
func withStdin(t *testing.T, text string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "stdin")
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	old := os.Stdin
	os.Stdin = f
	t.Cleanup(func() { os.Stdin = old; f.Close() })
}

func TestRunInput(t *testing.T) {
	dir := writeRunApp(t)
	tests := []struct {
		name     string
		stdin    string
		args     []string
		wantCode int
		wantOut  string
		wantErr  string
	}{
		{name: "empty stdin", args: []string{"--app", dir}, wantCode: ExitUsage, wantErr: "pass --input TEXT"},
		{name: "blank stdin", stdin: " \n\n", args: []string{"--app", dir}, wantCode: ExitUsage, wantErr: "pass --input TEXT"},
		{name: "empty --input", args: []string{"--app", dir, "--input", ""}, wantCode: ExitUsage, wantErr: "--input is empty"},
		{name: "message on stdin", stdin: "piped question\n", args: []string{"--app", dir}, wantCode: ExitOK, wantOut: `for "piped question"`},
		{name: "--input wins over stdin", stdin: "ignored", args: []string{"--app", dir, "--input", "flag question"}, wantCode: ExitOK, wantOut: `for "flag question"`},
		{name: "--app and --url together", args: []string{"--app", dir, "--input", "x", "--url", "http://127.0.0.1:1"}, wantCode: ExitUsage, wantErr: "[app url]"},
		{name: "bad --url", args: []string{"--input", "x", "--url", "localhost:8000"}, wantCode: ExitUsage, wantErr: "http://127.0.0.1:8000"},
		{name: "no server at --url", args: []string{"--input", "x", "--url", "http://127.0.0.1:1"}, wantCode: ExitProblem, wantErr: "is it running"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			withStdin(t, tt.stdin)
			args := append([]string{"run", "/support/acme"}, tt.args...)
			code, stdout, stderr := runCLI(t, nil, args...)
			if code != tt.wantCode {
				t.Fatalf("exit %d, want %d; stderr:\n%s", code, tt.wantCode, stderr)
			}
			if !strings.Contains(stdout, tt.wantOut) {
				t.Errorf("stdout lacks %q; got:\n%s", tt.wantOut, stdout)
			}
			if !strings.Contains(stderr, tt.wantErr) {
				t.Errorf("stderr lacks %q; got:\n%s", tt.wantErr, stderr)
			}
		})
	}
}

// sse writes events as a runs/stream response.
func sse(w http.ResponseWriter, events ...string) {
	w.Header().Set("Content-Type", "text/event-stream")
	for i, e := range events {
		typ, data, _ := strings.Cut(e, " ")
		fmt.Fprintf(w, "id: %d\nevent: %s\ndata: %s\n\n", i+1, typ, data)
	}
}

func TestRunRemoteOutcomes(t *testing.T) {
	withStdin(t, "") // no terminal to ask at
	tests := []struct {
		name     string
		env      map[string]string
		handler  http.HandlerFunc
		wantCode int
		wantOut  string
		wantErr  string
	}{
		{
			name: "sends the API key",
			env:  map[string]string{"DAWN_API_KEY": "s3cret"},
			handler: func(w http.ResponseWriter, r *http.Request) {
				if r.Header.Get("Authorization") != "Bearer s3cret" {
					w.WriteHeader(http.StatusUnauthorized)
					fmt.Fprint(w, `{"error":{"kind":"unauthorized","message":"missing or wrong API key"}}`)
					return
				}
				sse(w, `chunk "ok"`, `done {"output":{"messages":[]}}`)
			},
			wantCode: ExitOK,
			wantOut:  "ok\n",
		},
		{
			name: "error status prints the server's message",
			handler: func(w http.ResponseWriter, r *http.Request) {
				w.WriteHeader(http.StatusConflict)
				fmt.Fprint(w, `{"error":{"kind":"run_in_flight","message":"thread already has a run in flight"}}`)
			},
			wantCode: ExitProblem,
			wantErr:  "dawn: thread already has a run in flight\n",
		},
		{
			name: "error status without JSON",
			handler: func(w http.ResponseWriter, r *http.Request) {
				http.Error(w, "bad gateway", http.StatusBadGateway)
			},
			wantCode: ExitProblem,
			wantErr:  "502 Bad Gateway: bad gateway",
		},
		{
			name: "failed run",
			handler: func(w http.ResponseWriter, r *http.Request) {
				sse(w, `plan_update {"todos":[{"content":"a","status":"in_progress"}]}`, `done {"output":{"error":"model openai:gpt-4o-mini refused: quota"}}`)
			},
			wantCode: ExitProblem,
			wantOut:  "plan: [>] a\n",
			wantErr:  "the run failed: model openai:gpt-4o-mini refused: quota",
		},
		{
			name: "cancelled run",
			handler: func(w http.ResponseWriter, r *http.Request) {
				sse(w, `done {"output":{"cancelled":true}}`)
			},
			wantCode: ExitProblem,
			wantErr:  "dawn: cancelled\n",
		},
		{
			name: "a run parked for a person says what to answer",
			handler: func(w http.ResponseWriter, r *http.Request) {
				sse(w, `interrupt {"interruptId":"perm-1","type":"permission-request","kind":"tool","detail":{"toolName":"deployProd"},"callId":"c1"}`,
					`done {"output":{"interrupted":true,"interrupts":[{"interruptId":"perm-1","type":"permission-request","kind":"tool","detail":{"toolName":"deployProd"},"callId":"c1"}]}}`)
			},
			wantCode: ExitProblem,
			wantErr:  "waiting for a person's decision: interrupt perm-1 (tool deployProd); no one answered it (stdin is not a terminal, or it ended), so the thread stays parked: answer it with `dawn run /support/acme --url http://127.0.0.1:",
		},
		{
			name: "stream cut before done",
			handler: func(w http.ResponseWriter, r *http.Request) {
				sse(w, `chunk "part"`)
			},
			wantCode: ExitProblem,
			wantOut:  "part\n",
			wantErr:  "ended before the run finished",
		},
		{
			name: "answer without chunks comes from the final state",
			handler: func(w http.ResponseWriter, r *http.Request) {
				sse(w, `done {"output":{"messages":[{"role":"user","content":"hi"},{"role":"assistant","content":"Hello!"}]}}`)
			},
			wantCode: ExitOK,
			wantOut:  "Hello!\n",
		},
		{
			name: "a rejected answer is marked and the accepted one shown",
			handler: func(w http.ResponseWriter, r *http.Request) {
				sse(w, `chunk "All done!"`, `answer_rejected {"reason":"plan items are open"}`,
					`done {"output":{"messages":[{"role":"assistant","content":"All done!"},{"role":"user","content":"Plan harness: …","harness":true},{"role":"assistant","content":"Finished."}]}}`)
			},
			wantCode: ExitOK,
			wantOut:  "All done!\n" + planview.RejectedLine + "\nFinished.\n",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var gotPath string
			var gotBody map[string]any
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.Method == http.MethodGet && r.URL.Path == "/threads/t-9/state" {
					// run asks whether the thread is parked first.
					w.WriteHeader(http.StatusNotFound)
					fmt.Fprint(w, `{"error":{"kind":"thread_not_found","message":"no thread t-9"}}`)
					return
				}
				gotPath = r.URL.Path
				_ = json.NewDecoder(r.Body).Decode(&gotBody)
				tt.handler(w, r)
			}))
			defer srv.Close()
			code, stdout, stderr := runCLI(t, tt.env, "run", "/support/acme", "--url", srv.URL+"/", "--input", "hi", "--thread", "t-9")
			if code != tt.wantCode {
				t.Errorf("exit %d, want %d; stderr:\n%s", code, tt.wantCode, stderr)
			}
			if gotPath != "/threads/t-9/runs/stream" {
				t.Errorf("POST to %q, want /threads/t-9/runs/stream", gotPath)
			}
			body, _ := json.Marshal(gotBody)
			if want := `{"input":{"messages":[{"content":"hi","role":"user"}]},"route":"/support/acme"}`; string(body) != want {
				t.Errorf("body %s, want %s", body, want)
			}
			if !strings.Contains(stdout, tt.wantOut) {
				t.Errorf("stdout lacks %q; got:\n%s", tt.wantOut, stdout)
			}
			if !strings.Contains(stderr, tt.wantErr) {
				t.Errorf("stderr lacks %q; got:\n%s", tt.wantErr, stderr)
			}
		})
	}
}

// TestRunInterrupt sends the test process SIGINT while a run waits on its
// model: the CLI cancels the run on the server and exits 130.
func TestRunInterrupt(t *testing.T) {
	self, err := os.FindProcess(os.Getpid())
	if err != nil {
		t.Skip(err)
	}
	dir := writeRunApp(t)
	never := make(chan struct{})
	h := apptest.New(t, dir, dawntest.Script().Wait(never).Reply("never sent"), apptest.Options{})
	url := h.Serve(t)
	type result struct {
		code           int
		stdout, stderr string
	}
	done := make(chan result, 1)
	go func() {
		code, stdout, stderr := runCLI(t, nil, "run", "/support/acme", "--url", url, "--input", "hi", "--thread", "t-int")
		done <- result{code, stdout, stderr}
	}()
	// The run is active once the request has arrived, and the CLI listens
	// for SIGINT before it sends the request.
	deadline := time.Now().Add(30 * time.Second)
	for h.Runs.Active("t-int") == nil {
		if time.Now().After(deadline) {
			t.Fatal("the run never started")
		}
		time.Sleep(5 * time.Millisecond)
	}
	if err := self.Signal(os.Interrupt); err != nil {
		t.Skipf("cannot send SIGINT here: %v", err)
	}
	var res result
	select {
	case res = <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("the CLI did not end after SIGINT")
	}
	if res.code != ExitInterrupted {
		t.Errorf("exit %d, want %d; stderr:\n%s", res.code, ExitInterrupted, res.stderr)
	}
	if !strings.Contains(res.stderr, "interrupted") || !strings.Contains(res.stderr, "thread: t-int") {
		t.Errorf("stderr should say the run was interrupted and name the thread; got:\n%s", res.stderr)
	}
	runs, err := h.Store.Runs(t.Context(), "t-int")
	if err != nil {
		t.Fatal(err)
	}
	if len(runs) != 1 || runs[0].Status != store.RunCancelled {
		t.Errorf("runs on t-int = %+v, want one cancelled", runs)
	}
}

// TestEnvironmentSettingsRefusedAlike: a bad setting from the environment
// stops every command that loads the app, named as the environment value
// it is (not as dawn.yaml), and dawn run does not run the route with it.
func TestEnvironmentSettingsRefusedAlike(t *testing.T) {
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "hi"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "hi", "agent.md"), []byte("You answer."), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("DAWN_PERMISSIONS_MODE", "bogus")
	for _, args := range [][]string{
		{"run", "/hi", "--app", dir, "--input", "hi"},
		{"check", "--app", dir},
		{"typegen", "--app", dir},
	} {
		code, stdout, stderr := runCLI(t, nil, args...)
		out := stdout + stderr
		if code != ExitProblem || !strings.Contains(out, `the environment variable DAWN_PERMISSIONS_MODE is "bogus"`) || strings.Contains(out, "dawn.yaml") {
			t.Errorf("dawn %s with DAWN_PERMISSIONS_MODE=bogus: exit %d, want %d naming the environment variable\nstdout:\n%s\nstderr:\n%s", args[0], code, ExitProblem, stdout, stderr)
		}
	}
}
