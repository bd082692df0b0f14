package server_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/dawn-go/dawn/internal/apptest"
)

// TestStateUpdatesAreBounded: a user's POST /threads/:id/state with a list
// of updates over the bound is a 400 naming values and the bound, with
// nothing kept; a list of updates that change nothing keeps no copy of
// the state; and one page of history holds at most its byte bound, the
// rest read by paging on with before. Before, 250 empty updates kept 250
// copies of the state, and history returned them all in one answer.
func TestStateUpdatesAreBounded(t *testing.T) {
	u := newUsersServer(t, false, apptest.Options{})
	const thread = "ann-big"
	if status, raw := u.call(t, "ann", "POST", "/threads", `{"thread_id":"`+thread+`"}`, nil); status != http.StatusOK {
		t.Fatalf("create: %d %s", status, raw)
	}
	big := strings.Repeat("x", 900<<10)
	if status, raw := u.call(t, "ann", "POST", "/threads/"+thread+"/state", `{"values":{"big":"`+big+`"}}`, nil); status != http.StatusOK {
		t.Fatalf("a 900 KB state: %d %s", status, raw)
	}
	empties := func(n int) string { return `{"values":[` + strings.TrimSuffix(strings.Repeat(`{},`, n), ",") + `]}` }

	status, raw := u.call(t, "ann", "POST", "/threads/"+thread+"/state", empties(250), nil)
	if status != http.StatusBadRequest || !strings.Contains(raw, "values") || !strings.Contains(raw, "100") {
		t.Fatalf("250 updates in one request: %d %s, want 400 naming values and its bound of 100", status, raw)
	}
	if n := historyCount(t, u, thread); n != 1 {
		t.Fatalf("after a refused list, %d checkpoints, want 1", n)
	}
	if status, raw := u.call(t, "ann", "POST", "/threads/"+thread+"/state", empties(100), nil); status != http.StatusOK {
		t.Fatalf("100 empty updates: %d %s", status, raw)
	}
	if n := historyCount(t, u, thread); n != 1 {
		t.Fatalf("100 updates that change nothing kept %d checkpoints, want 1 (no copy of an unchanged state)", n)
	}

	// Twenty states of 900 KB each: one page holds at most its bound.
	for i := range 20 {
		v := strings.Repeat(string(rune('a'+i)), 900<<10)
		if status, raw := u.call(t, "ann", "POST", "/threads/"+thread+"/state", `{"values":{"big":"`+v+`"}}`, nil); status != http.StatusOK {
			t.Fatalf("update %d: %d %s", i, status, raw)
		}
	}
	resp := authed(t, "POST", u.base+"/threads/"+thread+"/history", u.tokens["ann"], `{"limit":1000}`)
	var page []json.RawMessage
	if err := json.NewDecoder(resp.Body).Decode(&page); err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	size := 0
	for _, p := range page {
		size += len(p)
	}
	if size > 10<<20 || len(page) == 0 || len(page) >= 21 {
		t.Fatalf("one history page: %d checkpoints, %d bytes; want a page of at most about 8 MiB", len(page), size)
	}
	if n := historyCount(t, u, thread); n != 21 {
		t.Fatalf("paging on with before read %d checkpoints, want 21", n)
	}
}

// historyCount reads a thread's whole history as ann, a page at a time
// (before: the last checkpoint of the page), and counts its checkpoints.
func historyCount(t *testing.T, u *usersServer, thread string) int {
	t.Helper()
	n, before := 0, ""
	for range 100 {
		body := `{"limit":1000}`
		if before != "" {
			body = `{"limit":1000,"before":"` + before + `"}`
		}
		var page []struct {
			Checkpoint struct {
				ID string `json:"checkpoint_id"`
			} `json:"checkpoint"`
		}
		if status, raw := u.call(t, "ann", "POST", "/threads/"+thread+"/history", body, &page); status != http.StatusOK {
			t.Fatalf("history: %d %s", status, raw)
		}
		if len(page) == 0 {
			return n
		}
		n += len(page)
		before = page[len(page)-1].Checkpoint.ID
	}
	t.Fatal("history never ended")
	return 0
}
