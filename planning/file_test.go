package planning

import (
	"strings"
	"testing"
)

func TestParseFile(t *testing.T) {
	const body = "- [ ] One\n- [x] Two\n\n## Done when\n- [ ] Tests pass\n\n## Notes\n- [ ] Three\n"
	cases := []struct {
		name     string
		src      string
		enforce  bool
		seed     []string
		post     []string
		errMatch string
	}{
		{"no front matter: Dawn behaviour", body, false, []string{"One", "Two", "Tests pass", "Three"}, nil, ""},
		{"enforced: postconditions split off", "---\nenforce: true\n---\n" + body, true, []string{"One", "Two", "Three"}, []string{"Tests pass"}, ""},
		{"CRLF front matter", strings.ReplaceAll("---\nenforce: true\ngoal: x\n---\n- [ ] A\n", "\n", "\r\n"), true, []string{"A"}, nil, ""},
		{"enforce false", "---\nenforce: false\n---\n" + body, false, []string{"One", "Two", "Tests pass", "Three"}, nil, ""},
		{"unterminated", "---\nenforce: true\n- [ ] A\n", false, nil, nil, "plan.md: front matter starts with --- but has no closing --- line"},
		{"unknown key", "---\nenforce: true\nspeed: fast\n---\n", false, nil, nil, `plan.md:3: front matter key "speed": unknown key`},
		{"bad mode", "---\nenforce: true\nmode: fast\n---\n", false, nil, nil, `plan.md:3: front matter key "mode": must be sequential or parallel (how the model's own plan runs), or off, auto, always or plan-first (when the harness plans first), not "fast"`},
		{"too many items", "---\nenforce: true\nmax_items: 1\n---\n- [ ] A\n- [ ] B\n", false, nil, nil, "the checklist has 2 items, over max_items (1)"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f, err := ParseFile("plan.md", []byte(tc.src))
			if tc.errMatch != "" {
				if err == nil || !strings.Contains(err.Error(), tc.errMatch) {
					t.Fatalf("err = %v, want %q", err, tc.errMatch)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var seed []string
			for _, td := range f.Seed {
				seed = append(seed, td.Content)
			}
			if strings.Join(seed, "|") != strings.Join(tc.seed, "|") || strings.Join(f.Settings.Postconditions, "|") != strings.Join(tc.post, "|") || f.Settings.Enforce != tc.enforce {
				t.Fatalf("seed %q post %q enforce %v", seed, f.Settings.Postconditions, f.Settings.Enforce)
			}
		})
	}
}
