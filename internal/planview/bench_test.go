package planview

import (
	"io"
	"testing"

	"github.com/dawn-go/dawn/stream"
)

func benchTodos() []Todo {
	return []Todo{
		{"Understand the customer request", Completed},
		{"Check account context", Completed},
		{"Decide whether to answer or escalate", InProgress},
		{"Write the final response", Pending},
	}
}

func BenchmarkRender(b *testing.B) {
	todos := benchTodos()
	b.ReportAllocs()
	for b.Loop() {
		_ = Render(todos, 80)
	}
}

// BenchmarkTTYPlanUpdate is one plan_update redrawn in place: decode, render
// and write.
func BenchmarkTTYPlanUpdate(b *testing.B) {
	e := planEvent(benchTodos()...)
	tty := NewTTY(io.Discard, 80)
	_ = tty.Event(e)
	b.ReportAllocs()
	for b.Loop() {
		_ = tty.Event(e)
	}
}

func BenchmarkTTYChunk(b *testing.B) {
	e := stream.Chunk("Your account is in good standing. ")
	tty := NewTTY(io.Discard, 80)
	b.ReportAllocs()
	for b.Loop() {
		_ = tty.Event(e)
	}
}
