package langgraph_test

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/dawn-go/dawn/dawntest"
	"github.com/dawn-go/dawn/internal/apptest"
)

// TestLangGraphUpdateStateChecksTypes: threads.updateState on a thread of
// a route checks each value against its field's type (state.yaml) and
// schema (a capability's field, such as todos), as a run's input is
// checked: a wrong value is a 400 naming the field, and the state is left
// as it was. Before, {"todos":"x"} and {"ticket_id":5} were kept, and the
// thread's state no longer matched its route's types.
func TestLangGraphUpdateStateChecksTypes(t *testing.T) {
	dir := apptest.WriteApp(t, map[string]string{
		"desk/agent.md":   "Desk.",
		"desk/plan.md":    "- [ ] Read the ticket\n",
		"desk/state.yaml": "ticket_id: {type: string, default: \"\"}\n",
	})
	h := apptest.New(t, dir, dawntest.Script().Reply("Hi.").Repeat(), apptest.Options{})
	url := h.Serve(t)
	if resp := post(t, url+"/threads/desk/runs/wait", apptest.RunBody("/desk", "hello")); resp.StatusCode != http.StatusOK {
		t.Fatalf("first run: %d", resp.StatusCode)
	}
	bad := []struct{ values, says string }{
		{`{"ticket_id":5}`, "values.ticket_id: expected a value of type string"},
		{`{"todos":"x"}`, "values.todos"},
		{`{"todos":[{"content":"Read the ticket","status":"weird"}]}`, "values.todos"},
	}
	for _, b := range bad {
		resp := post(t, url+"/threads/desk/state", `{"values":`+b.values+`}`)
		e := decodeErr(t, resp)
		if resp.StatusCode != http.StatusBadRequest || !strings.Contains(e.Error.Message, b.says) {
			t.Errorf("update %s: %d %q, want 400 saying %q", b.values, resp.StatusCode, e.Error.Message, b.says)
		}
	}
	var state struct {
		Values struct {
			TicketID any `json:"ticket_id"`
			Todos    []struct {
				Content, Status string
			} `json:"todos"`
		} `json:"values"`
	}
	getJSON(t, url+"/threads/desk/state", &state)
	if state.Values.TicketID != "" || len(state.Values.Todos) != 1 || state.Values.Todos[0].Status != "pending" {
		t.Errorf("after refused updates the state is %+v, want the first run's", state.Values)
	}
	good := post(t, url+"/threads/desk/state", `{"values":{"ticket_id":"T-1","todos":[{"content":"Read the ticket","status":"completed"}]}}`)
	if good.StatusCode != http.StatusOK {
		data, _ := io.ReadAll(good.Body)
		t.Fatalf("a well-typed update: %d %s", good.StatusCode, data)
	}
	good.Body.Close()
	getJSON(t, url+"/threads/desk/state", &state)
	if state.Values.TicketID != "T-1" || len(state.Values.Todos) != 1 || state.Values.Todos[0].Status != "completed" {
		t.Errorf("after a well-typed update the state is %+v", state.Values)
	}
}
