package planfirst

import (
	"context"
	"fmt"
	"strings"
	"testing"
)

// twentyStepText is planner output for a MaxSteps plan: prose, a fence, and
// steps that depend on and reference the ones before.
func twentyStepText() string {
	var b strings.Builder
	b.WriteString("Here is the plan:\n```json\n{\"goal\":\"ship the release\",\"steps\":[")
	for i := 1; i <= MaxSteps; i++ {
		if i > 1 {
			b.WriteString(",")
		}
		deps := ""
		task := fmt.Sprintf("Do part %d of the release", i)
		if i > 1 {
			deps = fmt.Sprintf(`,"deps":["E%d"]`, i-1)
			task += fmt.Sprintf(" using #E%d.summary and #E%d.last=200", i-1, (i+1)/2)
		}
		fmt.Fprintf(&b, `{"id":"E%d","task":%q%s}`, i, task, deps)
	}
	b.WriteString("]}\n```\nLet me know if you want changes.")
	return b.String()
}

func BenchmarkParse(b *testing.B) {
	text := twentyStepText()
	b.ReportAllocs()
	b.SetBytes(int64(len(text)))
	for b.Loop() {
		if _, err := Parse(text); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkOrder(b *testing.B) {
	p, err := Parse(twentyStepText())
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		Order(p)
	}
}

func BenchmarkExecute(b *testing.B) {
	p, err := Parse(twentyStepText())
	if err != nil {
		b.Fatal(err)
	}
	run := func(_ context.Context, s Step, _ string) (string, error) { return "result of " + s.ID + "\nmore", nil }
	b.ReportAllocs()
	for b.Loop() {
		Execute(context.Background(), p, run, nil)
	}
}

func BenchmarkComplexityScore(b *testing.B) {
	task := "Add a /health endpoint in server/health.go, then write tests in server/health_test.go, update README.md and finally run the whole suite"
	b.ReportAllocs()
	for b.Loop() {
		ComplexityScore(task)
	}
}
