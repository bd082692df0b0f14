package harness_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/dawn-go/dawn/capabilities"
	"github.com/dawn-go/dawn/harness"
	"github.com/dawn-go/dawn/internal/apptest"
	"github.com/dawn-go/dawn/internal/tokens"
	"github.com/dawn-go/dawn/markers"
	"github.com/dawn-go/dawn/planning"
	"github.com/tmc/langchaingo/llms"
)

// prematureTask is one scripted task of the premature-finalization
// measurement: two items, each with the tool that does its work and the
// check that proves it.
type prematureTask struct {
	name  string
	items [2]string
	work  [2]string // the tools that do each item's work
}

var prematureTasks = []prematureTask{
	{"release", [2]string{"Run the tests", "Write the release notes"}, [2]string{"runTests", "writeNotes"}},
	{"migrate", [2]string{"Migrate the database", "Update the runbook"}, [2]string{"runMigration", "editRunbook"}},
	{"build", [2]string{"Build the image", "Record the changelog"}, [2]string{"buildImage", "editChangelog"}},
}

// measureModel is a scripted model that works a task's items: lazy, it
// claims every item done ("tests pass", "notes written") without calling
// the work tools; diligent, it calls each work tool first. It records each
// request's estimated input tokens.
type measureModel struct {
	task  prematureTask
	lazy  bool
	mu    sync.Mutex
	calls int
	input int
}

