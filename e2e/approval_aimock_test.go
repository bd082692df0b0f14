package e2e

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dawn-go/dawn/stream"
)

// The tests here run human approval end to end: the stock dawn binary
// (`dawn start`) serves routes on openai:gpt-4o-mini with OPENAI_BASE_URL
// pointed at aimock, and the tool that waits for a person is a real MCP
// tool, ops_deploy, of the stdio server in testdata/opsmcp, which writes a
// line to a log file per call it runs. The fixtures answer a request only
// when it carries what the step before must have produced (a deploy's
// output, the denial, the edited plan's size), so a wrong tool result
// reaches no fixture and fails the run.

// shipMessage and releaseMessage are what approval_tools.json matches on.
const (
	shipMessage    = "Ship 1.4.2 to prod"
	releaseMessage = "Release 2.0"
	planMessage    = "Plan the 3.0 release"
)

// buildOpsMCP builds testdata/opsmcp, the MCP server with the deploy tool.
func buildOpsMCP(t *testing.T) string {
	t.Helper()
	return built(t, "e2e/testdata/opsmcp")
}

// opsApp writes an app whose dawn.yaml serves the ops MCP server (its
// calls logged to the returned log file), with the route /ops that needs
// approval for ops_deploy, and /lead, whose subagent deployer does.
func opsApp(t *testing.T, mcpBin string) (dir, deployLog string) {
	t.Helper()
	dir = t.TempDir()
	deployLog = filepath.Join(t.TempDir(), "deploys.log")
	files := map[string]string{
		"dawn.yaml":                        fmt.Sprintf("mcp:\n  ops:\n    command: %q\n    args: [%q]\n", mcpBin, deployLog),
		"ops/agent.md":                     "---\nmodel: openai:gpt-4o-mini\napprove: [ops_deploy]\n---\nYou deploy releases.\n",
		"lead/agent.md":                    "---\nmodel: openai:gpt-4o-mini\n---\nYou lead releases and hand deploys to the deployer.\n",
		"lead/subagents/deployer/agent.md": "---\nmodel: openai:gpt-4o-mini\ndescription: deploys a version\napprove: [ops_deploy]\n---\nYou deploy releases.\n",
	}
	for name, body := range files {
		writeFile(t, filepath.Join(dir, filepath.FromSlash(name)), body)
	}
	return dir, deployLog
}

// deploys returns the lines of the deploy log: one "env version" per call
// the ops server ran.
func deploys(t *testing.T, log string) []string {
	t.Helper()
	data, err := os.ReadFile(log)
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	return strings.Fields(strings.ReplaceAll(strings.TrimSpace(string(data)), " ", "_"))
}

// aimockEnv points the openai provider at aimock.
func aimockEnv(mock string) []string {
	return []string{"OPENAI_BASE_URL=" + mock + "/v1", "OPENAI_API_KEY=test", "DAWN_API_KEY=", "DAWN_MODEL=", "DAWN_PERMISSIONS_MODE=", "DAWN_STORE="}
}

func userRun(route, message string) string {
	body, _ := json.Marshal(map[string]any{"route": route, "input": map[string]any{"messages": []map[string]string{{"role": "user", "content": message}}}})
	return string(body)
}

// pendingInterrupt is an interrupt event's data.
type pendingInterrupt struct {
	ID     string          `json:"interruptId"`
	Type   string          `json:"type"`
	Kind   string          `json:"kind"`
	CallID string          `json:"callId"`
	Path   []string        `json:"path"`
	Detail json.RawMessage `json:"detail"`
}

// toolDetail is the detail of a "tool" interrupt.
type toolDetail struct {
	ToolName         string `json:"toolName"`
	ArgsPreview      string `json:"argsPreview"`
	SuggestedPattern string `json:"suggestedPattern"`
}

