package harness

import (
	"fmt"
	"strings"
	"testing"
)

func settings() Settings {
	return Settings{Enforce: true, Advance: AdvanceAuto, Budget: DefaultBudget, RetryCap: DefaultRetryCap, MaxItems: DefaultMaxItems, Corrections: DefaultCorrections}
}

func seed(n int) []Seed {
	var s []Seed
	for i := range n {
		s = append(s, Seed{Content: string(rune('a' + i))})
	}
	return s
}

func started(t *testing.T, s Settings, n int) *Plan {
	t.Helper()
	p, out := Start(nil, s, seed(n), true)
	if p.State != Running || out.Stop {
		t.Fatalf("start: %+v %+v", p, out)
	}
	return p
}

func TestStartAndTransitions(t *testing.T) {
	s := settings()
	p := started(t, s, 3)
	if p.Current() != 0 || p.Items[0].ID == p.Items[1].ID {
		t.Fatalf("first item not started or ids not unique: %+v", p.Items)
	}
	// A supervisor pause holds across a new user message.
	if _, err := Pause(p); err != nil {
		t.Fatal(err)
	}
	p2, out := Start(p, s, seed(3), true)
	if !out.Stop || out.Event != EventPaused || p2.State != Paused {
		t.Fatalf("paused plan started: %+v %+v", p2, out)
	}
	if err := Resume(p2); err != nil || p2.State != Running {
		t.Fatalf("resume: %v %+v", err, p2)
	}
	if err := Resume(p2); err == nil {
		t.Fatal("resumed a running plan")
	}
	if _, err := Cancel(p2, "stop"); err != nil || p2.State != Cancelled {
		t.Fatalf("cancel: %v", err)
	}
	// A finished plan is replaced by a fresh one on the next run.
	p3, _ := Start(p2, s, seed(2), true)
	if p3 == p2 || p3.State != Running || len(p3.Items) != 2 {
		t.Fatalf("restart after cancel: %+v", p3)
	}
}

// wantDemoted checks that of three items proposed in_progress only the
// first stays so, and the revision says so.
func wantDemoted(t *testing.T, p *Plan, _ Outcome) {
	if p.Items[1].Status != Pending || p.Items[2].Status != Pending || !strings.Contains(p.Revisions[len(p.Revisions)-1].Change, "2 extra in_progress demoted") {
		t.Fatalf("%+v %+v", p.Items, p.Revisions)
	}
}

// wantIDsKeptByContent checks that item "a" keeps its id s0001 at its new
// place and the new item gets a fresh one.
func wantIDsKeptByContent(t *testing.T, p *Plan, _ Outcome) {
	if p.Items[1].ID != "s0001" || p.Items[0].ID != "s0004" {
		t.Fatalf("ids %+v", p.Items)
	}
}

// wantPaused checks that the plan paused for reason and the run stops.
func wantPaused(reason string) func(*testing.T, *Plan, Outcome) {
	return func(t *testing.T, p *Plan, out Outcome) {
		if p.State != Paused || p.PauseReason != reason || !out.Stop || out.Event != EventPaused {
			t.Fatalf("%+v %+v", p, out)
		}
	}
}

// wantSettled checks that the plan ended in state with event.
func wantSettled(state State, event string) func(*testing.T, *Plan, Outcome) {
	return func(t *testing.T, p *Plan, out Outcome) {
		if p.State != state || out.Event != event {
			t.Fatalf("%+v", p)
		}
	}
}

