package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/dawn-go/dawn/thread"
)

// exchange runs one exchange on a thread as the runner writes it: a run
// whose first step adds the question and sets the plan, and whose second
// adds the answer; it returns the run's last checkpoint id.
func exchange(t *testing.T, s Store, threadID, runID, from, question, answer, plan string) string {
	t.Helper()
	ctx := context.Background()
	cp, err := beginRun(ctx, s, Run{ID: runID, ThreadID: threadID, Route: "/r", Checkpoint: from})
	must(t, err)
	values := thread.State{"todos": json.RawMessage(plan)}
	must(t, s.SaveStep(ctx, Step{ThreadID: threadID, RunID: runID, Route: "/r", Step: cp.Step + 1,
		Append: []thread.Message{{Role: thread.RoleUser, Content: question}}, Values: values}))
	must(t, s.SaveStep(ctx, Step{ThreadID: threadID, RunID: runID, Route: "/r", Step: cp.Step + 2,
		Append: []thread.Message{{Role: thread.RoleAssistant, Content: answer}}, Values: values,
		Finish: &Finish{Status: RunSuccess}}))
	return CheckpointID(threadID, cp.Step+2)
}

// contents lists the contents of msgs.
func contents(msgs []thread.Message) []string {
	out := make([]string, len(msgs))
	for i, m := range msgs {
		out[i] = m.Content
	}
	return out
}

func TestCheckpointID(t *testing.T) {
	for _, step := range []int{1, 2, 255, 1 << 20, 1<<40 + 3} {
		id := CheckpointID("th", step)
		if got, ok := ParseCheckpointID("th", id); !ok || got != step {
			t.Errorf("ParseCheckpointID(%s) = %d, %v, want %d", id, got, ok, step)
		}
		if _, ok := ParseCheckpointID("other", id); ok {
			t.Errorf("checkpoint %s of th parses as one of thread other", id)
		}
	}
	if CheckpointID("th", 2) <= CheckpointID("th", 1) {
		t.Error("checkpoint ids do not sort by step")
	}
	for _, bad := range []string{"", "x", CheckpointID("th", 0)} {
		if _, ok := ParseCheckpointID("th", bad); ok {
			t.Errorf("ParseCheckpointID(%q) is a checkpoint", bad)
		}
	}
}

// TestHistoryAndForks: every step is kept; a run from an earlier
// checkpoint starts a new branch with the messages and plan of that point,
// the old branch stays readable, and message origins tell the branches'
// own messages apart.
func TestHistoryAndForks(t *testing.T) {
	eachKind(t, func(t *testing.T, s Store) {
		ctx := context.Background()
		_, err := s.CreateThread(ctx, "th", nil)
		must(t, err)
		if h, err := s.History(ctx, "th", HistoryQuery{}); err != nil || len(h) != 0 {
			t.Fatalf("History of a new thread = %v, %v, want none", h, err)
		}
		planA, planB := `[{"content":"a","status":"pending"}]`, `[{"content":"b","status":"completed"}]`
		first := exchange(t, s, "th", "run-1", "", "q1", "a1", planA)
		exchange(t, s, "th", "run-2", "", "q2", "a2", planB)
		exchange(t, s, "th", "run-3", "", "q3", "a3", planB)

		h, err := s.History(ctx, "th", HistoryQuery{})
		must(t, err)
		if len(h) != 6 || h[0].Step != 6 || h[5].Step != 1 || h[0].ParentID != h[1].ID || h[5].ParentID != "" {
			t.Fatalf("history steps %v", steps(h))
		}
		if got := contents(h[0].Messages); !slices.Equal(got, []string{"q1", "a1", "q2", "a2", "q3", "a3"}) {
			t.Fatalf("latest checkpoint's messages %v", got)
		}
		page, err := s.History(ctx, "th", HistoryQuery{Limit: 2, Before: h[1].ID})
		must(t, err)
		if len(page) != 2 || page[0].Step != 4 || page[1].Step != 3 {
			t.Fatalf("a page before step 5: %v", steps(page))
		}

		regen := checkFork(t, s, first, planA, planB)
		checkForkOfFork(t, s, regen)
		checkBadForks(t, s, first)
	})
}

