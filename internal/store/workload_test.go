package store

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/dawn-go/dawn/stream"
	"github.com/dawn-go/dawn/thread"
	"github.com/google/uuid"
)

// workloadTodos is the writeTodos input of the load tool's workload: four
// todos, the first in progress.
const workloadTodos = `{"todos":[` +
	`{"content":"Understand the customer request","status":"in_progress"},` +
	`{"content":"Check account context","status":"pending"},` +
	`{"content":"Decide whether to answer or escalate","status":"pending"},` +
	`{"content":"Write the final response","status":"pending"}]}`

// workloadRun writes what the runner writes for one run of the load tool's
// workload (bench/README.md) on a new thread, in its three transactions:
// BeginRun; the writeTodos step (user message, tool call, tool result, the
// todos, and the tool_call, tool_result and plan_update events); and the
// answer step with the end of the run, whose done event holds the whole
// final state (about 1.2 KB).
func workloadRun(t testing.TB, s *DB, threadID string) {
	t.Helper()
	ctx := context.Background()
	runID := uuid.NewString()
	callID := "call_" + strings.ReplaceAll(runID[:16], "-", "")
	cp, err := beginRun(ctx, s, Run{ID: runID, ThreadID: threadID, Route: "/support/[tenant]"})
	must(t, err)
	var plan struct {
		Todos json.RawMessage `json:"todos"`
	}
	must(t, json.Unmarshal([]byte(workloadTodos), &plan))
	messages := append(cp.Messages,
		thread.Message{Role: thread.RoleUser, Content: "Help me with my account"},
		thread.Message{Role: thread.RoleAssistant, ToolCalls: []thread.ToolCall{{ID: callID, Name: "writeTodos", Input: json.RawMessage(workloadTodos)}}},
		thread.Message{Role: thread.RoleTool, Content: workloadTodos, ToolCallID: callID, Name: "writeTodos"},
	)
	values := thread.State{"todos": plan.Todos}
	must(t, s.SaveStep(ctx, Step{
		ThreadID: threadID, RunID: runID, Route: "/support/[tenant]", Step: cp.Step + 1,
		Append: messages[len(cp.Messages):], Values: values,
		Events: []stream.Event{
			{ID: 1, Type: stream.TypeToolCall, Data: mustMarshal(t, map[string]any{"id": callID, "name": "writeTodos", "input": json.RawMessage(workloadTodos)})},
			{ID: 2, Type: stream.TypeToolResult, Data: mustMarshal(t, map[string]any{"id": callID, "name": "writeTodos", "output": json.RawMessage(workloadTodos)})},
			{ID: 3, Type: "plan_update", Data: json.RawMessage(workloadTodos)},
		},
	}))
	answer := thread.Message{Role: thread.RoleAssistant, Content: "Your account is in good standing."}
	messages = append(messages, answer)
	output := mustMarshal(t, map[string]any{"messages": messages, "todos": plan.Todos})
	must(t, s.SaveStep(ctx, Step{
		ThreadID: threadID, RunID: runID, Route: "/support/[tenant]", Step: cp.Step + 2,
		Append: []thread.Message{answer}, Values: values,
		Events: []stream.Event{{ID: 4, Type: stream.TypeDone, Data: mustMarshal(t, map[string]json.RawMessage{"output": output})}},
		Finish: &Finish{Status: RunSuccess, Output: mustMarshal(t, map[string]any{"answer": answer.Content, "message": len(messages) - 1})},
	}))
}

// workloadThread names the i-th thread the way the load tool does.
func workloadThread(i int) string { return fmt.Sprintf("b1c2d3e4-r1-mem-%d", i) }

func mustMarshal(t testing.TB, v any) json.RawMessage {
	t.Helper()
	b, err := json.Marshal(v)
	must(t, err)
	return b
}

// writeCounters returns the write syscalls and bytes the process has made
// so far (Linux /proc/self/io; zeros elsewhere).
func writeCounters() (calls, bytes int64) {
	data, err := os.ReadFile("/proc/self/io")
	if err != nil {
		return 0, 0
	}
	for _, line := range strings.Split(string(data), "\n") {
		key, value, ok := strings.Cut(line, ": ")
		if !ok {
			continue
		}
		n, _ := strconv.ParseInt(value, 10, 64)
		switch key {
		case "syscw":
			calls = n
		case "wchar":
			bytes = n
		}
	}
	return calls, bytes
}

// reportWrites starts counting write syscalls; the function it returns
// reports them per op as "writes/op" and "wbytes/op".
func reportWrites(b *testing.B) func() {
	calls, bytes := writeCounters()
	return func() {
		c, n := writeCounters()
		if b.N > 0 && c > calls {
			b.ReportMetric(float64(c-calls)/float64(b.N), "writes/op")
			b.ReportMetric(float64(n-bytes)/float64(b.N), "wbytes/op")
		}
	}
}
