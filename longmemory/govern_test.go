package longmemory_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/dawn-go/dawn/dawntest"
	"github.com/dawn-go/dawn/internal/apptest"
	"github.com/dawn-go/dawn/internal/auth"
	"github.com/dawn-go/dawn/internal/auth/authtest"
	"github.com/dawn-go/dawn/longmemory"
)

// people serves an app with ann's and bob's JWTs and the service key
// "svc", on model, and returns the server's URL and the tokens.
func people(t *testing.T, agent string, model *dawntest.ScriptedModel) (string, map[string]string) {
	t.Helper()
	const secret = "memory-secret-of-at-least-32-bytes!"
	cfg := auth.JWT{SecretEnv: "MEMORY_JWT_SECRET", Audience: "dawn"}
	a, err := auth.New(t.Context(), auth.Options{Config: auth.Config{JWT: &cfg}, APIKey: "svc",
		Env: func(k string) string {
			if k == "MEMORY_JWT_SECRET" {
				return secret
			}
			return ""
		}})
	if err != nil {
		t.Fatal(err)
	}
	dir := apptest.WriteApp(t, map[string]string{"assistant/agent.md": agent})
	h := apptest.New(t, dir, model, apptest.Options{Auth: a})
	srv := httptest.NewServer(h.API)
	t.Cleanup(srv.Close)
	tokens := map[string]string{"service": "svc"}
	for _, u := range []string{"ann", "bob"} {
		tokens[u] = authtest.HS256(t, secret, authtest.Claims(u, "", "dawn"))
	}
	return srv.URL, tokens
}

// as sends method path body with token and returns the status and body.
func as(t *testing.T, token, method, url, body string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+token)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(raw)
}

// lastRecall runs thread as token and returns what recall answered.
func runTurn(t *testing.T, url, token, thread, message string) string {
	t.Helper()
	status, raw := as(t, token, "POST", url+"/threads/"+thread+"/runs/wait", apptest.RunBody("/assistant", message))
	if status != http.StatusOK {
		t.Fatalf("run on %s: %d %s", thread, status, raw)
	}
	return raw
}

// listed is GET /memories's answer.
type listed struct {
	Memories []longmemory.Memory `json:"memories"`
}

func list(t *testing.T, url, token, query string) listed {
	t.Helper()
	status, raw := as(t, token, "GET", url+"/memories?route=/assistant"+query, "")
	var l listed
	if status != http.StatusOK || json.Unmarshal([]byte(raw), &l) != nil {
		t.Fatalf("list memories%s: %d %s", query, status, raw)
	}
	return l
}