// checkFork regenerates the second answer of thread th: a fork from the
// checkpoint first, after the first exchange, where the plan was planA.
// It returns the fork's end.
func checkFork(t *testing.T, s Store, first, planA, planB string) string {
	t.Helper()
	ctx := context.Background()
	regen := exchange(t, s, "th", "run-4", first, "q2", "a2 again", planA)
	latest, err := s.Latest(ctx, "th")
	must(t, err)
	if got := contents(latest.Messages); !slices.Equal(got, []string{"q1", "a1", "q2", "a2 again"}) {
		t.Fatalf("messages after the fork %v", got)
	}
	if latest.ID != regen || latest.Step != 8 || latest.Head != 8 {
		t.Errorf("latest after the fork: id %s step %d head %d, want %s, 8, 8", latest.ID, latest.Step, latest.Head, regen)
	}
	if latest.Origins == nil || latest.Origins[0] != 0 || latest.Origins[1] != 0 || latest.Origins[2] == 0 || latest.Origins[3] != latest.Origins[2] {
		t.Errorf("origins after the fork %v: the shared messages keep 0, the branch's own have its key", latest.Origins)
	}
	h, err := s.History(ctx, "th", HistoryQuery{})
	must(t, err)
	if len(h) != 8 || h[1].ParentID != first || h[0].ParentID != h[1].ID {
		t.Fatalf("history after the fork %v (parent of 7 is %s, want %s)", steps(h), h[1].ParentID, first)
	}
	old := h[2] // step 6: the old branch's end
	if got := contents(old.Messages); !slices.Equal(got, []string{"q1", "a1", "q2", "a2", "q3", "a3"}) || old.Origins != nil {
		t.Errorf("the old branch's last checkpoint reads %v, origins %v", got, old.Origins)
	}
	if string(h[0].Values["todos"]) != planA || string(old.Values["todos"]) != planB {
		t.Errorf("plans: new branch %s, old %s", h[0].Values["todos"], old.Values["todos"])
	}
	return regen
}

// checkForkOfFork forks again, from the first step of the branch that
// ends at regen: the new branch inherits the shared messages and the
// branch's own question.
func checkForkOfFork(t *testing.T, s Store, regen string) {
	t.Helper()
	ctx := context.Background()
	h, err := s.History(ctx, "th", HistoryQuery{})
	must(t, err)
	_, err = beginRun(ctx, s, Run{ID: "run-5", ThreadID: "th", Route: "/r", Checkpoint: h[1].ID})
	must(t, err)
	must(t, s.SaveStep(ctx, Step{ThreadID: "th", RunID: "run-5", Route: "/r", Step: 9,
		Append: []thread.Message{{Role: thread.RoleAssistant, Content: "a2 third"}}, Values: h[1].Values,
		Finish: &Finish{Status: RunSuccess}}))
	latest, err := s.Latest(ctx, "th")
	must(t, err)
	if got := contents(latest.Messages); !slices.Equal(got, []string{"q1", "a1", "q2", "a2 third"}) {
		t.Fatalf("messages after the second fork %v", got)
	}
	if latest.Origins[2] != h[0].Origins[2] || latest.Origins[3] == h[0].Origins[3] {
		t.Errorf("origins %v: q2 comes from the first fork (%v), the answer is the new branch's own", latest.Origins, h[0].Origins)
	}
	again, err := s.CheckpointAt(ctx, "th", regen)
	must(t, err)
	if got := contents(again.Messages); !slices.Equal(got, []string{"q1", "a1", "q2", "a2 again"}) {
		t.Errorf("the first fork's end reads %v", got)
	}
}

