package e2e

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/dawn-go/dawn/internal/apptest"
	"github.com/dawn-go/dawn/internal/auth/authtest"
	"github.com/dawn-go/dawn/stream"
)

// TestA2ATwoServersRemoteSubagent runs two stock binaries (`dawn start`):
// server B serves its routes over A2A behind JWT auth, and server A's
// route /lead has two remote subagents (a2a.yaml) naming B's per-route
// agent cards, with a JWT in credential_env. Over A's HTTP stream:
//   - B's plan arrives as subagent.plan_update;
//   - B's approval (approve: [writeFile]) parks A's thread with a
//     remote_input interrupt, and answering it on A's /resume with "once"
//     lets B write its file and finish, and A's model answers with B's
//     answer;
//   - B SIGKILLed while its slow route (aimock, paced) is mid-task gives
//     A's task call a tool_result error, and A's model still answers.
func TestA2ATwoServersRemoteSubagent(t *testing.T) {
	bin := buildDawn(t)
	mock := startAimockPaced(t, "testdata/a2a/slow.json", 100, 4)
	const secret = "a2a-two-servers-jwt-secret"
	appB := apptest.WriteApp(t, map[string]string{
		"dawn.yaml": "auth:\n  jwt:\n    secret_env: B_JWT_SECRET\n    audience: dawn\n",
		"worker.yaml": `turns:
  - when: {user: notes}
    tool_calls:
      - name: writeTodos
        args:
          todos:
            - {content: Draft the notes, status: in_progress}
            - {content: Save the notes, status: pending}
  - when: {tool: writeTodos}
    tool_calls:
      - {name: writeFile, args: {path: notes.md, content: hello}}
  - when: {tool: writeFile}
    text: B saved notes.md.
`,
		"worker/agent.md": "---\ndescription: Keeps notes, with a person's approval.\nmodel: script:worker.yaml\nworkspace: thread\napprove: [writeFile]\n---\nYou keep notes.",
		"worker/plan.md":  "- [ ] Draft the notes\n- [ ] Save the notes\n",
		"slow/agent.md":   "---\ndescription: Answers slowly.\nmodel: openai:gpt-4o-mini\n---\nYou take your time.",
	})
	envB := append(aimockEnv(mock), "B_JWT_SECRET="+secret, "DAWN_CORS_ORIGINS=")
	urlB, killB := launchDawn(t, bin, appB, envB...)

	appA := apptest.WriteApp(t, map[string]string{
		"lead.yaml": `turns:
  - when: {user: notes}
    tool_calls:
      - {name: task, args: {subagent: b, input: "Write the notes"}}
  - when: {user: slow}
    tool_calls:
      - {name: task, args: {subagent: slow, input: "slow"}}
  - when: {tool: task, tool_result: "error:"}
    text: "Lead: the remote agent failed, so I answer myself."
  - when: {tool: task}
    text: "Lead: the remote agent is done."
`,
		"lead/agent.md":                "---\ndescription: Hands work to server B.\nmodel: script:lead.yaml\n---\nYou lead.",
		"lead/subagents/b/a2a.yaml":    "card: " + urlB + "/a2a/worker/.well-known/agent-card.json\ncredential_env: B_TOKEN\ntimeout: 2m\n",
		"lead/subagents/slow/a2a.yaml": "card: " + urlB + "/a2a/slow/.well-known/agent-card.json\ncredential_env: B_TOKEN\ntimeout: 2m\nretries: 0\n",
	})
	token := authtest.HS256(t, secret, authtest.Claims("lead-server", "", "dawn"))
	urlA := startDawn(t, bin, appA, "DAWN_API_KEY=", "DAWN_MODEL=", "DAWN_PERMISSIONS_MODE=", "DAWN_CORS_ORIGINS=",
		"B_TOKEN="+token, "DAWN_STORE=")

	t.Run("plan and approval through the parent", func(t *testing.T) {
		events := readEvents(t, postJSON(t, urlA+"/threads/two-1/runs/stream", userRun("/lead", "Take notes")))
		checkRemotePlan(t, events)
		if got := strings.Join(eventTypes(events), ","); !strings.HasSuffix(got, ",interrupt,done") {
			t.Fatalf("A's run did not park on B's question: %s", got)
		}
		var in pendingInterrupt
		if err := json.Unmarshal(events[len(events)-2].Data, &in); err != nil {
			t.Fatal(err)
		}
		checkRemoteInput(t, in)
		if st := getState(t, urlA, "two-1"); st.Status != "interrupted" || len(st.Interrupts) != 1 || st.Interrupts[0].ID != in.ID {
			t.Fatalf("A's parked thread: %s", st.raw)
		}
		events = resumeRun(t, urlA, "two-1", resumeAnswer("/lead", in.ID, "resolved", `"once"`))
		res := toolResultEvent(t, events, "task")
		if !strings.Contains(string(res), "B saved notes.md.") || strings.Contains(string(res), `"error":"`) {
			t.Fatalf("A's task result after the approval: %s", res)
		}
		if got := lastAnswer(t, events); got != "Lead: the remote agent is done." {
			t.Fatalf("A's answer: %q", got)
		}
	})

	t.Run("B killed mid-task", func(t *testing.T) {
		resp := postJSON(t, urlA+"/threads/two-2/runs/stream", userRun("/lead", "Go slow"))
		defer resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			e := decodeAPIError(t, resp)
			t.Fatalf("stream: %d %s: %s", resp.StatusCode, e.Kind, e.Message)
		}
		sse := stream.NewReader(resp.Body)
		// B has started the task once its working status reaches A.
		events := readSSE(t, sse, func(e stream.Event) bool {
			return e.Type == "subagent.status" && strings.Contains(string(e.Data), `"working"`)
		})
		killB()
		events = append(events, readSSE(t, sse, nil)...)
		res := toolResultEvent(t, events, "task")
		var r struct {
			Error string `json:"error"`
		}
		if err := json.Unmarshal(res, &r); err != nil || !strings.Contains(r.Error, "broke mid-task") {
			t.Fatalf("A's task result after B was killed is not the tool error of a connection broken mid-task: %s", res)
		}
		t.Logf("A's task error after B was killed: %s", r.Error)
		if got := lastAnswer(t, events); got != "Lead: the remote agent failed, so I answer myself." {
			t.Fatalf("A's answer after B was killed: %q (events %v)", got, eventTypes(events))
		}
	})
}

