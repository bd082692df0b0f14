package server_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dawn-go/dawn/capabilities"
	"github.com/dawn-go/dawn/dawntest"
	"github.com/dawn-go/dawn/internal/apptest"
	"github.com/dawn-go/dawn/internal/auth/authtest"
	"github.com/dawn-go/dawn/internal/server"
	"github.com/dawn-go/dawn/stream"
	"github.com/tmc/langchaingo/llms"
)

// opsApp is an app whose /ops route must have each release call approved.
func opsApp(t *testing.T) (string, capabilities.AppTool) {
	t.Helper()
	dir := writeApp(t, map[string]string{"ops/agent.md": "---\napprove: [release]\n---\nYou release."})
	release := capabilities.AppTool{Tool: capabilities.Func("release", "Release a version.", func(_ context.Context, in struct {
		Version string `json:"version"`
	}) (string, error) {
		return "released " + in.Version, nil
	})}
	return dir, release
}

// serveOps serves the ops app on the SQLite file db with JWT
// authentication, every run calling release and then answering.
func serveOps(t *testing.T, dir, db string, release capabilities.AppTool) string {
	t.Helper()
	model := dawntest.Script().Then(releaseTurn).Repeat()
	h := apptest.New(t, dir, model, apptest.Options{Tools: []capabilities.AppTool{release}, StorePath: db})
	srv := httptest.NewServer(server.New(h.Runs, server.Options{Auth: hsAuth(t)}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// releaseTurn calls release when the conversation ends with the user's
// message, and otherwise answers: every run calls release once.
func releaseTurn(msgs []llms.MessageContent, _ llms.CallOptions) (*llms.ContentResponse, error) {
	if msgs[len(msgs)-1].Role == llms.ChatMessageTypeHuman {
		call := llms.ToolCall{ID: fmt.Sprintf("call-%d", len(msgs)), Type: "function", FunctionCall: &llms.FunctionCall{Name: "release", Arguments: `{"version":"1.2"}`}}
		return &llms.ContentResponse{Choices: []*llms.ContentChoice{{ToolCalls: []llms.ToolCall{call}}}}, nil
	}
	return &llms.ContentResponse{Choices: []*llms.ContentChoice{{Content: "Released."}}}, nil
}

// interruptOf returns the id of the interrupt a stream parked on, or "".
func interruptOf(events []stream.Event) string {
	for _, ev := range events {
		if ev.Type == "interrupt" {
			var in struct {
				ID string `json:"interruptId"`
			}
			_ = json.Unmarshal(ev.Data, &in)
			return in.ID
		}
	}
	return ""
}

// decisionsOf reads the decisions GET /threads/:id/state shows.
func decisionsOf(t *testing.T, url, thread, token string) []capabilities.Decision {
	t.Helper()
	resp := authed(t, http.MethodGet, url+"/threads/"+thread+"/state", token, "")
	defer resp.Body.Close()
	var st struct {
		Values map[string]json.RawMessage `json:"values"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&st); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("state of %s: %d %v", thread, resp.StatusCode, err)
	}
	var list []capabilities.Decision
	if raw := st.Values[capabilities.DecisionsKey]; raw != nil {
		if err := json.Unmarshal(raw, &list); err != nil {
			t.Fatal(err)
		}
	}
	return list
}

// TestDecisionsRecordWhoAndSurviveRestart: an approval answered by alice
// is recorded in the thread's state with her name and the time, and a
// server started again on the same store shows it.
func TestDecisionsRecordWhoAndSurviveRestart(t *testing.T) {
	dir, release := opsApp(t)
	db := filepath.Join(t.TempDir(), "dawn.db")
	url := serveOps(t, dir, db, release)
	alice := authtest.HS256(t, jwtSecret, authtest.Claims("alice", "", "dawn"))
	id := interruptOf(readSSE(t, authed(t, http.MethodPost, url+"/threads/d1/runs/stream", alice, runBody("/ops", "ship 1.2"))))
	if id == "" {
		t.Fatal("the run did not park for approval")
	}
	readSSE(t, authed(t, http.MethodPost, url+"/threads/d1/resume", alice, `{"route":"/ops","resume":[{"interruptId":"`+id+`","status":"resolved","payload":"once"}]}`))

	again := serveOps(t, dir, db, release)
	got := decisionsOf(t, again, "d1", alice)
	if len(got) != 1 || got[0].InterruptID != id || got[0].By.User != "alice" || got[0].Kind != "tool" || string(got[0].Payload) != `"once"` || got[0].At.IsZero() {
		t.Fatalf("decisions after restart = %+v, want alice's once on %s", got, id)
	}
	// The thread's history (LangGraph's, newest first) shows it too.
	resp := authed(t, http.MethodPost, again+"/threads/d1/history", alice, `{}`)
	defer resp.Body.Close()
	var history []struct {
		Values map[string]json.RawMessage `json:"values"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&history); err != nil || len(history) == 0 {
		t.Fatalf("history: %d %v", resp.StatusCode, err)
	}
	var latest []capabilities.Decision
	_ = json.Unmarshal(history[0].Values[capabilities.DecisionsKey], &latest)
	if len(latest) != 1 || latest[0].By.User != "alice" {
		t.Fatalf("the latest checkpoint of the history has decisions %s", history[0].Values[capabilities.DecisionsKey])
	}
}

// TestAlwaysIsPerUser: with users, alice's "always" lets her later calls
// run unasked, while bob is still asked.
func TestAlwaysIsPerUser(t *testing.T) {
	dir, release := opsApp(t)
	url := serveOps(t, dir, filepath.Join(t.TempDir(), "dawn.db"), release)
	alice := authtest.HS256(t, jwtSecret, authtest.Claims("alice", "", "dawn"))
	bob := authtest.HS256(t, jwtSecret, authtest.Claims("bob", "", "dawn"))
	id := interruptOf(readSSE(t, authed(t, http.MethodPost, url+"/threads/a1/runs/stream", alice, runBody("/ops", "ship"))))
	readSSE(t, authed(t, http.MethodPost, url+"/threads/a1/resume", alice, `{"route":"/ops","resume":[{"interruptId":"`+id+`","status":"resolved","payload":"always"}]}`))
	if id := interruptOf(readSSE(t, authed(t, http.MethodPost, url+"/threads/a2/runs/stream", alice, runBody("/ops", "ship again")))); id != "" {
		t.Errorf("alice was asked again after answering always")
	}
	if id := interruptOf(readSSE(t, authed(t, http.MethodPost, url+"/threads/b1/runs/stream", bob, runBody("/ops", "ship")))); id == "" {
		t.Errorf("bob's call ran on alice's always")
	}
}

// TestAuditAndApprovalsOverHTTP: approvals, cancels and deletes are in
// the audit log with who did them, which only the service credential
// reads (403 for a user), a page at a time; a user lists and revokes their
// own "always", and is asked again after revoking it.
func TestAuditAndApprovalsOverHTTP(t *testing.T) {
	dir, release := opsApp(t)
	url := serveOps(t, dir, filepath.Join(t.TempDir(), "dawn.db"), release)
	alice := authtest.HS256(t, jwtSecret, authtest.Claims("alice", "", "dawn"))
	bob := authtest.HS256(t, jwtSecret, authtest.Claims("bob", "", "dawn"))
	id := interruptOf(readSSE(t, authed(t, http.MethodPost, url+"/threads/x1/runs/stream", alice, runBody("/ops", "ship"))))
	readSSE(t, authed(t, http.MethodPost, url+"/threads/x1/resume", alice, `{"route":"/ops","resume":[{"interruptId":"`+id+`","status":"resolved","payload":"always"}]}`))
	authed(t, http.MethodPost, url+"/threads/x1/cancel", bob, "").Body.Close()
	authed(t, http.MethodDelete, url+"/threads/x1", alice, "").Body.Close()

	var list struct {
		Approvals []struct{ Key, User string } `json:"approvals"`
	}
	getAs := func(token, path string, v any) int {
		resp := authed(t, http.MethodGet, url+path, token, "")
		defer resp.Body.Close()
		if v != nil {
			_ = json.NewDecoder(resp.Body).Decode(v)
		}
		return resp.StatusCode
	}
	if getAs(alice, "/approvals", &list); len(list.Approvals) != 1 || list.Approvals[0].Key != "approval.always.release" || list.Approvals[0].User != "alice" {
		t.Fatalf("alice's approvals = %+v", list.Approvals)
	}
	list.Approvals = nil
	if getAs(bob, "/approvals", &list); len(list.Approvals) != 0 {
		t.Fatalf("bob sees %+v", list.Approvals)
	}
	if resp := authed(t, http.MethodDelete, url+"/approvals/approval.always.release?user=alice", bob, ""); resp.StatusCode != http.StatusNotFound {
		t.Fatalf("bob revoking alice's always: %d, want 404", resp.StatusCode)
	}
	if resp := authed(t, http.MethodDelete, url+"/approvals/approval.always.release", alice, ""); resp.StatusCode != http.StatusNoContent {
		t.Fatalf("alice revoking her always: %d", resp.StatusCode)
	}
	if id := interruptOf(readSSE(t, authed(t, http.MethodPost, url+"/threads/x2/runs/stream", alice, runBody("/ops", "ship")))); id == "" {
		t.Errorf("alice was not asked again after revoking her always")
	}

	if code := getAs(alice, "/audit", nil); code != http.StatusForbidden {
		t.Fatalf("GET /audit as a user: %d, want 403", code)
	}
	var page struct {
		Entries []struct {
			ID                    int64
			Action, User, Outcome string
			ThreadID              string `json:"thread_id"`
		} `json:"entries"`
		Next *int64 `json:"next"`
	}
	if code := getAs("svc", "/audit?limit=2", &page); code != http.StatusOK || len(page.Entries) != 2 || page.Next == nil {
		t.Fatalf("GET /audit?limit=2: %d %+v", code, page)
	}
	first := page.Entries
	page.Entries, page.Next = nil, nil
	getAs("svc", fmt.Sprintf("/audit?after=%d", first[1].ID), &page)
	all := append(first, page.Entries...)
	var got []string
	for _, e := range all {
		got = append(got, e.Action+":"+e.User+":"+e.Outcome+":"+e.ThreadID)
	}
	want := []string{"approval:alice:resolved:x1", "cancel:bob:thread_not_found:x1", "delete:alice:ok:x1", "revoke:bob:approval_not_found:", "revoke:alice:ok:"}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Fatalf("audit log:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
