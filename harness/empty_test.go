package harness

import "testing"

// TestEmptyPlanWaitsForTheModel: a plan.md with enforce: true and no
// checklist starts running with no items, so the model can write its plan
// with writeTodos (mode: parallel depends on it), instead of being done at
// once and refusing every writeTodos; a final answer to a plan that is
// still empty is accepted and ends it done.
func TestEmptyPlanWaitsForTheModel(t *testing.T) {
	s := settings()
	p, out := Start(nil, s, nil, true)
	if p.State != Running || out.Event != "" {
		t.Fatalf("empty plan after start: %s, %+v", p.State, out)
	}
	if _, err := Replace(p, s, []Proposed{{Content: "a", Status: Pending}, {Content: "b", Status: Pending}}, "plan"); err != nil {
		t.Fatalf("the model's first plan was refused: %v", err)
	}
	if p.State != Running || p.Current() != 0 {
		t.Fatalf("plan after the model's list: %+v", p)
	}

	empty, _ := Start(nil, s, nil, true)
	if out := Final(empty, s); out.Reject || empty.State != Done || out.Event != EventDone {
		t.Fatalf("final answer to an empty plan: %+v, plan %s", out, empty.State)
	}
	s.Postconditions = []string{"tests pass"}
	withPost, _ := Start(nil, s, nil, true)
	if out := Final(withPost, s); !out.Reject || withPost.State != Running {
		t.Fatalf("final answer to an empty plan with an unverified postcondition: %+v, plan %s", out, withPost.State)
	}
}
