package planfirst

import (
	"strings"
	"testing"
)

func TestComplexityScore(t *testing.T) {
	tests := []struct {
		task string
		want int
	}{
		// Trivial: 0 to 2.
		{"", 0},
		{"Hello!", 0},
		{"What is the capital of France?", 0},
		{"Explain how goroutines work", 0},
		{"Fix the typo", 1},                  // fix
		{"Summarize this article for me", 1}, // summarize
		{"What does main.go do?", 1},         // main.go
		{"Please review README.md", 2},       // review, README.md
		// Multi-action: 6 and up.
		{"Add a /health endpoint in server/health.go, then write tests in server/health_test.go and finally run them", 8}, // add write tests run =4, 2 files, then finally =2
		{"Research the competitors, compare their prices, draft a summary and send it to the team", 4},                    // research compare draft send
		{"Research the competitors, then compare their prices, draft a summary and finally send it", 6},                   // 4 verbs + 2 sequencers
		{"Refactor the parser, update the docs, fix the failing tests, deploy to staging and check the logs", 5},          // 6 verbs, capped at 5
		{"Fix x.go, then update README.md and run the tests", 7},                                                          // fix update run tests =4, 2 files, then
		{"Migrate config.yaml to config.toml, update the Dockerfile and the Makefile, then rebuild", 6},                   // migrate update =2, 4 files capped 3, then =1
		// Each cap.
		{"fix fix fix fix fix fix fix fix", 5},
		{"a.go b.go c.go d.go e.go f.go", 3},
		{"then then then finally next", 2},
		{"implement implement implement implement implement implement a.go b.go c.go d.go then finally next", 10},
		// Inflections and whole words.
		{"It added tests, fixed bugs, created files and is running builds", 5}, // added tests fixed created running builds = 6, capped
		{"The tester's prefix was addressed", 0},                               // no whole-word verb
		{"Once the build is done, deploy it", 3},                               // build deploy + once…done
		{"It was followed by a review", 2},                                     // review + followed by
		{"Planned, planning, plans", 3},
		{"The setup verified it", 1},
		{"Check Dockerfile and dockerfile", 3},
		{"Deploy deploy.yaml", 2},    // the file name is not a second verb
		{"Update health_test.go", 2}, // nor is "test" inside it
	}
	for _, tt := range tests {
		if got := ComplexityScore(tt.task); got != tt.want {
			t.Errorf("ComplexityScore(%q) = %d, want %d", tt.task, got, tt.want)
		}
	}
}

func TestComplexityScoreBounds(t *testing.T) {
	huge := strings.Repeat("implement main.go then ", 1000)
	if got := ComplexityScore(huge); got != 10 {
		t.Errorf("capped score = %d, want 10", got)
	}
	if VerbCap+FileCap+SequencerCap != 10 {
		t.Error("caps do not add up to 10")
	}
}

func TestParseMode(t *testing.T) {
	tests := []struct {
		in      string
		want    Mode
		wantErr string
	}{
		{"", Off, ""},
		{"off", Off, ""},
		{" AUTO ", Auto, ""},
		{"always", Always, ""},
		{"plan-first", Always, ""},
		{"sometimes", "", `plan-first mode "sometimes" is not valid; use off, auto or always`},
		{"on", "", `plan-first mode "on" is not valid; use off, auto or always`},
	}
	for _, tt := range tests {
		got, err := ParseMode(tt.in)
		gotErr := ""
		if err != nil {
			gotErr = err.Error()
		}
		if got != tt.want || gotErr != tt.wantErr {
			t.Errorf("ParseMode(%q) = %q, %q; want %q, %q", tt.in, got, gotErr, tt.want, tt.wantErr)
		}
	}
}

func TestShouldPlan(t *testing.T) {
	trivial := "What time is it?"
	complex := "Fix x.go, then update README.md and run the tests" // 7
	tests := []struct {
		mode      Mode
		threshold int
		task      string
		want      bool
	}{
		{Off, 0, complex, false},
		{"", 0, complex, false},
		{Always, 0, trivial, true},
		{Auto, 0, trivial, false},
		{Auto, 0, complex, true},
		{Auto, DefaultThreshold, complex, true},
		{Auto, 7, complex, true},
		{Auto, 8, complex, false},
		{Auto, 1, "fix it", true},
		{Auto, -3, complex, true}, // below 1 means the default
		{Mode("bogus"), 0, complex, false},
	}
	for _, tt := range tests {
		if got := ShouldPlan(tt.mode, tt.threshold, tt.task); got != tt.want {
			t.Errorf("ShouldPlan(%q, %d, %q) = %v, want %v", tt.mode, tt.threshold, tt.task, got, tt.want)
		}
	}
}