// TestGovernedMemoryOverHTTP: with writes: candidate, ann's agent
// proposes a memory that recall does not find; ann approves it over HTTP
// and a later thread recalls it, with who wrote it (user, thread, run)
// and who approved it kept. bob sees none of ann's memories and cannot
// act on them; a rejected candidate is gone; an edit changes what is
// recalled; a forgotten memory is recalled no more; the service
// credential reaches ann's memories with user=ann and exports them.
func TestGovernedMemoryOverHTTP(t *testing.T) {
	model := dawntest.Script().
		CallTool("remember", map[string]string{"text": "Ann prefers tea", "key": "drink"}).Reply("Noted.").
		CallTool("recall", map[string]string{"query": "tea"}).Reply("Nothing yet.").
		CallTool("recall", map[string]string{"query": "tea"}).Reply("Tea.").
		CallTool("remember", map[string]string{"text": "Ann hates mornings", "key": "mornings"}).Reply("Noted.").
		CallTool("recall", map[string]string{"query": "tea mornings"}).Reply("Green tea.").
		CallTool("recall", map[string]string{"query": "tea"}).Reply("Nothing.")
	url, tok := people(t, "---\nmemory: {writes: candidate}\n---\nYou remember.", model)

	if out := runTurn(t, url, tok["ann"], "a1", "I prefer tea."); !strings.Contains(out, "Noted.") {
		t.Fatalf("a1: %s", out)
	}
	if got := lastRecall(t, model); strings.Contains(got, "tea") {
		t.Fatalf("the remember of a candidate route: %s", got)
	}
	runTurn(t, url, tok["ann"], "a2", "What do I drink?")
	if got := lastRecall(t, model); strings.Contains(got, "Ann prefers tea") {
		t.Fatalf("recall found a candidate before approval: %s", got)
	}
	cands := list(t, url, tok["ann"], "&status=candidate").Memories
	if len(cands) != 1 || cands[0].Key != "drink" || cands[0].Status != "candidate" || cands[0].WrittenBy == nil || cands[0].WrittenBy.User != "ann" || cands[0].WrittenBy.Thread != "a1" || cands[0].WrittenBy.Run == "" {
		t.Fatalf("ann's candidates: %+v", cands)
	}
	if l := list(t, url, tok["bob"], ""); len(l.Memories) != 0 {
		t.Fatalf("bob sees ann's memories: %+v", l)
	}
	if status, raw := as(t, tok["bob"], "POST", url+"/memories/approve", `{"route":"/assistant","key":"drink"}`); status != http.StatusNotFound {
		t.Fatalf("bob approving ann's candidate: %d %s", status, raw)
	}
	if status, raw := as(t, tok["ann"], "POST", url+"/memories/approve", `{"route":"/assistant","key":"drink"}`); status != http.StatusOK {
		t.Fatalf("ann approving: %d %s", status, raw)
	}
	runTurn(t, url, tok["ann"], "a3", "What do I drink?")
	if got := lastRecall(t, model); !strings.Contains(got, "Ann prefers tea") {
		t.Fatalf("recall after approval, in another thread: %s", got)
	}
	approved := list(t, url, tok["ann"], "&status=approved").Memories
	if len(approved) != 1 || approved[0].ApprovedBy == nil || approved[0].ApprovedBy.User != "ann" || approved[0].ApprovedBy.Via != "http" || approved[0].ApprovedAt == "" || approved[0].WrittenBy.Thread != "a1" {
		t.Fatalf("the approved memory's provenance: %+v", approved)
	}

	runTurn(t, url, tok["ann"], "a4", "I hate mornings.")
	if status, raw := as(t, tok["ann"], "POST", url+"/memories/reject", `{"route":"/assistant","key":"mornings"}`); status != http.StatusOK {
		t.Fatalf("reject: %d %s", status, raw)
	}
	if status, raw := as(t, tok["ann"], "POST", url+"/memories/edit", `{"route":"/assistant","key":"drink","text":"Ann prefers green tea"}`); status != http.StatusOK {
		t.Fatalf("edit: %d %s", status, raw)
	}
	runTurn(t, url, tok["ann"], "a5", "What do I drink?")
	if got := lastRecall(t, model); !strings.Contains(got, "Ann prefers green tea") || strings.Contains(got, "mornings") {
		t.Fatalf("recall after a reject and an edit: %s", got)
	}
	checkServiceReach(t, url, tok)
	if status, raw := as(t, tok["ann"], "POST", url+"/memories/forget", `{"route":"/assistant","key":"drink"}`); status != http.StatusOK {
		t.Fatalf("forget: %d %s", status, raw)
	}
	runTurn(t, url, tok["ann"], "a6", "What do I drink?")
	if got := lastRecall(t, model); strings.Contains(got, "tea") {
		t.Fatalf("recall after forget: %s", got)
	}
}

// checkServiceReach: the service credential lists and exports ann's
// memories with user=ann; bob may not name ann.
func checkServiceReach(t *testing.T, url string, tok map[string]string) {
	t.Helper()
	if l := list(t, url, tok["service"], "&user=ann"); len(l.Memories) != 1 || l.Memories[0].Text != "Ann prefers green tea" || l.Memories[0].EditedBy == nil {
		t.Fatalf("the service's view of ann's memories: %+v", l)
	}
	if status, raw := as(t, tok["bob"], "GET", url+"/memories?route=/assistant&user=ann", ""); status != http.StatusForbidden {
		t.Fatalf("bob naming ann: %d %s", status, raw)
	}
	status, raw := as(t, tok["service"], "GET", url+"/memories/export?route=/assistant&user=ann", "")
	if status != http.StatusOK || !strings.Contains(raw, `"exported_at"`) || !strings.Contains(raw, `"written_by":{"user":"ann","thread":"a1"`) {
		t.Fatalf("export: %d %s", status, raw)
	}
	if status, raw := as(t, tok["ann"], "GET", url+"/memories", ""); status != http.StatusBadRequest || !strings.Contains(raw, "route=/assistant") {
		t.Fatalf("a list naming no route: %d %s", status, raw)
	}
	status, raw = as(t, tok["service"], "GET", url+"/audit", "")
	if status != http.StatusOK || !strings.Contains(raw, `"action":"long_term_memory","user":"ann","outcome":"ok","detail":{"method":"POST","path":"/memories/approve"`) {
		t.Fatalf("the audit log has no entry of ann's approval: %d %s", status, raw)
	}
}

// lastRecall is the last tool result the model has seen.
func lastRecall(t *testing.T, model *dawntest.ScriptedModel) string {
	t.Helper()
	reqs := model.Requests()
	return seen(reqs[len(reqs)-1])
}
