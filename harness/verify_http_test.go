package harness_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/dawn-go/dawn/capabilities"
	"github.com/dawn-go/dawn/dawntest"
	"github.com/dawn-go/dawn/harness"
	"github.com/dawn-go/dawn/internal/app"
	"github.com/dawn-go/dawn/internal/apptest"
	"github.com/dawn-go/dawn/markers"
	"github.com/dawn-go/dawn/planning"
	"github.com/dawn-go/dawn/router"
	"github.com/dawn-go/dawn/stream"
)

// shellMarker stands in for the sandbox's runBash in these tests, so they
// check the harness's side of command verifiers on a host without a
// sandbox: a route folder holding "shell" gets a runBash tool that runs
// its command with sh in dir, under the call's deadline, and answers as
// the sandbox does. The real sandbox (bubblewrap and docker) running a
// verifier is covered by TestCommandVerifierInSandbox in package sandbox.
type shellMarker struct{ dir string }

func (shellMarker) Name() string { return "testshell" }

func (shellMarker) Detect(dir string) (string, bool) {
	_, err := os.Stat(filepath.Join(dir, "shell"))
	return "shell", err == nil
}

func (m shellMarker) Load(context.Context, *router.Route, string) (*capabilities.Contribution, error) {
	return &capabilities.Contribution{Tools: []capabilities.Tool{capabilities.Func(harness.BashTool, "runs a command", m.run)}}, nil
}

type bashIn struct {
	Command   string `json:"command"`
	TimeoutMS int    `json:"timeout_ms,omitempty"`
}

type bashOut struct {
	ExitCode   int    `json:"exit_code"`
	Stdout     string `json:"stdout"`
	Stderr     string `json:"stderr"`
	Truncated  bool   `json:"truncated"`
	DurationMS int64  `json:"duration_ms"`
}

func (m shellMarker) run(ctx context.Context, in bashIn) (bashOut, error) {
	start := time.Now()
	cmd := exec.CommandContext(ctx, "sh", "-c", in.Command)
	cmd.Dir = m.dir
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	out := bashOut{Stdout: stdout.String(), Stderr: stderr.String(), DurationMS: time.Since(start).Milliseconds()}
	var exit *exec.ExitError
	switch {
	case errors.As(err, &exit):
		out.ExitCode = exit.ExitCode()
	case err != nil:
		return out, err
	}
	return out, nil
}

// verifyApp is an app with a /release route whose harness-owned plan.md is
// plan; workDir is where its runBash runs commands.
func verifyApp(t *testing.T, plan string) (appDir, workDir string) {
	t.Helper()
	return apptest.WriteApp(t, map[string]string{
		"release/agent.md": "You ship releases.",
		"release/plan.md":  plan,
		"release/shell":    "",
	}), t.TempDir()
}

// flags are the world the test tools change and the verifiers check.
type flags struct{ notes, order, green atomic.Bool }

// verifyOptions are the markers (with the notesWritten verifier and the
// test shell) and the tools of a verify app: writeNotes, createOrder and
// makeGreen set a flag; lookupOrder fails until the order exists, and
// buildGreen until the build is green.
func verifyOptions(f *flags, workDir string) apptest.Options {
	verifiers := map[string]harness.VerifierFunc{
		"notesWritten": func(_ context.Context, in harness.VerifyInput) (harness.Verdict, error) {
			if f.notes.Load() {
				return harness.Verdict{Pass: true, Detail: "notes/release.md has 3 lines"}, nil
			}
			return harness.Verdict{Detail: "notes/release.md does not exist (the model said: " + in.Claim + ")"}, nil
		},
	}
	ms := markers.All()
	for i, m := range ms {
		if m.Name() == planning.Name {
			ms[i] = planning.MarkerWith(verifiers)
		}
	}
	set := func(name string, b *atomic.Bool) capabilities.AppTool {
		return capabilities.AppTool{Tool: capabilities.Func(name, "does it", func(context.Context, struct{}) (string, error) {
			b.Store(true)
			return "done", nil
		})}
	}
	check := func(name string, b *atomic.Bool, msg string) capabilities.AppTool {
		return capabilities.AppTool{Tool: capabilities.Func(name, "checks it", func(_ context.Context, in map[string]any) (map[string]any, error) {
			if !b.Load() {
				return nil, errors.New(msg)
			}
			return map[string]any{"ok": true, "input": in}, nil
		})}
	}
	return apptest.Options{
		Markers: append(ms, shellMarker{dir: workDir}),
		Tools: []capabilities.AppTool{
			set("writeNotes", &f.notes), set("createOrder", &f.order), set("makeGreen", &f.green),
			check("lookupOrder", &f.order, "order 42 not found"), check("buildGreen", &f.green, "2 tests failed"),
		},
	}
}

