package stream_test

import (
	"encoding/json"
	"testing"

	"github.com/dawn-go/dawn/stream"
)

func TestChunkIsABareJSONString(t *testing.T) {
	for _, text := range []string{"Hello", "", `say "hi"`, "line\nbreak", "<b>&</b>", "héllo ✓"} {
		e := stream.Chunk(text)
		var got string
		if err := json.Unmarshal(e.Data, &got); err != nil || got != text {
			t.Errorf("Chunk(%q).Data = %s: decodes to %q (%v)", text, e.Data, got, err)
		}
		if e.Type != stream.TypeChunk {
			t.Errorf("Chunk(%q).Type = %q", text, e.Type)
		}
		if got := stream.ChunkText(e.Data); got != text {
			t.Errorf("ChunkText(%s) = %q, want %q", e.Data, got, text)
		}
		fwd := stream.Forward(e, stream.Subagent{CallID: "c1", Name: "r", RouteID: "/r", Depth: 1})
		if got := stream.ChunkText(fwd.Data); got != text {
			t.Errorf("ChunkText of the forwarded %s = %q, want %q", fwd.Data, got, text)
		}
	}
	for _, data := range []string{`{"content":"x"}`, `42`, `{oops`, ``} {
		if got := stream.ChunkText(json.RawMessage(data)); got != "" {
			t.Errorf("ChunkText(%s) = %q, want \"\"", data, got)
		}
	}
}
