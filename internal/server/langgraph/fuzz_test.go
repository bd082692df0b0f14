package langgraph

import (
	"encoding/json"
	"errors"
	"net/http"
	"testing"

	"github.com/dawn-go/dawn/internal/server/wire"
)

// FuzzParseLCInput: whatever a LangGraph run's input holds, parsing it
// never panics, a refusal is a 400 naming the input, and what it accepts
// maps every message to one of Dawn's roles.
func FuzzParseLCInput(f *testing.F) {
	for _, seed := range []string{
		`{"messages":[{"type":"human","content":"Hello"}]}`,
		`{"messages":"Hello","ticket_id":"T-1"}`,
		`{"messages":{"role":"user","content":"Hello"}}`,
		`{"messages":[{"type":"HumanMessageChunk","content":[{"type":"text","text":"a"},{"type":"text","text":"b"}]}]}`,
		`{"messages":[{"type":"human","content":[{"type":"image_url","image_url":"x"}]}]}`,
		`{"messages":[{"type":"robot","content":"x"}]}`,
		`{"messages":[1,2]}`,
		`null`,
		`[]`,
		`"text"`,
	} {
		f.Add([]byte(seed))
	}
	roles := map[string]bool{}
	for _, r := range lcRoles {
		roles[r] = true
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		in, err := parseLCInput(raw)
		if err != nil {
			var ae *wire.Error
			if !errors.As(err, &ae) || ae.Status != http.StatusBadRequest || ae.Msg == "" {
				t.Fatalf("parseLCInput(%q) = %v, want a 400 with a message", raw, err)
			}
			return
		}
		for i, m := range in.Messages {
			if !roles[m.Role] {
				t.Fatalf("message %d of %q has role %q", i, raw, m.Role)
			}
		}
		if _, ok := in.Values["messages"]; ok {
			t.Fatalf("messages left among the values of %q", raw)
		}
		if json.Valid(raw) && len(in.Messages) > 0 && in.Values == nil {
			t.Fatalf("messages without values map for %q", raw)
		}
	})
}