// planOf reads GET /threads/:id/plan.
func planOf(t *testing.T, base, thread string) harness.Plan {
	t.Helper()
	var p harness.Plan
	if code := apptest.GetJSON(t, base+"/threads/"+thread+"/plan", &p); code != 200 {
		t.Fatalf("GET /threads/%s/plan = %d", thread, code)
	}
	return p
}

func done(content, evidence string) map[string]any {
	return map[string]any{"todos": []map[string]string{{"content": content, "status": "completed", "evidence": evidence}}, "reason": "finished"}
}

// toolResults are the outputs of the tool_result events of name.
func toolResults(events []stream.Event, name string) []string {
	var out []string
	for _, e := range events {
		var d struct {
			Name   string          `json:"name"`
			Output json.RawMessage `json:"output"`
		}
		if e.Type == stream.TypeToolResult && json.Unmarshal(e.Data, &d) == nil && d.Name == name {
			out = append(out, string(d.Output))
		}
	}
	return out
}

// TestVerifierKinds: for each kind of verifier, the model's claim that the
// item is done is refused while the world says otherwise (the item stays
// in_progress, with the verifier's output as the reason the model reads)
// and accepted once the work is done, with the harness's verification as
// the evidence and the model's words beside it.
func TestVerifierKinds(t *testing.T) {
	cases := []struct {
		name, verify, work, by string
		fail                   string // in the model's note after the failed claim
	}{
		{"verifier", "notesWritten", "writeNotes", "verifier: notesWritten", "notes/release.md does not exist"},
		{"tool", `tool lookupOrder {"id":"42"}`, "createOrder", "tool: lookupOrder", "order 42 not found"},
		{"command", "test -s notes.md && echo notes ok", "touchNotes", "command: test -s notes.md && echo notes ok", "exit 1"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			plan := "---\nenforce: true\n---\n- [ ] Ship it\n  - verify: " + c.verify + "\n"
			dir, work := verifyApp(t, plan)
			f := &flags{}
			opts := verifyOptions(f, work)
			opts.Tools = append(opts.Tools, capabilities.AppTool{Tool: capabilities.Func("touchNotes", "writes notes", func(context.Context, struct{}) (string, error) {
				return "written", os.WriteFile(filepath.Join(work, "notes.md"), []byte("notes\n"), 0o644)
			})})
			model := dawntest.Script().
				CallTool("writeTodos", done("Ship it", "I did the thing")).
				CallTool(c.work, map[string]any{}).
				CallTool("writeTodos", done("Ship it", "did it for real")).
				Reply("Shipped.")
			h := apptest.New(t, dir, model, opts)
			base := h.Serve(t)
			events := apptest.ReadSSE(t, apptest.PostJSON(t, base+"/threads/v1/runs/stream", apptest.RunBody("/release", "ship")))
			results := toolResults(events, "writeTodos")
			if len(results) != 2 {
				t.Fatalf("writeTodos results = %q, want 2", results)
			}
			if !strings.Contains(results[0], c.fail) || !strings.Contains(results[0], "stay in_progress") {
				t.Fatalf("the failed claim's result does not give the verifier's reason %q: %s", c.fail, results[0])
			}
			p := planOf(t, base, "v1")
			if p.State != harness.Done {
				t.Fatalf("plan state = %s, want done: %+v", p.State, p)
			}
			it := p.Items[0]
			v := it.Verification
			if it.Status != harness.Completed || v == nil || !v.Passed || v.VerifiedBy != c.by || v.Claim != "did it for real" || it.Attempts != 1 {
				t.Fatalf("item = %+v, verification %+v; want completed, verified by %q, the model's words kept, one failed attempt", it, v, c.by)
			}
			if !strings.HasPrefix(it.Evidence, "verified by "+c.by) {
				t.Fatalf("evidence = %q, want the harness's verification", it.Evidence)
			}
			if c.name == "command" && (v.ExitCode == nil || *v.ExitCode != 0 || v.Output != "notes ok") {
				t.Fatalf("command verification = %+v, want exit 0 and its output", v)
			}
		})
	}
}

