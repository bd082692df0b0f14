package approval_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	neturl "net/url"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/dawn-go/dawn/approval"
	"github.com/dawn-go/dawn/capabilities"
	"github.com/dawn-go/dawn/dawntest"
	"github.com/dawn-go/dawn/internal/app"
	"github.com/dawn-go/dawn/internal/apptest"
	"github.com/dawn-go/dawn/internal/auth"
	"github.com/dawn-go/dawn/internal/auth/authtest"
	"github.com/dawn-go/dawn/markers"
	"github.com/dawn-go/dawn/router"
	"github.com/dawn-go/dawn/stream"
	"github.com/tmc/langchaingo/llms"
)

// shell stands in for the sandbox's runBash: a capability that gives every
// route a tool of that name, which records the commands it was given and
// runs nothing. The gate keys on the tool's name and its command field,
// so it judges this tool as it judges the real one.
type shell struct {
	mu  sync.Mutex
	ran []string
}

func (*shell) Name() string                 { return "testshell" }
func (*shell) Detect(string) (string, bool) { return "agent.md", true }
func (s *shell) Load(context.Context, *router.Route, string) (*capabilities.Contribution, error) {
	type input struct {
		Command   string `json:"command"`
		TimeoutMS int    `json:"timeout_ms,omitempty"`
	}
	run := capabilities.Func(approval.BashTool, "Run a shell command.", func(_ context.Context, in input) (string, error) {
		s.mu.Lock()
		defer s.mu.Unlock()
		s.ran = append(s.ran, in.Command)
		return fmt.Sprintf("exit 0 (timeout_ms %d)", in.TimeoutMS), nil
	})
	return &capabilities.Contribution{Tools: []capabilities.Tool{run}}, nil
}

func (s *shell) commands() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.ran)
}

// shellApp is an app with one route /ops that has a workspace (where
// runBash lives) and the given dawn.yaml ("" for none).
func shellApp(t *testing.T, dawnYAML string) string {
	files := map[string]string{"ops/agent.md": "---\nworkspace: thread\n---\nYou operate."}
	if dawnYAML != "" {
		files["dawn.yaml"] = dawnYAML
	}
	return writeApp(t, files)
}

// serveShell serves dir with the stand-in runBash, every route on model.
func serveShell(t *testing.T, dir string, model llms.Model, opts apptest.Options) (string, *shell) {
	t.Helper()
	sh := &shell{}
	opts.Markers = append(markers.All(), sh)
	h := apptest.New(t, dir, model, opts)
	return h.Serve(t), sh
}

// bashScript calls runBash with command once, then answers "done".
func bashScript(command string) *dawntest.ScriptedModel {
	return dawntest.Script().CallTool(approval.BashTool, map[string]any{"command": command, "timeout_ms": 5000}).Reply("done")
}

type commandInterrupt struct {
	ID     string `json:"interruptId"`
	Type   string `json:"type"`
	Kind   string `json:"kind"`
	Detail struct {
		ToolName          string   `json:"toolName"`
		Command           string   `json:"command"`
		ArgsPreview       string   `json:"argsPreview"`
		SuggestedPattern  string   `json:"suggestedPattern"`
		SuggestedPatterns []string `json:"suggestedPatterns"`
		Unknown           []string `json:"unknown"`
	} `json:"detail"`
}

// parked returns the interrupt a stream ended on, or ok false when it
// ended without one.
func parked(t *testing.T, events []stream.Event) (commandInterrupt, bool) {
	t.Helper()
	var in commandInterrupt
	for _, ev := range events {
		if ev.Type == "interrupt" {
			if err := json.Unmarshal(ev.Data, &in); err != nil {
				t.Fatal(err)
			}
			return in, true
		}
	}
	return in, false
}

