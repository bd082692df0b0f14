package stream

import "encoding/json"

// Chunk returns a "chunk" event carrying text, a delta of the model's
// answer. Its data is a bare JSON string (data: "Hello"), as Dawn sends it.
func Chunk(text string) Event {
	return Event{Type: TypeChunk, Data: appendJSONString(nil, []byte(text))}
}

// ChunkText returns the text of a chunk event's data: a bare JSON string, or
// a forwarded subagent chunk ({"data": "…", "call_id": …}). Anything else
// gives "".
func ChunkText(data json.RawMessage) string {
	var text string
	if json.Unmarshal(data, &text) == nil {
		return text
	}
	var forwarded struct {
		Data string `json:"data"`
	}
	_ = json.Unmarshal(data, &forwarded)
	return forwarded.Data
}