// checkBadForks: a run from a checkpoint the thread does not have fails,
// and leaves no thread behind.
func checkBadForks(t *testing.T, s Store, first string) {
	t.Helper()
	ctx := context.Background()
	for _, bad := range []string{"nope", CheckpointID("th", 99), CheckpointID("other", 1)} {
		if _, err := beginRun(ctx, s, Run{ID: "run-bad-" + bad, ThreadID: "th", Route: "/r", Checkpoint: bad}); !errors.Is(err, ErrNotFound) {
			t.Errorf("a run from checkpoint %q: %v, want ErrNotFound", bad, err)
		}
		if _, err := s.CheckpointAt(ctx, "th", bad); !errors.Is(err, ErrNotFound) {
			t.Errorf("CheckpointAt(%q): %v, want ErrNotFound", bad, err)
		}
	}
	if _, err := beginRun(ctx, s, Run{ID: "run-new", ThreadID: "fresh", Route: "/r", Checkpoint: first}); !errors.Is(err, ErrNotFound) {
		t.Errorf("a run from a checkpoint on a new thread: %v, want ErrNotFound", err)
	}
	if _, err := s.GetThread(ctx, "fresh"); !errors.Is(err, ErrNotFound) {
		t.Errorf("the failed run left thread fresh behind: %v", err)
	}
}

func steps(h []Checkpoint) []int {
	out := make([]int, len(h))
	for i, cp := range h {
		out[i] = cp.Step
	}
	return out
}

// TestUpdateStateAndCopy: an update is a checkpoint on the current branch
// that the next run goes on from; a copy has the same state and history.
func TestUpdateStateAndCopy(t *testing.T) {
	eachKind(t, func(t *testing.T, s Store) {
		ctx := context.Background()
		first := exchange(t, s, "th", "run-1", "", "q1", "a1", `[]`)
		exchange(t, s, "th", "run-2", "", "q2", "a2", `[]`)
		cp, err := s.UpdateState(ctx, StateUpdate{ThreadID: "th", Merge: func(cp Checkpoint) ([]thread.Message, thread.State, error) {
			v := cp.Values.Clone()
			v["todos"] = json.RawMessage(`[{"content":"edited","status":"pending"}]`)
			return []thread.Message{{Role: thread.RoleUser, Content: "note"}}, v, nil
		}})
		must(t, err)
		if cp.Step != 5 || cp.ID != CheckpointID("th", 5) || len(cp.Messages) != 5 || string(cp.Values["todos"]) != `[{"content":"edited","status":"pending"}]` {
			t.Fatalf("after the update: step %d, %d messages, todos %s", cp.Step, len(cp.Messages), cp.Values["todos"])
		}
		h, err := s.History(ctx, "th", HistoryQuery{Limit: 1})
		must(t, err)
		if h[0].Source != SourceUpdate || h[0].ParentID != CheckpointID("th", 4) {
			t.Errorf("the update's checkpoint: source %q parent %s", h[0].Source, h[0].ParentID)
		}
		exchange(t, s, "th", "run-3", "", "q3", "a3", `[]`)

		// An update of an earlier checkpoint starts a branch there.
		cp, err = s.UpdateState(ctx, StateUpdate{ThreadID: "th", Checkpoint: first, Merge: func(cp Checkpoint) ([]thread.Message, thread.State, error) {
			return []thread.Message{{Role: thread.RoleUser, Content: "q2 edited"}}, cp.Values, nil
		}})
		must(t, err)
		if got := contents(cp.Messages); !slices.Equal(got, []string{"q1", "a1", "q2 edited"}) {
			t.Errorf("an update from the first exchange: %v", got)
		}
		mergeErr := fmt.Errorf("no")
		if _, err := s.UpdateState(ctx, StateUpdate{ThreadID: "th", Merge: func(Checkpoint) ([]thread.Message, thread.State, error) { return nil, nil, mergeErr }}); !errors.Is(err, mergeErr) {
			t.Errorf("a failing merge: %v", err)
		}
		_, err = beginRun(ctx, s, Run{ID: "run-busy", ThreadID: "th", Route: "/r"})
		must(t, err)
		if _, err := s.UpdateState(ctx, StateUpdate{ThreadID: "th", Merge: func(cp Checkpoint) ([]thread.Message, thread.State, error) { return nil, cp.Values, nil }}); !errors.Is(err, ErrBusy) {
			t.Errorf("an update during a run: %v, want ErrBusy", err)
		}
		must(t, s.FinishRun(ctx, "run-busy", RunSuccess, "", nil, nil))

		checkCopy(t, s)
	})
}

