package longmemory_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/dawn-go/dawn/dawntest"
	"github.com/dawn-go/dawn/internal/apptest"
	"github.com/dawn-go/dawn/longmemory"
)

func TestSimilarity(t *testing.T) {
	for _, c := range []struct {
		a, b string
		want float64
	}{
		{"Deploys happen on Tuesday", "deploys happen on tuesday.", 1},
		{"Deploys happen on Tuesday", "Deploys happen on Friday", 0.6},
		{"Ann prefers tea", "Bob likes coffee", 0},
		{"", "anything", 0},
	} {
		if got := longmemory.Similarity(c.a, c.b); got != c.want {
			t.Errorf("Similarity(%q, %q) = %v, want %v", c.a, c.b, got, c.want)
		}
	}
}

// TestDuplicatesMerge: a remember whose text is alike a kept memory's
// (MergeThreshold) under another key is merged into it: one memory, the
// newer text, counted; one that is not alike enough is kept beside it.
func TestDuplicatesMerge(t *testing.T) {
	model := dawntest.Script().
		CallTool("remember", map[string]string{"text": "Deploys happen on Tuesday", "key": "deploys"}).
		CallTool("remember", map[string]string{"text": "deploys happen on tuesday."}).
		CallTool("remember", map[string]string{"text": "Deploys happen on Friday", "key": "other"}).
		Reply("Noted.")
	dir := apptest.WriteApp(t, map[string]string{"assistant/agent.md": "---\nmemory: true\n---\nYou remember."})
	srv := dawntest.New(t, dir, model, dawntest.Options{})
	res := srv.Run(t, "t1", "/assistant", "Deploys are on Tuesday.")
	if res.Err != nil {
		t.Fatal(res.Err)
	}
	out := toolOutputs(t, res.Events)["remember"]
	if len(out) != 3 || out[1] != `{"key":"deploys","replaced":true,"merged":true}` || out[2] != `{"key":"other","replaced":false}` {
		t.Fatalf("remember: %v", out)
	}
	var rec longmemory.Record
	item := storedItem(t, srv.URL, "deploys")
	if err := json.Unmarshal(item, &rec); err != nil || rec.Text != "deploys happen on tuesday." || rec.Merged != 1 || rec.WrittenBy == nil || rec.WrittenBy.Thread != "t1" || rec.ApprovedBy == nil || rec.ApprovedBy.Via != "auto" {
		t.Fatalf("the merged memory: %s", item)
	}
}

// storedItem is the value of the memory under key, read through the
// Store API.
func storedItem(t *testing.T, url, key string) json.RawMessage {
	t.Helper()
	var item struct {
		Value json.RawMessage `json:"value"`
	}
	if status := apptest.GetJSON(t, url+"/store/items?namespace=memories./assistant&key="+key, &item); status != 200 {
		t.Fatalf("memory %s: %d", key, status)
	}
	return item.Value
}

// TestAskWrites: with writes: ask, every remember of new text parks the
// run with a memory interrupt (no old text); an edit writes the person's
// text and records the write as approved at the interrupt; a reject
// writes nothing.
func TestAskWrites(t *testing.T) {
	for _, c := range []struct{ name, payload, want string }{
		{"edit", `{"decision":"edit","text":"Deploys happen on Wednesday"}`, "Deploys happen on Wednesday"},
		{"approve", `"approve"`, "Deploys happen on Friday"},
		{"reject", `"reject"`, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			model := dawntest.Script().
				CallTool("remember", map[string]string{"text": "Deploys happen on Friday", "key": "deploy-day"}).
				Reply("Done.")
			dir := apptest.WriteApp(t, map[string]string{"assistant/agent.md": "---\nmemory: {writes: ask}\n---\nYou remember."})
			srv := dawntest.New(t, dir, model, dawntest.Options{})
			in := parkOnReplace0(t, srv.URL)
			if in.Kind != "memory" || in.Detail.OldText != "" || in.Detail.NewText != "Deploys happen on Friday" {
				t.Fatalf("interrupt: %+v", in)
			}
			apptest.ReadSSE(t, resumeMemory(t, srv.URL, in.ID, "resolved", c.payload))
			if got := storedText(t, srv.URL, "deploy-day"); got != c.want {
				t.Fatalf("memory after %s: %q, want %q", c.name, got, c.want)
			}
			if c.want == "" {
				return
			}
			var rec longmemory.Record
			if err := json.Unmarshal(storedItem(t, srv.URL, "deploy-day"), &rec); err != nil || rec.ApprovedBy == nil || rec.ApprovedBy.Via != "ask" {
				t.Fatalf("the approved memory: %+v %v", rec, err)
			}
		})
	}
}

// parkOnReplace0 runs thread t1 until its remember parks it, and returns
// the interrupt.
func parkOnReplace0(t *testing.T, url string) memoryInterrupt {
	t.Helper()
	events := apptest.ReadSSE(t, apptest.PostJSON(t, url+"/threads/t1/runs/stream", apptest.RunBody("/assistant", "Deploys moved to Friday.")))
	if got := strings.Join(dawntest.Types(events), ","); !strings.HasSuffix(got, "tool_call,interrupt,done") {
		t.Fatalf("events of a parked run: %s", got)
	}
	var in memoryInterrupt
	if err := json.Unmarshal(events[len(events)-2].Data, &in); err != nil {
		t.Fatal(err)
	}
	return in
}
