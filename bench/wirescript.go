package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
)

// wireStep is one wire's part of the script: requests in a fixed order,
// with later ones naming what earlier answers returned (a thread, a task,
// an interrupt).
type wireStep struct {
	name string
	run  func(context.Context, *wireSession) error
}

// wireScript is the fixed script, wire by wire, in order.
var wireScript = []wireStep{
	{"dawn", dawnWire},
	{"agui", aguiWire},
	{"langgraph", langGraphWire},
	{"openai", openAIWire},
	{"mcp", mcpWire},
	{"a2a", a2aWire},
}

const (
	userText  = "My invoice is wrong"
	dawnInput = `{"messages":[{"role":"user","content":"` + userText + `"}]}`
)

// calls sends each request in order and records it; statuses are recorded,
// not checked.
func (s *wireSession) calls(ctx context.Context, reqs ...[3]string) error {
	for _, r := range reqs {
		if _, err := s.do(ctx, r[0], r[1], r[2]); err != nil {
			return err
		}
	}
	return nil
}

// dawnWire is Dawn's own API: runs/wait and runs/stream, the thread, its
// state, history and runs, the harness's plan, an approval parked and
// resumed, and the errors of a bad route, a bad body and a cancel with no
// run.
func dawnWire(ctx context.Context, s *wireSession) error {
	run := func(route string) string { return `{"route":"` + route + `","input":` + dawnInput + `}` }
	err := s.calls(ctx,
		[3]string{http.MethodGet, "/healthz", ""},
		[3]string{http.MethodGet, "/routes", ""},
		[3]string{http.MethodPost, "/threads", `{"metadata":{"source":"wire-diff"}}`},
		[3]string{http.MethodPost, "/threads/wd-1/runs/wait", run("/support/acme")},
	)
	if err != nil {
		return err
	}
	streamed, err := s.need(ctx, http.StatusOK, http.MethodPost, "/threads/wd-2/runs/stream", run("/support/[tenant]"))
	if err != nil {
		return err
	}
	err = s.calls(ctx,
		[3]string{http.MethodGet, "/threads/wd-2/runs/" + streamed.rawHeader.Get("Dawn-Run-Id") + "/stream?after=2", ""},
		[3]string{http.MethodGet, "/threads/wd-1", ""},
		[3]string{http.MethodGet, "/threads/wd-1/state", ""},
		[3]string{http.MethodGet, "/threads/wd-1/history", ""},
		[3]string{http.MethodGet, "/threads/wd-1/runs", ""},
		[3]string{http.MethodPost, "/threads/wd-h/runs/wait", run("/onboard")},
		[3]string{http.MethodGet, "/threads/wd-h/plan", ""},
		[3]string{http.MethodGet, "/threads/wd-h/plan/revisions", ""},
		[3]string{http.MethodPost, "/threads/wd-1/cancel", ""},
		[3]string{http.MethodPost, "/threads/wd-3/runs/wait", run("/nowhere")},
		[3]string{http.MethodPost, "/threads/wd-3/runs/wait", `{"route":`},
	)
	if err != nil {
		return err
	}
	parked, err := s.need(ctx, http.StatusOK, http.MethodPost, "/threads/wd-a/runs/stream", run("/approve"))
	if err != nil {
		return err
	}
	id := interruptPattern.FindStringSubmatch(parked.raw)
	if id == nil {
		return fmt.Errorf("the approval route's stream has no interrupt: %s", shorten(parked.raw, 300))
	}
	return s.calls(ctx,
		[3]string{http.MethodGet, "/threads/wd-a/state", ""},
		[3]string{http.MethodPost, "/threads/wd-a/resume", `{"route":"/approve","resume":[{"interruptId":"` + id[1] + `","status":"resolved","payload":"once"}]}`},
		[3]string{http.MethodGet, "/approvals", ""},
		[3]string{http.MethodGet, "/threads/wd-a/history", ""},
		[3]string{http.MethodDelete, "/threads/wd-2", ""},
		[3]string{http.MethodGet, "/threads/wd-2", ""},
	)
}