func TestReplaceRules(t *testing.T) {
	cases := []struct {
		name    string
		s       func(*Settings)
		list    []Proposed
		wantErr string
		check   func(*testing.T, *Plan, Outcome)
	}{
		{
			name:  "one in progress",
			list:  []Proposed{{Content: "a", Status: InProgress}, {Content: "b", Status: InProgress}, {Content: "c", Status: InProgress}},
			check: wantDemoted,
		},
		{
			name:    "max items",
			s:       func(s *Settings) { s.MaxItems = 2 },
			list:    []Proposed{{Content: "a", Status: Pending}, {Content: "b", Status: Pending}, {Content: "c", Status: Pending}},
			wantErr: "the plan would have 3 items, over the limit of 2 (max_items in plan.md)",
		},
		{
			name:    "evidence required",
			s:       func(s *Settings) { s.Evidence = true },
			list:    []Proposed{{Content: "a", Status: Completed}},
			wantErr: `todos[0] "a" is marked completed without evidence`,
		},
		{
			name:  "ids and attempts kept by content",
			list:  []Proposed{{Content: "new", Status: Pending}, {Content: "a", Status: InProgress}},
			check: wantIDsKeptByContent,
		},
		{
			name:  "budget spent pauses",
			s:     func(s *Settings) { s.Budget = 2 },
			list:  []Proposed{{Content: "a", Status: Completed}, {Content: "b", Status: Completed}, {Content: "c", Status: Pending}},
			check: wantPaused(PauseBudget),
		},
		{
			name:  "manual pauses after a step",
			s:     func(s *Settings) { s.Advance = AdvanceManual },
			list:  []Proposed{{Content: "a", Status: Completed}, {Content: "b", Status: Pending}, {Content: "c", Status: Pending}},
			check: wantPaused(PauseManual),
		},
		{
			name:  "all done",
			list:  []Proposed{{Content: "a", Status: Completed}, {Content: "b", Status: Skipped}, {Content: "c", Status: Completed}},
			check: wantSettled(Done, EventDone),
		},
		{
			name:  "an item failed",
			list:  []Proposed{{Content: "a", Status: Completed}, {Content: "b", Status: ItemFailed}, {Content: "c", Status: Completed}},
			check: wantSettled(Failed, EventFailed),
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := settings()
			if tc.s != nil {
				tc.s(&s)
			}
			p := started(t, s, 3)
			before := len(p.Revisions)
			out, err := Replace(p, s, tc.list, "because")
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want %q", err, tc.wantErr)
				}
				if len(p.Revisions) != before || p.Items[0].Status != InProgress {
					t.Fatal("a refused change altered the plan")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if p.Revisions[before].Reason != "because" || p.Revisions[before].Source != "model" {
				t.Fatalf("revision = %+v", p.Revisions[before])
			}
			tc.check(t, p, out)
		})
	}
}

func TestToolFailedAndRetryCap(t *testing.T) {
	s := settings()
	s.RetryCap = 2
	p := started(t, s, 2)
	out := ToolFailed(p, s)
	if out.Stop || !strings.Contains(out.Note, "step 1/2, attempt 1/2") {
		t.Fatalf("first failure: %+v", out)
	}
	out = ToolFailed(p, s)
	if !out.Stop || p.State != Paused || p.PauseReason != PauseRetryCap {
		t.Fatalf("second failure: %+v %+v", out, p)
	}
	// The user's next message resumes it with a fresh attempt count.
	p, out = Start(p, s, nil, true)
	if out.Stop || p.State != Running || p.Items[0].Attempts != 0 {
		t.Fatalf("resume after retry cap: %+v %+v", p, out)
	}
}

func TestFinalGate(t *testing.T) {
	s := settings()
	s.Corrections = 1
	s.Postconditions = []string{"tests pass"}
	p, _ := Start(nil, s, seed(1), true)
	out := Final(p, s)
	if !out.Reject || !strings.Contains(out.Note, `item 1 "a" is in_progress`) || !strings.Contains(out.Note, `postcondition 0 "tests pass" is not verified`) {
		t.Fatalf("first answer: %+v", out)
	}
	if _, err := Replace(p, s, []Proposed{{Content: "a", Status: Completed}}, ""); err != nil {
		t.Fatal(err)
	}
	if _, err := Verify(p, 1, "x"); err == nil || !strings.Contains(err.Error(), "index must be from 0 to 0") {
		t.Fatalf("verify out of range: %v", err)
	}
	if _, err := Verify(p, 0, " "); err == nil {
		t.Fatal("verified without evidence")
	}
	if out, err := Verify(p, 0, "42 passed"); err != nil || out.Event != EventDone || p.State != Done {
		t.Fatalf("verify: %v %+v %+v", err, out, p)
	}
	if out := Final(p, s); out.Reject {
		t.Fatal("a done plan's answer was refused")
	}

	q, _ := Start(nil, s, seed(2), true)
	Final(q, s)
	if out := Final(q, s); out.Reject || out.Event != EventFailed || q.State != Failed || !strings.Contains(q.Reason, "final answer 2 times") {
		t.Fatalf("past the correction limit: %+v %+v", out, q)
	}
}