// TestBashRules: over Dawn's wire, each runBash command is judged by
// dawn.yaml's rules, deny first, then allow, every command of a chain on
// its own; what no rule covers parks the run in interactive mode, is
// refused (and the model told) in non-interactive mode, and runs in bypass
// mode, where deny rules still hold.
func TestBashRules(t *testing.T) {
	const rules = "  allow: {bash: [ls, git status, cat]}\n  deny: {bash: [rm -rf, git push]}\n"
	cases := []struct {
		name, mode, command string
		ran                 bool
		parks               bool
		told                string // what the model's tool result says, when not run
	}{
		{"allowed", "interactive", "ls  -la\tsrc", true, false, ""},
		{"allowed pipeline", "interactive", "cat notes.txt | ls", true, false, ""},
		{"denied", "interactive", "rm -rf build", false, false, `denied by the app's permissions (the rule "rm -rf"`},
		{"denied in a chain", "interactive", "ls; rm -rf x", false, false, `the rule "rm -rf"`},
		{"denied in a substitution", "interactive", "ls $(git push origin)", false, false, `the rule "git push"`},
		{"unknown parks", "interactive", "make test", false, true, ""},
		{"unknown in a chain parks", "interactive", "ls && touch x", false, true, ""},
		{"unknown refused", "non-interactive", "make test", false, false, "permissions mode non-interactive"},
		{"chain refused", "non-interactive", "ls; touch x", false, false, "no rule allows touch x"},
		{"unknown bypassed", "bypass", "make test", true, false, ""},
		{"denied in bypass", "bypass", "ls && rm -rf x", false, false, `the rule "rm -rf"`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			model := bashScript(c.command)
			url, sh := serveShell(t, shellApp(t, "permissions:\n  mode: "+c.mode+"\n"+rules), model, apptest.Options{})
			events := readSSE(t, post(t, url+"/threads/t1/runs/stream", runBody("go")))
			in, isParked := parked(t, events)
			if isParked != c.parks {
				t.Fatalf("parked %v, want %v: %v", isParked, c.parks, dawntest.Types(events))
			}
			if ran := len(sh.commands()) > 0; ran != c.ran {
				t.Fatalf("ran %v (%q), want %v", ran, sh.commands(), c.ran)
			}
			if c.ran && sh.commands()[0] != c.command {
				t.Fatalf("ran %q, want %q", sh.commands()[0], c.command)
			}
			if c.parks {
				if in.Type != "permission-request" || in.Kind != approval.CommandKind || in.Detail.ToolName != approval.BashTool || in.Detail.Command != c.command || !strings.Contains(in.Detail.ArgsPreview, "timeout_ms") {
					t.Fatalf("interrupt %+v", in)
				}
				return
			}
			if answer := finalAnswer(t, events); answer != "done" {
				t.Fatalf("final answer %q", answer)
			}
			if c.told != "" {
				if text := toolMessage(t, model); !strings.Contains(text, c.told) {
					t.Fatalf("the model was told %q, want it to say %q", text, c.told)
				}
			}
		})
	}
}

// TestBashUnknownDetail: a chain with two commands no rule covers parks
// once, naming both, each with the prefix "always" would allow.
func TestBashUnknownDetail(t *testing.T) {
	url, sh := serveShell(t, shellApp(t, "permissions:\n  allow: {bash: [ls]}\n"), bashScript("ls && make  test -j4 | npm run build"), apptest.Options{})
	in, ok := parked(t, readSSE(t, post(t, url+"/threads/t1/runs/stream", runBody("go"))))
	if !ok || len(sh.commands()) != 0 {
		t.Fatalf("did not park (ran %q)", sh.commands())
	}
	if in.Detail.SuggestedPattern != "make test" || !slices.Equal(in.Detail.SuggestedPatterns, []string{"make test", "npm run"}) || !slices.Equal(in.Detail.Unknown, []string{"make test -j4", "npm run build"}) {
		t.Fatalf("detail %+v", in.Detail)
	}
}

