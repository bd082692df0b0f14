package sandbox_test

import (
	"encoding/json"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dawn-go/dawn/dawntest"
	"github.com/dawn-go/dawn/internal/apptest"
	"github.com/dawn-go/dawn/internal/docstext"
	"github.com/dawn-go/dawn/stream"
)

// releasePlan is a harness-owned plan.md whose one item the harness
// checks with a command.
const releasePlan = "---\nenforce: true\n---\n- [ ] Write the release notes\n  - verify: test -s notes/release.md\n"

// verifiedPlan is GET /threads/:id/plan as the wire carries it.
type verifiedPlan struct {
	State string `json:"state"`
	Items []struct {
		Content      string `json:"content"`
		Status       string `json:"status"`
		Evidence     string `json:"evidence"`
		Attempts     int    `json:"attempts"`
		Verification *struct {
			VerifiedBy string `json:"verified_by"`
			Passed     bool   `json:"passed"`
			ExitCode   *int   `json:"exit_code"`
			Output     string `json:"output"`
			Claim      string `json:"claim"`
		} `json:"verification"`
	} `json:"items"`
}

func claim(evidence string) map[string]any {
	return map[string]any{
		"todos":  []map[string]string{{"content": "Write the release notes", "status": "completed", "evidence": evidence}},
		"reason": "finished",
	}
}

// TestCommandVerifierInSandbox: a plan item's `verify:` command runs in
// the thread's real sandbox. The model claims the item done before the
// file exists: the command fails in the box, the item stays in_progress
// and the model reads the failure as the reason. The model then writes
// the file (with writeFile, or with a command in the box) and claims
// again: the command passes and its run is the item's evidence.
func TestCommandVerifierInSandbox(t *testing.T) {
	writers := []writer{
		{"writeFile", "writeFile", map[string]string{"path": "notes/release.md", "content": "v1.2: faster plans\n"}},
		{"runBash", "runBash", map[string]string{"command": "mkdir -p notes && echo 'v1.2: faster plans' > notes/release.md"}},
	}
	for _, p := range providers {
		// The dawn.yaml docs/harness.md shows, on each provider.
		config := strings.Replace(docsSandbox(t), "  provider: local\n", p.yaml, 1)
		for _, w := range writers {
			t.Run(p.name+"/"+w.name, func(t *testing.T) {
				p.require(t)
				verifyInBox(t, config, w)
			})
		}
	}
}

// writer is the model's tool call that writes the release notes.
type writer struct {
	name, tool string
	args       map[string]string
}

// verifyInBox runs the false claim, the work by w and the true claim on an
// app whose dawn.yaml is config.
func verifyInBox(t *testing.T, config string, w writer) {
	dir := apptest.WriteApp(t, map[string]string{
		"dawn.yaml":        config,
		"release/agent.md": "---\nworkspace: thread\n---\nYou ship releases.\n",
		"release/plan.md":  releasePlan,
	})
	claimed := make(chan struct{})
	release := sync.OnceFunc(func() { close(claimed) })
	defer release()
	model := dawntest.Script().
		CallTool("writeTodos", claim("I wrote the notes")).
		Wait(claimed).CallTool(w.tool, w.args).
		CallTool("writeTodos", claim("notes/release.md is written")).
		Reply("Released.")
	h := apptest.New(t, dir, model, apptest.Options{})
	base := h.Serve(t)

	// The run is read once the test has seen its plan mid-run.
	type posted struct {
		resp *http.Response
		err  error
	}
	started := make(chan posted, 1)
	go func() {
		resp, err := http.Post(base+"/threads/rel/runs/stream", "application/json", strings.NewReader(apptest.RunBody("/release", "release v1.2")))
		started <- posted{resp, err}
	}()

	// Between the false claim and the model's next turn the thread's plan
	// holds the failed verification.
	failed := waitForPlan(t, base, "rel", func(p verifiedPlan) bool {
		return len(p.Items) == 1 && p.Items[0].Verification != nil
	})
	it := failed.Items[0]
	v := it.Verification
	if it.Status != "in_progress" || it.Attempts != 1 || v.Passed || v.ExitCode == nil || *v.ExitCode != 1 ||
		v.VerifiedBy != "command: test -s notes/release.md" || v.Claim != "I wrote the notes" {
		t.Fatalf("after the false claim: item %+v, verification %+v; want in_progress after one failed run of the command (exit 1)", it, *v)
	}
	release()

	run := <-started
	if run.err != nil {
		t.Fatal(run.err)
	}
	checkClaims(t, apptest.ReadSSE(t, run.resp))
	checkVerified(t, base)
}

