package cli_test

import (
	"encoding/json"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/dawn-go/dawn/internal/nodetool"
)

// startAimock serves the aimock fixtures file on a free loopback port and
// returns its root URL; it is killed when the test ends. Without npm to
// install aimock the test skips (fails when DAWN_REQUIRE_AIMOCK=1).
func startAimock(t *testing.T, fixtures string) string {
	t.Helper()
	dir := nodetool.Package(t, "aimock", filepath.Join(".bin", "llmock"), "DAWN_REQUIRE_AIMOCK")
	abs, err := filepath.Abs(fixtures)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	out := &lockedBuffer{}
	cmd := exec.Command(filepath.Join(dir, "node_modules", ".bin", "llmock"), "-p", strconv.Itoa(port), "-h", "127.0.0.1", "-f", abs, "-l", "0", "-c", "8", "--log-level", "warn")
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { cmd.Wait(); close(exited) }()
	t.Cleanup(func() { cmd.Process.Kill(); <-exited })
	url := "http://127.0.0.1:" + strconv.Itoa(port)
	for deadline := time.Now().Add(15 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		select {
		case <-exited:
			t.Fatalf("aimock exited:\n%s", out)
		default:
		}
		if resp, err := http.Get(url + "/health"); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return url
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("aimock did not answer on %s:\n%s", url, out)
		}
	}
}

// writeRecordApp writes an app whose route /notes runs on
// openai:gpt-4o-mini, keeps files in the thread and asks before writeFile,
// with one eval case that approves the call.
func writeRecordApp(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	files := map[string]string{
		"notes/agent.md": "---\nmodel: openai:gpt-4o-mini\nworkspace: thread\napprove: [writeFile]\n---\nYou keep notes in files.\n",
		"notes/evals/basics.yaml": `cases:
  - name: saves a note
    input: {message: Save a note}
    answers: [{kind: tool, name: writeFile, decision: approve}]
    expect:
      interrupt: {kind: tool, name: writeFile}
      tools_called: [writeFile]
      answer_contains: [Saved the note]
`,
	}
	for name, text := range files {
		path := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// observations reads the observations of every attempt in an eval.json.
func observations(t *testing.T, outDir string) []json.RawMessage {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(outDir, "eval.json"))
	if err != nil {
		t.Fatal(err)
	}
	var r struct {
		Cases []struct {
			Attempts []struct {
				Observation json.RawMessage `json:"observation"`
			} `json:"attempts"`
		} `json:"cases"`
	}
	if err := json.Unmarshal(data, &r); err != nil {
		t.Fatal(err)
	}
	var out []json.RawMessage
	for _, c := range r.Cases {
		for _, a := range c.Attempts {
			out = append(out, a.Observation)
		}
	}
	return out
}

// TestEvalRecordReplay: dawn eval --record runs a case against a real
// model's wire (OpenAI's, served by aimock) and writes what the model
// said into a cassette beside the eval file; dawn eval --replay then runs
// the case with no model and no network, as many times as asked, to the
// same observation; and a replay whose run asks the model something else
// (the prompt was edited) fails, naming the call and the message.
func TestEvalRecordReplay(t *testing.T) {
	dawnBinary(t) // built before the runs' deadlines start
	mock := startAimock(t, "testdata/record_notes.json")
	dir := writeRecordApp(t)
	recOut, playOut := t.TempDir(), t.TempDir()

	res := runDawnEnv(t, offlineEnv("OPENAI_BASE_URL="+mock+"/v1", "OPENAI_API_KEY=test"), "eval", "--app", dir, "--record", "--out", recOut)
	cassette := filepath.Join(dir, "notes", "evals", "basics.cassette.json")
	if res.code != 0 || !strings.Contains(res.stderr, "recorded "+cassette) {
		t.Fatalf("record: exit %d\n%s%s", res.code, res.stdout, res.stderr)
	}
	data, err := os.ReadFile(cassette)
	if err != nil {
		t.Fatal(err)
	}
	var cas struct {
		Cases map[string]struct {
			Calls []struct {
				Model   string `json:"model"`
				Choices []struct {
					Content string `json:"content"`
				} `json:"choices"`
			} `json:"calls"`
		} `json:"cases"`
	}
	if err := json.Unmarshal(data, &cas); err != nil {
		t.Fatal(err)
	}
	calls := cas.Cases["saves a note"].Calls
	if len(calls) != 2 || calls[0].Model != "openai:gpt-4o-mini" || len(calls[1].Choices) != 1 || calls[1].Choices[0].Content != "Saved the note in note.txt." {
		t.Fatalf("the cassette does not hold the two calls the model answered:\n%s", data)
	}

	// No model from here on: the OpenAI address is a closed port, and no key.
	noModel := offlineEnv("OPENAI_BASE_URL=http://127.0.0.1:9/v1")
	res = runDawnEnv(t, noModel, "eval", "--app", dir, "--replay", "--repeat", "3", "--out", playOut)
	if res.code != 0 || !strings.Contains(res.stderr, "--replay") {
		t.Fatalf("replay: exit %d\n%s%s", res.code, res.stdout, res.stderr)
	}
	recorded, replayed := observations(t, recOut), observations(t, playOut)
	if len(recorded) != 1 || len(replayed) != 3 {
		t.Fatalf("observations: %d recorded, %d replayed", len(recorded), len(replayed))
	}
	for i, o := range replayed {
		if !jsonEqual(t, recorded[0], o) {
			t.Errorf("replay %d observed\n%s\nthe recording observed\n%s", i+1, o, recorded[0])
		}
	}

	agent := filepath.Join(dir, "notes", "agent.md")
	text, _ := os.ReadFile(agent)
	if err := os.WriteFile(agent, []byte(strings.Replace(string(text), "You keep notes in files.", "You keep notes in files, briefly.", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	res = runDawnEnv(t, noModel, "eval", "--app", dir, "--replay")
	if res.code != 1 || !strings.Contains(res.stdout+res.stderr, "replay diverged at model call 1: message 1 (system) differs") {
		t.Fatalf("a replay of an edited prompt: exit %d, want 1 naming the call and the message:\n%s%s", res.code, res.stdout, res.stderr)
	}
}

// randomID matches the random ids (interrupts) that differ between runs.
var randomID = regexp.MustCompile(`[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`)

// jsonEqual reports whether a and b are the same JSON, random ids aside.
func jsonEqual(t *testing.T, a, b json.RawMessage) bool {
	t.Helper()
	var x, y any
	a, b = randomID.ReplaceAll(a, []byte("ID")), randomID.ReplaceAll(b, []byte("ID"))
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		t.Fatalf("not JSON: %s / %s", a, b)
	}
	return reflect.DeepEqual(x, y)
}
