package planning

import (
	"encoding/json"
	"strings"
	"testing"
)

func FuzzParse(f *testing.F) {
	f.Add([]byte("- [ ] Understand the customer request\n- [x] Check account context\n"))
	f.Add([]byte("- [ ] parent\n  - [X] child\n"))
	f.Add([]byte("\xef\xbb\xbf- [ ] bom\r\n"))
	f.Fuzz(func(t *testing.T, src []byte) {
		todos := Parse(src)
		if todos == nil {
			t.Fatal("Parse returned nil")
		}
		for i, td := range todos {
			if td.Content == "" || td.Content != strings.TrimSpace(td.Content) {
				t.Errorf("todos[%d].content = %q: empty or not trimmed", i, td.Content)
			}
			if td.Status != Pending && td.Status != Completed {
				t.Errorf("todos[%d].status = %q", i, td.Status)
			}
		}
	})
}

func FuzzValidate(f *testing.F) {
	f.Add([]byte(`{"todos":[{"content":"a","status":"pending"}]}`))
	f.Add([]byte(`{"todos":[{"content":"a","status":"done","x":1}]}`))
	f.Add([]byte(`null`))
	f.Fuzz(func(t *testing.T, raw []byte) {
		todos, err := Validate(raw)
		if err != nil {
			if todos != nil {
				t.Fatal("todos returned with an error")
			}
			return
		}
		if todos == nil {
			t.Fatal("nil todos without an error")
		}
		for i, td := range todos {
			if td.Content == "" || td.Content != strings.TrimSpace(td.Content) || len(td.Content) > MaxContentBytes || !td.Status.Valid() {
				t.Errorf("todos[%d] = %+v passed validation", i, td)
			}
		}
		// What passed validation passes again once encoded.
		again, err := json.Marshal(map[string]any{"todos": todos})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := Validate(again); err != nil {
			t.Errorf("re-encoded input fails: %v", err)
		}
	})
}