var interruptPattern = regexp.MustCompile(`"interruptId":"([^"]+)"`)

// aguiWire runs a route for an AG-UI client, then asks for one that does
// not exist.
func aguiWire(ctx context.Context, s *wireSession) error {
	body := `{"threadId":"ag-1","runId":"ag-run-1","state":{},"messages":[{"id":"m-1","role":"user","content":"` + userText + `"}],` +
		`"tools":[],"context":[],"forwardedProps":{}}`
	return s.calls(ctx,
		[3]string{http.MethodPost, "/agui/support/acme", body},
		[3]string{http.MethodPost, "/agui/%2Fsupport%2Facme%23agent", `{"threadId":"ag-1","runId":"ag-run-2","state":{},"messages":[{"id":"m-2","role":"user","content":"And the refund?"}],"tools":[],"context":[],"forwardedProps":{}}`},
		[3]string{http.MethodPost, "/agui/nope", body},
	)
}

// langGraphWire is the LangGraph Agent Server dialect as the SDK speaks it:
// assistants, a thread, runs wait and stream, state and history, thread
// search, stateless runs and crons.
func langGraphWire(ctx context.Context, s *wireSession) error {
	if err := s.calls(ctx,
		[3]string{http.MethodPost, "/assistants/search", `{"limit":10}`},
		[3]string{http.MethodGet, "/assistants/%2Fsupport%2Facme", ""},
	); err != nil {
		return err
	}
	made, err := s.need(ctx, http.StatusOK, http.MethodPost, "/threads", `{"metadata":{"graph_id":"/support/acme"}}`)
	if err != nil {
		return err
	}
	tid := jsonString(made.raw, "thread_id")
	if tid == "" {
		return fmt.Errorf("POST /threads returned no thread_id: %s", shorten(made.raw, 300))
	}
	input := `{"messages":[{"type":"human","content":"` + userText + `"}]}`
	t := "/threads/" + tid
	waited, err := s.need(ctx, http.StatusOK, http.MethodPost, t+"/runs/wait", `{"assistant_id":"/support/acme","input":`+input+`}`)
	if err != nil {
		return err
	}
	r := t + "/runs/" + waited.rawHeader.Get("Dawn-Run-Id")
	return s.calls(ctx,
		[3]string{http.MethodPost, t + "/runs/stream", `{"assistant_id":"/support/acme","input":` + input + `,"stream_mode":["values","updates","messages-tuple"]}`},
		[3]string{http.MethodGet, r, ""},
		[3]string{http.MethodGet, r + "/join", ""},
		[3]string{http.MethodGet, r + "/stream", ""},
		[3]string{http.MethodPatch, t, `{"metadata":{"stage":"two"}}`},
		[3]string{http.MethodPost, t + "/state", `{"values":{"todos":[{"content":"Call back","status":"pending"}]}}`},
		[3]string{http.MethodPost, t + "/copy", `{}`},
		[3]string{http.MethodGet, t, ""},
		[3]string{http.MethodGet, t + "/state", ""},
		[3]string{http.MethodGet, t + "/history", ""},
		[3]string{http.MethodPost, t + "/history", `{"limit":2}`},
		[3]string{http.MethodGet, t + "/runs", ""},
		[3]string{http.MethodPost, "/threads/search", `{"metadata":{"graph_id":"/support/acme"},"limit":10}`},
		[3]string{http.MethodPost, "/runs/wait", `{"assistant_id":"/support/acme","input":` + input + `}`},
		[3]string{http.MethodPost, "/runs/crons", `{"assistant_id":"/support/acme","schedule":"0 0 1 1 *","input":` + input + `}`},
		[3]string{http.MethodPost, "/runs/crons/search", `{"assistant_id":"/support/acme"}`},
		[3]string{http.MethodPost, "/runs/crons/count", `{}`},
		[3]string{http.MethodGet, "/threads/00000000-0000-0000-0000-000000000000/state", ""},
	)
}

