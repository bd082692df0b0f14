package approval_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/dawn-go/dawn/approval"
	"github.com/dawn-go/dawn/dawntest"
	"github.com/dawn-go/dawn/internal/apptest"
	"github.com/dawn-go/dawn/internal/auth"
	"github.com/dawn-go/dawn/internal/auth/authtest"
	"github.com/dawn-go/dawn/internal/sandbox/sandboxtest"
	"github.com/dawn-go/dawn/stream"
	"github.com/tmc/langchaingo/llms"
)

// These tests put the permissions gate in front of the real runBash: the
// local (bubblewrap) sandbox, and docker for the Dawn-wire test, so what
// passes the gate runs in a box and what does not leaves the workspace as
// it was.

// step is what a user message of these tests asks the model: one tool
// call.
type step struct {
	Tool string         `json:"tool"`
	Args map[string]any `json:"args"`
}

// stepper is a model that makes the call each user message spells out as
// a step, and answers "done" once the call has a result.
func stepper() llms.Model {
	n := 0
	return dawntest.Script().Then(func(msgs []llms.MessageContent, _ llms.CallOptions) (*llms.ContentResponse, error) {
		if msgs[len(msgs)-1].Role != llms.ChatMessageTypeHuman {
			return &llms.ContentResponse{Choices: []*llms.ContentChoice{{Content: "done", StopReason: "stop"}}}, nil
		}
		var s step
		if err := json.Unmarshal([]byte(apptest.LastUser(msgs)), &s); err != nil {
			return nil, err
		}
		args, _ := json.Marshal(s.Args)
		n++
		call := llms.ToolCall{ID: fmt.Sprintf("call_%d", n), Type: "function", FunctionCall: &llms.FunctionCall{Name: s.Tool, Arguments: string(args)}}
		return &llms.ContentResponse{Choices: []*llms.ContentChoice{{StopReason: "tool_calls", ToolCalls: []llms.ToolCall{call}, FuncCall: call.FunctionCall}}}, nil
	}).Repeat()
}

// boxed is a Dawn server over loopback whose /ops route runs runBash in
// the local sandbox, behind JWT auth so "always" has a user.
type boxed struct {
	url        string
	alice, bob string
}

func serveBoxed(t *testing.T, mode string) *boxed {
	t.Helper()
	return serveIn(t, "provider: local", sandboxtest.Bwrap, mode)
}

// serveIn is serveBoxed with the sandbox settings sandbox, after require
// checks that this host runs them.
func serveIn(t *testing.T, sandbox string, require func(testing.TB), mode string) *boxed {
	t.Helper()
	require(t)
	a, err := auth.New(context.Background(), auth.Options{
		Config: auth.Config{JWT: &auth.JWT{SecretEnv: "SECRET", Audience: "dawn"}},
		Env:    func(string) string { return jwtSecret },
	})
	if err != nil {
		t.Fatal(err)
	}
	dir := writeApp(t, map[string]string{
		"dawn.yaml": "sandbox: {" + sandbox + "}\n" +
			"permissions: {mode: " + mode + ", allow: {bash: [ls, echo]}, deny: {bash: [rm]}}\n",
		"ops/agent.md": "---\nworkspace: thread\n---\nYou operate.",
	})
	h := apptest.New(t, dir, stepper(), apptest.Options{Auth: a})
	return &boxed{
		url:   h.Serve(t),
		alice: authtest.HS256(t, jwtSecret, authtest.Claims("alice", "", "dawn")),
		bob:   authtest.HS256(t, jwtSecret, authtest.Claims("bob", "", "dawn")),
	}
}

// run starts a turn on thread as token's user that makes the tool call s.
func (b *boxed) run(t *testing.T, token, thread string, s step) []stream.Event {
	t.Helper()
	d, _ := json.Marshal(s)
	body, _ := json.Marshal(map[string]any{"route": "/ops", "input": map[string]any{"messages": []map[string]string{{"role": "user", "content": string(d)}}}})
	return readSSE(t, authed(t, http.MethodPost, b.url+"/threads/"+thread+"/runs/stream", token, string(body)))
}

