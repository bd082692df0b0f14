package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/dawn-go/dawn/dawntest"
	"github.com/dawn-go/dawn/internal/models"
)

// TestOfflineCallsLookupAccount runs /support/acme over HTTP with the
// offline model: after the plan it calls the route's app tool
// lookupAccount with the user's text as the email, and its answer quotes
// the tool's result.
func TestOfflineCallsLookupAccount(t *testing.T) {
	h := dawntest.New(t, ".", models.NewOffline(), dawntest.Options{Tools: appTools(), Markers: appMarkers()})
	res := h.Run(t, "offline-tools", "/support/acme", "ann@acme.com")
	if res.Err != nil {
		t.Fatalf("run failed: %v", res.Err)
	}
	var calls []string
	var output string
	for _, e := range res.Events {
		var data struct {
			Name   string          `json:"name"`
			Input  json.RawMessage `json:"input"`
			Output json.RawMessage `json:"output"`
		}
		if err := json.Unmarshal(e.Data, &data); err != nil || data.Name == "writeTodos" {
			continue
		}
		switch e.Type {
		case "tool_call":
			calls = append(calls, data.Name+" "+string(data.Input))
		case "tool_result":
			output = string(data.Output)
		}
	}
	if want := `lookupAccount {"email":"ann@acme.com"}`; len(calls) != 1 || calls[0] != want {
		t.Fatalf("app tool calls = %q, want [%s]", calls, want)
	}
	if !strings.Contains(output, `"plan":"business"`) {
		t.Errorf("lookupAccount output = %s, want the acme business plan", output)
	}
	var messages []struct {
		Content string `json:"content"`
	}
	if err := json.Unmarshal(res.Values["messages"], &messages); err != nil || len(messages) == 0 {
		t.Fatalf("messages = %s: %v", res.Values["messages"], err)
	}
	if answer := messages[len(messages)-1].Content; !strings.Contains(answer, "lookupAccount answered") || !strings.Contains(answer, "business") {
		t.Errorf("answer = %q, want it to quote lookupAccount's result", answer)
	}
}
