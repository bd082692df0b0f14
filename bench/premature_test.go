package main

import (
	"encoding/json"
	"testing"
)

// TestPrematureDecisions: the mock's models over the wire. The diligent
// one does both items' work before it claims; the lazy one claims at
// once where there is a plan and answers where there is none; both answer
// after their claim's result, past the plan's state block.
func TestPrematureDecisions(t *testing.T) {
	user := func(text string) string { return `{"role":"user","content":` + quote(text) + `}` }
	call := func(name string) string {
		return `{"role":"assistant","content":null,"tool_calls":[{"id":"c","type":"function","function":{"name":"` + name + `","arguments":"{}"}}]}`
	}
	tool := `{"role":"tool","content":"ok"}`
	state := `{"role":"system","content":"Plan: ..."}`
	plan := `[{"type":"function","function":{"name":"writeTodos"}},{"type":"function","function":{"name":"runBash"}}]`
	noPlan := `[{"type":"function","function":{"name":"runBash"}}]`
	lazy, diligent := user(premUser(premTasks[0], true)), user(premUser(premTasks[0], false))
	for _, c := range []struct {
		name, msgs, tools string
		tool, text        bool
		want              string
	}{
		{"diligent first", diligent, plan, true, false, "runBash"},
		{"diligent second", diligent + "," + call("runBash") + "," + tool, plan, true, false, "writeFile"},
		{"diligent claims", diligent + "," + call("runBash") + "," + tool + "," + call("writeFile") + "," + tool + "," + state, plan, true, false, "writeTodos"},
		{"lazy claims at once", lazy, plan, true, false, "writeTodos"},
		{"lazy answers after its claim", lazy + "," + call("writeTodos") + "," + tool + "," + state, plan, false, true, ""},
		{"lazy without a plan answers", lazy, noPlan, false, true, ""},
	} {
		var req lazyRequest
		if err := json.Unmarshal([]byte(`{"messages":[`+c.msgs+`],"tools":`+c.tools+`}`), &req); err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		d := decidePremature(&req)
		if d.Tool != c.want || (d.Text != "") != c.text {
			t.Errorf("%s: %+v, want tool %q (text %v)", c.name, d, c.want, c.text)
		}
	}
}

func quote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