// parkRun starts a run of message on route and wants it parked: its events
// end with wantTail (such as "tool_call,interrupt,done"), the done event
// says it is interrupted, and the thread's state lists the interrupt.
func parkRun(t *testing.T, url, threadID, route, message, wantTail string) pendingInterrupt {
	t.Helper()
	events := readEvents(t, postJSON(t, url+"/threads/"+threadID+"/runs/stream", userRun(route, message)))
	if got := strings.Join(eventTypes(events), ","); !strings.HasSuffix(got, wantTail) {
		t.Fatalf("events of the parked run: %s, want them to end with %s", got, wantTail)
	}
	var in pendingInterrupt
	if err := json.Unmarshal(events[len(events)-2].Data, &in); err != nil || in.ID == "" || in.Type != "permission-request" {
		t.Fatalf("interrupt event: %s (%v)", events[len(events)-2].Data, err)
	}
	var done struct {
		Output struct {
			Interrupted bool               `json:"interrupted"`
			Interrupts  []pendingInterrupt `json:"interrupts"`
		} `json:"output"`
	}
	if err := json.Unmarshal(events[len(events)-1].Data, &done); err != nil || !done.Output.Interrupted || len(done.Output.Interrupts) != 1 || done.Output.Interrupts[0].ID != in.ID {
		t.Fatalf("done of the parked run: %s", events[len(events)-1].Data)
	}
	st := getState(t, url, threadID)
	if st.Status != "interrupted" || len(st.Interrupts) != 1 || st.Interrupts[0].ID != in.ID {
		t.Fatalf("state of the parked thread: %s", st.raw)
	}
	return in
}

func (in pendingInterrupt) tool(t *testing.T) toolDetail {
	t.Helper()
	var d toolDetail
	if err := json.Unmarshal(in.Detail, &d); err != nil || in.Kind != "tool" {
		t.Fatalf("not a tool interrupt: kind %q detail %s", in.Kind, in.Detail)
	}
	return d
}

type parkedState struct {
	Status     string                     `json:"status"`
	Interrupts []pendingInterrupt         `json:"interrupts"`
	Values     map[string]json.RawMessage `json:"values"`
	raw        string
}

func getState(t *testing.T, url, threadID string) parkedState {
	t.Helper()
	resp, err := http.Get(url + "/threads/" + threadID + "/state")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	var st parkedState
	if err := json.Unmarshal(data, &st); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET state of %s: %d %s (%v)", threadID, resp.StatusCode, data, err)
	}
	st.raw = string(data)
	return st
}

// resumeAnswer is a resume body with one answer; payload "" leaves it out.
func resumeAnswer(route, id, status, payload string) string {
	if payload == "" {
		return fmt.Sprintf(`{"route":%q,"resume":[{"interruptId":%q,"status":%q}]}`, route, id, status)
	}
	return fmt.Sprintf(`{"route":%q,"resume":[{"interruptId":%q,"status":%q,"payload":%s}]}`, route, id, status, payload)
}

// resumeRun posts body to the thread's resume endpoint and returns the
// continuation's events, which must end with a done event that is neither
// an error nor parked again.
func resumeRun(t *testing.T, url, threadID, body string) []stream.Event {
	t.Helper()
	events := readEvents(t, postJSON(t, url+"/threads/"+threadID+"/resume", body))
	last := events[len(events)-1]
	if last.Type != stream.TypeDone || strings.Contains(string(last.Data), `"error"`) || strings.Contains(string(last.Data), `"interrupted":true`) {
		t.Fatalf("the resumed run did not finish: %v, done %s", eventTypes(events), last.Data)
	}
	return events
}

// lastAnswer is the last assistant message in a done event's output.
func lastAnswer(t *testing.T, events []stream.Event) string {
	t.Helper()
	var done struct {
		Output struct {
			Messages []struct {
				Role    string `json:"role"`
				Content string `json:"content"`
			} `json:"messages"`
		} `json:"output"`
	}
	data := events[len(events)-1].Data
	if err := json.Unmarshal(data, &done); err != nil || len(done.Output.Messages) == 0 {
		t.Fatalf("done: %s (%v)", data, err)
	}
	last := done.Output.Messages[len(done.Output.Messages)-1]
	if last.Role != "assistant" {
		t.Fatalf("the last message is the %s's: %s", last.Role, data)
	}
	return last.Content
}

// postStatus posts body and returns the status and the body of the answer.
func postStatus(t *testing.T, url, body string) (int, string) {
	t.Helper()
	resp := postJSON(t, url, body)
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(data)
}