// answer resumes thread's interrupt id with payload as token's user.
func (b *boxed) answer(t *testing.T, token, thread, id, payload string) []stream.Event {
	t.Helper()
	return readSSE(t, authed(t, http.MethodPost, b.url+"/threads/"+thread+"/resume", token, resumeBody(id, "resolved", payload)))
}

func bash(command string) step {
	return step{Tool: approval.BashTool, Args: map[string]any{"command": command}}
}

// output is the last tool_result's output in events (a string's text, or
// the JSON of anything else), after checking the run finished with the
// model's answer.
func output(t *testing.T, events []stream.Event) string {
	t.Helper()
	if answer := finalAnswer(t, events); answer != "done" {
		t.Fatalf("final answer %q: %v", answer, dawntest.Types(events))
	}
	out := ""
	for _, ev := range events {
		if ev.Type == "tool_result" {
			var r struct {
				Output json.RawMessage `json:"output"`
			}
			if err := json.Unmarshal(ev.Data, &r); err != nil {
				t.Fatal(err)
			}
			out = string(r.Output)
			var text string
			if json.Unmarshal(r.Output, &text) == nil {
				out = text
			}
		}
	}
	if out == "" {
		t.Fatalf("no tool_result: %v", dawntest.Types(events))
	}
	return out
}

// ran is runBash's result in events; ok is false when the output is not
// one (the gate refused the command).
func ran(t *testing.T, events []stream.Event) (res struct {
	ExitCode int    `json:"exit_code"`
	Stdout   string `json:"stdout"`
	Stderr   string `json:"stderr"`
}, ok bool) {
	t.Helper()
	out := output(t, events)
	ok = json.Unmarshal([]byte(out), &res) == nil && strings.HasPrefix(out, "{")
	return res, ok
}

// listing is what `ls -a` prints in thread's workspace, run in the box.
func (b *boxed) listing(t *testing.T, token, thread string) []string {
	t.Helper()
	res, ok := ran(t, b.run(t, token, thread, bash("ls -a")))
	if !ok || res.ExitCode != 0 {
		t.Fatalf("ls -a did not run: %+v", res)
	}
	return strings.Fields(res.Stdout)
}

// noResult checks that a parked run's events hold no tool result: the
// command did not run before anyone answered.
func noResult(t *testing.T, events []stream.Event) {
	t.Helper()
	for _, ev := range events {
		if ev.Type == "tool_result" || strings.Contains(string(ev.Data), "exit_code") {
			t.Fatalf("the command ran before anyone approved it: %s %s", ev.Type, ev.Data)
		}
	}
}

// TestGateOnRealRunBash: over Dawn's wire, with each sandbox provider, an
// allowed command runs in the box; a chain with a denied command runs
// none of it; an unknown command parks on an interrupt of kind command
// and "once" runs it in the box; "always" allows the prefix for that user
// on the next call, not for another user.
func TestGateOnRealRunBash(t *testing.T) {
	t.Run("local", func(t *testing.T) { gateOnRealRunBash(t, serveBoxed(t, "interactive")) })
	t.Run("docker", func(t *testing.T) {
		gateOnRealRunBash(t, serveIn(t, "provider: docker, image: "+sandboxtest.Image, sandboxtest.Docker, "interactive"))
	})
}

