package stream_test

import (
	"bytes"
	"encoding/json"
	"io"
	"strings"
	"testing"

	"github.com/dawn-go/dawn/stream"
)

// sanitizedType is the type a client sees for typ after AppendSSE.
func sanitizedType(typ string) string {
	typ = strings.NewReplacer("\r", "", "\n", "").Replace(typ)
	if typ == "" {
		return "message"
	}
	return typ
}

// compactJSON returns data as AppendSSE encodes it.
func compactJSON(t testing.TB, data []byte) []byte {
	if len(data) == 0 {
		return []byte("{}")
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, data); err != nil {
		s, _ := json.Marshal(string(data))
		return s
	}
	return buf.Bytes()
}

func TestSSERoundTrip(t *testing.T) {
	events := []stream.Event{
		stream.New("chunk", map[string]string{"content": "hello\n\nevent: done\ndata: {}\r\n"}),
		stream.New("plan_update", map[string]any{"todos": []map[string]string{{"content": "a", "status": "pending"}, {"content": "b\u2028c", "status": "completed"}}}),
		{Type: "pretty", Data: json.RawMessage("{\n\t\"a\": [1, 2],\r\n\t\"b\": \"x y\"\n}")},
		{Type: "invalid", Data: json.RawMessage("line1\nline2\rline3\r\n\n: comment\ndata: x")},
		{Type: "type\nwith\r\nbreaks", Data: json.RawMessage(`{}`)},
		{Type: "", Data: json.RawMessage(`null`)},
		{Type: "empty data"},
		{Type: ":colon first", Data: json.RawMessage(`"s"`)},
		{Type: " leading space", Data: json.RawMessage(`1e5`)},
		{Type: "unicode ☀", Data: json.RawMessage(`{"k":"\u0000\ud83d\ude00☀"}`)},
		stream.New("big", map[string]string{"content": strings.Repeat("ab\n", 100000)}),
	}
	l := stream.NewLog()
	var want []stream.Event
	for range 10 {
		for _, e := range events {
			e = l.Publish(e)
			want = append(want, stream.Event{ID: e.ID, Type: sanitizedType(e.Type), Data: compactJSON(t, e.Data)})
		}
	}
	want = append(want, stream.Event{Type: "no id", Data: []byte(`{}`)})
	var wire bytes.Buffer
	for _, e := range l.Since(0) {
		wire.Write(stream.AppendSSE(nil, e))
		if err := stream.WriteComment(&wire, "ping"); err != nil {
			t.Fatal(err)
		}
	}
	wire.Write(stream.AppendSSE(nil, stream.Event{Type: "no id", Data: []byte(`{}`)}))
	r := stream.NewReader(&wire)
	for i, w := range want {
		got, err := r.Next()
		if err != nil {
			t.Fatalf("event %d: %v", i, err)
		}
		if got.ID != w.ID || got.Type != w.Type || !bytes.Equal(got.Data, w.Data) {
			t.Fatalf("event %d:\n got %d %q %s\nwant %d %q %s", i, got.ID, got.Type, got.Data, w.ID, w.Type, w.Data)
		}
		if !json.Valid(got.Data) {
			t.Fatalf("event %d data is not valid JSON: %s", i, got.Data)
		}
	}
	if _, err := r.Next(); err != io.EOF {
		t.Fatalf("after the last event: %v, want io.EOF", err)
	}
	if r.LastID != "110" {
		t.Errorf("LastID = %q, want 110", r.LastID)
	}
}