// checkCopy copies thread th to th-copy: the same latest state and
// history, and each goes on apart.
func checkCopy(t *testing.T, s Store) {
	t.Helper()
	ctx := context.Background()
	c, err := s.CopyThread(ctx, "th", "th-copy")
	must(t, err)
	if c.ID != "th-copy" {
		t.Fatalf("copy %+v", c)
	}
	a, err := s.Latest(ctx, "th")
	must(t, err)
	b, err := s.Latest(ctx, "th-copy")
	must(t, err)
	if !slices.Equal(contents(a.Messages), contents(b.Messages)) || !slices.Equal(a.Origins, b.Origins) || !jsonEqual(t, mustJSON(t, a.Values), mustJSON(t, b.Values)) || a.Step != b.Step || b.CopyOf != "th" {
		t.Errorf("the copy's latest state differs: %v %v / %v %v (copy of %q)", contents(a.Messages), a.Values, contents(b.Messages), b.Values, b.CopyOf)
	}
	ha, err := s.History(ctx, "th", HistoryQuery{})
	must(t, err)
	hb, err := s.History(ctx, "th-copy", HistoryQuery{})
	must(t, err)
	if len(ha) != len(hb) {
		t.Fatalf("history: %d checkpoints, the copy's %d", len(ha), len(hb))
	}
	for i := range ha {
		if ha[i].Step != hb[i].Step || !slices.Equal(contents(ha[i].Messages), contents(hb[i].Messages)) || hb[i].ID != CheckpointID("th-copy", hb[i].Step) {
			t.Errorf("checkpoint %d differs in the copy", ha[i].Step)
		}
	}
	if _, err := s.CopyThread(ctx, "th", "th-copy"); !errors.Is(err, ErrExists) {
		t.Errorf("a copy onto a taken id: %v", err)
	}
	if _, err := s.CopyThread(ctx, "missing", "x"); !errors.Is(err, ErrNotFound) {
		t.Errorf("a copy of a missing thread: %v", err)
	}
	// The copy goes on by itself.
	exchange(t, s, "th-copy", "run-c", "", "q4", "a4", `[]`)
	a, err = s.Latest(ctx, "th")
	must(t, err)
	if len(a.Messages) != 3 {
		t.Errorf("a run on the copy changed the original: %v", contents(a.Messages))
	}
	must(t, s.DeleteThread(ctx, "th"))
	if n := queryInt(t, s, `SELECT count(*) FROM checkpoints c JOIN threads t ON t.pk = c.thread WHERE t.id = 'th-copy'`); n == 0 {
		t.Error("deleting the original took the copy's checkpoints")
	}
	if n := queryInt(t, s, `SELECT count(*) FROM checkpoints`) - queryInt(t, s, `SELECT count(*) FROM checkpoints c JOIN threads t ON t.pk = c.thread`); n != 0 {
		t.Errorf("%d checkpoints of the deleted thread are left", n)
	}
}

func mustJSON(t *testing.T, v any) json.RawMessage {
	t.Helper()
	b, err := json.Marshal(v)
	must(t, err)
	return b
}