// TestCommandDecisions: once runs the command and asks again next time;
// deny (and a cancel) refuse it and the model goes on; an edit runs the
// person's command with the call's other arguments, unless a deny rule
// matches it, which is a 400 that changes nothing.
func TestCommandDecisions(t *testing.T) {
	yaml := "permissions:\n  allow: {bash: [ls]}\n  deny: {bash: [rm -rf]}\n"
	t.Run("once", func(t *testing.T) {
		url, sh := serveShell(t, shellApp(t, yaml), bashScript("make test").CallTool(approval.BashTool, map[string]string{"command": "make test"}).Reply("again"), apptest.Options{})
		in, _ := parked(t, readSSE(t, post(t, url+"/threads/t1/runs/stream", runBody("go"))))
		events := resume(t, url, "t1", resumeBody(in.ID, "resolved", `"once"`))
		if answer := finalAnswer(t, events); answer != "done" || !slices.Equal(sh.commands(), []string{"make test"}) {
			t.Fatalf("after once: answer %q, ran %q", answer, sh.commands())
		}
		if _, ok := parked(t, readSSE(t, post(t, url+"/threads/t1/runs/stream", runBody("again")))); !ok {
			t.Fatal("the same command after once did not ask again")
		}
	})
	for _, answer := range []struct{ status, payload string }{{"resolved", `"deny"`}, {"resolved", `{"decision":"deny"}`}, {"cancelled", ""}} {
		t.Run("deny "+answer.status, func(t *testing.T) {
			model := bashScript("make test")
			url, sh := serveShell(t, shellApp(t, yaml), model, apptest.Options{})
			in, _ := parked(t, readSSE(t, post(t, url+"/threads/t1/runs/stream", runBody("go"))))
			events := resume(t, url, "t1", resumeBody(in.ID, answer.status, answer.payload))
			if got := finalAnswer(t, events); got != "done" || len(sh.commands()) != 0 {
				t.Fatalf("after deny: answer %q, ran %q", got, sh.commands())
			}
			if text := toolMessage(t, model); !strings.Contains(text, "a person denied running the command") {
				t.Fatalf("the model was told %q", text)
			}
		})
	}
	t.Run("edit", func(t *testing.T) {
		url, sh := serveShell(t, shellApp(t, yaml), bashScript("make test"), apptest.Options{})
		in, _ := parked(t, readSSE(t, post(t, url+"/threads/t1/runs/stream", runBody("go"))))
		before := state(t, url, "t1").raw
		for _, bad := range []struct{ payload, want string }{
			{`{"decision":"edit","command":"ls; rm -rf /"}`, `the rule \"rm -rf\"`},
			{`{"decision":"edit","command":""}`, "payload.command"},
			{`{"decision":"edit"}`, "payload.command"},
			{`{"decision":"edit","args":{"command":"ls"}}`, `unknown field \"args\"`},
			{`{"decision":"once","command":"ls"}`, "command goes only with"},
			{`"edit"`, "an edit is an object"},
			{`"sure"`, `payload \"sure\" is not a decision`},
		} {
			resp := post(t, url+"/threads/t1/resume", resumeBody(in.ID, "resolved", bad.payload))
			data, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != http.StatusBadRequest || !strings.Contains(string(data), bad.want) {
				t.Errorf("edit %s: %d %s, want a 400 naming %q", bad.payload, resp.StatusCode, data, bad.want)
			}
		}
		if after := state(t, url, "t1").raw; after != before || len(sh.commands()) != 0 {
			t.Fatalf("refused edits changed the thread or ran (%q)", sh.commands())
		}
		resume(t, url, "t1", resumeBody(in.ID, "resolved", `{"decision":"edit","command":"make lint"}`))
		if got := sh.commands(); !slices.Equal(got, []string{"make lint"}) {
			t.Fatalf("after an edit ran %q", got)
		}
	})
}

// bashTurn calls runBash with command when the conversation ends with the
// user's message, and otherwise answers: every run calls it once.
func bashTurn(command string) func([]llms.MessageContent, llms.CallOptions) (*llms.ContentResponse, error) {
	return func(msgs []llms.MessageContent, _ llms.CallOptions) (*llms.ContentResponse, error) {
		if msgs[len(msgs)-1].Role == llms.ChatMessageTypeHuman {
			args, _ := json.Marshal(map[string]string{"command": command})
			call := llms.ToolCall{ID: fmt.Sprintf("call-%d", len(msgs)), Type: "function", FunctionCall: &llms.FunctionCall{Name: approval.BashTool, Arguments: string(args)}}
			return &llms.ContentResponse{Choices: []*llms.ContentChoice{{ToolCalls: []llms.ToolCall{call}}}}, nil
		}
		return &llms.ContentResponse{Choices: []*llms.ContentChoice{{Content: "done"}}}, nil
	}
}

const jwtSecret = "approval-test-secret"

