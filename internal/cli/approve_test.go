package cli

import (
	"bytes"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dawn-go/dawn/capabilities"
	"github.com/dawn-go/dawn/client"
	"github.com/dawn-go/dawn/dawntest"
	"github.com/dawn-go/dawn/internal/models"
	"github.com/dawn-go/dawn/internal/store"
)

// The offline model writes its plan with writeTodos, three calls for a
// two-item plan; an app that lists writeTodos under approve: parks at each
// call that is not yet allowed, which is what these tests answer.

// writeApproveApp writes an app with /ops, whose writeTodos calls need
// approval, and /ship, whose harness plan needs approval.
func writeApproveApp(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	files := map[string]string{
		"ops/agent.md":  "---\napprove: [writeTodos]\n---\nYou deploy.\n",
		"ops/plan.md":   "- [ ] Build\n- [ ] Deploy\n",
		"ship/agent.md": "You ship releases.\n",
		"ship/plan.md":  "---\nenforce: true\napproval: required\n---\n- [ ] Ship the release\n",
	}
	for name, body := range files {
		path := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// runPrompted runs the CLI with prompt as what a person types at the
// terminal.
func runPrompted(t *testing.T, prompt string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code = Run(args, Config{Stdout: &out, Stderr: &errOut, Stock: true, Env: func(string) string { return "" }, Prompt: strings.NewReader(prompt)})
	return code, out.String(), errOut.String()
}

// parkedOn returns the interrupts thread threadID of the app in dir is
// parked on.
func parkedOn(t *testing.T, dir, threadID string) []capabilities.Interrupt {
	t.Helper()
	st, err := store.Open(filepath.Join(dir, ".dawn", "dawn.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	cp, err := st.Latest(t.Context(), threadID)
	if err != nil {
		t.Fatal(err)
	}
	list, err := capabilities.PendingInterrupts(cp.Values)
	if err != nil {
		t.Fatal(err)
	}
	return list
}

const offlineAnswer = `Offline model: worked through 2 plan items for "ship it".`

// TestRunAsksAtThePrompt: a parked run shows the tool call and asks; an
// answer that is not a decision is asked again, "once" runs that call
// (the next one asks again), "always" runs it and every later one.
func TestRunAsksAtThePrompt(t *testing.T) {
	dir := writeApproveApp(t)
	code, stdout, stderr := runPrompted(t, "maybe\no\nalways\n", "run", "/ops", "--app", dir, "--input", "ship it", "--thread", "t-ask")
	if code != ExitOK {
		t.Fatalf("exit %d; stderr:\n%s", code, stderr)
	}
	for _, want := range []string{
		"approval needed (interrupt perm-",
		"): tool writeTodos\n  arguments: {\"todos\":[{\"content\":\"Build\",\"status\":\"in_progress\"},{\"content\":\"Deploy\",\"status\":\"pending\"}]}\n",
		"approve once / always / deny / edit? ",
		"  answer once, always, deny, edit\n",
	} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr lacks %q; got:\n%s", want, stderr)
		}
	}
	if n := strings.Count(stderr, "approval needed"); n != 2 {
		t.Errorf("asked %d times, want 2 (once, then always); stderr:\n%s", n, stderr)
	}
	for _, want := range []string{"plan: [>] Build | [ ] Deploy\n", "plan: [x] Build | [x] Deploy\n", offlineAnswer} {
		if !strings.Contains(stdout, want) {
			t.Errorf("stdout lacks %q; got:\n%s", want, stdout)
		}
	}
	if got := parkedOn(t, dir, "t-ask"); len(got) != 0 {
		t.Errorf("the thread is still parked on %+v", got)
	}
}

// TestRunEditAtThePrompt: edited arguments the tool's schema refuses are
// shown with the reason and asked again; valid ones run.
func TestRunEditAtThePrompt(t *testing.T) {
	dir := writeApproveApp(t)
	prompt := "edit\n{\"todos\":1}\n" + // refused: todos is a list
		"e\nnot json\n{\"todos\":[{\"content\":\"Build it carefully\",\"status\":\"in_progress\"},{\"content\":\"Deploy\",\"status\":\"pending\"}]}\n" +
		"always\n"
	code, stdout, stderr := runPrompted(t, prompt, "run", "/ops", "--app", dir, "--input", "ship it")
	if code != ExitOK {
		t.Fatalf("exit %d; stderr:\n%s", code, stderr)
	}
	for _, want := range []string{"  refused: resume[0] (interrupt perm-", "input schema", "  that is not a JSON object"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr lacks %q; got:\n%s", want, stderr)
		}
	}
	if want := "plan: [>] Build it carefully | [ ] Deploy\n"; !strings.Contains(stdout, want) {
		t.Errorf("stdout lacks the edited plan %q; got:\n%s", want, stdout)
	}
}

// TestRunApproveFlag: --approve answers every tool approval without
// asking: once runs the calls, deny refuses them.
func TestRunApproveFlag(t *testing.T) {
	for _, tt := range []struct {
		approve string
		plan    bool
	}{{"once", true}, {"deny", false}} {
		t.Run(tt.approve, func(t *testing.T) {
			withStdin(t, "")
			dir := writeApproveApp(t)
			code, stdout, stderr := runCLI(t, nil, "run", "/ops", "--app", dir, "--input", "ship it", "--approve", tt.approve, "--thread", "t-flag")
			if code != ExitOK {
				t.Fatalf("exit %d; stderr:\n%s", code, stderr)
			}
			if n := strings.Count(stderr, "  answered "+tt.approve+" (--approve)\n"); n != 3 {
				t.Errorf("%d calls answered %s, want 3; stderr:\n%s", n, tt.approve, stderr)
			}
			if got := strings.Contains(stdout, "plan: [x] Build | [x] Deploy\n"); got != tt.plan {
				t.Errorf("with --approve %s, writeTodos ran = %v; stdout:\n%s", tt.approve, got, stdout)
			}
			if !strings.Contains(stdout, offlineAnswer) {
				t.Errorf("stdout lacks the answer; got:\n%s", stdout)
			}
			if got := parkedOn(t, dir, "t-flag"); len(got) != 0 {
				t.Errorf("the thread is still parked on %+v", got)
			}
		})
	}
	code, _, stderr := runCLI(t, nil, "run", "/ops", "--app", t.TempDir(), "--input", "x", "--approve", "always")
	if code != ExitUsage || !strings.Contains(stderr, `--approve is "always"; use once or deny`) {
		t.Errorf("--approve always: exit %d, stderr:\n%s", code, stderr)
	}
}

// TestRunParkedWithoutTerminal: with stdin not a terminal and no
// --approve, run exits 1 naming the interrupt and how to answer it, and the
// thread stays parked; the command it names answers it.
func TestRunParkedWithoutTerminal(t *testing.T) {
	withStdin(t, "")
	dir := writeApproveApp(t)
	code, stdout, stderr := runCLI(t, nil, "run", "/ops", "--app", dir, "--input", "ship it", "--thread", "t-park")
	if code != ExitProblem {
		t.Fatalf("exit %d, want %d; stderr:\n%s", code, ExitProblem, stderr)
	}
	pending := parkedOn(t, dir, "t-park")
	if len(pending) != 1 || pending[0].Kind != "tool" {
		t.Fatalf("the thread is parked on %+v, want one tool interrupt", pending)
	}
	for _, want := range []string{
		"dawn: the run is waiting for a person's decision: interrupt " + pending[0].ID + " (tool writeTodos);",
		"`dawn run /ops --app " + dir + " --thread t-park --approve once` (or deny)",
		"POST /threads/t-park/resume",
		"thread: t-park\n",
	} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr lacks %q; got:\n%s", want, stderr)
		}
	}
	if strings.Contains(stdout, "Offline model") {
		t.Errorf("the parked run answered: %s", stdout)
	}
	// A new message is refused while the thread waits.
	code, _, stderr = runCLI(t, nil, "run", "/ops", "--app", dir, "--input", "again", "--thread", "t-park")
	if code != ExitProblem || !strings.Contains(stderr, "thread t-park is waiting for a decision on interrupt "+pending[0].ID+"; run again without --input") {
		t.Errorf("a new message on the parked thread: exit %d, stderr:\n%s", code, stderr)
	}
	// The command the message names answers it and the run goes on.
	code, stdout, stderr = runCLI(t, nil, "run", "/ops", "--app", dir, "--thread", "t-park", "--approve", "once")
	if code != ExitOK || !strings.Contains(stdout, offlineAnswer) {
		t.Fatalf("resume: exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	if got := parkedOn(t, dir, "t-park"); len(got) != 0 {
		t.Errorf("the thread is still parked on %+v", got)
	}
}

