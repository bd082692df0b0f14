package planning

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/dawn-go/dawn/capabilities"
)

// bigPlan is a plan.md of about 60 KiB: headings, prose, nested task lists
// and a code block.
func bigPlan() []byte {
	var b strings.Builder
	for section := 0; b.Len() < 60<<10; section++ {
		fmt.Fprintf(&b, "## Phase %d\n\nWork through these steps in order and note anything **unusual**.\n\n", section)
		for i := range 8 {
			fmt.Fprintf(&b, "- [ ] Step %d.%d: check the `account` and the [billing history](https://example.com/%d)\n", section, i, i)
			fmt.Fprintf(&b, "  - [x] Sub-step %d.%d.a confirmed with the customer\n", section, i)
		}
		b.WriteString("\n```\n- [ ] not a task\n```\n\n")
	}
	return []byte(b.String())
}

func BenchmarkParse60KiB(b *testing.B) {
	src := bigPlan()
	b.SetBytes(int64(len(src)))
	b.ReportAllocs()
	for b.Loop() {
		if len(Parse(src)) == 0 {
			b.Fatal("no todos")
		}
	}
}

func benchTodos(n int) []Todo {
	todos := make([]Todo, n)
	for i := range todos {
		todos[i] = Todo{Content: fmt.Sprintf("Step %d: check the account context and billing history", i), Status: Pending}
	}
	todos[0].Status = Completed
	todos[1].Status = InProgress
	return todos
}

func BenchmarkRenderPrompt(b *testing.B) {
	todos := benchTodos(20)
	b.ReportAllocs()
	for b.Loop() {
		_ = RenderPrompt(todos)
	}
}

func BenchmarkWriteTodos(b *testing.B) {
	p := prepare(b, "- [ ] seed\n")
	tool := p.Tool(ToolName)
	state := p.InitialState()
	input, _ := json.Marshal(map[string]any{"todos": benchTodos(10)})
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		res, err := tool.Call(ctx, capabilities.Invocation{Input: input, State: state})
		if err != nil {
			b.Fatal(err)
		}
		if _, err := p.Apply(state, res.Update); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkTransform is the plan_update of one writeTodos call of ten items.
func BenchmarkTransform(b *testing.B) {
	p := prepare(b, "- [ ] seed\n")
	input, _ := json.Marshal(map[string]any{"todos": benchTodos(10)})
	res, err := p.Tool(ToolName).Call(context.Background(), capabilities.Invocation{Input: input, State: p.InitialState()})
	if err != nil {
		b.Fatal(err)
	}
	ev := capabilities.ToolEvent{Name: ToolName, Input: input, Output: res.Output, Update: res.Update}
	b.ReportAllocs()
	for b.Loop() {
		if len(Transform(ev)) != 1 {
			b.Fatal("no plan_update")
		}
	}
}