// TestAimockToolApproval: a call of ops_deploy, which agent.md lists under
// approve:, parks the run before the MCP server sees it; each decision is
// taken over real HTTP and its effect is seen in the deploy log and in what
// the model got next.
func TestAimockToolApproval(t *testing.T) {
	f := opsFixture{bin: buildDawn(t), mcpBin: buildOpsMCP(t)}
	t.Run("once", f.testOnce)
	t.Run("always survives a restart", f.testAlwaysSurvivesRestart)
	t.Run("deny", f.testDeny)
	t.Run("edit", f.testEdit)
	t.Run("bad resume bodies change nothing", f.testBadResumes)
	t.Run("dawn run answers", f.testDawnRun)
	t.Run("subagent", f.testSubagent)
}

// opsFixture is what the subtests of TestAimockToolApproval share: the
// dawn binary and the ops MCP server's.
type opsFixture struct{ bin, mcpBin string }

// serve starts aimock with the approval fixtures and dawn on a new ops app
// using it, and returns dawn's URL, aimock's and the app's deploy log.
func (f opsFixture) serve(t *testing.T) (url, mock, deployLog string) {
	mock = startAimock(t, "testdata/approval_tools.json")
	app, log := opsApp(t, f.mcpBin)
	return startDawn(t, f.bin, app, aimockEnv(mock)...), mock, log
}

// testOnce: "once" runs the parked call, and only that call: the next one
// asks again.
func (f opsFixture) testOnce(t *testing.T) {
	url, _, log := f.serve(t)
	in := parkRun(t, url, "once-1", "/ops", shipMessage, "model_call,tool_call,interrupt,done")
	if d := in.tool(t); d.ToolName != "ops_deploy" || d.SuggestedPattern != "ops_deploy" || d.ArgsPreview != `{"env":"prod","version":"1.4.2"}` {
		t.Fatalf("tool interrupt detail: %s", in.Detail)
	}
	if got := deploys(t, log); len(got) != 0 {
		t.Fatalf("ops_deploy ran before anyone approved it: %v", got)
	}
	events := resumeRun(t, url, "once-1", resumeAnswer("/ops", in.ID, "resolved", `"once"`))
	if got := strings.Join(eventTypes(events), ","); !strings.HasPrefix(got, "tool_result,") {
		t.Fatalf("events of the resumed run: %s", got)
	}
	if got := lastAnswer(t, events); got != "Shipped 1.4.2 to prod." {
		t.Fatalf("answer after once: %q", got)
	}
	if got := deploys(t, log); strings.Join(got, ",") != "prod_1.4.2" {
		t.Fatalf("deploys after once: %v", got)
	}
	if st := getState(t, url, "once-1"); st.Status != "idle" || len(st.Interrupts) != 0 {
		t.Fatalf("state after the resume: %s", st.raw)
	}
	// "once" was for that call: the next one asks again.
	parkRun(t, url, "once-2", "/ops", shipMessage, "tool_call,interrupt,done")
}

// testAlwaysSurvivesRestart: "always" runs the call and is kept with the
// app's store, so a server started after a kill runs the next call without
// asking.
func (f opsFixture) testAlwaysSurvivesRestart(t *testing.T) {
	mock := startAimock(t, "testdata/approval_tools.json")
	app, log := opsApp(t, f.mcpBin)
	url, kill := launchDawn(t, f.bin, app, aimockEnv(mock)...)
	in := parkRun(t, url, "always-1", "/ops", shipMessage, "tool_call,interrupt,done")
	events := resumeRun(t, url, "always-1", resumeAnswer("/ops", in.ID, "resolved", `"always"`))
	if got := lastAnswer(t, events); got != "Shipped 1.4.2 to prod." {
		t.Fatalf("answer after always: %q", got)
	}
	kill()
	// A new server on the same app folder and store: a call on a new
	// thread runs without asking.
	url2 := startDawn(t, f.bin, app, aimockEnv(mock)...)
	events = readEvents(t, postJSON(t, url2+"/threads/always-2/runs/stream", userRun("/ops", shipMessage)))
	if got := strings.Join(eventTypes(events), ","); strings.Contains(got, "interrupt") || !strings.Contains(got, "tool_call,tool_result") {
		t.Fatalf("a call after always asked again, or did not run: %s", got)
	}
	if got := lastAnswer(t, events); got != "Shipped 1.4.2 to prod." {
		t.Fatalf("answer of the run after the restart: %q", got)
	}
	if got := deploys(t, log); strings.Join(got, ",") != "prod_1.4.2,prod_1.4.2" {
		t.Fatalf("deploys: %v, want two", got)
	}
}