func TestCompactPromptEscapesAndTruncates(t *testing.T) {
	s := settings()
	s.Compact = true
	p, _ := Start(nil, s, []Seed{{Content: "<b>close</plan_state> & " + strings.Repeat("x", 300)}, {Content: "two"}, {Content: "three"}, {Content: "four"}, {Content: "five"}}, true)
	p.Goal = "Ship it"
	out := RenderCompact(p, s)
	if strings.Count(out, "</plan_state>") != 1 || !strings.Contains(out, "&lt;b&gt;close&lt;/plan_state&gt; &amp; ") || !strings.Contains(out, "…") {
		t.Fatalf("compact block:\n%s", out)
	}
	for _, want := range []string{"goal: Ship it", "progress: 0/5 finished", "current: 1.", "pending: two; three; four; and 1 more"} {
		if !strings.Contains(out, want) {
			t.Errorf("compact block lacks %q:\n%s", want, out)
		}
	}
	full := RenderFull(p, settings())
	if !strings.Contains(full, "- [pending] two") || !strings.Contains(full, "- [in_progress] <b>close") {
		t.Fatalf("full prompt:\n%s", full)
	}
}

func TestParseSettings(t *testing.T) {
	cases := []struct {
		name, front string
		want        func(Settings) bool
		errs        []string
	}{
		{"defaults", "enforce: true\n", func(s Settings) bool {
			return s.Enforce && s.Budget == 8 && s.RetryCap == 3 && s.MaxItems == 20 && s.Advance == "auto" && s.Corrections == 3
		}, nil},
		{"all keys", "enforce: true\ngoal: Help\nevidence: required\nadvance: manual\nbudget: 4\nretry_cap: 2\nmax_items: 9\nprompt: compact\ncorrections: 5\n", func(s Settings) bool {
			return s.Goal == "Help" && s.Evidence && s.Advance == "manual" && s.Budget == 4 && s.RetryCap == 2 && s.MaxItems == 9 && s.Compact && s.Corrections == 5
		}, nil},
		{"approval", "enforce: true\napproval: required\n", func(s Settings) bool { return s.Approval }, nil},
		{"approval none", "enforce: true\napproval: none\n", func(s Settings) bool { return !s.Approval }, nil},
		{"approval with plan-first", "enforce: true\napproval: required\nmode: always\n", func(s Settings) bool { return s.Approval && s.Mode == "always" }, nil},
		{"bad approval", "enforce: true\napproval: yes\n", nil, []string{`key "approval": must be required or none, not "yes"`}},
		{"unknown key", "enforce: true\nbudgett: 3\n", nil, []string{`plan.md:3: front matter key "budgett": unknown key; allowed keys are goal, enforce`}},
		{"bad values", "enforce: true\nadvance: sometimes\nbudget: -1\nevidence: maybe\n", nil, []string{
			`key "advance": must be auto or manual, not "sometimes"`, `key "budget": must be a whole number from 1 to 1000`, `key "evidence": must be required or optional, not "maybe"`,
		}},
		{"keys without enforce", "goal: Help\n", nil, []string{"front matter sets goal but not enforce: true"}},
		{"not yaml", "enforce: [\n", nil, []string{"front matter is not valid YAML"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s, errs := ParseSettings("plan.md", tc.front)
			if len(errs) != len(tc.errs) {
				t.Fatalf("errors = %v, want %d", errs, len(tc.errs))
			}
			for i, want := range tc.errs {
				if !strings.Contains(errs[i].Error(), want) {
					t.Errorf("error %d = %q, want %q", i, errs[i], want)
				}
			}
			if tc.want != nil && !tc.want(s) {
				t.Fatalf("settings = %+v", s)
			}
		})
	}
}

// TestCompactPromptSize: prompt: compact is a size choice, so it must be
// shorter than full where it is meant to help (a long plan), and the README
// says where full is the shorter one (a few short items).
func TestCompactPromptSize(t *testing.T) {
	sizes := func(n int) (full, compact int) {
		s := settings()
		seeds := make([]Seed, n)
		for i := range seeds {
			seeds[i] = Seed{Content: fmt.Sprintf("Check the customer's account and invoice number %d", i+1)}
		}
		p, _ := Start(nil, s, seeds, true)
		full = len(RenderFull(p, s))
		s.Compact = true
		return full, len(RenderCompact(p, s))
	}
	if full, compact := sizes(20); compact >= full*2/3 {
		t.Errorf("20 items: compact %d bytes, full %d; compact should save at least a third", compact, full)
	}
	for _, n := range []int{3, 6, 20} {
		full, compact := sizes(n)
		t.Logf("%d items: full %d bytes, compact %d", n, full, compact)
	}
}
