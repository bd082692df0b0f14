package thread

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"
)

// TestMessageMetaJSON: metadata keys sit beside the message's own fields,
// in key order after them, exactly where the harness's harness and plan
// fields used to be, and read back into Meta; a message without metadata
// keeps a nil Meta.
func TestMessageMetaJSON(t *testing.T) {
	m := Message{Role: RoleAssistant, Content: "a <b> & c", IsError: true, Meta: map[string]json.RawMessage{
		"plan":    json.RawMessage(`{"state":"done"}`),
		"harness": json.RawMessage(`true`),
	}}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(&m); err != nil {
		t.Fatal(err)
	}
	want := `{"role":"assistant","content":"a <b> & c","is_error":true,"harness":true,"plan":{"state":"done"}}` + "\n"
	if buf.String() != want {
		t.Errorf("encoded = %s, want %s", buf.String(), want)
	}
	escaped, err := json.Marshal([]Message{m})
	if err != nil || !bytes.Contains(escaped, []byte(`a \u003cb\u003e \u0026 c`)) {
		t.Errorf("json.Marshal = %s (%v), want HTML escaped as for any value", escaped, err)
	}
	var back Message
	if err := json.Unmarshal(buf.Bytes(), &back); err != nil || !reflect.DeepEqual(back, m) {
		t.Errorf("round trip = %+v (%v), want %+v", back, err, m)
	}

	var plain Message
	if err := json.Unmarshal([]byte(`{"role":"user","content":"hi \"x\", {\"role\":1}","tool_calls":[{"id":"c","name":"n","input":{"k":"v"}}]}`), &plain); err != nil {
		t.Fatal(err)
	}
	if plain.Meta != nil || plain.ToolCalls[0].Name != "n" {
		t.Errorf("message without metadata = %+v", plain)
	}
	if out, _ := json.Marshal(Message{Role: RoleUser, Content: "x", Meta: map[string]json.RawMessage{}}); string(out) != `{"role":"user","content":"x"}` {
		t.Errorf("empty Meta = %s", out)
	}
	if _, err := json.Marshal(Message{Meta: map[string]json.RawMessage{"k": json.RawMessage(`{`)}}); err == nil {
		t.Error("invalid metadata JSON was written")
	}
}