// checkClaims checks the run's stream: the false claim's result gives the
// model the verifier's failure, the true one passes, and the run ends with
// the model's answer.
func checkClaims(t *testing.T, evs []stream.Event) {
	t.Helper()
	results := resultsOf(t, evs, "writeTodos")
	if len(results) != 2 {
		t.Fatalf("writeTodos results = %q, want 2 (%s)", results, dawntest.Types(evs))
	}
	if !strings.Contains(results[0], "stay in_progress") || !strings.Contains(results[0], "failed verification by command: test -s notes/release.md (exit 1)") {
		t.Fatalf("the model is not given the verifier's failure as the reason: %s", results[0])
	}
	if strings.Contains(results[1], "did not pass") {
		t.Fatalf("the second claim failed its verifier: %s", results[1])
	}
	if last := evs[len(evs)-1]; last.Type != "done" || !strings.Contains(string(last.Data), "Released.") {
		t.Fatalf("the run did not finish with the model's answer: %s %s", last.Type, last.Data)
	}
}

// checkVerified checks the stored plan: done, its item completed with the
// command's passing run as the evidence.
func checkVerified(t *testing.T, base string) {
	t.Helper()
	var done verifiedPlan
	if code := apptest.GetJSON(t, base+"/threads/rel/plan", &done); code != http.StatusOK || len(done.Items) != 1 {
		t.Fatalf("GET /threads/rel/plan = %d, %+v", code, done)
	}
	it := done.Items[0]
	v := it.Verification
	if done.State != "done" || it.Status != "completed" || v == nil || !v.Passed || v.ExitCode == nil || *v.ExitCode != 0 ||
		v.VerifiedBy != "command: test -s notes/release.md" || v.Claim != "notes/release.md is written" || it.Attempts != 1 {
		t.Fatalf("after the work: plan %s, item %+v, verification %+v; want done, completed and verified by the command with exit 0", done.State, it, v)
	}
	if it.Evidence != "verified by command: test -s notes/release.md (exit 0)" {
		t.Fatalf("evidence = %q, want the harness's verification", it.Evidence)
	}
}

// docsSandbox is the dawn.yaml of command verifiers in docs/harness.md.
func docsSandbox(t *testing.T) string {
	t.Helper()
	blocks, err := docstext.Blocks("..")
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range blocks {
		if filepath.Base(b.File) == "harness.md" && strings.HasPrefix(b.Marker, "not run: a sandbox for command verifiers") {
			return b.Text
		}
	}
	t.Fatal("docs/harness.md has no sandbox block for command verifiers")
	return ""
}

// waitForPlan polls GET /threads/:id/plan until ok holds for it.
func waitForPlan(t *testing.T, base, thread string, ok func(verifiedPlan) bool) verifiedPlan {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		var p verifiedPlan
		if apptest.GetJSON(t, base+"/threads/"+thread+"/plan", &p) == http.StatusOK && ok(p) {
			return p
		}
	}
	t.Fatalf("timed out waiting for the plan of %s", thread)
	return verifiedPlan{}
}

// resultsOf are the outputs of the tool_result events of the tool name.
func resultsOf(t *testing.T, events []stream.Event, name string) []string {
	t.Helper()
	var out []string
	for _, e := range events {
		var d struct {
			Name   string          `json:"name"`
			Output json.RawMessage `json:"output"`
		}
		if e.Type == stream.TypeToolResult {
			if err := json.Unmarshal(e.Data, &d); err != nil {
				t.Fatal(err)
			}
			if d.Name == name {
				out = append(out, string(d.Output))
			}
		}
	}
	return out
}