// testDeny: "deny" never runs the call, and the model gets the denial as
// its result.
func (f opsFixture) testDeny(t *testing.T) {
	url, mock, log := f.serve(t)
	in := parkRun(t, url, "deny-1", "/ops", shipMessage, "tool_call,interrupt,done")
	events := resumeRun(t, url, "deny-1", resumeAnswer("/ops", in.ID, "resolved", `"deny"`))
	if got := lastAnswer(t, events); got != "I did not ship 1.4.2: the deploy was denied." {
		t.Fatalf("answer after deny: %q", got)
	}
	if got := deploys(t, log); len(got) != 0 {
		t.Fatalf("a denied ops_deploy ran: %v", got)
	}
	// The model's request after the resume carries the denial as the
	// result of its ops_deploy call.
	reqs := chatRequests(t, mock)
	if len(reqs) != 2 {
		t.Fatalf("aimock got %d chat requests, want 2", len(reqs))
	}
	msgs := reqs[1].Messages
	call, result := msgs[len(msgs)-2], msgs[len(msgs)-1]
	if len(call.ToolCalls) != 1 || call.ToolCalls[0].Function.Name != "ops_deploy" || result.Role != "tool" || result.ToolCallID != call.ToolCalls[0].ID {
		t.Fatalf("the request after deny does not end with the ops_deploy call and its result: %+v", msgs)
	}
	if text := result.text(); !strings.Contains(text, `a person denied this call of tool "ops_deploy"`) {
		t.Fatalf("the model got %q as the denied call's result", text)
	}
}

// testEdit: an edit off the tool's schema is refused and changes nothing;
// a valid edit runs the call with the person's arguments.
func (f opsFixture) testEdit(t *testing.T) {
	url, _, log := f.serve(t)
	in := parkRun(t, url, "edit-1", "/ops", shipMessage, "tool_call,interrupt,done")
	before := getState(t, url, "edit-1").raw
	// env must be a string: the MCP server's input schema refuses this.
	status, body := postStatus(t, url+"/threads/edit-1/resume", resumeAnswer("/ops", in.ID, "resolved", `{"decision":"edit","args":{"env":1,"version":"1.4.2"}}`))
	if status != http.StatusBadRequest || !strings.Contains(body, "invalid_resume") || !strings.Contains(body, in.ID) || !strings.Contains(body, "schema") {
		t.Fatalf("an edit off the schema: %d %s, want 400 invalid_resume naming %s and the schema", status, body, in.ID)
	}
	if after := getState(t, url, "edit-1").raw; after != before {
		t.Fatalf("a refused edit changed the thread:\nbefore %s\nafter  %s", before, after)
	}
	events := resumeRun(t, url, "edit-1", resumeAnswer("/ops", in.ID, "resolved", `{"decision":"edit","args":{"env":"staging","version":"1.4.2"}}`))
	if got := lastAnswer(t, events); got != "You changed the target: shipped 1.4.2 to staging." {
		t.Fatalf("answer after the edit: %q", got)
	}
	if got := deploys(t, log); strings.Join(got, ",") != "staging_1.4.2" {
		t.Fatalf("deploys after the edit: %v", got)
	}
}

