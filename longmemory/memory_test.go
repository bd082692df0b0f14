package longmemory_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/dawn-go/dawn/dawntest"
	"github.com/dawn-go/dawn/internal/apptest"
	"github.com/dawn-go/dawn/longmemory"
	"github.com/dawn-go/dawn/stream"
	"github.com/tmc/langchaingo/llms"
	"gopkg.in/yaml.v3"
)

// toolOutputs are the outputs of a run's tool_result events, by tool.
func toolOutputs(t *testing.T, events []stream.Event) map[string][]string {
	t.Helper()
	out := map[string][]string{}
	for _, e := range events {
		if e.Type != "tool_result" {
			continue
		}
		var r struct {
			Name   string          `json:"name"`
			Output json.RawMessage `json:"output"`
		}
		if err := json.Unmarshal(e.Data, &r); err != nil {
			t.Fatal(err)
		}
		out[r.Name] = append(out[r.Name], string(r.Output))
	}
	return out
}

// seen is the text of the tool results in a model request.
func seen(msgs []llms.MessageContent) string {
	var b strings.Builder
	for _, m := range msgs {
		for _, p := range m.Parts {
			if r, ok := p.(llms.ToolCallResponse); ok {
				b.WriteString(r.Content + "\n")
			}
		}
	}
	return b.String()
}

// TestRememberedInOneThreadRecalledInAnother: over the real HTTP API, a
// memory the model keeps with remember in thread 1 is found by recall in
// thread 2 and reaches the model; another route's memories are its own.
func TestRememberedInOneThreadRecalledInAnother(t *testing.T) {
	dir := apptest.WriteApp(t, map[string]string{
		"assistant/agent.md": "---\nmemory: true\n---\nYou help and remember what matters.",
		"other/agent.md":     "---\nmemory: {recall_limit: 3}\n---\nYou help.",
	})
	model := dawntest.Script().
		CallTool("remember", map[string]string{"text": "The user's favorite color is teal"}).
		Reply("Noted.").
		CallTool("recall", map[string]string{"query": "favorite COLOR"}).
		Reply("Teal.").
		CallTool("recall", map[string]string{"query": "favorite color"}).
		Reply("I do not know.")
	srv := dawntest.New(t, dir, model, dawntest.Options{})

	first := srv.Run(t, "thread-1", "/assistant", "My favorite color is teal.")
	if first.Err != nil {
		t.Fatal(first.Err)
	}
	if got := toolOutputs(t, first.Events)["remember"]; len(got) != 1 || !strings.Contains(got[0], `"replaced":false`) {
		t.Fatalf("remember: %v", got)
	}

	second := srv.Run(t, "thread-2", "/assistant", "What is my favorite color?")
	if second.Err != nil {
		t.Fatal(second.Err)
	}
	got := toolOutputs(t, second.Events)["recall"]
	if len(got) != 1 || !strings.Contains(got[0], `"text":"The user's favorite color is teal"`) {
		t.Fatalf("recall in thread 2: %v", got)
	}
	reqs := model.Requests()
	if !strings.Contains(seen(reqs[3]), "favorite color is teal") {
		t.Fatalf("the model did not see the recalled memory: %s", seen(reqs[3]))
	}

	other := srv.Run(t, "thread-3", "/other", "What is my favorite color?")
	if other.Err != nil {
		t.Fatal(other.Err)
	}
	if got := toolOutputs(t, other.Events)["recall"]; len(got) != 1 || got[0] != `{"memories":[]}` {
		t.Fatalf("another route recalled this route's memory: %v", got)
	}
}

// TestRememberUnderAKeyReplaces: remembering under a key again replaces
// the memory, and says so.
func TestRememberUnderAKeyReplaces(t *testing.T) {
	dir := apptest.WriteApp(t, map[string]string{"assistant/agent.md": "---\nmemory: true\n---\nYou help."})
	model := dawntest.Script().
		CallTool("remember", map[string]string{"text": "Deploys happen on Tuesday", "key": "deploy-day"}).
		CallTool("remember", map[string]string{"text": "Deploys happen on Friday", "key": "deploy-day"}).
		CallTool("recall", map[string]string{"query": "deploys"}).
		Reply("Friday.")
	srv := dawntest.New(t, dir, model, dawntest.Options{})
	res := srv.Run(t, "t1", "/assistant", "Deploys moved to Friday.")
	if res.Err != nil {
		t.Fatal(res.Err)
	}
	out := toolOutputs(t, res.Events)
	if r := out["remember"]; len(r) != 2 || r[1] != `{"key":"deploy-day","replaced":true}` {
		t.Fatalf("remember: %v", r)
	}
	if r := out["recall"]; len(r) != 1 || strings.Count(r[0], `"key"`) != 1 || !strings.Contains(r[0], "Friday") {
		t.Fatalf("recall: %v", r)
	}
}

func TestParseSettings(t *testing.T) {
	for _, c := range []struct {
		yaml  string
		limit int
		err   string
	}{
		{"true", 5, ""},
		{"{recall_limit: 7}", 7, ""},
		{"{recall_limit: 0}", 0, "recall_limit must be a whole number from 1 to 50"},
		{"{recall_limit: many}", 0, "recall_limit must be a whole number"},
		{"{recall_limit: 2.5}", 0, "recall_limit must be a whole number"},
		{"{limit: 3}", 0, `unknown key "limit"; the allowed keys are writes, recall_limit and approve_replace`},
		{"{writes: candidate}", 5, ""},
		{"{writes: ask, recall_limit: 3}", 3, ""},
		{"{writes: off}", 5, ""},
		{"{writes: sometimes}", 0, "memory.writes must be one of off, candidate, auto, ask"},
		{"{writes: [auto]}", 0, "memory.writes must be one of off, candidate, auto, ask"},
		{"{approve_replace: true}", 5, ""},
		{"{approve_replace: yes please}", 0, "memory.approve_replace must be true or false"},
		{"{approve_replace: [true]}", 0, "memory.approve_replace must be true or false"},
		{"everything", 0, `front matter key "memory" must be memory: true`},
	} {
		var doc yaml.Node
		if err := yaml.Unmarshal([]byte(c.yaml), &doc); err != nil {
			t.Fatal(err)
		}
		s, err := longmemory.ParseSettings(doc.Content[0])
		switch {
		case c.err == "" && (err != nil || s.RecallLimit != c.limit):
			t.Errorf("%s: %+v, %v; want limit %d", c.yaml, s, err, c.limit)
		case c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)):
			t.Errorf("%s: error %v, want one saying %q", c.yaml, err, c.err)
		}
	}
}
