package planning

import (
	"encoding/json"
	"strings"
	"sync"

	"github.com/dawn-go/dawn/thread"
)

// promptIntro says once how to keep the plan; writeTodos's description
// says only what the tool does. Every byte here is sent on every model turn.
const promptIntro = `## Planning

Keep this plan current with writeTodos, passing the whole list each time. Keep one item in_progress; mark it completed once done, then start the next. Change items when the work changes.

`

const emptyPlan = "(The plan is empty. If the task has several steps, write a plan with writeTodos first.)\n"

// RenderPrompt renders the whole planning section for todos: how to keep
// the plan (the system prompt's part) and the plan itself
// (RenderPlan, the per-turn state block's part).
func RenderPrompt(todos []Todo) string { return promptIntro + RenderPlan(todos) }

// RenderPlan renders the current plan for the per-turn state block.
// After "Current plan:" each todo is one line of the form
// "- [pending] Understand the customer request" (the status in brackets, then
// the content, with any line breaks in it turned into spaces). The built-in
// offline model reads that line format. An empty list renders a line saying
// the plan is empty instead.
func RenderPlan(todos []Todo) string {
	size := len("Current plan:\n") + len(emptyPlan)
	for _, t := range todos {
		size += len(t.Content) + len(t.Status) + 6
	}
	var b strings.Builder
	b.Grow(size)
	b.WriteString("Current plan:\n")
	if len(todos) == 0 {
		b.WriteString(emptyPlan)
		return b.String()
	}
	for _, t := range todos {
		b.WriteString("- [")
		b.WriteString(string(t.Status))
		b.WriteString("] ")
		writeOneLine(&b, t.Content)
		b.WriteByte('\n')
	}
	return b.String()
}

// writeOneLine writes s with every CR and LF replaced by a space, so one todo
// stays on one line of the prompt.
func writeOneLine(b *strings.Builder, s string) {
	for {
		i := strings.IndexAny(s, "\r\n")
		if i < 0 {
			b.WriteString(s)
			return
		}
		b.WriteString(s[:i])
		b.WriteByte(' ')
		s = s[i+1:]
	}
}

// intro is the planning fragment of the system prompt.
func intro(thread.State) string { return promptIntro }

// statePrompt returns the planning fragment of the per-turn state block.
// It renders the todos in the thread's state, or seed when the state has
// no todos field (a thread made before plan.md existed). Every model call
// renders it, and most see a list rendered before, so the renderings are
// kept by the field's bytes (see renderings).
func statePrompt(seed []Todo) func(thread.State) string {
	seedPlan := RenderPlan(seed)
	var kept renderings
	return func(s thread.State) string {
		raw := s[StateField]
		if len(raw) == 0 {
			return seedPlan
		}
		if plan, ok := kept.get(raw); ok {
			return plan
		}
		var todos []Todo
		plan := seedPlan
		if err := json.Unmarshal(raw, &todos); err == nil {
			plan = RenderPlan(todos)
		}
		kept.put(raw, plan)
		return plan
	}
}

// maxRenderings is how many renderings a route keeps: the lists its
// threads hold at once are mostly its plan's items in a few states each.
const maxRenderings = 64

// renderings maps a todos field's JSON to its rendered plan. When full it
// starts over, so a route whose threads hold ever new lists pays one map
// insert per rendering. It is safe for concurrent use.
type renderings struct {
	mu sync.Mutex
	m  map[string]string
}

func (r *renderings) get(raw []byte) (string, bool) {
	r.mu.Lock()
	plan, ok := r.m[string(raw)]
	r.mu.Unlock()
	return plan, ok
}

func (r *renderings) put(raw []byte, plan string) {
	r.mu.Lock()
	if r.m == nil || len(r.m) >= maxRenderings {
		r.m = make(map[string]string, maxRenderings)
	}
	r.m[string(raw)] = plan
	r.mu.Unlock()
}
