package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/dawn-go/dawn/internal/tokens"
)

// The premature-finalization scenario (the verified-plans issue's first
// measurement, the seed's exercise): on three scripted tasks of two items
// each, a lazy model claims "tests pass" and "notes written" without doing
// either, and a diligent one does the work (a command in the sandbox, a
// file written) before it claims. Each task runs on three routes: "off"
// (no plan), "plans" (a harness-owned plan that takes evidence on trust:
// enforce: true, evidence: required) and "verifiers" (the same plan with
// a `verify:` command under each item, run by the harness in the thread's
// local sandbox). It is the in-process TestPrematureFinalization
// (harness/premature_test.go) over the real wire: `dawn start` on a local
// (bubblewrap) sandbox, the model a mock on loopback.

// premTask is one scripted task: two items, the work that does each (a
// runBash command, or a file writeFile writes) and the file the work
// leaves, which each item's verifier checks.
type premTask struct {
	Name  string
	Items [2]string
	Files [2]string
}

var premTasks = []premTask{
	{"release", [2]string{"Run the tests", "Write the release notes"}, [2]string{"tests.passed", "notes.md"}},
	{"migrate", [2]string{"Migrate the database", "Update the runbook"}, [2]string{"db.migrated", "runbook.md"}},
	{"build", [2]string{"Build the image", "Record the changelog"}, [2]string{"image.built", "CHANGELOG.md"}},
}

// premModes are the routes' configurations, in the order they are shown.
var premModes = []string{"off", "plans", "verifiers"}

// writePrematureApp writes a route per task and mode (/release-off, ...)
// with a thread workspace, and a dawn.yaml with a local sandbox that runs
// commands without asking (the scenario is about the plan, not the gate).
func writePrematureApp(dir, model string) error {
	files := map[string]string{"dawn.yaml": "sandbox: {provider: local}\npermissions: {mode: bypass}\n"}
	for _, task := range premTasks {
		for _, mode := range premModes {
			route := task.Name + "-" + mode
			files[route+"/agent.md"] = "---\nmodel: " + model + "\nworkspace: thread\nmax_turns: 12\n---\nYou do the job.\n"
			var plan strings.Builder
			if mode == "off" {
				continue
			}
			plan.WriteString("---\nenforce: true\nevidence: required\n---\n")
			for i, item := range task.Items {
				fmt.Fprintf(&plan, "- [ ] %s\n", item)
				if mode == "verifiers" {
					fmt.Fprintf(&plan, "  - verify: test -s %s\n", task.Files[i])
				}
			}
			files[route+"/plan.md"] = plan.String()
		}
	}
	return writeFiles(dir, files)
}

// premUser is the run's user message: it tells the mock model which task
// it works and whether it is lazy.
func premUser(task premTask, lazy bool) string {
	kind := "diligent"
	if lazy {
		kind = "lazy"
	}
	return fmt.Sprintf("Do the job. task=%s model=%s", task.Name, kind)
}

// premCall is a tool call of the mock model, or Text.
type premCall struct {
	Tool, Args string
	Text       string
}

// decidePremature is measureModel (harness/premature_test.go) over the
// wire. Diligent, it first does each item's work: a command that leaves
// the first item's file, then writeFile for the second. Then, where the
// route has a plan, it claims both items completed with evidence ("tests
// pass", "notes written"); after that claim's result it answers that it is
// done. The lazy model skips the work.
func decidePremature(req *lazyRequest) premCall {
	var first string
	for _, m := range req.Messages {
		if m.Role == "user" {
			first = contentText(m.Content)
			break
		}
	}
	lazy := strings.Contains(first, "model=lazy")
	var task premTask
	for _, t := range premTasks {
		if strings.Contains(first, "task="+t.Name+" ") {
			task = t
		}
	}
	planned := false
	for _, tl := range req.Tools {
		var f struct{ Name string }
		_ = json.Unmarshal(tl.Function, &f)
		planned = planned || f.Name == "writeTodos"
	}
	done := 0
	lastCall := ""
	for _, m := range req.Messages {
		for _, c := range m.ToolCalls {
			lastCall = c.Function.Name
			if c.Function.Name == "runBash" || c.Function.Name == "writeFile" {
				done++
			}
		}
	}
	// The last turn is the last message before the plan's state block (a
	// system message after the conversation).
	last := len(req.Messages) - 1
	for last > 0 && req.Messages[last].Role == "system" {
		last--
	}
	afterClaim := lastCall == "writeTodos" && req.Messages[last].Role == "tool"
	switch {
	case !lazy && done == 0:
		return premCall{Tool: "runBash", Args: mustJSONText(map[string]string{"command": "echo ok > " + task.Files[0]})}
	case !lazy && done == 1:
		return premCall{Tool: "writeFile", Args: mustJSONText(map[string]string{"path": task.Files[1], "content": "written\n"})}
	case planned && !afterClaim:
		evidence := [2]string{"tests pass", "notes written"}
		var todos []map[string]string
		for i, it := range task.Items {
			todos = append(todos, map[string]string{"content": it, "status": "completed", "evidence": evidence[i]})
		}
		return premCall{Tool: "writeTodos", Args: mustJSONText(map[string]any{"todos": todos, "reason": "all done"})}
	}
	return premCall{Text: "Done: tests pass and notes written."}
}

