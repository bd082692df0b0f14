package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/dawn-go/dawn/capabilities"
	"github.com/dawn-go/dawn/internal/docstext"
)

// passingCases are eval cases writeRunApp's route passes on the offline
// model.
const passingCases = `cases:
  - name: plans and answers
    input:
      message: Where is my invoice?
      params: {tenant: acme}
    expect:
      plan_completed: true
      tools_called: [writeTodos]
      tools_not_called: [task]
      answer_contains: [worked through 3 plan items]
      answer_matches: 'invoice\?'
      max_turns: 5
`

// failingCase expects an answer the offline model never gives.
const failingCase = `cases:
  - name: mentions refunds
    input:
      message: Where is my invoice?
      params: {tenant: acme}
    expect:
      plan_completed: true
      answer_contains: [refund]
`

// writeEvalApp writes writeRunApp's app with eval files (name to text)
// beside its route.
func writeEvalApp(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := writeRunApp(t)
	evals := filepath.Join(dir, "support", "[tenant]", "evals")
	if err := os.MkdirAll(evals, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(evals, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func TestEvalPasses(t *testing.T) {
	dir := writeEvalApp(t, map[string]string{"basics.yaml": passingCases})
	code, stdout, stderr := runCLI(t, nil, "eval", "--app", dir, "--repeat", "3", "--concurrency", "2")
	if code != ExitOK {
		t.Fatalf("eval exited %d, want 0\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	for _, want := range []string{"plans and answers (/support/[tenant])  (all)", "3/3", "answer_matches", "TOTAL"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("the table lacks %q:\n%s", want, stdout)
		}
	}
	if !strings.Contains(stderr, "[3/3] /support/[tenant] plans and answers") {
		t.Errorf("stderr shows no progress:\n%s", stderr)
	}
}

// TestEvalFailingExpectation: a case whose expectation fails makes eval
// exit 1 naming the case and the expectation, and the outputs say so too.
func TestEvalFailingExpectation(t *testing.T) {
	dir := writeEvalApp(t, map[string]string{"basics.yaml": passingCases, "refunds.yaml": failingCase})
	out := filepath.Join(t.TempDir(), "out")
	code, stdout, stderr := runCLI(t, nil, "eval", "--app", dir, "--out", out)
	if code != ExitProblem {
		t.Fatalf("eval exited %d, want 1\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	want := `FAIL case "mentions refunds" (/support/[tenant], ` + filepath.Join(dir, "support", "[tenant]", "evals", "refunds.yaml") + `:2): answer_contains passed 0/1: the answer lacks "refund"`
	if !strings.Contains(stderr, want) {
		t.Errorf("stderr does not name the case and expectation:\nwant %s\ngot:\n%s", want, stderr)
	}
	if strings.Contains(stderr, `"plans and answers"`) {
		t.Errorf("stderr names the passing case as failing:\n%s", stderr)
	}
	report := readEvalJSON(t, filepath.Join(out, evalJSONFile))
	if report.Runs != 2 || report.Passed != 1 || len(report.Cases) != 2 {
		t.Errorf("eval.json: runs %d, passed %d, cases %d; want 2, 1, 2", report.Runs, report.Passed, len(report.Cases))
	}
	suites := readJUnit(t, filepath.Join(out, evalJUnitFile))
	if suites.Tests != 2 || suites.Failures != 1 || len(suites.Suites) != 1 {
		t.Fatalf("junit.xml: tests %d, failures %d, suites %d; want 2, 1, 1", suites.Tests, suites.Failures, len(suites.Suites))
	}
	var failed []string
	for _, c := range suites.Suites[0].Cases {
		if c.Failure != nil {
			failed = append(failed, c.Name+": "+c.Failure.Message)
		}
	}
	if len(failed) != 1 || failed[0] != "mentions refunds #1: failed: answer_contains" {
		t.Errorf("junit.xml failures = %q, want the refunds case failing answer_contains", failed)
	}
}

// TestEvalMinPass: --min-pass 0.5 accepts a case that passes one run in
// two; the default (1) does not.
func TestEvalMinPass(t *testing.T) {
	half := strings.Replace(failingCase, "answer_contains: [refund]", "answer_contains: [invoice]", 1)
	dir := writeEvalApp(t, map[string]string{"a.yaml": half})
	if code, _, stderr := runCLI(t, nil, "eval", "--app", dir, "--min-pass", "0.5"); code != ExitOK {
		t.Errorf("eval --min-pass 0.5 exited %d:\n%s", code, stderr)
	}
	if code, _, _ := runCLI(t, nil, "eval", "--app", dir, "--min-pass", "2"); code != ExitUsage {
		t.Errorf("eval --min-pass 2 exited %d, want 2", code)
	}
}

// TestEvalBadFile: a broken eval file stops eval and fails dawn check, each
// naming the file, the case and the field.
func TestEvalBadFile(t *testing.T) {
	bad := strings.Replace(passingCases, "max_turns: 5", "max_turns: many", 1)
	dir := writeEvalApp(t, map[string]string{"bad.yaml": bad})
	want := filepath.Join(dir, "support", "[tenant]", "evals", "bad.yaml") + `:12: case "plans and answers": expect.max_turns: must be a whole number above 0`
	code, _, stderr := runCLI(t, nil, "eval", "--app", dir)
	if code != ExitProblem || !strings.Contains(stderr, want) {
		t.Errorf("eval exited %d, want 1 with %s\nstderr:\n%s", code, want, stderr)
	}
	code, stdout, _ := runCLI(t, nil, "check", "--app", dir)
	if code != ExitProblem || !strings.Contains(stdout, "error: "+want) {
		t.Errorf("check exited %d, want 1 with %s\nstdout:\n%s", code, want, stdout)
	}
}

// evalReport is what the tests read of eval.json.
type evalReport struct {
	Runs   int `json:"runs"`
	Passed int `json:"passed"`
	Cases  []struct {
		Name         string `json:"name"`
		Expectations []struct {
			Name   string `json:"name"`
			Passed int    `json:"passed"`
		} `json:"expectations"`
	} `json:"cases"`
}

func readEvalJSON(t *testing.T, path string) evalReport {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var r evalReport
	if err := json.Unmarshal(data, &r); err != nil {
		t.Fatalf("%s is not JSON: %v", path, err)
	}
	return r
}

// junitSuites is the standard JUnit XML shape CI systems read.
type junitSuites struct {
	XMLName  xml.Name `xml:"testsuites"`
	Tests    int      `xml:"tests,attr"`
	Failures int      `xml:"failures,attr"`
	Suites   []struct {
		Name     string `xml:"name,attr"`
		Tests    int    `xml:"tests,attr"`
		Failures int    `xml:"failures,attr"`
		Cases    []struct {
			Name      string `xml:"name,attr"`
			ClassName string `xml:"classname,attr"`
			Time      string `xml:"time,attr"`
			Failure   *struct {
				Message string `xml:"message,attr"`
				Type    string `xml:"type,attr"`
				Text    string `xml:",chardata"`
			} `xml:"failure"`
		} `xml:"testcase"`
	} `xml:"testsuite"`
}

func readJUnit(t *testing.T, path string) junitSuites {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var s junitSuites
	if err := xml.Unmarshal(data, &s); err != nil {
		t.Fatalf("%s is not JUnit XML: %v", path, err)
	}
	return s
}

// TestEvalModelFlag: --model runs every route on that model instead of
// the one its agent.md names (here one that cannot start without a key).
func TestEvalModelFlag(t *testing.T) {
	dir := writeEvalApp(t, map[string]string{"basics.yaml": passingCases})
	agent := filepath.Join(dir, "support", "[tenant]", "agent.md")
	if err := os.WriteFile(agent, []byte("---\ndescription: Support.\nmodel: openai:gpt-4o-mini\n---\nYou answer support questions.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, stderr := runCLI(t, nil, "eval", "--app", dir)
	if code != ExitProblem || !strings.Contains(stderr, "run passed 0/1") {
		t.Errorf("eval on the route's own model (no key) exited %d, want 1 with the run failing:\n%s", code, stderr)
	}
	code, _, stderr = runCLI(t, nil, "eval", "--app", dir, "--model", "offline")
	if code != ExitOK || !strings.Contains(stderr, "model: offline for every case without a model: of its own (--model)") {
		t.Errorf("eval --model offline exited %d, want 0:\n%s", code, stderr)
	}
}

// docsBlock returns the text of the docs block marked <!-- marker -->.
func docsBlock(t *testing.T, marker string) string {
	t.Helper()
	blocks, err := docstext.Blocks("../..")
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range blocks {
		if b.Marker == marker {
			return b.Text
		}
	}
	t.Fatalf("no docs block is marked %s", marker)
	return ""
}

// TestEvalInterruptsAndScriptedModel runs docs/evaluate.md's case file
// and script on a route whose tool needs approval: cases answer its
// interrupt (approve, deny, edit), expect it left waiting, and mix the
// file's scripted model with the offline one.
func TestEvalInterruptsAndScriptedModel(t *testing.T) {
	dir := t.TempDir()
	route := filepath.Join(dir, "refunds")
	files := map[string]string{
		"agent.md":                 "---\ndescription: Refunds.\napprove: [issueRefund]\n---\nYou refund orders.\n",
		"evals/refund.yaml":        docsBlock(t, "docs:eval-answers"),
		"evals/refund.script.yaml": docsBlock(t, "docs:eval-script"),
	}
	for name, text := range files {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(route, name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(route, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var refunded []string
	issue := capabilities.Func("issueRefund", "Refund an order.", func(_ context.Context, in struct {
		Order  string  `json:"order"`
		Amount float64 `json:"amount"`
	}) (string, error) {
		refunded = append(refunded, fmt.Sprintf("%s:%g", in.Order, in.Amount))
		return "refunded", nil
	})
	var out, errOut bytes.Buffer
	code := Run([]string{"eval", "--app", dir, "--concurrency", "1"}, Config{
		Stdout: &out, Stderr: &errOut, Env: func(string) string { return "" },
		Tools: []capabilities.AppTool{{Tool: issue}}, ToolsKnown: true,
	})
	if code != ExitOK {
		t.Fatalf("eval exited %d, want 0\nstdout:\n%s\nstderr:\n%s", code, out.String(), errOut.String())
	}
	for _, want := range []string{"approved", "denied", "edited", "waits for a person", "offline", "interrupt"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("the table lacks %q:\n%s", want, out.String())
		}
	}
	// The scripted cases ran the tool once approved (30) and once edited
	// (5); denied and waiting did not run it.
	scripted := slices.DeleteFunc(refunded, func(s string) bool { return !strings.HasPrefix(s, "42:") })
	slices.Sort(scripted)
	if strings.Join(scripted, " ") != "42:30 42:5" {
		t.Errorf("issueRefund ran with %v, want once approved (30) and once edited (5)", refunded)
	}
}

// TestEvalModelFlagNamesItsModel: a run on --model fails naming that
// model, not the route's.
func TestEvalModelFlagNamesItsModel(t *testing.T) {
	dir := writeEvalApp(t, map[string]string{"basics.yaml": failingCase})
	script := filepath.Join(t.TempDir(), "short.yaml")
	if err := os.WriteFile(script, []byte("turns: [{when: {user: nothing-like-this}, text: hi}]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, stderr := runCLI(t, nil, "eval", "--app", dir, "--model", "script:"+script)
	if code != ExitProblem || !strings.Contains(stderr, `model "script:`+script) || strings.Contains(stderr, "model offline") {
		t.Errorf("eval --model script exited %d; want 1 with errors naming the script model:\n%s", code, stderr)
	}
}