// TestRunPlanAtThePrompt: a plan that needs approval shows the proposed
// plan and asks approve / reject.
func TestRunPlanAtThePrompt(t *testing.T) {
	for _, tt := range []struct{ answer, want string }{
		{"approve", "plan done"},
		{"r", "plan cancelled: "},
		{"edit\n" + `{"todos":[{"content":"Ship it carefully","status":"pending"}]}`, "Ship it carefully"},
	} {
		t.Run(strings.Fields(tt.answer)[0], func(t *testing.T) {
			dir := writeApproveApp(t)
			code, stdout, stderr := runPrompted(t, tt.answer+"\n", "run", "/ship", "--app", dir, "--input", "ship it")
			if code != ExitOK {
				t.Fatalf("exit %d; stderr:\n%s", code, stderr)
			}
			if want := "): the proposed plan\n  1. [x] Ship the release\napprove / reject / edit? "; !strings.Contains(stderr, want) {
				t.Errorf("stderr lacks %q; got:\n%s", want, stderr)
			}
			if !strings.Contains(stdout, tt.want) {
				t.Errorf("stdout lacks %q; got:\n%s", tt.want, stdout)
			}
		})
	}
}

// TestRunAnswersOverURL: against a server, a parked run is answered with
// --approve, and one left parked is answered later by the command the
// message names.
func TestRunAnswersOverURL(t *testing.T) {
	withStdin(t, "")
	dir := writeApproveApp(t)
	url := dawntest.New(t, dir, models.NewOffline(), dawntest.Options{StorePath: filepath.Join(t.TempDir(), "dawn.db")}).URL
	code, stdout, stderr := runCLI(t, nil, "run", "/ops", "--url", url, "--input", "ship it", "--approve", "once")
	if code != ExitOK || !strings.Contains(stdout, offlineAnswer) || strings.Count(stderr, "answered once (--approve)") != 3 {
		t.Fatalf("--approve once: exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	code, _, stderr = runCLI(t, nil, "run", "/ops", "--url", url, "--input", "ship it", "--thread", "t-url")
	if code != ExitProblem || !strings.Contains(stderr, "`dawn run /ops --url "+url+" --thread t-url --approve once`") {
		t.Fatalf("parked without a terminal: exit %d, stderr:\n%s", code, stderr)
	}
	code, stdout, stderr = runPrompted(t, "always\n", "run", "/ops", "--url", url, "--thread", "t-url")
	if code != ExitOK || !strings.Contains(stdout, offlineAnswer) || strings.Count(stderr, "approval needed") != 1 {
		t.Fatalf("answered at the prompt: exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
}

// askedWriter is stderr that says when the first question is asked.
type askedWriter struct {
	mu    sync.Mutex
	buf   bytes.Buffer
	asked chan struct{}
}

func (w *askedWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	n, err := w.buf.Write(p)
	if strings.Contains(w.buf.String(), "approve once / always / deny / edit? ") && w.asked != nil {
		close(w.asked)
		w.asked = nil
	}
	return n, err
}

func (w *askedWriter) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.String()
}

// TestRunCtrlCAtThePrompt: Ctrl-C while run waits for a person's answer
// exits 130 and leaves the thread parked.
func TestRunCtrlCAtThePrompt(t *testing.T) {
	self, err := os.FindProcess(os.Getpid())
	if err != nil {
		t.Skip(err)
	}
	dir := writeApproveApp(t)
	never, typing := io.Pipe() // a person who never answers
	t.Cleanup(func() { typing.Close() })
	asked := make(chan struct{})
	stderr := &askedWriter{asked: asked}
	done := make(chan int, 1)
	go func() {
		done <- Run([]string{"run", "/ops", "--app", dir, "--input", "ship it", "--thread", "t-ctrlc"},
			Config{Stdout: io.Discard, Stderr: stderr, Stock: true, Env: func(string) string { return "" }, Prompt: never})
	}()
	select {
	case <-asked:
	case code := <-done:
		t.Fatalf("run ended (exit %d) without asking; stderr:\n%s", code, stderr)
	case <-time.After(30 * time.Second):
		t.Fatalf("run never asked; stderr:\n%s", stderr)
	}
	if err := self.Signal(os.Interrupt); err != nil {
		t.Skipf("cannot send SIGINT here: %v", err)
	}
	select {
	case code := <-done:
		if code != ExitInterrupted || !strings.Contains(stderr.String(), "the thread stays parked") {
			t.Errorf("exit %d, want %d; stderr:\n%s", code, ExitInterrupted, stderr)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("run did not end after SIGINT at the prompt")
	}
	if got := parkedOn(t, dir, "t-ctrlc"); len(got) != 1 {
		t.Errorf("the thread is parked on %+v, want the one interrupt still", got)
	}
}

// TestRunAnswerFlag: --answer answers a parked run of any kind without a
// terminal; a decision that is not of the interrupt's kind is refused
// naming the kind's decisions, and the thread stays parked.
func TestRunAnswerFlag(t *testing.T) {
	withStdin(t, "")
	for _, tt := range []struct{ answer, want string }{
		{"approve", "plan done"},
		{"reject", "plan cancelled: "},
		{`"approve"`, "plan done"},
	} {
		t.Run(strings.Fields(tt.answer)[0], func(t *testing.T) {
			dir := writeApproveApp(t)
			code, stdout, stderr := runCLI(t, nil, "run", "/ship", "--app", dir, "--input", "ship it", "--answer", tt.answer)
			if code != ExitOK || !strings.Contains(stdout, tt.want) || !strings.Contains(stderr, "(--answer)") {
				t.Fatalf("--answer %s: exit %d, want 0 and %q\nstdout:\n%s\nstderr:\n%s", tt.answer, code, tt.want, stdout, stderr)
			}
		})
	}
	dir := writeApproveApp(t)
	code, _, stderr := runCLI(t, nil, "run", "/ship", "--app", dir, "--input", "ship it", "--answer", "once", "--thread", "t-wrong")
	if code != ExitProblem || !strings.Contains(stderr, "use approve, reject, or a JSON payload") {
		t.Fatalf("--answer once on a plan: exit %d, stderr:\n%s", code, stderr)
	}
	if pending := parkedOn(t, dir, "t-wrong"); len(pending) != 1 || pending[0].Kind != "plan" {
		t.Fatalf("after a refused --answer the thread is parked on %+v, want the plan interrupt", pending)
	}
}

// TestAskCommand: dawn run shows a command interrupt (the command, what
// no rule allows, what "always" would allow) and asks once / always /
// deny / edit; an edit asks for the command to run instead, again while
// it is blank; --approve and --answer answer it with a word.
func TestAskCommand(t *testing.T) {
	in := client.Interrupt{ID: "perm-1", Kind: kindCommand, Detail: json.RawMessage(`{"toolName":"runBash","command":"ls && make test","unknown":["make test"],"suggestedPatterns":["make test"]}`)}
	var shown bytes.Buffer
	a := &asker{in: newLineReader(strings.NewReader("maybe\ne\n\nmake lint\n")), w: &shown}
	answers, err := a.answer(t.Context(), []client.Interrupt{in})
	if err != nil || len(answers) != 1 || string(answers[0].Payload) != `{"command":"make lint","decision":"edit"}` {
		t.Fatalf("answers %+v, %v", answers, err)
	}
	for _, want := range []string{"$ ls && make test", "no rule allows: make test", "always allows commands starting with: make test", "answer once, always, deny, edit", "that is blank"} {
		if !strings.Contains(shown.String(), want) {
			t.Errorf("dawn run showed no %q:\n%s", want, shown.String())
		}
	}
	answers, err = (&asker{approve: approveDeny, w: io.Discard}).answer(t.Context(), []client.Interrupt{in})
	if err != nil || string(answers[0].Payload) != `"deny"` {
		t.Fatalf("--approve deny: %+v %v", answers, err)
	}
	if _, err := fixedAnswer(in, "approve"); err == nil || !strings.Contains(err.Error(), "use once, always, deny") {
		t.Fatalf("--answer approve on a command: %v", err)
	}
}