// TestVerifierGateAndRetryCap: a model that claims done and answers while
// the verifier fails is refused by the gate like an open item, with the
// verifier's output in the correction; its repeated false claims count
// toward retry_cap, which pauses the plan.
func TestVerifierGateAndRetryCap(t *testing.T) {
	plan := "---\nenforce: true\nretry_cap: 2\n---\n- [ ] Run the tests\n  - verify: tool buildGreen\n"
	dir, work := verifyApp(t, plan)
	f := &flags{}
	model := dawntest.Script().
		CallTool("writeTodos", done("Run the tests", "tests pass")).
		Reply("All tests pass.").
		CallTool("writeTodos", done("Run the tests", "tests really pass")).
		Reply("unreached")
	h := apptest.New(t, dir, model, verifyOptions(f, work))
	base := h.Serve(t)
	events := apptest.ReadSSE(t, apptest.PostJSON(t, base+"/threads/g1/runs/stream", apptest.RunBody("/release", "test it")))
	var rejected, paused bool
	for _, e := range events {
		rejected = rejected || e.Type == "answer_rejected"
		paused = paused || e.Type == harness.EventPaused
	}
	if !rejected || !paused {
		t.Fatalf("answer_rejected %v, plan_paused %v; want both: %v", rejected, paused, events)
	}
	reqs := model.Requests()
	correction := fmt.Sprint(reqs[2][len(reqs[2])-2:])
	if !strings.Contains(correction, "2 tests failed") {
		t.Fatalf("the gate's correction does not carry the verifier's output: %s", correction)
	}
	p := planOf(t, base, "g1")
	if p.State != harness.Paused || p.PauseReason != harness.PauseRetryCap || p.Items[0].Status != harness.InProgress || p.Items[0].Attempts != 2 {
		t.Fatalf("plan = %+v, want paused at the retry cap with the item in progress after 2 attempts", p)
	}
}

// TestPostconditionVerifier: verifyPostcondition on a postcondition with a
// verifier is decided by the verifier, not by the model's evidence.
func TestPostconditionVerifier(t *testing.T) {
	plan := "---\nenforce: true\n---\n- [x] Build\n\n## Done when\n- [ ] The build is green\n  - verify: tool buildGreen\n"
	dir, work := verifyApp(t, plan)
	f := &flags{}
	model := dawntest.Script().
		CallTool("verifyPostcondition", map[string]any{"index": 0, "evidence": "looks green to me"}).
		CallTool("makeGreen", map[string]any{}).
		CallTool("verifyPostcondition", map[string]any{"index": 0, "evidence": "made it green"}).
		Reply("Green.")
	h := apptest.New(t, dir, model, verifyOptions(f, work))
	base := h.Serve(t)
	events := apptest.ReadSSE(t, apptest.PostJSON(t, base+"/threads/p1/runs/stream", apptest.RunBody("/release", "go")))
	results := toolResults(events, "verifyPostcondition")
	if len(results) != 2 || !strings.Contains(results[0], "2 tests failed") {
		t.Fatalf("verifyPostcondition results = %q, want the first to carry the verifier's failure", results)
	}
	p := planOf(t, base, "p1")
	pc := p.Postconditions[0]
	if p.State != harness.Done || !pc.Verified || pc.Verification == nil || pc.Verification.Claim != "made it green" || pc.Attempts != 1 {
		t.Fatalf("plan %s, postcondition %+v; want done, verified by the tool with the model's words kept", p.State, pc)
	}
}

// TestVerifierLinesChecked: a verifier that cannot run breaks the route
// when it is prepared (and so `dawn check`): a tool the route does not
// have, a command on a route without runBash, and a tool line whose input
// is not a JSON object.
func TestVerifierLinesChecked(t *testing.T) {
	cases := []struct{ plan, want string }{
		{"- [ ] A\n  - verify: tool nope\n", "verify: tool nope names no tool of this route"},
		{"- [ ] A\n  - verify: go test ./...\n", "this route has no sandbox to run it in (runBash)"},
		{"- [ ] A\n  - verify: tool lookupOrder {id}\n", "the input must be one JSON object"},
	}
	for _, c := range cases {
		dir := apptest.WriteApp(t, map[string]string{"r/agent.md": "x", "r/plan.md": "---\nenforce: true\n---\n" + c.plan})
		f := &flags{}
		opts := verifyOptions(f, t.TempDir())
		_, err := app.Load(context.Background(), dir, app.Options{Tools: opts.Tools, ToolsKnown: true, Markers: opts.Markers})
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), `item 1 "A"`) {
			t.Errorf("plan %q: load error = %v, want it to name the item and say %q", c.plan, err, c.want)
		}
	}
}