// testBadResumes: malformed resumes and a new message on the parked thread
// are refused and change nothing; the thread still resumes, once.
func (f opsFixture) testBadResumes(t *testing.T) {
	url, _, log := f.serve(t)
	in := parkRun(t, url, "bad-1", "/ops", shipMessage, "tool_call,interrupt,done")
	before := getState(t, url, "bad-1").raw
	cases := []struct{ name, body, want string }{
		{"unknown field", fmt.Sprintf(`{"route":"/ops","resume":[{"interruptId":%q,"status":"resolved","payload":"once","note":"ok"}]}`, in.ID), `unknown field \"note\"`},
		{"missing id", `{"route":"/ops","resume":[{"status":"resolved","payload":"once"}]}`, in.ID},
		{"unanswered id", `{"route":"/ops","resume":[]}`, in.ID},
		{"extra id", fmt.Sprintf(`{"route":"/ops","resume":[{"interruptId":%q,"status":"resolved","payload":"once"},{"interruptId":"perm-extra","status":"resolved","payload":"once"}]}`, in.ID), "perm-extra"},
		{"answered twice", fmt.Sprintf(`{"route":"/ops","resume":[{"interruptId":%[1]q,"status":"resolved","payload":"once"},{"interruptId":%[1]q,"status":"cancelled"}]}`, in.ID), "answered twice"},
		{"wrong status", resumeAnswer("/ops", in.ID, "approved", `"once"`), `not \"approved\"`},
		{"unknown decision", resumeAnswer("/ops", in.ID, "resolved", `"sure"`), `\"sure\" is not a decision`},
	}
	for _, c := range cases {
		status, body := postStatus(t, url+"/threads/bad-1/resume", c.body)
		if status != http.StatusBadRequest || !strings.Contains(body, `"invalid_resume"`) || !strings.Contains(body, c.want) {
			t.Errorf("%s: %d %s, want 400 invalid_resume naming %s", c.name, status, body, c.want)
		}
		if c.name != "unknown field" && !strings.Contains(body, in.ID) && !strings.Contains(body, "perm-extra") {
			t.Errorf("%s: %s does not name the interrupt", c.name, body)
		}
	}
	// A new message on the parked thread is refused too.
	status, body := postStatus(t, url+"/threads/bad-1/runs/stream", userRun("/ops", "Something else"))
	if status != http.StatusConflict || !strings.Contains(body, `"interrupt_pending"`) || !strings.Contains(body, in.ID) {
		t.Fatalf("a new message on a parked thread: %d %s, want 409 interrupt_pending naming %s", status, body, in.ID)
	}
	if after := getState(t, url, "bad-1").raw; after != before {
		t.Fatalf("refused requests changed the thread:\nbefore %s\nafter  %s", before, after)
	}
	if got := deploys(t, log); len(got) != 0 {
		t.Fatalf("ops_deploy ran: %v", got)
	}
	// The thread still resumes, once.
	events := resumeRun(t, url, "bad-1", resumeAnswer("/ops", in.ID, "resolved", `"once"`))
	if got := lastAnswer(t, events); got != "Shipped 1.4.2 to prod." {
		t.Fatalf("answer: %q", got)
	}
	status, body = postStatus(t, url+"/threads/bad-1/resume", resumeAnswer("/ops", in.ID, "resolved", `"once"`))
	if status != http.StatusConflict || !strings.Contains(body, "no_interrupt_pending") {
		t.Fatalf("a second resume of the answered interrupt: %d %s, want 409 no_interrupt_pending", status, body)
	}
}