func gateOnRealRunBash(t *testing.T, b *boxed) {

	res, ok := ran(t, b.run(t, b.alice, "t1", bash("echo hi")))
	if !ok || res.ExitCode != 0 || strings.TrimSpace(res.Stdout) != "hi" {
		t.Fatalf("echo hi: ok %v, %+v", ok, res)
	}

	// The marker x is written with the file tools; the chain would remove
	// it and must not run at all, not even its ls.
	output(t, b.run(t, b.alice, "t1", step{Tool: "writeFile", Args: map[string]any{"path": "x", "content": "marker"}}))
	out := output(t, b.run(t, b.alice, "t1", bash("ls; rm -rf x")))
	if !strings.Contains(out, `the rule "rm"`) {
		t.Fatalf("ls; rm -rf x: the model was told %s", out)
	}
	if !slices.Contains(b.listing(t, b.alice, "t1"), "x") {
		t.Fatal("the marker x is gone after a denied chain")
	}

	events := b.run(t, b.alice, "t1", bash("touch made.txt"))
	in, parks := parked(t, events)
	if !parks || in.Kind != approval.CommandKind || in.Detail.Command != "touch made.txt" {
		t.Fatalf("touch made.txt: parked %v %+v: %v", parks, in, dawntest.Types(events))
	}
	noResult(t, events)
	res, ok = ran(t, b.answer(t, b.alice, "t1", in.ID, `"once"`))
	if !ok || res.ExitCode != 0 {
		t.Fatalf("touch after once: ok %v %+v", ok, res)
	}
	if !slices.Contains(b.listing(t, b.alice, "t1"), "made.txt") {
		t.Fatal("made.txt does not exist after once")
	}
	if _, parks := parked(t, b.run(t, b.alice, "t1", bash("touch made.txt"))); !parks {
		t.Fatal("touch made.txt after once did not ask again")
	}

	in, parks = parked(t, b.run(t, b.alice, "t3", bash("mkdir -p d1")))
	if !parks || in.Detail.SuggestedPattern != "mkdir -p" {
		t.Fatalf("mkdir -p d1: parked %v %+v", parks, in)
	}
	b.answer(t, b.alice, "t3", in.ID, `"always"`)
	res, ok = ran(t, b.run(t, b.alice, "t4", bash("mkdir -p d2")))
	if !ok || res.ExitCode != 0 {
		t.Fatalf("mkdir -p d2 after always: ok %v %+v", ok, res)
	}
	if l := b.listing(t, b.alice, "t4"); !slices.Contains(l, "d2") {
		t.Fatalf("d2 missing after always: %q", l)
	}
	if _, parks := parked(t, b.run(t, b.bob, "b1", bash("mkdir -p d3"))); !parks {
		t.Fatal("bob's mkdir -p ran on alice's always")
	}
	if l := b.listing(t, b.alice, "t3"); !slices.Contains(l, "d1") {
		t.Fatalf("d1 missing after always: %q", l)
	}
}

// TestGateOnRealRunBashNonInteractive: in non-interactive mode an unknown
// command is refused without parking, nothing runs, and the run goes on.
func TestGateOnRealRunBashNonInteractive(t *testing.T) {
	b := serveBoxed(t, "non-interactive")
	out := output(t, b.run(t, b.alice, "t1", bash("touch made.txt")))
	if !strings.Contains(out, "non-interactive") {
		t.Fatalf("touch made.txt: the model was told %s", out)
	}
	if l := b.listing(t, b.alice, "t1"); slices.Contains(l, "made.txt") {
		t.Fatalf("made.txt exists after a refusal: %q", l)
	}
	res, ok := ran(t, b.run(t, b.alice, "t1", bash("echo still")))
	if !ok || strings.TrimSpace(res.Stdout) != "still" {
		t.Fatalf("echo after a refusal: ok %v %+v", ok, res)
	}
}

