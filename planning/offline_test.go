package planning

import (
	"reflect"
	"strings"
	"testing"

	"github.com/dawn-go/dawn/todo"
)

// fourItemPrompt is a system prompt rendering a plan of four items.
const fourItemPrompt = `You are a support agent.

## Plan
- [pending] Read the ticket
- [pending] Find the order
- [pending] Draft a reply
- [pending] Send the reply
`

func TestParsePromptPlan(t *testing.T) {
	tests := []struct {
		in   string
		want []offlineItem
	}{
		{"", nil},
		{"- [pending] A\n  - [in_progress] B  \n- [completed] C", []offlineItem{{"A", "pending", ""}, {"B", "in_progress", ""}, {"C", "completed", ""}}},
		{"- [done] A\n- [pending]\n- [pending]   \n* [pending] B\n-[pending] C", nil},
		{"- [pending] a ] b", []offlineItem{{"a ] b", "pending", ""}}},
	}
	for _, tt := range tests {
		if got := parsePromptPlan(tt.in); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("parsePromptPlan(%q) = %v, want %v", tt.in, got, tt.want)
		}
	}
}

func FuzzParsePromptPlan(f *testing.F) {
	f.Add(fourItemPrompt)
	f.Fuzz(func(t *testing.T, text string) {
		for _, item := range parsePromptPlan(text) {
			if item.Content == "" || strings.TrimSpace(item.Content) != item.Content {
				t.Fatalf("item content %q is empty or untrimmed", item.Content)
			}
			switch item.Status {
			case todo.Pending, todo.InProgress, todo.Completed:
			default:
				t.Fatalf("item status %q", item.Status)
			}
		}
	})
}
