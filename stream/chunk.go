package stream

import "encoding/json"

// Chunk returns a "chunk" event carrying text, a delta of the model's
// answer. Its data is a bare JSON string (data: "Hello"), as Dawn sends it.
func Chunk(text string) Event {
	return Event{Type: TypeChunk, Data: appendJSONString(nil, []byte(text))}
}

// ChunkText returns the text of a chunk event's data: a bare JSON string,
// a subagent.message ({"chunk": "…", "call_id": …}), or the
// subagent.chunk of earlier releases ({"data": "…", "call_id": …}), which
// logs recorded then still hold. Anything else gives "".
func ChunkText(data json.RawMessage) string {
	var text string
	if json.Unmarshal(data, &text) == nil {
		return text
	}
	var forwarded struct {
		Chunk *string `json:"chunk"`
		Data  string  `json:"data"`
	}
	_ = json.Unmarshal(data, &forwarded)
	if forwarded.Chunk != nil {
		return *forwarded.Chunk
	}
	return forwarded.Data
}
