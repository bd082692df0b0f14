package harness

import (
	"encoding/json"
	"strings"
	"testing"
)

// manual is a running manual plan of three items, the first in progress.
func manual(t *testing.T) *Plan {
	t.Helper()
	s := Settings{Advance: AdvanceManual, Budget: DefaultBudget, RetryCap: DefaultRetryCap, MaxItems: DefaultMaxItems, Corrections: DefaultCorrections}
	p, _ := Start(nil, s, []Seed{{Content: "a"}, {Content: "b"}, {Content: "c"}}, true)
	return p
}

// finishFirst finishes item a of p with writeTodos's rules and returns the
// plan as it was before.
func finishFirst(t *testing.T, p *Plan, reason string) *Plan {
	t.Helper()
	before := clonePlan(t, p)
	s := Settings{Advance: AdvanceManual, MaxItems: DefaultMaxItems}
	out, err := Replace(p, s, []Proposed{{Content: "a", Status: Completed, Evidence: "built"}, {Content: "b", Status: Pending}, {Content: "c", Status: Pending}}, reason)
	if err != nil || !out.Stop || out.Event != EventPaused {
		t.Fatalf("finishing a: %+v %v", out, err)
	}
	return before
}

func clonePlan(t *testing.T, p *Plan) *Plan {
	t.Helper()
	raw, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	var c Plan
	if err := json.Unmarshal(raw, &c); err != nil {
		t.Fatal(err)
	}
	return &c
}

func itemStatuses(p *Plan) string {
	var out []string
	for _, it := range p.Items {
		out = append(out, it.Content+"="+string(it.Status))
	}
	return strings.Join(out, ",")
}

// TestStepDetail: a manual plan pauses after a finished step with the next
// item not started, and the detail names the finished and the next item.
func TestStepDetail(t *testing.T) {
	p := manual(t)
	before := finishFirst(t, p, "the build is green")
	if !AwaitingStep(p) || itemStatuses(p) != "a=completed,b=pending,c=pending" {
		t.Fatalf("plan after a finished step: %s %s", p.State, itemStatuses(p))
	}
	d, ok := NewStepDetail(before, p)
	if !ok || d.Finished.Position != 1 || d.Finished.Evidence != "built" || d.Finished.Result != "the build is green" ||
		d.Next.Position != 2 || d.Next.Content != "b" || d.Plan.Done != 1 || d.Plan.Total != 3 || d.Plan.Revision != p.RevisionN || len(d.Decisions) != 4 {
		t.Fatalf("detail %+v ok %v", d, ok)
	}
	if _, ok := NewStepDetail(p, p); ok {
		t.Fatal("a detail with no item just finished")
	}
	running := manual(t)
	if _, ok := NewStepDetail(running, running); ok {
		t.Fatal("a detail for a plan that is not waiting")
	}
}

// TestDecideStep: each decision leaves the plan as documented.
func TestDecideStep(t *testing.T) {
	for _, tc := range []struct {
		answer          StepAnswer
		state           State
		items, note     string
		stop            bool
		event, revision string
	}{
		{StepAnswer{Decision: StepContinue}, Running, "a=completed,b=in_progress,c=pending", `go on with step 2/3 "b"`, false, "", "resumed"},
		{StepAnswer{Decision: StepSkip}, Running, "a=completed,b=skipped,c=in_progress", `skipped step 2/3 "b": go on with step 3/3 "c"`, false, "", "skipped"},
		{StepAnswer{Decision: StepRevise, Note: "add a step"}, Running, "a=completed,b=in_progress,c=pending", `revise the plan before going on: "add a step"`, false, "", "revision asked for"},
		{StepAnswer{Decision: StepCancel}, Cancelled, "a=completed,b=pending,c=pending", "", true, EventCancelled, "cancelled at a step"},
	} {
		t.Run(tc.answer.Decision, func(t *testing.T) {
			p := manual(t)
			finishFirst(t, p, "")
			out, err := DecideStep(p, tc.answer)
			if err != nil {
				t.Fatal(err)
			}
			last := p.Revisions[len(p.Revisions)-1]
			if p.State != tc.state || itemStatuses(p) != tc.items || !strings.Contains(out.Note, tc.note) || out.Stop != tc.stop || out.Event != tc.event ||
				last.Source != "person" || !strings.Contains(last.Change, tc.revision) || p.PauseReason != "" {
				t.Fatalf("plan %s %s, outcome %+v, last revision %+v", p.State, itemStatuses(p), out, last)
			}
			if _, err := DecideStep(p, tc.answer); err == nil {
				t.Fatal("a second decision on a plan no longer waiting was taken")
			}
		})
	}
	// Skipping the last item finishes the plan.
	p := manual(t)
	s := Settings{Advance: AdvanceManual, MaxItems: DefaultMaxItems}
	if _, err := Replace(p, s, []Proposed{{Content: "a", Status: Completed}, {Content: "b", Status: Completed}, {Content: "c", Status: Pending}}, ""); err != nil {
		t.Fatal(err)
	}
	out, err := DecideStep(p, StepAnswer{Decision: StepSkip})
	if err != nil || p.State != Done || out.Event != EventDone || !strings.Contains(out.Note, "give your final answer") {
		t.Fatalf("skipping the last item: %s %+v %v", p.State, out, err)
	}
}

func TestParseStepAnswer(t *testing.T) {
	for _, tc := range []struct{ payload, decision, note, err string }{
		{`"continue"`, StepContinue, "", ""},
		{`"skip"`, StepSkip, "", ""},
		{`"cancel"`, StepCancel, "", ""},
		{`{"decision":"continue"}`, StepContinue, "", ""},
		{`{"decision":"revise","note":" add tests "}`, StepRevise, "add tests", ""},
		{`"revise"`, "", "", "revise needs the person's note"},
		{`{"decision":"revise"}`, "", "", "revise needs a note"},
		{`{"decision":"skip","note":"x"}`, "", "", "a note goes only with"},
		{`"CONTINUE"`, "", "", "unknown step decision"},
		{`{"decision":"approve"}`, "", "", "unknown step decision"},
		{`{"decision":"skip","x":1}`, "", "", "a step answer must be"},
		{`[]`, "", "", "a step answer must be"},
		{`null`, "", "", "unknown step decision"},
	} {
		a, err := ParseStepAnswer(json.RawMessage(tc.payload))
		switch {
		case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
			t.Errorf("%s: err %v, want %q", tc.payload, err, tc.err)
		case tc.err == "" && (err != nil || a.Decision != tc.decision || a.Note != tc.note):
			t.Errorf("%s: %+v %v", tc.payload, a, err)
		}
	}
}

// FuzzParseStepAnswer: any payload is either a known decision (revise with
// a note, the others without) or an error.
func FuzzParseStepAnswer(f *testing.F) {
	for _, s := range []string{`"continue"`, `{"decision":"revise","note":"x"}`, `{"decision":"skip"}`, `"x"`, `{`, `null`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, payload string) {
		a, err := ParseStepAnswer(json.RawMessage(payload))
		if err != nil {
			return
		}
		switch a.Decision {
		case StepRevise:
			if a.Note == "" {
				t.Fatalf("%q: revise without a note", payload)
			}
		case StepContinue, StepSkip, StepCancel:
			if a.Note != "" {
				t.Fatalf("%q: a note with %s", payload, a.Decision)
			}
		default:
			t.Fatalf("%q: decision %q", payload, a.Decision)
		}
	})
}