func (m *measureModel) GenerateContent(_ context.Context, msgs []llms.MessageContent, options ...llms.CallOption) (*llms.ContentResponse, error) {
	var o llms.CallOptions
	for _, opt := range options {
		opt(&o)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.calls++
	var b strings.Builder
	for _, msg := range msgs {
		for _, p := range msg.Parts {
			fmt.Fprint(&b, p)
		}
	}
	tools, _ := json.Marshal(o.Tools)
	m.input += tokens.EstimateText("gpt-4o", b.String()) + tokens.EstimateText("gpt-4o", string(tools))
	planned := slices.ContainsFunc(o.Tools, func(t llms.Tool) bool { return t.Function != nil && t.Function.Name == "writeTodos" })
	done := 0
	for _, msg := range msgs {
		for _, p := range msg.Parts {
			if r, ok := p.(llms.ToolCallResponse); ok && slices.Contains(m.task.work[:], r.Name) {
				done++
			}
		}
	}
	last := msgs[len(msgs)-1] // the last turn, before the plan's state block
	for i := len(msgs) - 1; i > 0 && last.Role == llms.ChatMessageTypeSystem; i-- {
		last = msgs[i-1]
	}
	afterClaim := false
	for _, p := range last.Parts {
		if r, ok := p.(llms.ToolCallResponse); ok && r.Name == "writeTodos" {
			afterClaim = true
		}
	}
	switch {
	case !m.lazy && done < 2:
		return call(m.task.work[done], map[string]any{}), nil
	case planned && !afterClaim:
		evidence := [2]string{"tests pass", "notes written"}
		todos := []map[string]string{}
		for i, it := range m.task.items {
			todos = append(todos, map[string]string{"content": it, "status": "completed", "evidence": evidence[i]})
		}
		return call("writeTodos", map[string]any{"todos": todos, "reason": "all done"}), nil
	}
	return reply("Done: tests pass and notes written."), nil
}

func (m *measureModel) Call(ctx context.Context, prompt string, options ...llms.CallOption) (string, error) {
	return llms.GenerateFromSinglePrompt(ctx, m, prompt, options...)
}

func call(name string, args any) *llms.ContentResponse {
	raw, _ := json.Marshal(args)
	return &llms.ContentResponse{Choices: []*llms.ContentChoice{{ToolCalls: []llms.ToolCall{{
		ID: "call_" + name, Type: "function", FunctionCall: &llms.FunctionCall{Name: name, Arguments: string(raw)},
	}}}}}
}

// prematureOutcome is one run of the measurement.
type prematureOutcome struct {
	accepted bool // the run ended with the model's answer standing
	workDone bool
	plan     harness.State
	calls    int
	input    int
}

// runPremature runs task t on a route configured by mode ("off": no plan,
// "plans": a harness plan taking evidence on trust, "verifiers": the same
// plan with a verifier per item), with a lazy or diligent model.
func runPremature(t *testing.T, task prematureTask, mode string, lazy bool) prematureOutcome {
	t.Helper()
	work := t.TempDir()
	files := map[string]string{"job/agent.md": "You do the job.", "job/shell": ""}
	switch mode {
	case "plans":
		files["job/plan.md"] = fmt.Sprintf("---\nenforce: true\nevidence: required\n---\n- [ ] %s\n- [ ] %s\n", task.items[0], task.items[1])
	case "verifiers":
		files["job/plan.md"] = fmt.Sprintf("---\nenforce: true\nevidence: required\n---\n- [ ] %s\n  - verify: test -f %s.done\n- [ ] %s\n  - verify: tool %sDone\n", task.items[0], task.work[0], task.items[1], task.work[1])
	}
	dir := apptest.WriteApp(t, files)
	var did [2]atomic.Bool
	var tools []capabilities.AppTool
	for i, name := range task.work {
		tools = append(tools, capabilities.AppTool{Tool: capabilities.Func(name, "does the work", func(context.Context, struct{}) (string, error) {
			did[i].Store(true)
			return "done", os.WriteFile(filepath.Join(work, name+".done"), nil, 0o644)
		})}, capabilities.AppTool{Tool: capabilities.Func(name+"Done", "checks the work", func(context.Context, struct{}) (string, error) {
			if !did[i].Load() {
				return "", fmt.Errorf("%s has not run", name)
			}
			return "ok", nil
		})})
	}
	m := &measureModel{task: task, lazy: lazy}
	h := apptest.New(t, dir, m, apptest.Options{Tools: tools, Markers: append(markers.All(), shellMarker{dir: work})})
	res := h.Run(t, "t-"+task.name, "/job", "do the job")
	out := prematureOutcome{workDone: did[0].Load() && did[1].Load(), calls: m.calls, input: m.input}
	if p, err := planning.DecodePlan(res.Values); err == nil && p != nil {
		out.plan = p.State
	}
	out.accepted = res.Err == nil && (out.plan == "" || out.plan == harness.Done)
	return out
}

// TestPrematureFinalization measures the seed's exercise: a model that
// claims "tests pass" and "notes written" without doing either is
// accepted without the harness, accepted with evidence taken on trust,
// and caught by verifiers; a model that does the work finishes in every
// configuration, and the table shows what each costs (model requests and
// estimated input tokens per task). Run it with -v to see the table.
func TestPrematureFinalization(t *testing.T) {
	modes := []string{"off", "plans", "verifiers"}
	t.Logf("%-8s %-10s %-9s %-9s %-10s %6s %8s", "task", "mode", "model", "accepted", "plan", "calls", "input")
	for _, task := range prematureTasks {
		for _, mode := range modes {
			for _, lazy := range []bool{true, false} {
				o := runPremature(t, task, mode, lazy)
				kind := "diligent"
				if lazy {
					kind = "lazy"
				}
				t.Logf("%-8s %-10s %-9s %-9v %-10s %6d %8d", task.name, mode, kind, o.accepted, o.plan, o.calls, o.input)
				switch {
				case lazy && mode != "verifiers" && (!o.accepted || o.workDone):
					t.Errorf("%s %s: the lazy model's claim was not accepted (%+v)", task.name, mode, o)
				case lazy && mode == "verifiers" && o.accepted:
					t.Errorf("%s: the verifiers accepted the lazy model's claim (%+v)", task.name, o)
				case !lazy && (!o.accepted || !o.workDone):
					t.Errorf("%s %s: the diligent model did not finish (%+v)", task.name, mode, o)
				}
			}
		}
	}
}