// openAIWire lists the routes as models and runs one, whole and streamed.
func openAIWire(ctx context.Context, s *wireSession) error {
	msgs := `"messages":[{"role":"user","content":"` + userText + `"}]`
	return s.calls(ctx,
		[3]string{http.MethodGet, "/v1/models", ""},
		[3]string{http.MethodPost, "/v1/chat/completions", `{"model":"support/acme",` + msgs + `}`},
		[3]string{http.MethodPost, "/v1/chat/completions", `{"model":"support/acme","stream":true,` + msgs + `}`},
		[3]string{http.MethodPost, "/v1/chat/completions", `{"model":"nowhere",` + msgs + `}`},
	)
}

// mcpWire initializes a Streamable HTTP session, lists the routes as tools
// and calls one.
func mcpWire(ctx context.Context, s *wireSession) error {
	accept := "Accept: application/json, text/event-stream"
	rpc := func(id int, method, params string) string {
		return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":%q,"params":%s}`, id, method, params)
	}
	opened, err := s.need(ctx, http.StatusOK, http.MethodPost, "/mcp",
		rpc(1, "initialize", `{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"wire-diff","version":"1"}}`), accept)
	if err != nil {
		return err
	}
	headers := []string{accept, "Mcp-Protocol-Version: 2025-06-18"}
	if sid := opened.rawHeader.Get("Mcp-Session-Id"); sid != "" {
		headers = append(headers, "Mcp-Session-Id: "+sid)
	}
	for _, body := range []string{
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		rpc(2, "tools/list", `{}`),
		rpc(3, "tools/call", `{"name":"support_tenant","arguments":{"message":"`+userText+`","tenant":"acme"}}`),
		rpc(4, "tools/call", `{"name":"support_tenant","arguments":{"tenant":"acme"}}`),
	} {
		if _, err := s.do(ctx, http.MethodPost, "/mcp", body, headers...); err != nil {
			return err
		}
	}
	_, err = s.do(ctx, http.MethodGet, "/mcp", "", headers...)
	return err
}

// a2aWire reads a route's agent card both ways, sends it a message and
// reads the task back.
func a2aWire(ctx context.Context, s *wireSession) error {
	if err := s.calls(ctx,
		[3]string{http.MethodGet, "/a2a/support/acme/.well-known/agent-card.json", ""},
		[3]string{http.MethodGet, "/.well-known/agent-card.json?route=/support/acme", ""},
	); err != nil {
		return err
	}
	sent, err := s.need(ctx, http.StatusOK, http.MethodPost, "/a2a/support/acme",
		`{"jsonrpc":"2.0","id":1,"method":"message/send","params":{"message":{"kind":"message","role":"user","messageId":"m-1","parts":[{"kind":"text","text":"`+userText+`"}]}}}`)
	if err != nil {
		return err
	}
	task := jsonString(sent.raw, "result", "id")
	if task == "" {
		return fmt.Errorf("message/send returned no task id: %s", shorten(sent.raw, 300))
	}
	return s.calls(ctx,
		[3]string{http.MethodPost, "/a2a/support/acme", `{"jsonrpc":"2.0","id":2,"method":"tasks/get","params":{"id":"` + task + `"}}`},
		[3]string{http.MethodPost, "/a2a/support/acme", `{"jsonrpc":"2.0","id":3,"method":"tasks/get","params":{"id":"no-such-task"}}`},
	)
}

// jsonString reads the string at path in a JSON object, or "".
func jsonString(data string, path ...string) string {
	var v any
	if json.Unmarshal([]byte(data), &v) != nil {
		return ""
	}
	for _, key := range path {
		obj, ok := v.(map[string]any)
		if !ok {
			return ""
		}
		v = obj[key]
	}
	s, _ := v.(string)
	return s
}
