package store

import (
	"bytes"
	"crypto/rand"
	"encoding/json"
	"strings"
	"testing"

	"github.com/dawn-go/dawn/thread"
)

// workloadDone is a done event of the load tool's workload: the final state
// with its four messages and four todos, about 1.2 KB.
var workloadDone = func() json.RawMessage {
	var plan struct {
		Todos json.RawMessage `json:"todos"`
	}
	if err := json.Unmarshal([]byte(workloadTodos), &plan); err != nil {
		panic(err)
	}
	messages := []thread.Message{
		{Role: thread.RoleUser, Content: "Help me with my account"},
		{Role: thread.RoleAssistant, ToolCalls: []thread.ToolCall{{ID: "call_1", Name: "writeTodos", Input: json.RawMessage(workloadTodos)}}},
		{Role: thread.RoleTool, Content: workloadTodos, ToolCallID: "call_1", Name: "writeTodos"},
		{Role: thread.RoleAssistant, Content: "Your account is in good standing."},
	}
	output, err := json.Marshal(map[string]any{"messages": messages, "todos": plan.Todos})
	if err != nil {
		panic(err)
	}
	done, err := json.Marshal(map[string]json.RawMessage{"output": output})
	if err != nil {
		panic(err)
	}
	return done
}()

// randomBytes returns n random bytes, which DEFLATE cannot shrink.
func randomBytes(n int) json.RawMessage {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return b
}

func TestEventCodecRoundTrip(t *testing.T) {
	tests := []struct {
		name  string
		data  json.RawMessage
		codec int
	}{
		{"empty", nil, codecPlain},
		{"small", json.RawMessage(`{"content":"Hi <b> & \u00e9"}`), codecPlain},
		{"just below the threshold", json.RawMessage(`"` + strings.Repeat("a", compressMin-3) + `"`), codecPlain},
		{"at the threshold", json.RawMessage(`"` + strings.Repeat("a", compressMin-2) + `"`), codecDeflate},
		{"done event", workloadDone, codecDeflate},
		{"spacing kept", json.RawMessage("{ \"a\" :\n [1, 2] ,\t\"b\": \"" + strings.Repeat("xy", 400) + "\" }"), codecDeflate},
		{"incompressible", randomBytes(4096), codecPlain},
		{"large", json.RawMessage(`[` + strings.Repeat(workloadTodos+`,`, 300) + `{}]`), codecDeflate},
	}
	var p packer
	var u unpacker
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			codec, value := p.pack(tt.data)
			if codec != tt.codec {
				t.Errorf("codec %d, want %d", codec, tt.codec)
			}
			stored := bytes.Clone(value)
			if codec == codecDeflate && len(stored) > len(tt.data)-len(tt.data)/8 {
				t.Errorf("stored %d bytes for %d", len(stored), len(tt.data))
			}
			got, err := u.unpack(codec, stored)
			must(t, err)
			if !bytes.Equal(got, tt.data) || (got == nil) != (len(tt.data) == 0) {
				t.Errorf("round trip changed the data:\n got %q\nwant %q", got, tt.data)
			}
		})
	}
	if _, err := u.unpack(codecDeflate, []byte("not deflate")); err == nil {
		t.Error("unpack of broken DEFLATE data succeeded")
	}
	if _, err := u.unpack(7, []byte("x")); err == nil || !strings.Contains(err.Error(), "newer dawn") {
		t.Errorf("unpack of an unknown codec = %v, want an error saying a newer dawn wrote it", err)
	}
}

// FuzzEventCodec checks that any event data comes back byte for byte.
func FuzzEventCodec(f *testing.F) {
	f.Add([]byte(workloadDone))
	f.Add([]byte(`{"todos":[]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		var p packer
		var u unpacker
		codec, stored := p.pack(data)
		got, err := u.unpack(codec, stored)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, data) {
			t.Fatalf("round trip changed %d bytes of data into %d", len(data), len(got))
		}
	})
}

// BenchmarkPackEvent compresses the workload's done event.
func BenchmarkPackEvent(b *testing.B) {
	var p packer
	b.ReportAllocs()
	var n int
	for b.Loop() {
		_, v := p.pack(workloadDone)
		n = len(v)
	}
	b.ReportMetric(float64(len(workloadDone)), "json-bytes")
	b.ReportMetric(float64(n), "stored-bytes")
}

// BenchmarkUnpackEvent decompresses the workload's done event.
func BenchmarkUnpackEvent(b *testing.B) {
	var p packer
	_, v := p.pack(workloadDone)
	blob := bytes.Clone(v)
	var u unpacker
	b.ReportAllocs()
	for b.Loop() {
		if _, err := u.unpack(codecDeflate, blob); err != nil {
			b.Fatal(err)
		}
	}
}