// authed sends a request with a bearer token.
func authed(t *testing.T, method, url, token, body string) *http.Response {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

// TestCommandAlwaysIsPerUserAndPrefix: "always" allows the command's
// prefix for the user who answered, on every thread and for longer
// commands with that prefix, but not another prefix, and not for another
// user; a chained command runs unasked only when each of its commands is
// covered.
func TestCommandAlwaysIsPerUserAndPrefix(t *testing.T) {
	a, err := auth.New(context.Background(), auth.Options{
		Config: auth.Config{JWT: &auth.JWT{SecretEnv: "SECRET", Audience: "dawn"}},
		Env:    func(string) string { return jwtSecret },
	})
	if err != nil {
		t.Fatal(err)
	}
	alice := authtest.HS256(t, jwtSecret, authtest.Claims("alice", "", "dawn"))
	bob := authtest.HS256(t, jwtSecret, authtest.Claims("bob", "", "dawn"))
	commands := map[string]string{}
	var mu sync.Mutex
	model := dawntest.Script().Then(func(msgs []llms.MessageContent, opts llms.CallOptions) (*llms.ContentResponse, error) {
		mu.Lock()
		command := commands[apptest.LastUser(msgs)]
		mu.Unlock()
		return bashTurn(command)(msgs, opts)
	}).Repeat()
	url, sh := serveShell(t, shellApp(t, "permissions:\n  allow: {bash: [ls]}\n"), model, apptest.Options{Auth: a})
	run := func(token, thread, command string) (commandInterrupt, bool) {
		mu.Lock()
		commands[command] = command
		mu.Unlock()
		body, _ := json.Marshal(map[string]any{"route": "/ops", "input": map[string]any{"messages": []map[string]string{{"role": "user", "content": command}}}})
		return parked(t, readSSE(t, authed(t, http.MethodPost, url+"/threads/"+thread+"/runs/stream", token, string(body))))
	}
	in, ok := run(alice, "a1", "make test -j4")
	if !ok || in.Detail.SuggestedPattern != "make test" {
		t.Fatalf("alice's first make did not park with the prefix make test: %+v", in)
	}
	readSSE(t, authed(t, http.MethodPost, url+"/threads/a1/resume", alice, fmt.Sprintf(`{"route":"/ops","resume":[{"interruptId":%q,"status":"resolved","payload":"always"}]}`, in.ID)))
	for _, c := range []struct {
		who, token, thread, command string
		asks                        bool
	}{
		{"alice", alice, "a2", "make test", false},
		{"alice", alice, "a3", "make   test --verbose", false},
		{"alice", alice, "a4", "ls && make test", false},
		{"alice", alice, "a5", "make install", true},
		{"alice", alice, "a6", "make test; make install", true},
		{"bob", bob, "b1", "make test", true},
	} {
		if _, asked := run(c.token, c.thread, c.command); asked != c.asks {
			t.Errorf("%s's %q asked %v, want %v", c.who, c.command, asked, c.asks)
		}
	}
	if got := sh.commands(); !slices.Equal(got, []string{"make test -j4", "make test", "make   test --verbose", "ls && make test"}) {
		t.Fatalf("commands run: %q", got)
	}
	// The remembered prefix is listed as alice's, and forgetting it makes
	// her be asked again.
	var list struct {
		Approvals []struct{ Key, User string } `json:"approvals"`
	}
	resp0 := authed(t, http.MethodGet, url+"/approvals", alice, "")
	_ = json.NewDecoder(resp0.Body).Decode(&list)
	resp0.Body.Close()
	if len(list.Approvals) != 1 || list.Approvals[0].Key != "approval.command.make test" || list.Approvals[0].User != "alice" {
		t.Fatalf("alice's approvals: %+v", list.Approvals)
	}
	if resp := authed(t, http.MethodDelete, url+"/approvals/"+neturl.PathEscape(list.Approvals[0].Key), alice, ""); resp.StatusCode != http.StatusNoContent {
		t.Fatalf("forgetting the prefix: %d", resp.StatusCode)
	}
	if _, asked := run(alice, "a7", "make test"); !asked {
		t.Fatal("alice was not asked again after forgetting the prefix")
	}
	// Who answered is recorded with the decision, as for every approval.
	st := struct {
		Values map[string]json.RawMessage `json:"values"`
	}{}
	resp := authed(t, http.MethodGet, url+"/threads/a1/state", alice, "")
	defer resp.Body.Close()
	if err := json.NewDecoder(resp.Body).Decode(&st); err != nil {
		t.Fatal(err)
	}
	var decisions []capabilities.Decision
	_ = json.Unmarshal(st.Values[capabilities.DecisionsKey], &decisions)
	if len(decisions) != 1 || decisions[0].Kind != approval.CommandKind || decisions[0].By.User != "alice" || string(decisions[0].Payload) != `"always"` {
		t.Fatalf("decisions %s", st.Values[capabilities.DecisionsKey])
	}
}

// TestRoutePermissions: a route's own permissions in agent.md add to the
// app's rules (an app deny still wins over a route allow) and set its
// mode; DAWN_PERMISSIONS_MODE overrides every mode.
func TestRoutePermissions(t *testing.T) {
	files := map[string]string{
		"dawn.yaml":      "permissions:\n  mode: non-interactive\n  allow: {bash: [ls]}\n  deny: {bash: [make clean]}\n",
		"build/agent.md": "---\nworkspace: thread\npermissions:\n  mode: interactive\n  allow: {bash: [make]}\n---\nYou build.",
		"plain/agent.md": "---\nworkspace: thread\n---\nYou look.",
	}
	cases := []struct {
		route, command, env string
		ran, parks          bool
	}{
		{"/build", "make all", "", true, false},
		{"/build", "make clean", "", false, false},
		{"/build", "npm test", "", false, true},
		{"/plain", "make all", "", false, false},
		{"/plain", "ls", "", true, false},
		{"/build", "npm test", approval.NonInteractive, false, false},
	}
	for _, c := range cases {
		t.Run(c.route+" "+c.command+" "+c.env, func(t *testing.T) {
			t.Setenv(approval.ModeEnv, c.env)
			dir := writeApp(t, files)
			sh := &shell{}
			h := apptest.New(t, dir, bashScript(c.command), apptest.Options{Markers: append(markers.All(), sh)})
			url := h.Serve(t)
			body, _ := json.Marshal(map[string]any{"route": c.route, "input": map[string]any{"messages": []map[string]string{{"role": "user", "content": "go"}}}})
			_, parks := parked(t, readSSE(t, post(t, url+"/threads/t1/runs/stream", string(body))))
			if ran := len(sh.commands()) > 0; ran != c.ran || parks != c.parks {
				t.Fatalf("ran %v parked %v, want %v %v", ran, parks, c.ran, c.parks)
			}
		})
	}
}

// TestPermissionsErrors: a bad permissions section names the file, the
// line and the field, and keeps the route from preparing.
func TestPermissionsErrors(t *testing.T) {
	for _, c := range []struct {
		files map[string]string
		want  string
	}{
		{map[string]string{"ops/agent.md": "---\nworkspace: thread\npermissions: {allow: {bash: [make; rm]}}\n---\nBroken."}, "agent.md:3: permissions.allow.bash[0]"},
		{map[string]string{"ops/agent.md": "---\npermissions: {mode: sometimes}\n---\nBroken."}, `agent.md:2: permissions.mode is "sometimes"`},
		{map[string]string{"ops/agent.md": "---\npermissions: [ls]\n---\nBroken."}, "agent.md:2: permissions must be a mapping"},
		{map[string]string{"ops/agent.md": "You operate.", "dawn.yaml": "permissions:\n  deny: {bash: [\"$(x)\"]}\n"}, "permissions.deny.bash[0]"},
	} {
		_, err := app.Load(context.Background(), writeApp(t, c.files), app.Options{ToolsKnown: true, Markers: markers.All()})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("load error %v, want one naming %q", err, c.want)
		}
	}
}

