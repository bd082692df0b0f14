package store

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/dawn-go/dawn/thread"
)

// growingSteps is how many steps TestGrowingFieldCostsWhatItAdds saves:
// fewer than checkpointEvery commits, so that the WAL only grows and its
// size is the bytes every commit wrote.
const growingSteps = 160

// noteFor is element i of a field that grows by one element per step.
func noteFor(i int) string {
	return fmt.Sprintf(`{"step":%d,"note":"%s"}`, i, strings.Repeat(string(rune('a'+i%26)), 150))
}

// growingValue is the field's value after n steps.
func growingValue(n int) []byte {
	parts := make([]string, n)
	for i := range parts {
		parts[i] = noteFor(i)
	}
	return []byte("[" + strings.Join(parts, ",") + "]")
}

// TestGrowingFieldCostsWhatItAdds saves a run whose "notes" field (an
// append-reducer array) grows by one element of about 180 bytes per step,
// beside a small todos field that changes every step, and measures the
// bytes each commit writes (the WAL's growth: every commit appends each page
// it changed). A step must cost about what it adds, not the whole field
// again: the last steps may write no more than the first ones. After every
// step, and after reopening the file, the state reads back byte for byte.
func TestGrowingFieldCostsWhatItAdds(t *testing.T) {
	ctx := context.Background()
	path := kinds[0].path(t)
	s := openTest(t, path)
	newRun(t, s, "th", "run-1")
	wal := func() int64 {
		fi, err := os.Stat(path + "-wal")
		if err != nil {
			t.Fatal(err)
		}
		return fi.Size()
	}
	var cost []int64
	var want thread.State
	for step := 1; step <= growingSteps; step++ {
		before := wal()
		want = thread.State{
			"notes": growingValue(step),
			"todos": []byte(fmt.Sprintf(`[{"content":"Step %d","status":"in_progress"}]`, step)),
		}
		must(t, s.SaveStep(ctx, Step{ThreadID: "th", RunID: "run-1", Route: "/r", Step: step,
			Append: []thread.Message{{Role: thread.RoleAssistant, Content: fmt.Sprintf("step %d", step)}}, Values: want}))
		cost = append(cost, wal()-before)
		cp, err := s.Latest(ctx, "th")
		must(t, err)
		checkValues(t, fmt.Sprintf("step %d", step), cp.Values, want)
	}
	mean := func(c []int64) int64 {
		var sum int64
		for _, n := range c {
			sum += n
		}
		return sum / int64(len(c))
	}
	first, last := mean(cost[10:40]), mean(cost[len(cost)-30:])
	var total int64
	for _, c := range cost {
		total += c
	}
	t.Logf("bytes written per step: %d at steps 11-40, %d at the last 30; %d in all for a %d-byte field", first, last, total, len(want["notes"]))
	if last > first+first/2 {
		t.Errorf("a step of a %d-byte field wrote %d bytes, a step of a %d-byte one %d: saving a step rewrites the growing field", len(growingValue(growingSteps)), last, len(growingValue(25)), first)
	}

	must(t, s.Close())
	s = openTest(t, path)
	cp, err := s.Latest(ctx, "th")
	must(t, err)
	checkValues(t, "after reopening", cp.Values, want)
	if len(cp.Messages) != growingSteps {
		t.Errorf("%d messages after reopening, want %d", len(cp.Messages), growingSteps)
	}
}

// checkValues fails unless got holds exactly the fields of want, byte for
// byte.
func checkValues(t *testing.T, when string, got, want thread.State) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d fields %v, want %d", when, len(got), got, len(want))
	}
	for k, v := range want {
		if string(got[k]) != string(v) {
			t.Fatalf("%s: field %s reads back as %.200s…, want %.200s…", when, k, got[k], v)
		}
	}
}

