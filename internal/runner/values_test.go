package runner

import (
	"encoding/json"
	"testing"

	"github.com/dawn-go/dawn/thread"
)

// TestEncodeMessagesMatchesMarshal: encodeMessages writes what json.Marshal
// writes for the same messages: HTML and line separators escaped, metadata
// compacted, tool call inputs as given, nil as an empty list.
func TestEncodeMessagesMatchesMarshal(t *testing.T) {
	conversation := []thread.Message{
		{Role: thread.RoleUser, Content: "Is <b>this</b> & that\u2028ok?"},
		{Role: thread.RoleAssistant, ToolCalls: []thread.ToolCall{{ID: "c1", Name: "writeTodos", Input: json.RawMessage(`{ "todos" : [ {"content":"a<b","status":"pending"} ] }`)}}},
		{Role: thread.RoleTool, ToolCallID: "c1", Name: "writeTodos", Content: `{"todos":[]}`, IsError: true},
		{Role: thread.RoleAssistant, Content: "Done.", Meta: map[string]json.RawMessage{"plan": json.RawMessage("{ \"items\" :\n [1, 2] }"), "harness": json.RawMessage(`true`)}},
		{Role: thread.RoleAssistant, Content: "bad \xff utf-8"},
	}
	for _, msgs := range [][]thread.Message{nil, {}, conversation} {
		want, err := json.Marshal(msgs)
		if err != nil {
			t.Fatal(err)
		}
		if msgs == nil {
			want = []byte(`[]`)
		}
		if got := encodeMessages(msgs); string(got) != string(want) {
			t.Errorf("encodeMessages:\n got %s\nwant %s", got, want)
		}
	}
}
