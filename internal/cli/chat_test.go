package cli_test

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// chatScript scripts the chat app's model: a greeting, then a writeFile
// call the route's approve: list parks, then what the result says.
const chatScript = `turns:
  - when: {user: save}
    text: Saving it.
    tool_calls:
      - {name: writeFile, args: {path: note.txt, content: hello}}
  - when: {tool: writeFile, tool_result: denied}
    text: Not saved.
  - when: {tool: writeFile}
    text: Saved note.txt.
  - text: Hello from the script.
`

// writeChatApp writes an app whose one route, /notes, keeps files in the
// thread, asks before writeFile, and answers from chatScript.
func writeChatApp(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	files := map[string]string{
		"dawn.yaml":      "model: script:script.yaml\n",
		"script.yaml":    chatScript,
		"notes/agent.md": "---\ndescription: Keeps notes.\nworkspace: thread\napprove: [writeFile]\n---\nYou keep notes in files.\n",
		"notes/plan.md":  "- [ ] Take the note\n",
	}
	for name, text := range files {
		path := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// chatWith runs dawn chat with args, typing input on its stdin (a pipe),
// for at most a minute.
func chatWith(t *testing.T, input string, args ...string) dawnResult {
	t.Helper()
	bin := dawnBinary(t) // built before the deadline starts
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, append([]string{"chat"}, args...)...)
	cmd.Env = offlineEnv()
	cmd.Stdin = strings.NewReader(input)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	if ctx.Err() != nil {
		t.Fatalf("dawn chat %v did not finish within a minute:\n%s%s", args, stdout.String(), stderr.String())
	}
	if err != nil && cmd.ProcessState == nil {
		t.Fatal(err)
	}
	return dawnResult{code: cmd.ProcessState.ExitCode(), stdout: stdout.String(), stderr: stderr.String()}
}

var threadLine = regexp.MustCompile(`thread: ([0-9a-f-]{36})`)

// TestChatOverServer: dawn chat talks to a running server over loopback,
// turn after turn on one thread, with its input scripted on a pipe: the
// model's text streams out, the approval the route asks for is answered
// inline, /plan shows the plan, and a second chat with --thread shows the
// conversation so far and goes on with it.
func TestChatOverServer(t *testing.T) {
	dir := writeChatApp(t)
	s := startDawn(t, offlineEnv(), time.Minute, "start", "--app", dir, "--host", "127.0.0.1", "--port", "0")

	res := chatWith(t, "hi\nsave the note\nonce\n/plan\n/quit\n", "/notes", "--url", s.url)
	if res.code != 0 {
		t.Fatalf("exit %d\n%s%s", res.code, res.stdout, res.stderr)
	}
	for _, want := range []string{"Hello from the script.", "Saving it.", "writeFile", "Saved note.txt.", "1. [ ] Take the note"} {
		if !strings.Contains(res.stdout, want) {
			t.Errorf("stdout lacks %q:\n%s", want, res.stdout)
		}
	}
	if !strings.Contains(res.stderr, "approval needed") || !strings.Contains(res.stderr, "tool writeFile") {
		t.Errorf("stderr does not show the approval asked:\n%s", res.stderr)
	}
	m := threadLine.FindStringSubmatch(res.stderr)
	if m == nil {
		t.Fatalf("stderr names no thread:\n%s", res.stderr)
	}
	thread := m[1]
	if got := threadFile(t, s.url, thread, "note.txt"); got != "hello" {
		t.Fatalf("note.txt on the thread = %q, want hello (the approved call ran)", got)
	}

	res = chatWith(t, "save the note\ndeny\n", "/notes", "--url", s.url, "--thread", thread)
	if res.code != 0 {
		t.Fatalf("second chat: exit %d\n%s%s", res.code, res.stdout, res.stderr)
	}
	for _, want := range []string{"you: hi", "assistant: Hello from the script.", "you: save the note", "assistant: Saved note.txt.", "Not saved."} {
		if !strings.Contains(res.stdout, want) {
			t.Errorf("second chat's stdout lacks %q:\n%s", want, res.stdout)
		}
	}
	if !strings.Contains(res.stderr, "thread: "+thread) {
		t.Errorf("second chat did not go on with thread %s:\n%s", thread, res.stderr)
	}
}

// threadFile reads a file of a thread's workspace through the API.
func threadFile(t *testing.T, base, thread, path string) string {
	t.Helper()
	resp, err := http.Get(base + "/threads/" + thread + "/files/" + path)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET the thread's %s: %s %v\n%s", path, resp.Status, err, body)
	}
	return string(body)
}

// TestChatLeftParked: when the input ends while chat asks for a decision,
// it exits 1 saying the thread stays parked; a new message on that thread
// later is answered after the decision, which chat asks for first.
func TestChatLeftParked(t *testing.T) {
	dir := writeChatApp(t)
	s := startDawn(t, offlineEnv(), time.Minute, "start", "--app", dir, "--host", "127.0.0.1", "--port", "0")

	res := chatWith(t, "save the note\n", "/notes", "--url", s.url)
	if res.code != 1 || !strings.Contains(res.stderr, "waiting for a person's decision") || !strings.Contains(res.stderr, "stays parked") {
		t.Fatalf("input ending at the question: exit %d, want 1 saying the thread stays parked:\n%s%s", res.code, res.stdout, res.stderr)
	}
	m := threadLine.FindStringSubmatch(res.stderr)
	if m == nil {
		t.Fatalf("stderr names no thread:\n%s", res.stderr)
	}
	res = chatWith(t, "/thread "+m[1]+"\ndeny\nhi\n", "/notes", "--url", s.url)
	if res.code != 0 || !strings.Contains(res.stdout, "Not saved.") || !strings.Contains(res.stdout, "Hello from the script.") {
		t.Fatalf("going on with the parked thread: exit %d\n%s%s", res.code, res.stdout, res.stderr)
	}
	if strings.Index(res.stdout, "Not saved.") > strings.Index(res.stdout, "Hello from the script.") {
		t.Errorf("the parked run was not settled before the new message:\n%s", res.stdout)
	}
}