// checkRemoteInput wants in to be a remote agent's approval: kind
// remote_input, with B's question and its interrupts as data.
func checkRemoteInput(t *testing.T, in pendingInterrupt) {
	t.Helper()
	var d struct {
		Subagent string `json:"subagent"`
		Agent    string `json:"agent"`
		Question string `json:"question"`
		Data     []struct {
			Interrupts []struct {
				Kind   string `json:"kind"`
				Detail struct {
					ToolName string `json:"toolName"`
				} `json:"detail"`
			} `json:"interrupts"`
		} `json:"data"`
	}
	if err := json.Unmarshal(in.Detail, &d); err != nil || in.Kind != "remote_input" || d.Subagent != "b" || d.Question == "" {
		t.Fatalf("A's interrupt is not B's question: kind %q detail %s (%v)", in.Kind, in.Detail, err)
	}
	if len(d.Data) != 1 || len(d.Data[0].Interrupts) != 1 || d.Data[0].Interrupts[0].Kind != "tool" || d.Data[0].Interrupts[0].Detail.ToolName != "writeFile" {
		t.Fatalf("A's interrupt does not carry B's writeFile approval: %s", in.Detail)
	}
}

// checkRemotePlan wants B's plan in A's stream as a subagent.plan_update
// of the subagent b.
func checkRemotePlan(t *testing.T, events []stream.Event) {
	t.Helper()
	for _, e := range events {
		if e.Type != "subagent.plan_update" {
			continue
		}
		var d struct {
			Todos []struct {
				Content string `json:"content"`
				Status  string `json:"status"`
			} `json:"todos"`
			Subagent string `json:"subagent"`
		}
		if err := json.Unmarshal(e.Data, &d); err != nil || d.Subagent != "b" || len(d.Todos) != 2 || d.Todos[0].Content != "Draft the notes" || d.Todos[0].Status != "in_progress" {
			t.Fatalf("A's subagent.plan_update is not B's plan: %s", e.Data)
		}
		return
	}
	t.Fatalf("A's stream has no subagent.plan_update: %v", eventTypes(events))
}

// readSSE reads events from r until stop holds for one (stop nil: to the
// end of the stream), within a minute, and returns them.
func readSSE(t *testing.T, r *stream.Reader, stop func(stream.Event) bool) []stream.Event {
	t.Helper()
	type next struct {
		e   stream.Event
		err error
	}
	var events []stream.Event
	timeout := time.After(time.Minute)
	for {
		got := make(chan next, 1)
		go func() {
			e, err := r.Next()
			got <- next{e, err}
		}()
		var n next
		select {
		case n = <-got:
		case <-timeout:
			t.Fatalf("no end of A's stream within a minute; events: %v", eventTypes(events))
		}
		switch {
		case stop == nil && errors.Is(n.err, io.EOF):
			return events
		case n.err != nil:
			t.Fatalf("reading A's stream: %v; events: %v", n.err, eventTypes(events))
		}
		events = append(events, n.e)
		if stop != nil && stop(n.e) {
			return events
		}
	}
}
