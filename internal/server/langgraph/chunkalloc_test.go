package langgraph

import (
	"encoding/json"
	"runtime"
	"testing"

	"github.com/dawn-go/dawn/internal/app"
	"github.com/dawn-go/dawn/stream"
	"github.com/dawn-go/dawn/thread"
)

// translateAnswer feeds an answer of n chunks of 4 bytes through a
// translator streaming messages-tuple, as useStream asks, and returns the
// bytes it allocated.
func translateAnswer(n int) uint64 {
	tr := newTranslator(&app.App{}, lgRunView{ThreadID: "t", RunID: "r", RouteID: "/r",
		Modes: map[string]bool{modeMessagesTuple: true}, Prefix: []thread.Message{{Role: thread.RoleUser, Content: "hi"}}})
	tr.begin()
	chunk := stream.Event{Type: stream.TypeChunk, Data: json.RawMessage(`"abcd"`)}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	for i := range n {
		chunk.ID = int64(i + 1)
		tr.feed(chunk)
	}
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// TestStreamedAnswerTranslatesInLinearMemory: the bytes allocated to
// translate a streamed answer grow with its length, not with its square
// (the message being built was copied whole on every chunk).
func TestStreamedAnswerTranslatesInLinearMemory(t *testing.T) {
	small, large := translateAnswer(4_000), translateAnswer(16_000)
	if ratio := float64(large) / float64(small); ratio > 6 {
		t.Errorf("a 4x longer answer allocated %.1fx the bytes (%d vs %d): translation is not linear", ratio, large, small)
	}
}

// BenchmarkTranslateAnswer is the bytes per 64 KB answer in 4-byte chunks.
func BenchmarkTranslateAnswer(b *testing.B) {
	for b.Loop() {
		b.ReportMetric(float64(translateAnswer(16_000)), "B/answer")
	}
}