// TestInputCheckpoints: a run's first step also keeps the checkpoint where
// its input was added, between the step and its parent; a run from it
// regenerates the answer to that input on a new branch.
func TestInputCheckpoints(t *testing.T) {
	eachKind(t, func(t *testing.T, s Store) {
		ctx := context.Background()
		user := func(c string) thread.Message { return thread.Message{Role: thread.RoleUser, Content: c} }
		ai := func(c string) thread.Message { return thread.Message{Role: thread.RoleAssistant, Content: c} }
		plan := func(c string) thread.State { return thread.State{"todos": json.RawMessage(`["` + c + `"]`)} }
		_, err := beginRun(ctx, s, Run{ID: "run-1", ThreadID: "th", Route: "/r"})
		must(t, err)
		must(t, s.SaveStep(ctx, Step{ThreadID: "th", RunID: "run-1", Route: "/r", Step: 1, Input: 1,
			Append: []thread.Message{user("Q1"), ai("A1")}, Values: plan("one"), Finish: &Finish{Status: RunSuccess}}))
		_, err = beginRun(ctx, s, Run{ID: "run-2", ThreadID: "th", Route: "/r"})
		must(t, err)
		must(t, s.SaveStep(ctx, Step{ThreadID: "th", RunID: "run-2", Route: "/r", Step: 2, Input: 1,
			Append: []thread.Message{user("Q2"), ai("calling")}, Values: plan("two")}))
		must(t, s.SaveStep(ctx, Step{ThreadID: "th", RunID: "run-2", Route: "/r", Step: 3,
			Append: []thread.Message{ai("A2")}, Values: plan("two"), Finish: &Finish{Status: RunSuccess}}))

		h, err := s.History(ctx, "th", HistoryQuery{})
		must(t, err)
		var got []string
		for _, cp := range h {
			got = append(got, fmt.Sprintf("%d/%s/%d", cp.Step, cp.Source, len(cp.Messages)))
		}
		if want := []string{"3/loop/5", "2/loop/4", "2/input/3", "1/loop/2", "1/input/1"}; !slices.Equal(got, want) {
			t.Fatalf("history %v, want %v", got, want)
		}
		input2 := h[2]
		if h[1].ParentID != input2.ID || input2.ParentID != h[3].ID || h[3].ParentID != h[4].ID || h[4].ParentID != "" {
			t.Errorf("parents: %s<-%s, %s<-%s", h[1].ParentID, input2.ID, input2.ParentID, h[3].ID)
		}
		if string(input2.Values["todos"]) != `["one"]` || len(h[4].Values) != 0 {
			t.Errorf("an input checkpoint has its parent's values: %s, %v", input2.Values["todos"], h[4].Values)
		}
		at, err := s.CheckpointAt(ctx, "th", input2.ID)
		must(t, err)
		if at.ID != input2.ID || !slices.Equal(contents(at.Messages), []string{"Q1", "A1", "Q2"}) {
			t.Errorf("CheckpointAt(input of step 2): %s %v", at.ID, contents(at.Messages))
		}
		page, err := s.History(ctx, "th", HistoryQuery{Before: h[1].ID, Limit: 2})
		must(t, err)
		if len(page) != 2 || page[0].ID != input2.ID || page[1].ID != h[3].ID {
			t.Errorf("a page before step 2: %v", steps(page))
		}

		// Regenerate A2: a run from the checkpoint where Q2 was added.
		_, err = beginRun(ctx, s, Run{ID: "run-3", ThreadID: "th", Route: "/r", Checkpoint: input2.ID})
		must(t, err)
		must(t, s.SaveStep(ctx, Step{ThreadID: "th", RunID: "run-3", Route: "/r", Step: 4,
			Append: []thread.Message{ai("A2 again")}, Values: plan("three"), Finish: &Finish{Status: RunSuccess}}))
		latest, err := s.Latest(ctx, "th")
		must(t, err)
		if !slices.Equal(contents(latest.Messages), []string{"Q1", "A1", "Q2", "A2 again"}) || latest.Origins[2] != 0 {
			t.Fatalf("after regenerating: %v, origins %v", contents(latest.Messages), latest.Origins)
		}
		h, err = s.History(ctx, "th", HistoryQuery{Limit: 1})
		must(t, err)
		if h[0].ParentID != input2.ID {
			t.Errorf("the regenerated answer's parent is %s, want the input checkpoint %s", h[0].ParentID, input2.ID)
		}
		// A fork from the input checkpoint carries its parent's plan.
		_, err = beginRun(ctx, s, Run{ID: "run-4", ThreadID: "th", Route: "/r", Checkpoint: input2.ID})
		must(t, err)
		cp, err := s.Latest(ctx, "th")
		must(t, err)
		if string(cp.Values["todos"]) != `["one"]` || cp.ID != input2.ID {
			t.Errorf("a run from the input checkpoint starts from %s with plan %s", cp.ID, cp.Values["todos"])
		}
		must(t, s.FinishRun(ctx, "run-4", RunSuccess, "", nil, nil))
		if _, err := beginRun(ctx, s, Run{ID: "run-5", ThreadID: "th", Route: "/r", Checkpoint: CheckpointID("th", 3|inputFlag)}); !errors.Is(err, ErrNotFound) {
			t.Errorf("a run from the input of a step that took none: %v", err)
		}
	})
}
