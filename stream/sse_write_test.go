package stream_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"testing"

	"github.com/dawn-go/dawn/stream"
)

func TestAppendSSE(t *testing.T) {
	tests := []struct {
		name string
		in   stream.Event
		want string
	}{
		{
			name: "plain event",
			in:   stream.Event{ID: 3, Type: "chunk", Data: json.RawMessage(`{"content":"hi"}`)},
			want: "id: 3\nevent: chunk\ndata: {\"content\":\"hi\"}\n\n",
		},
		{
			name: "ID 0 leaves out the id line",
			in:   stream.Event{Type: "done", Data: json.RawMessage(`{"output":null}`)},
			want: "event: done\ndata: {\"output\":null}\n\n",
		},
		{
			name: "escaped newlines inside strings stay escaped",
			in:   stream.Event{ID: 1, Type: "chunk", Data: json.RawMessage(`{"content":"a\nb\r\nc"}`)},
			want: "id: 1\nevent: chunk\ndata: {\"content\":\"a\\nb\\r\\nc\"}\n\n",
		},
		{
			name: "pretty JSON is compacted",
			in:   stream.Event{ID: 2, Type: "plan_update", Data: json.RawMessage("{\n  \"todos\": [\r\n    {\"content\": \"a b\", \"status\": \"pending\"}\n  ]\n}\n")},
			want: "id: 2\nevent: plan_update\ndata: {\"todos\":[{\"content\":\"a b\",\"status\":\"pending\"}]}\n\n",
		},
		{
			name: "invalid JSON becomes a JSON string",
			in:   stream.Event{ID: 4, Type: "chunk", Data: json.RawMessage("not json\nevent: evil\r\n\ndata: x")},
			want: "id: 4\nevent: chunk\ndata: \"not json\\nevent: evil\\r\\n\\ndata: x\"\n\n",
		},
		{
			name: "invalid UTF-8 in invalid JSON is replaced",
			in:   stream.Event{Type: "x", Data: json.RawMessage("\xff\"\\\x01")},
			want: "event: x\ndata: \"\\ufffd\\\"\\\\\\u0001\"\n\n",
		},
		{
			name: "event lookalike text inside data stays inside the string",
			in:   stream.Event{ID: 5, Type: "chunk", Data: json.RawMessage(`{"content":"\n\nevent: done\ndata: {}\n\n"}`)},
			want: "id: 5\nevent: chunk\ndata: {\"content\":\"\\n\\nevent: done\\ndata: {}\\n\\n\"}\n\n",
		},
		{
			name: "newlines are stripped from the type",
			in:   stream.Event{ID: 6, Type: "plan\r\n\nevent: x\r_update", Data: json.RawMessage(`{}`)},
			want: "id: 6\nevent: planevent: x_update\ndata: {}\n\n",
		},
		{
			name: "empty data is an empty object",
			in:   stream.Event{ID: 7, Type: "done"},
			want: "id: 7\nevent: done\ndata: {}\n\n",
		},
		{
			name: "data that is not an object is kept",
			in:   stream.Event{Type: "chunk", Data: json.RawMessage(` [1, "two", null] `)},
			want: "event: chunk\ndata: [1,\"two\",null]\n\n",
		},
		{
			name: "negative and large IDs",
			in:   stream.Event{ID: -9223372036854775808, Type: "t", Data: json.RawMessage(`1`)},
			want: "id: -9223372036854775808\nevent: t\ndata: 1\n\n",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var buf bytes.Buffer
			buf.Write(stream.AppendSSE(nil, tt.in))
			if got := buf.String(); got != tt.want {
				t.Errorf("AppendSSE:\n got %q\nwant %q", got, tt.want)
			}
			if got := string(stream.AppendSSE([]byte("prefix"), tt.in)); got != "prefix"+tt.want {
				t.Errorf("AppendSSE:\n got %q\nwant %q", got, "prefix"+tt.want)
			}
		})
	}
}

func TestWriteComment(t *testing.T) {
	tests := []struct{ text, want string }{
		{"ping", ": ping\n\n"},
		{"", ":\n\n"},
		{"a\nb\r\nc\rd", ": a\n: b\n: c\n: d\n\n"},
	}
	for _, tt := range tests {
		var buf bytes.Buffer
		if err := stream.WriteComment(&buf, tt.text); err != nil {
			t.Fatal(err)
		}
		if buf.String() != tt.want {
			t.Errorf("WriteComment(%q) = %q, want %q", tt.text, buf.String(), tt.want)
		}
		r := stream.NewReader(&buf)
		if e, err := r.Next(); err == nil {
			t.Errorf("comment %q was read as event %+v", tt.text, e)
		}
	}
}

type failingWriter struct{}

func (failingWriter) Write([]byte) (int, error) { return 0, errors.New("client gone") }

func TestWriteCommentReturnsWriteError(t *testing.T) {
	if err := stream.WriteComment(failingWriter{}, "ping"); err == nil {
		t.Error("WriteComment to a failing writer returned nil")
	}
}