// TestCommandOverAGUI: over AG-UI a command no rule covers ends the run
// with the interrupt outcome of kind command, and a RunAgentInput whose
// resume answers "once" runs it; a denied command is refused without
// parking.
func TestCommandOverAGUI(t *testing.T) {
	model := dawntest.Script().CallTool(approval.BashTool, map[string]string{"command": "make test"}).CallTool(approval.BashTool, map[string]string{"command": "rm -rf /"}).Reply("refused")
	url, sh := serveShell(t, shellApp(t, "permissions:\n  deny: {bash: [rm -rf]}\n"), model, apptest.Options{})
	start := `{"threadId":"g1","runId":"r1","messages":[{"id":"m1","role":"user","content":"test it"}],"tools":[],"context":[],"state":{}}`
	events := aguiEvents(t, post(t, url+"/agui/%2Fops%23agent", start))
	first, raw := aguiInterrupt(t, events)
	if !strings.Contains(string(raw), `"kind":"command"`) || !strings.Contains(string(raw), `"command":"make test"`) {
		t.Fatalf("AG-UI interrupt: %s", raw)
	}
	id, _ := first["id"].(string)
	resumed := fmt.Sprintf(`{"threadId":"g1","runId":"r2","messages":[],"tools":[],"context":[],"state":{},"resume":[{"interruptId":%q,"status":"resolved","payload":"once"}]}`, id)
	events = aguiEvents(t, post(t, url+"/agui/%2Fops%23agent", resumed))
	last := events[len(events)-1]
	if outcome, _ := last["outcome"].(map[string]any); last["type"] != "RUN_FINISHED" || outcome["type"] != "success" {
		t.Fatalf("last AG-UI event of the resumed run: %v", last)
	}
	if got := sh.commands(); !slices.Equal(got, []string{"make test"}) {
		t.Fatalf("commands run: %q", got)
	}
	reqs := model.Requests()
	var results []string
	for _, msg := range reqs[len(reqs)-1] {
		for _, p := range msg.Parts {
			if r, ok := p.(llms.ToolCallResponse); ok {
				results = append(results, r.Content)
			}
		}
	}
	if len(results) != 2 || !strings.Contains(results[1], `the rule "rm -rf"`) {
		t.Fatalf("the model was told %q", results)
	}
}

