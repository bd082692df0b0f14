package planview

import (
	"bytes"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/dawn-go/dawn/stream"
)

// FuzzView feeds arbitrary plan_update data to a View and both renderers:
// nothing panics, and every plan line is one line within the width, with no
// control characters that could move the terminal's cursor.
func FuzzView(f *testing.F) {
	f.Add(false, []byte(`{"todos":[{"content":"a","status":"completed"},{"content":"b","status":"in_progress"}]}`), 20)
	f.Add(true, []byte(`{"todos":[{"content":"Find","status":"pending"}],"call_id":"c","subagent":"r","depth":2}`), 0)
	f.Fuzz(func(t *testing.T, subagent bool, data []byte, width int) {
		width %= 200
		typ := PlanUpdate
		if subagent {
			typ = SubagentPlanUpdate
		}
		e := stream.Event{Type: typ, Data: data}
		var v View
		v.Apply(e)
		for _, line := range v.Lines(width) {
			if width > 0 && utf8.RuneCountInString(line) > width {
				t.Fatalf("line %q is longer than width %d", line, width)
			}
			if strings.ContainsFunc(line, isControl) {
				t.Fatalf("line %q holds a control character", line)
			}
		}
		var buf bytes.Buffer
		_ = NewTTY(&buf, width).Event(e)
		_ = NewPlain(&buf).Event(e)
	})
}