func mustJSONText(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// premMock is an OpenAI chat-completions server on loopback that plays
// the scenario's models, one run at a time.
type premMock struct{ bookingMock }

func startPremMock() (*premMock, error) {
	m := &premMock{}
	if err := m.start(m.serve); err != nil {
		return nil, err
	}
	return m, nil
}

func (m *premMock) serve(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		return
	}
	var req lazyRequest
	if err := json.Unmarshal(body, &req); err != nil || len(req.Messages) == 0 {
		http.Error(w, `{"error":{"message":"not a chat completion request"}}`, http.StatusBadRequest)
		return
	}
	pb, pt := req.promptSize()
	m.mu.Lock()
	m.use.Calls++
	m.use.WireBytes += len(body)
	m.use.PromptBytes += pb
	m.use.Prompt += pt
	n := m.use.Calls
	m.mu.Unlock()

	d := decidePremature(&req)
	message, finish := `{"role":"assistant","content":`+strconv.Quote(d.Text)+`}`, "stop"
	completion := tokens.Count(d.Text)
	if d.Tool != "" {
		message = `{"role":"assistant","content":null,"tool_calls":[{"index":0,"id":"call_` + strconv.Itoa(n) + `","type":"function","function":{"name":"` + d.Tool + `","arguments":` + strconv.Quote(d.Args) + `}}]}`
		finish, completion = "tool_calls", tokens.Count(d.Tool+d.Args)
	}
	usage := mockUsage(pt, completion)
	if req.Stream {
		const head = `data: {"id":"chatcmpl-prem","object":"chat.completion.chunk","created":1,"model":"gpt-4o-mini","choices":[`
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = io.WriteString(w, head+`{"index":0,"delta":`+message+`,"finish_reason":null}]}`+"\n\n"+
			head+`{"index":0,"delta":{},"finish_reason":"`+finish+`"}]}`+"\n\n"+
			head+`],"usage":`+usage+`}`+"\n\n"+"data: [DONE]\n\n")
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = io.WriteString(w, `{"id":"chatcmpl-prem","object":"chat.completion","created":1,"model":"gpt-4o-mini","choices":[{"index":0,"message":`+
		message+`,"finish_reason":"`+finish+`"}],"usage":`+usage+`}`)
}

// premRun is one run: a task on a route, with the lazy or the diligent
// model.
type premRun struct {
	Task  string `json:"task"`
	Mode  string `json:"mode"`
	Model string `json:"model"`
	lazyUse
	// Accepted: the run ended with the model's answer standing (no error,
	// and the plan, where there is one, done).
	Accepted bool   `json:"accepted"`
	Plan     string `json:"plan_state,omitempty"`
	WorkDone bool   `json:"work_done"` // both files are in the thread's workspace
	Error    string `json:"error,omitempty"`
}

// premResult is what --premature measured.
type premResult struct {
	Binary     string    `json:"binary"`
	TokensFrom string    `json:"tokens_from"`
	Runs       []premRun `json:"runs"`
}

// prematureMain runs --premature and prints its result; the exit code is
// 1 when a run could not be made or an outcome is not the expected one
// (the lazy claim accepted with verifiers, or refused without; the
// diligent model not finishing).
func prematureMain(ctx context.Context, opts options) int {
	res, err := runPremature(ctx, opts)
	if res != nil {
		if opts.json {
			enc := json.NewEncoder(os.Stdout)
			enc.SetIndent("", "  ")
			_ = enc.Encode(res)
		} else {
			writePremature(os.Stdout, res)
		}
	}
	if err == nil {
		err = res.check()
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench --premature:", err)
		return 1
	}
	return 0
}

func runPremature(ctx context.Context, opts options) (*premResult, error) {
	tmp, bin, err := scratch(ctx, opts, "dawnprem-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	app := filepath.Join(tmp, "app")
	if err := writePrematureApp(app, "openai:gpt-4o-mini"); err != nil {
		return nil, err
	}
	mock, err := startPremMock()
	if err != nil {
		return nil, err
	}
	defer mock.close()
	srv, err := startDawn(ctx, bin, app, []string{"OPENAI_BASE_URL=" + mock.url, "OPENAI_API_KEY=test"})
	if err != nil {
		return nil, err
	}
	defer srv.stop(30 * time.Second)
	res := &premResult{Binary: bin, TokensFrom: "o200k tokens of what the mock model was sent (message text, tool calls, tool results, tool definitions)"}
	if opts.dawn == "" {
		res.Binary = "./cmd/dawn (built)"
	}
	client := &http.Client{Timeout: time.Minute}
	tag := strconv.FormatInt(time.Now().UnixNano(), 36)
	for _, task := range premTasks {
		for _, mode := range premModes {
			for _, lazy := range []bool{true, false} {
				run := premRun{Task: task.Name, Mode: mode, Model: "diligent"}
				if lazy {
					run.Model = "lazy"
				}
				thread := fmt.Sprintf("prem-%s-%s-%s-%s", tag, task.Name, mode, run.Model)
				if err := premOnce(ctx, client, srv.url, task, mode, lazy, thread, &run); err != nil {
					return res, fmt.Errorf("%s on /%s-%s: %w", run.Model, task.Name, mode, err)
				}
				run.lazyUse = mock.take()
				res.Runs = append(res.Runs, run)
			}
		}
	}
	return res, nil
}

// premOnce runs task on its route for mode with runs/wait on a fresh
// thread, then reads the thread's plan and workspace into run.
func premOnce(ctx context.Context, client *http.Client, base string, task premTask, mode string, lazy bool, thread string, run *premRun) error {
	route := "/" + task.Name + "-" + mode
	body, _ := json.Marshal(map[string]any{"route": route, "input": map[string]any{"messages": []map[string]string{{"role": "user", "content": premUser(task, lazy)}}}})
	status, out, err := premDo(ctx, client, http.MethodPost, base+"/threads/"+thread+"/runs/wait", body)
	if err != nil {
		return err
	}
	var failed struct {
		Error json.RawMessage `json:"error"`
	}
	if status != http.StatusOK {
		run.Error = fmt.Sprintf("runs/wait %d: %s", status, firstWords(string(out), 30))
	} else if json.Unmarshal(out, &failed) == nil && len(failed.Error) > 0 && string(failed.Error) != "null" {
		run.Error = firstWords(string(failed.Error), 30)
	}
	if mode != "off" {
		status, out, err := premDo(ctx, client, http.MethodGet, base+"/threads/"+thread+"/plan", nil)
		if err != nil {
			return err
		}
		var plan struct {
			State string `json:"state"`
		}
		if status != http.StatusOK || json.Unmarshal(out, &plan) != nil {
			return fmt.Errorf("GET /threads/%s/plan answered %d: %s", thread, status, firstWords(string(out), 30))
		}
		run.Plan = plan.State
	}
	run.Accepted = run.Error == "" && (mode == "off" || run.Plan == "done")
	run.WorkDone = true
	for _, f := range task.Files {
		status, out, err := premDo(ctx, client, http.MethodGet, base+"/threads/"+thread+"/files/"+f, nil)
		if err != nil {
			return err
		}
		run.WorkDone = run.WorkDone && status == http.StatusOK && len(out) > 0
	}
	return nil
}

func premDo(ctx context.Context, client *http.Client, method, url string, body []byte) (int, []byte, error) {
	req, err := http.NewRequestWithContext(ctx, method, url, bytes.NewReader(body))
	if err != nil {
		return 0, nil, err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := client.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	out, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	return resp.StatusCode, out, err
}

// check says which outcome is not the scenario's: the lazy claim is
// accepted without the harness and with evidence on trust, and caught by
// verifiers; the diligent model finishes everywhere.
func (r *premResult) check() error {
	for _, run := range r.Runs {
		lazy := run.Model == "lazy"
		switch {
		case lazy && run.Mode != "verifiers" && (!run.Accepted || run.WorkDone):
			return fmt.Errorf("%s/%s: the lazy claim was not accepted (%+v)", run.Task, run.Mode, run)
		case lazy && run.Mode == "verifiers" && run.Accepted:
			return fmt.Errorf("%s: the verifiers accepted the lazy claim (%+v)", run.Task, run)
		case !lazy && (!run.Accepted || !run.WorkDone):
			return fmt.Errorf("%s/%s: the diligent model did not finish (%+v)", run.Task, run.Mode, run)
		}
	}
	return nil
}

// writePremature prints the table of runs and, per mode, how many lazy
// claims stood.
func writePremature(w io.Writer, r *premResult) {
	fmt.Fprintf(w, "premature finalization: %d tasks of 2 items, server %s, local sandbox\n", len(premTasks), r.Binary)
	fmt.Fprintf(w, "  tokens: %s\n", r.TokensFrom)
	fmt.Fprintf(w, "  %-8s %-10s %-9s %-9s %-9s %-12s %8s %10s\n", "task", "mode", "model", "accepted", "work", "plan", "requests", "tokens")
	for _, run := range r.Runs {
		plan := run.Plan
		if plan == "" {
			plan = "-"
		}
		fmt.Fprintf(w, "  %-8s %-10s %-9s %-9v %-9v %-12s %8d %10d\n", run.Task, run.Mode, run.Model, run.Accepted, run.WorkDone, plan, run.Calls, run.Prompt)
	}
	for _, mode := range premModes {
		stood, n := 0, 0
		var calls, toks []float64
		for _, run := range r.Runs {
			if run.Mode != mode {
				continue
			}
			if run.Model == "lazy" {
				n++
				if run.Accepted {
					stood++
				}
				continue
			}
			calls = append(calls, float64(run.Calls))
			toks = append(toks, float64(run.Prompt))
		}
		fmt.Fprintf(w, "  %-10s lazy claims accepted %d of %d; diligent: requests %s, tokens %s per task\n", mode, stood, n, medRange(calls), medRange(toks))
	}
}