// TestCommandOverLangGraph: in the LangGraph dialect a command no rule
// covers shows as __interrupt__ with the command detail, and a run whose
// command resumes with "always" runs it and remembers its prefix.
func TestCommandOverLangGraph(t *testing.T) {
	model := dawntest.Script().Then(bashTurn("make test")).Repeat()
	url, sh := serveShell(t, shellApp(t, ""), model, apptest.Options{})
	post(t, url+"/threads", `{"thread_id":"l1"}`).Body.Close()
	start := `{"assistant_id":"/ops","input":{"messages":[{"type":"human","content":"test it"}]},"stream_mode":["values"]}`
	events := readSSE(t, post(t, url+"/threads/l1/runs/stream", start))
	var found *commandInterrupt
	for _, ev := range events {
		var values struct {
			Interrupts []struct {
				Value commandInterrupt `json:"value"`
				ID    string           `json:"id"`
			} `json:"__interrupt__"`
		}
		if ev.Type == "values" && json.Unmarshal(ev.Data, &values) == nil && len(values.Interrupts) == 1 {
			found = &values.Interrupts[0].Value
		}
	}
	if found == nil || found.Kind != approval.CommandKind || found.Detail.Command != "make test" || found.Detail.SuggestedPattern != "make test" {
		t.Fatalf("no command interrupt in the LangGraph stream: %v", dawntest.Types(events))
	}
	if len(sh.commands()) != 0 {
		t.Fatal("the command ran before anyone approved it")
	}
	readSSE(t, post(t, url+"/threads/l1/runs/stream", `{"assistant_id":"/ops","command":{"resume":"always"},"stream_mode":["values"]}`))
	// A new thread runs the same command without asking.
	post(t, url+"/threads", `{"thread_id":"l2"}`).Body.Close()
	readSSE(t, post(t, url+"/threads/l2/runs/stream", start))
	if got := sh.commands(); !slices.Equal(got, []string{"make test", "make test"}) {
		t.Fatalf("commands run: %q", got)
	}
}

// TestBypassIsAnnounced: a route whose mode is bypass (by dawn.yaml, its
// agent.md or the environment) carries a notice the server logs at start;
// other modes carry none.
func TestBypassIsAnnounced(t *testing.T) {
	for _, c := range []struct {
		yaml, env string
		notice    bool
	}{
		{"permissions: {mode: bypass}\n", "", true},
		{"permissions: {mode: interactive}\n", approval.Bypass, true},
		{"permissions: {mode: bypass}\n", approval.NonInteractive, false},
		{"", "", false},
	} {
		t.Setenv(approval.ModeEnv, c.env)
		a, err := app.Load(context.Background(), shellApp(t, c.yaml), app.Options{ToolsKnown: true, Markers: markers.All()})
		if err != nil {
			t.Fatal(err)
		}
		notices := a.Routes["/ops"].Notices
		if got := len(notices) == 1 && strings.Contains(notices[0], "bypass"); got != c.notice {
			t.Errorf("dawn.yaml %q, %s=%q: notices %q", c.yaml, approval.ModeEnv, c.env, notices)
		}
	}
}

// aguiInterrupt is the one interrupt of the outcome of events, an AG-UI
// run that parked, and its JSON; the test fails when the run did not park
// on exactly one.
func aguiInterrupt(t *testing.T, events []map[string]any) (map[string]any, []byte) {
	t.Helper()
	last := events[len(events)-1]
	outcome, _ := last["outcome"].(map[string]any)
	interrupts, _ := outcome["interrupts"].([]any)
	if last["type"] != "RUN_FINISHED" || outcome["type"] != "interrupt" || len(interrupts) != 1 {
		t.Fatalf("last AG-UI event of a parked run: %v", last)
	}
	first, _ := interrupts[0].(map[string]any)
	raw, _ := json.Marshal(first)
	return first, raw
}
