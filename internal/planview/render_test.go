package planview

import (
	"encoding/json"
	"testing"
)

func TestRender(t *testing.T) {
	tests := []struct {
		name  string
		todos []Todo
		width int
		want  string
	}{
		{
			name: "every status",
			todos: []Todo{
				{"Understand the customer request", Completed},
				{"Check account context", InProgress},
				{"Decide whether to escalate", Pending},
				{"Write the final response", Completed},
			},
			want: "Plan (2/4 done)\n" +
				"  ✓ Understand the customer request\n" +
				"  ▶ Check account context\n" +
				"  ○ Decide whether to escalate\n" +
				"  ✓ Write the final response\n",
		},
		{
			name:  "nothing done",
			todos: []Todo{{"a", Pending}, {"b", Pending}},
			want:  "Plan (0/2 done)\n  ○ a\n  ○ b\n",
		},
		{
			name:  "unknown status shows as pending",
			todos: []Todo{{"a", "blocked"}},
			want:  "Plan (0/1 done)\n  ○ a\n",
		},
		{
			name: "empty plan",
			want: "Plan (empty)\n",
		},
		{
			name:  "long item cut to width",
			todos: []Todo{{"Check the account context in the billing system", InProgress}},
			width: 20,
			want:  "Plan (0/1 done)\n  ▶ Check the accou…\n",
		},
		{
			name:  "header cut, item at width kept",
			todos: []Todo{{"abcdef", Pending}},
			width: 10,
			want:  "Plan (0/1…\n  ○ abcdef\n",
		},
		{
			name:  "control characters become spaces",
			todos: []Todo{{"  two\nlines\x1b[2J  ", Pending}},
			want:  "Plan (0/1 done)\n  ○ two lines [2J\n",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Render(tt.todos, tt.width); got != tt.want {
				t.Errorf("Render() =\n%q\nwant\n%q", got, tt.want)
			}
		})
	}
}

func TestClip(t *testing.T) {
	tests := []struct {
		s     string
		width int
		want  string
	}{
		{"hello", 0, "hello"},
		{"hello", 5, "hello"},
		{"hello", 4, "hel…"},
		{"hello", 1, "…"},
		{"✓✓✓✓", 3, "✓✓…"},
		{"", 3, ""},
	}
	for _, tt := range tests {
		if got := clip(tt.s, tt.width); got != tt.want {
			t.Errorf("clip(%q, %d) = %q, want %q", tt.s, tt.width, got, tt.want)
		}
	}
}

func TestPlainLine(t *testing.T) {
	tests := []struct {
		todos []Todo
		want  string
	}{
		{[]Todo{{"a", Completed}, {"b", InProgress}, {"c", Pending}}, "[x] a | [>] b | [ ] c"},
		{nil, "(empty)"},
		{[]Todo{{"multi\nline", Pending}}, "[ ] multi line"},
	}
	for _, tt := range tests {
		if got := PlainLine(tt.todos); got != tt.want {
			t.Errorf("PlainLine(%v) = %q, want %q", tt.todos, got, tt.want)
		}
	}
}

func TestToolLine(t *testing.T) {
	long := `{"query":"` + "0123456789012345678901234567890123456789012345678901234567890123456789012345678901234567890123456789" + `"}`
	tests := []struct {
		name string
		data string
		want string
		ok   bool
	}{
		{"compact input", `{"id":"c1","name":"lookupAccount","input":{ "tenant" : "acme" }}`, `tool: lookupAccount({"tenant":"acme"})`, true},
		{"null input", `{"id":"c1","name":"ping","input":null}`, `tool: ping()`, true},
		{"no input", `{"id":"c1","name":"ping"}`, `tool: ping()`, true},
		{"long input cut to 80", `{"name":"search","input":` + long + `}`, `tool: search({"query":"012345678901234567890123456789012345678901234567890123456789012345678…)`, true},
		{"writeTodos is the plan", `{"name":"writeTodos","input":{"todos":[]}}`, "", false},
		{"no name", `{"input":{}}`, "", false},
		{"not JSON", `nope`, "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := ToolLine(json.RawMessage(tt.data))
			if got != tt.want || ok != tt.ok {
				t.Errorf("ToolLine() = %q, %v; want %q, %v", got, ok, tt.want, tt.ok)
			}
		})
	}
}
