package capabilities

import (
	"encoding/json"
	"testing"

	"github.com/dawn-go/dawn/router"
	"github.com/dawn-go/dawn/thread"
)

func testPrepared() *Prepared {
	return &Prepared{
		Route: &router.Route{ID: "/support/[tenant]"},
		Fields: []Field{
			{Name: "tier", Type: "string", Reducer: Replace, Source: "state.yaml"},
			{Name: "notes", Type: "array", Reducer: Append, Source: "state.yaml"},
			{Name: "score", Type: "integer", Reducer: Replace, Source: "state.yaml"},
			{Name: "checklist", Type: "array", Reducer: Replace, Capability: "checklist", Source: "checklist.md"},
		},
	}
}

func TestApply(t *testing.T) {
	start := thread.State{"tier": json.RawMessage(`"free"`), "notes": json.RawMessage(`["a"]`), "checklist": json.RawMessage(`[1]`)}
	tests := []struct {
		name    string
		update  thread.State
		want    map[string]string
		wantErr string
	}{
		{"no update", nil, map[string]string{"tier": `"free"`, "notes": `["a"]`, "checklist": `[1]`}, ""},
		{"replace", thread.State{"tier": json.RawMessage(`"pro"`)}, map[string]string{"tier": `"pro"`, "notes": `["a"]`, "checklist": `[1]`}, ""},
		{"replace array", thread.State{"checklist": json.RawMessage(`[2,3]`)}, map[string]string{"tier": `"free"`, "notes": `["a"]`, "checklist": `[2,3]`}, ""},
		{"append", thread.State{"notes": json.RawMessage(`["b","c"]`)}, map[string]string{"tier": `"free"`, "notes": `["a","b","c"]`, "checklist": `[1]`}, ""},
		{"append empty", thread.State{"notes": json.RawMessage(`[]`)}, map[string]string{"tier": `"free"`, "notes": `["a"]`, "checklist": `[1]`}, ""},
		{"append to unset", thread.State{"score": json.RawMessage(`3`)}, map[string]string{"tier": `"free"`, "notes": `["a"]`, "checklist": `[1]`, "score": `3`}, ""},
		{"append non-array", thread.State{"notes": json.RawMessage(`"b"`)}, nil, `state field "notes" uses the append reducer, so an update must be an array: json: cannot unmarshal string into Go value of type []json.RawMessage`},
		{"unknown field", thread.State{"plan": json.RawMessage(`[]`)}, nil, `route /support/[tenant] has no state field "plan"; declare it in state.yaml`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := start.Clone()
			got, err := testPrepared().Apply(start, tt.update)
			if !equalState(start, before) {
				t.Errorf("Apply modified its input state: %v", start)
			}
			if tt.wantErr != "" {
				if err == nil || err.Error() != tt.wantErr {
					t.Fatalf("error\n got %v\nwant %s", err, tt.wantErr)
				}
				if !equalState(got, start) {
					t.Errorf("state on error = %v, want the unchanged state", got)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(tt.want) {
				t.Errorf("state = %v, want %v", got, tt.want)
			}
			for k, v := range tt.want {
				if string(got[k]) != v {
					t.Errorf("%s = %s, want %s", k, got[k], v)
				}
			}
		})
	}
}

func TestAppendToUnsetField(t *testing.T) {
	got, err := testPrepared().Apply(thread.State{}, thread.State{"notes": json.RawMessage(`["x"]`)})
	if err != nil {
		t.Fatal(err)
	}
	if string(got["notes"]) != `["x"]` {
		t.Errorf("notes = %s", got["notes"])
	}
}

func TestApplyInput(t *testing.T) {
	tests := []struct {
		name    string
		input   map[string]json.RawMessage
		want    map[string]string
		wantErr string
	}{
		{"declared fields", map[string]json.RawMessage{"tier": json.RawMessage(`"pro"`), "notes": json.RawMessage(`["n"]`)}, map[string]string{"tier": `"pro"`, "notes": `["old","n"]`}, ""},
		{"integer", map[string]json.RawMessage{"score": json.RawMessage(`7`)}, map[string]string{"score": `7`}, ""},
		{"capability field", map[string]json.RawMessage{"checklist": json.RawMessage(`[]`)}, nil, `input.checklist: the field belongs to capability "checklist" and cannot be set by a run's input`},
		{"unknown field", map[string]json.RawMessage{"plan": json.RawMessage(`[]`)}, nil, `input.plan: route /support/[tenant] has no state field "plan" (declared fields: tier, notes, score)`},
		{"wrong type string", map[string]json.RawMessage{"tier": json.RawMessage(`3`)}, nil, `input.tier: expected a value of type string`},
		{"wrong type array", map[string]json.RawMessage{"notes": json.RawMessage(`{"a":1}`)}, nil, `input.notes: expected a value of type array`},
		{"fraction for integer", map[string]json.RawMessage{"score": json.RawMessage(`1.5`)}, nil, `input.score: expected a value of type integer`},
		{"not JSON", map[string]json.RawMessage{"tier": json.RawMessage(`free`)}, nil, `input.tier: expected a value of type string`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			start := thread.State{"notes": json.RawMessage(`["old"]`)}
			got, err := testPrepared().ApplyInput(start, tt.input)
			if tt.wantErr != "" {
				if err == nil || err.Error() != tt.wantErr {
					t.Fatalf("error\n got %v\nwant %s", err, tt.wantErr)
				}
				if !equalState(got, start) {
					t.Errorf("state on error = %v", got)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			for k, v := range tt.want {
				if string(got[k]) != v {
					t.Errorf("%s = %s, want %s", k, got[k], v)
				}
			}
		})
	}
}

func TestApplyInputNoDeclaredFields(t *testing.T) {
	p := &Prepared{Route: &router.Route{ID: "/r"}}
	_, err := p.ApplyInput(nil, map[string]json.RawMessage{"x": json.RawMessage(`1`)})
	if want := `input.x: route /r has no state field "x" (declared fields: none)`; err == nil || err.Error() != want {
		t.Errorf("error = %v, want %s", err, want)
	}
}

// TestApplyInputReportsFirstNameInOrder: with several bad fields the error
// is the same on every run.
func TestApplyInputReportsFirstNameInOrder(t *testing.T) {
	input := map[string]json.RawMessage{"zz": json.RawMessage(`1`), "aa": json.RawMessage(`1`), "mm": json.RawMessage(`1`), "tier": json.RawMessage(`1`)}
	for range 20 {
		_, err := testPrepared().ApplyInput(nil, input)
		if want := `input.aa: route /support/[tenant] has no state field "aa" (declared fields: tier, notes, score)`; err == nil || err.Error() != want {
			t.Fatalf("error = %v, want %s", err, want)
		}
	}
}

func TestReduce(t *testing.T) {
	tests := []struct {
		name    string
		field   Field
		current string
		update  string
		want    string
		wantErr string
	}{
		{"replace", Field{Name: "f", Reducer: Replace}, `1`, `2`, `2`, ""},
		{"empty reducer replaces", Field{Name: "f"}, `1`, `2`, `2`, ""},
		{"append", Field{Name: "f", Reducer: Append}, `[1]`, `[2]`, `[1,2]`, ""},
		{"append to null", Field{Name: "f", Reducer: Append}, `null`, `[2]`, `[2]`, ""},
		{"append to nothing", Field{Name: "f", Reducer: Append}, ``, `[2]`, `[2]`, ""},
		{"append onto non-array", Field{Name: "f", Reducer: Append}, `{}`, `[2]`, "", `state field "f": current value is not an array: json: cannot unmarshal object into Go value of type []json.RawMessage`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var current json.RawMessage
			if tt.current != "" {
				current = json.RawMessage(tt.current)
			}
			got, err := tt.field.Reduce(current, json.RawMessage(tt.update))
			if tt.wantErr != "" {
				if err == nil || err.Error() != tt.wantErr {
					t.Fatalf("error\n got %v\nwant %s", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tt.want {
				t.Errorf("got %s, want %s", got, tt.want)
			}
		})
	}
}

func equalState(a, b thread.State) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if string(b[k]) != string(v) {
			return false
		}
	}
	return true
}

// TestApplyEdit: a person's change runs the route's Edited hooks, which
// see the state before and after it and add fields in the same change;
// a hook's bad field fails the edit and leaves the state as it was.
func TestApplyEdit(t *testing.T) {
	p := testPrepared()
	var saw []string
	p.Hooks = []*Hooks{{}, {Edited: func(before, after thread.State) thread.State {
		saw = append(saw, string(before["tier"])+">"+string(after["tier"]))
		if string(after["tier"]) == `"bad"` {
			return thread.State{"nope": json.RawMessage(`1`)}
		}
		return thread.State{"notes": json.RawMessage(`["edited"]`)}
	}}}
	start := thread.State{"tier": json.RawMessage(`"free"`)}
	got, err := p.ApplyEdit(start, thread.State{"tier": json.RawMessage(`"pro"`)})
	if err != nil || string(got["tier"]) != `"pro"` || string(got["notes"]) != `["edited"]` || len(saw) != 1 || saw[0] != `"free">"pro"` {
		t.Fatalf("ApplyEdit = %v, %v (hook saw %v); want the tier changed and the hook's note added", got, err, saw)
	}
	if got, err := p.ApplyEdit(start, nil); err != nil || !equalState(got, start) || len(saw) != 1 {
		t.Fatalf("an empty edit = %v, %v, hook calls %d; want nothing changed and no hook run", got, err, len(saw))
	}
	if got, err := p.ApplyEdit(start, thread.State{"tier": json.RawMessage(`"bad"`)}); err == nil || !equalState(got, start) {
		t.Fatalf("a hook's unknown field = %v, %v; want an error and the state as it was", got, err)
	}
}
