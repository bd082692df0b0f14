package e2e

import (
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"
)

// TestHarnessParallelPlan: the stock binary, on aimock over the OpenAI
// wire protocol, runs a route whose plan.md says mode: parallel. The
// model's writeTodos plan of three look-ups is fanned out to workers (each
// a real model request matched by its item), each item's events carry its
// id and come in order, writeTodos's result hands the three answers back
// in plan order, the model answers from them, and the saved plan is done
// with each worker's answer as its item's evidence.
func TestHarnessParallelPlan(t *testing.T) {
	mock := startAimock(t, "testdata/harness_parallel.json")
	bin := buildDawn(t)
	app := t.TempDir()
	files := map[string]string{
		"cities/agent.md": "---\nmodel: openai:gpt-4o-mini\n---\nYou research cities.\n",
		"cities/plan.md":  "---\nenforce: true\ngoal: A population table\nmode: parallel\nparallel: 2\n---\n",
	}
	writeFiles(t, app, files)
	url := startDawn(t, bin, app, "OPENAI_BASE_URL="+mock+"/v1", "OPENAI_API_KEY=test", "DAWN_API_KEY=")

	body := `{"route":"/cities","input":{"messages":[{"role":"user","content":"Compare three cities by population"}]}}`
	events := readEvents(t, postJSON(t, url+"/threads/p1/runs/stream", body))
	ids := []string{"s0001", "s0002", "s0003"}
	answers := []string{"Oslo has about 709,000 people.", "Lima has about 10 million people.", "Reykjavik has about 140,000 people."}
	perStep := map[string][]string{}
	var merged json.RawMessage
	for _, e := range events {
		var d struct {
			Step   string          `json:"step"`
			CallID string          `json:"call_id"`
			Name   string          `json:"name"`
			Output json.RawMessage `json:"output"`
		}
		_ = json.Unmarshal(e.Data, &d)
		if id := d.Step + d.CallID; slices.Contains(ids, id) {
			perStep[id] = append(perStep[id], e.Type)
		}
		if e.Type == "tool_result" && d.Name == "writeTodos" {
			merged = d.Output
		}
	}
	for _, id := range ids {
		got := perStep[id]
		if len(got) < 3 || got[0] != "step_started" || got[len(got)-1] != "step_finished" || !slices.Contains(got, "subagent.model_call") {
			t.Errorf("events of item %s: %v", id, got)
		}
	}
	var result struct {
		State   string `json:"state"`
		Results []struct {
			ID     string `json:"id"`
			Status string `json:"status"`
			Result string `json:"result"`
		} `json:"results"`
	}
	if err := json.Unmarshal(merged, &result); err != nil {
		t.Fatalf("writeTodos's result: %v in %s", err, merged)
	}
	var got []string
	for _, r := range result.Results {
		got = append(got, r.ID+" "+r.Status+" "+r.Result)
	}
	want := []string{"s0001 completed " + answers[0], "s0002 completed " + answers[1], "s0003 completed " + answers[2]}
	if result.State != "done" || !slices.Equal(got, want) {
		t.Errorf("merged results (plan %s):\n%q\nwant\n%q", result.State, got, want)
	}
	types := strings.ReplaceAll(strings.Join(eventTypes(events), ","), ",plan_revised", "") // the model's first list streams its diff
	if !strings.Contains(types, "tool_result,plan_update,plan_done,") || !strings.HasSuffix(types, ",done") {
		t.Errorf("events: %s", types)
	}
	if last := string(events[len(events)-1].Data); !strings.Contains(last, "Lima is the largest, then Oslo, then Reykjavik.") {
		t.Errorf("done lacks the model's answer: %s", last)
	}

	resp, err := http.Get(url + "/threads/p1/plan")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var plan struct {
		State string `json:"state"`
		Goal  string `json:"goal"`
		Items []struct {
			ID       string `json:"id"`
			Status   string `json:"status"`
			Evidence string `json:"evidence"`
		} `json:"items"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&plan); err != nil {
		t.Fatal(err)
	}
	if plan.State != "done" || plan.Goal != "A population table" || len(plan.Items) != 3 {
		t.Fatalf("saved plan: %+v", plan)
	}
	for i, it := range plan.Items {
		if it.ID != ids[i] || it.Status != "completed" || it.Evidence != answers[i] {
			t.Errorf("item %d: %+v", i, it)
		}
	}
}