// TestGateOnRealRunBashOverAGUI: over AG-UI an unknown command ends the
// run with the interrupt outcome of kind command, and the resume that
// answers "once" runs it in the box.
func TestGateOnRealRunBashOverAGUI(t *testing.T) {
	b := serveBoxed(t, "interactive")
	d, _ := json.Marshal(bash("touch agui.txt"))
	start, _ := json.Marshal(map[string]any{"threadId": "g1", "runId": "r1", "messages": []map[string]string{{"id": "m1", "role": "user", "content": string(d)}}, "tools": []any{}, "context": []any{}, "state": map[string]any{}})
	events := aguiEvents(t, authed(t, http.MethodPost, b.url+"/agui/%2Fops%23agent", b.alice, string(start)))
	first, raw := aguiInterrupt(t, events)
	if !strings.Contains(string(raw), `"kind":"command"`) || !strings.Contains(string(raw), `"command":"touch agui.txt"`) {
		t.Fatalf("AG-UI interrupt: %s", raw)
	}
	for _, ev := range events {
		if ev["type"] == "TOOL_CALL_RESULT" {
			t.Fatalf("a tool result before anyone approved the command: %v", ev)
		}
	}
	id, _ := first["id"].(string)
	resumed := fmt.Sprintf(`{"threadId":"g1","runId":"r2","messages":[],"tools":[],"context":[],"state":{},"resume":[{"interruptId":%q,"status":"resolved","payload":"once"}]}`, id)
	events = aguiEvents(t, authed(t, http.MethodPost, b.url+"/agui/%2Fops%23agent", b.alice, resumed))
	last := events[len(events)-1]
	if outcome, _ := last["outcome"].(map[string]any); last["type"] != "RUN_FINISHED" || outcome["type"] != "success" {
		t.Fatalf("last AG-UI event of the resumed run: %v", last)
	}
	if l := b.listing(t, b.alice, "g1"); !slices.Contains(l, "agui.txt") {
		t.Fatalf("agui.txt missing after once: %q", l)
	}
}

// TestGateOnRealRunBashOverLangGraph: in the LangGraph dialect an unknown
// command shows as __interrupt__ with the command detail; resuming with
// "always" runs it in the box, and the same prefix then runs unasked on
// the user's next thread.
func TestGateOnRealRunBashOverLangGraph(t *testing.T) {
	b := serveBoxed(t, "interactive")
	start := func(thread, command string) []stream.Event {
		authed(t, http.MethodPost, b.url+"/threads", b.alice, fmt.Sprintf(`{"thread_id":%q}`, thread)).Body.Close()
		d, _ := json.Marshal(bash(command))
		body, _ := json.Marshal(map[string]any{"assistant_id": "/ops", "input": map[string]any{"messages": []map[string]string{{"type": "human", "content": string(d)}}}, "stream_mode": []string{"values"}})
		return readSSE(t, authed(t, http.MethodPost, b.url+"/threads/"+thread+"/runs/stream", b.alice, string(body)))
	}
	var found *commandInterrupt
	events := start("l1", "mkdir -p lg1")
	noResult(t, events)
	for _, ev := range events {
		var values struct {
			Interrupts []struct {
				Value commandInterrupt `json:"value"`
			} `json:"__interrupt__"`
		}
		if ev.Type == "values" && json.Unmarshal(ev.Data, &values) == nil && len(values.Interrupts) == 1 {
			found = &values.Interrupts[0].Value
		}
	}
	if found == nil || found.Kind != approval.CommandKind || found.Detail.Command != "mkdir -p lg1" || found.Detail.SuggestedPattern != "mkdir -p" {
		t.Fatalf("no command interrupt in the LangGraph stream: %+v", found)
	}
	readSSE(t, authed(t, http.MethodPost, b.url+"/threads/l1/runs/stream", b.alice, `{"assistant_id":"/ops","command":{"resume":"always"},"stream_mode":["values"]}`))
	if l := b.listing(t, b.alice, "l1"); !slices.Contains(l, "lg1") {
		t.Fatalf("lg1 missing after always: %q", l)
	}
	start("l2", "mkdir -p lg2")
	if l := b.listing(t, b.alice, "l2"); !slices.Contains(l, "lg2") {
		t.Fatalf("mkdir -p lg2 did not run unasked after always: %q", l)
	}
}