// testDawnRun: dawn run --url answers interrupts with --approve, and
// without a terminal or --approve leaves the thread parked and names the
// command that answers it.
func (f opsFixture) testDawnRun(t *testing.T) {
	url, _, log := f.serve(t)
	dawnRun := func(args ...string) (int, string, string) {
		cmd := exec.Command(f.bin, append([]string{"run", "/ops", "--url", url}, args...)...)
		cmd.Env = append(os.Environ(), "DAWN_API_KEY=")
		var stdout, stderr strings.Builder
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run() // stdin is /dev/null: not a terminal
		code := 0
		if exit, ok := err.(*exec.ExitError); ok {
			code = exit.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		return code, stdout.String(), stderr.String()
	}
	code, stdout, stderr := dawnRun("--input", shipMessage, "--approve", "once")
	if code != 0 || !strings.Contains(stdout, "Shipped 1.4.2 to prod.") || !strings.Contains(stderr, "tool ops_deploy\n  arguments: {\"env\":\"prod\",\"version\":\"1.4.2\"}\n  answered once (--approve)") {
		t.Fatalf("dawn run --approve once: exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	// Nothing answers: it exits 1, the thread stays parked, and the
	// command it names answers later.
	code, _, stderr = dawnRun("--input", shipMessage, "--thread", "cli-1")
	want := "`dawn run /ops --url " + url + " --thread cli-1 --approve once` (or deny)"
	if code != 1 || !strings.Contains(stderr, want) {
		t.Fatalf("dawn run without a terminal: exit %d, stderr:\n%s", code, stderr)
	}
	if st := getState(t, url, "cli-1"); st.Status != "interrupted" {
		t.Fatalf("the thread is not parked: %s", st.raw)
	}
	code, stdout, stderr = dawnRun("--thread", "cli-1", "--approve", "deny")
	if code != 0 || !strings.Contains(stdout, "I did not ship 1.4.2: the deploy was denied.") {
		t.Fatalf("dawn run --thread cli-1 --approve deny: exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	if got := deploys(t, log); strings.Join(got, ",") != "prod_1.4.2" {
		t.Fatalf("deploys: %v, want only the approved one", got)
	}
}

// testSubagent: a subagent's parked call reaches the root stream and is
// resumed through the root thread by a server started after a kill.
func (f opsFixture) testSubagent(t *testing.T) {
	mock := startAimock(t, "testdata/approval_tools.json")
	app, log := opsApp(t, f.mcpBin)
	url, kill := launchDawn(t, f.bin, app, aimockEnv(mock)...)
	in := parkRun(t, url, "sub-1", "/lead", releaseMessage, "subagent.tool_call,interrupt,done")
	if d := in.tool(t); d.ToolName != "ops_deploy" || len(in.Path) != 1 || in.Path[0] == "" {
		t.Fatalf("the subagent's interrupt on the root stream: %+v %s", in, in.Detail)
	}
	if st := getState(t, url, "sub-1"); st.Values["__subagents"] == nil {
		t.Fatalf("the parked subagent is not in the root thread's state: %s", st.raw)
	}
	// Resumed through the root thread, by a server started after the
	// first was killed.
	kill()
	url = startDawn(t, f.bin, app, aimockEnv(mock)...)
	events := resumeRun(t, url, "sub-1", resumeAnswer("/lead", in.ID, "resolved", `"once"`))
	// The child starts again where it parked: its held-back call's result first.
	if got := strings.Join(eventTypes(events), ","); !strings.HasPrefix(got, "subagent.start,subagent.tool_result,") {
		t.Fatalf("events of the resumed run: %s", got)
	}
	if got := lastAnswer(t, events); got != "Release 2.0 is out." {
		t.Fatalf("the lead's answer: %q", got)
	}
	if got := deploys(t, log); strings.Join(got, ",") != "prod_2.0" {
		t.Fatalf("deploys: %v", got)
	}
	if st := getState(t, url, "sub-1"); st.Status != "idle" || st.Values["__subagents"] != nil || st.Values["__interrupts"] != nil {
		t.Fatalf("state after the resume: %s", st.raw)
	}
}

// TestAimockPlanApproval: a harness plan with approval: required holds the
// model's first writeTodos for a person; approve runs that plan, an edit
// runs the person's plan, reject cancels it. What the model does next
// depends on the plan it is shown after its writeTodos call (the plan's
// size and state in the per-turn state block), so each answer shows in the
// model's final words.
func TestAimockPlanApproval(t *testing.T) {
	mock := startAimock(t, "testdata/approval_plan.json")
	app := t.TempDir()
	writeFile(t, filepath.Join(app, "ship", "agent.md"), "---\nmodel: openai:gpt-4o-mini\n---\nYou ship releases.\n")
	writeFile(t, filepath.Join(app, "ship", "plan.md"), "---\nenforce: true\napproval: required\n---\n- [ ] Ship the release\n")
	url := startDawn(t, buildDawn(t), app, aimockEnv(mock)...)

	park := func(t *testing.T, threadID string) pendingInterrupt {
		in := parkRun(t, url, threadID, "/ship", planMessage, "tool_call,interrupt,done")
		var d struct {
			Todos []struct{ Content, Status string } `json:"todos"`
		}
		if err := json.Unmarshal(in.Detail, &d); err != nil || in.Kind != "plan" || !strings.HasPrefix(in.ID, "plan-") || fmt.Sprint(d.Todos) != "[{Build the release in_progress} {Deploy it pending}]" {
			t.Fatalf("plan interrupt: kind %q id %q detail %s", in.Kind, in.ID, in.Detail)
		}
		if plan := planOf(t, url, threadID); plan.Approved || plan.items() != "Ship the release=in_progress" {
			t.Fatalf("the plan changed before anyone approved it: %+v", plan)
		}
		return in
	}

	t.Run("approved", func(t *testing.T) {
		in := park(t, "plan-ok")
		events := resumeRun(t, url, "plan-ok", resumeAnswer("/ship", in.ID, "resolved", `"approve"`))
		if got := strings.Join(eventTypes(events), ","); strings.Contains(got, "interrupt") {
			t.Fatalf("the approved plan's next writeTodos asked again: %s", got)
		}
		if got := lastAnswer(t, events); got != "Released 3.0 by the plan as proposed." {
			t.Fatalf("answer: %q", got)
		}
		if plan := planOf(t, url, "plan-ok"); !plan.Approved || plan.State != "done" || plan.items() != "Build the release=completed,Deploy it=completed" {
			t.Fatalf("plan after approve: %+v", plan)
		}
	})

	t.Run("edited", func(t *testing.T) {
		in := park(t, "plan-edit")
		edit := `{"decision":"edit","todos":[{"content":"Run the tests","status":"in_progress"},{"content":"Build the release","status":"pending"},{"content":"Deploy it","status":"pending"}]}`
		before := getState(t, url, "plan-edit").raw
		status, body := postStatus(t, url+"/threads/plan-edit/resume", resumeAnswer("/ship", in.ID, "resolved", `{"decision":"edit","todos":[{"content":"Deploy it","status":"done"}]}`))
		if status != http.StatusBadRequest || !strings.Contains(body, in.ID) || !strings.Contains(body, "todos[0].status") {
			t.Fatalf("an edit writeTodos refuses: %d %s, want 400 naming %s and todos[0].status", status, body, in.ID)
		}
		if after := getState(t, url, "plan-edit").raw; after != before {
			t.Fatalf("a refused edit changed the thread:\nbefore %s\nafter  %s", before, after)
		}
		events := resumeRun(t, url, "plan-edit", resumeAnswer("/ship", in.ID, "resolved", edit))
		if got := lastAnswer(t, events); got != "Released 3.0 by your edited plan, tests first." {
			t.Fatalf("answer: %q", got)
		}
		if plan := planOf(t, url, "plan-edit"); !plan.Approved || plan.State != "done" || plan.items() != "Run the tests=completed,Build the release=completed,Deploy it=completed" {
			t.Fatalf("plan after the edit: %+v", plan)
		}
	})

	t.Run("rejected", func(t *testing.T) {
		in := park(t, "plan-no")
		events := resumeRun(t, url, "plan-no", resumeAnswer("/ship", in.ID, "resolved", `"reject"`))
		if got := strings.Join(eventTypes(events), ","); !strings.Contains(got, "plan_cancelled") {
			t.Fatalf("events after reject: %s", got)
		}
		if got := lastAnswer(t, events); got != "The plan was rejected, so nothing ran." {
			t.Fatalf("answer: %q", got)
		}
		if plan := planOf(t, url, "plan-no"); plan.State != "cancelled" || plan.items() != "Ship the release=in_progress" {
			t.Fatalf("plan after reject: %+v", plan)
		}
	})
}

// harnessPlan is the plan value of a thread's state.
type harnessPlan struct {
	State    string `json:"state"`
	Approved bool   `json:"approved"`
	Items    []struct {
		Content string `json:"content"`
		Status  string `json:"status"`
	} `json:"items"`
}

func (p harnessPlan) items() string {
	var out []string
	for _, it := range p.Items {
		out = append(out, it.Content+"="+it.Status)
	}
	return strings.Join(out, ",")
}

func planOf(t *testing.T, url, threadID string) harnessPlan {
	t.Helper()
	st := getState(t, url, threadID)
	var p harnessPlan
	if err := json.Unmarshal(st.Values["plan"], &p); err != nil {
		t.Fatalf("the thread has no plan value: %s", st.raw)
	}
	return p
}