// TestStateFieldsInParts walks array fields through every change a step
// can make to them (grow, stay, shrink, change an element, turn small,
// become another type, go away) and checks after each that the state reads
// back byte for byte, in a new store too, and how many part rows it keeps
// (parts are never deleted: the kept checkpoints before read them); then
// that every kept checkpoint reads back the value it had.
func TestStateFieldsInParts(t *testing.T) {
	big := func(n int) string { return string(growingValue(n)) } // 10 elements are over partMin
	changed := strings.Replace(big(12), `"step":3,`, `"step":-3,`, 1)
	tests := []struct {
		name  string
		value string // of field "notes"; "" removes it
		parts int    // part rows after the step
	}{
		{"small array stays whole", `[1,2,3]`, 0},
		{"large array becomes one part", big(12), 1},
		{"unchanged adds nothing", big(12), 1},
		{"one element more is one part more", big(13), 2},
		{"three more are one part", big(16), 3},
		{"shrinking writes it again", big(14), 4},
		{"changing an element writes it again", strings.Replace(big(14), `"step":3,`, `"step":-3,`, 1), 5},
		{"a change of the same length", strings.Replace(big(14), `"step":3,`, `"step":-4,`, 1), 6},
		{"growing after that", strings.Replace(big(15), `"step":3,`, `"step":-4,`, 1), 7},
		{"not compact input is compacted", " [ " + strings.ReplaceAll(changed[1:], ",", " , "), 8},
		{"small again", `["x"]`, 8},
		{"large again", big(11), 9},
		{"an object", `{"a":1}`, 9},
		{"large again, then gone", big(11), 10},
		{"gone", "", 10},
	}
	eachDurable(t, func(t *testing.T, open func() Store) {
		testStateFieldsInParts(t, open, tests)
	})
}

func testStateFieldsInParts(t *testing.T, open func() Store, tests []struct {
	name  string
	value string
	parts int
}) {
	big := func(n int) string { return string(growingValue(n)) }
	ctx := context.Background()
	s := open()
	newRun(t, s, "th", "run-1")
	wants := make([]thread.State, len(tests))
	for i, tt := range tests {
		values := thread.State{"todos": todos}
		if tt.value != "" {
			values["notes"] = []byte(tt.value)
		}
		must(t, s.SaveStep(ctx, Step{ThreadID: "th", RunID: "run-1", Route: "/r", Step: i + 1, Values: values}))
		want := thread.State{"todos": todos}
		if tt.value != "" {
			var buf bytes.Buffer
			must(t, json.Compact(&buf, []byte(tt.value)))
			want["notes"] = buf.Bytes()
		}
		wants[i] = want
		cp, err := s.Latest(ctx, "th")
		must(t, err)
		checkValues(t, tt.name, cp.Values, want)
		if n := queryInt(t, s, `SELECT count(*) FROM history WHERE run = -1`); n != int64(tt.parts) {
			t.Errorf("%s: %d part rows, want %d", tt.name, n, tt.parts)
		}
	}

	history, err := s.History(ctx, "th", HistoryQuery{})
	must(t, err)
	if len(history) != len(tests) {
		t.Fatalf("%d checkpoints kept, want %d", len(history), len(tests))
	}
	for _, cp := range history {
		checkValues(t, "checkpoint of "+tests[cp.Step-1].name, cp.Values, wants[cp.Step-1])
	}

	// SaveValues (a supervisor's change between runs) goes through parts too.
	must(t, s.FinishRun(ctx, "run-1", RunSuccess, "", nil, nil))
	for i, v := range []string{big(20), big(21), `[]`} {
		want := thread.State{"notes": []byte(v)}
		must(t, s.SaveValues(ctx, "th", len(tests)+1+i, want))
		cp, err := s.Latest(ctx, "th")
		must(t, err)
		checkValues(t, fmt.Sprintf("SaveValues %d", i), cp.Values, want)
	}
	must(t, s.SaveValues(ctx, "th", len(tests)+4, thread.State{"notes": []byte(big(20))}))
	must(t, s.Close())
	s = open()
	cp, err := s.Latest(ctx, "th")
	must(t, err)
	checkValues(t, "after reopening", cp.Values, thread.State{"notes": []byte(big(20))})
	must(t, s.DeleteThread(ctx, "th"))
	if n := queryInt(t, s, `SELECT count(*) FROM history`); n != 0 {
		t.Errorf("%d history rows after deleting the only thread", n)
	}
}
