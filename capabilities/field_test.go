package capabilities_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/dawn-go/dawn/capabilities"
)

func TestFieldCheck(t *testing.T) {
	ticket := capabilities.Field{Name: "ticket_id", Type: "string", Reducer: capabilities.Replace}
	todos := capabilities.Field{Name: "todos", Type: "array", Reducer: capabilities.Replace,
		Schema: json.RawMessage(`{"type":"array","items":{"type":"object","properties":{"status":{"enum":["pending","completed"]}},"required":["status"]}}`)}
	notes := capabilities.Field{Name: "notes", Type: "array", Reducer: capabilities.Append,
		Schema: json.RawMessage(`{"type":"array","maxItems":1}`)}
	for _, tc := range []struct {
		f    capabilities.Field
		v    string
		says string // "" when v is fine
	}{
		{ticket, `"T-1"`, ""},
		{ticket, `null`, ""},
		{ticket, `5`, "ticket_id: expected a value of type string"},
		{todos, `[{"status":"pending"}]`, ""},
		{todos, `"x"`, "todos: expected a value of type array"},
		{todos, `[{"status":"weird"}]`, "todos: "},
		{todos, `[{}]`, "todos: "},
		{notes, `[1,2]`, ""}, // appended items: the whole value's maxItems is not theirs to check
		{notes, `{}`, "notes: expected a value of type array"},
	} {
		err := tc.f.Check(json.RawMessage(tc.v))
		switch {
		case tc.says == "" && err != nil:
			t.Errorf("%s.Check(%s) = %v, want nil", tc.f.Name, tc.v, err)
		case tc.says != "" && (err == nil || !strings.HasPrefix(err.Error(), tc.says)):
			t.Errorf("%s.Check(%s) = %v, want an error starting %q", tc.f.Name, tc.v, err, tc.says)
		}
	}
}
