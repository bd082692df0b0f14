package server_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dawn-go/dawn"
	"github.com/dawn-go/dawn/dawntest"
	"github.com/dawn-go/dawn/internal/apptest"
	"github.com/dawn-go/dawn/internal/auth"
	"github.com/dawn-go/dawn/internal/auth/authtest"
	"github.com/dawn-go/dawn/internal/pgtest"
	"github.com/dawn-go/dawn/internal/server"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/tmc/langchaingo/llms"
)

// The ownership matrix: users ann and bob share a server (or two
// replicas of one on Postgres). ann's thread is created on each surface
// (Dawn's wire, the LangGraph dialect, AG-UI); every endpoint the router
// serves is either named below with the calls that reach a thread or a
// run, or listed as thread-free with the reason. For every call, bob gets
// 404 with the body a missing thread gets, and ann the endpoint's normal
// answer; bob's searches and counts never hold ann's thread.

// ownerCall is one request of the matrix: {thread}, {run}, {checkpoint}
// and {cron} in path, body and headers are replaced by ann's ids. annStatus is ann's
// normal answer (0: any status but 404; annKind, when set, is the error
// kind of a 404 that is her normal answer). stream calls read the stream
// to its end.
type ownerCall struct {
	method, path, body string
	header             map[string]string
	annStatus          int
	annKind            string
	stream             bool
}

// threadEndpoints are the endpoints that take a thread or run id, each
// with the calls that reach it (several when wires share a path). The
// order of ownerOrder is the order the matrix runs them: the ones that
// delete come last.
var threadEndpoints = map[string][]ownerCall{
	"GET /threads/:id":                   {{method: "GET", path: "/threads/{thread}", annStatus: 200}},
	"PATCH /threads/:id":                 {{method: "PATCH", path: "/threads/{thread}", body: `{"metadata":{"x":1}}`}},
	"POST /threads/:id/cancel":           {{method: "POST", path: "/threads/{thread}/cancel", annStatus: 409}},
	"POST /threads/:id/copy":             {{method: "POST", path: "/threads/{thread}/copy", body: `{}`}},
	"GET /threads/:id/files":             {{method: "GET", path: "/threads/{thread}/files", annStatus: 200}},
	"GET /threads/:id/files/*":           {{method: "GET", path: "/threads/{thread}/files/notes.md", annStatus: 200}},
	"POST /threads/:id/history":          {{method: "POST", path: "/threads/{thread}/history", body: `{}`, annStatus: 200}},
	"GET /threads/:id/history":           {{method: "GET", path: "/threads/{thread}/history", annStatus: 200}, {method: "GET", path: "/threads/{thread}/history?limit=1&before={checkpoint}", annStatus: 200}},
	"GET /threads/:id/plan":              {{method: "GET", path: "/threads/{thread}/plan", annStatus: 200}},
	"GET /threads/:id/plan/revisions":    {{method: "GET", path: "/threads/{thread}/plan/revisions", annStatus: 200}},
	"POST /threads/:id/plan/pause":       {{method: "POST", path: "/threads/{thread}/plan/pause"}},
	"POST /threads/:id/plan/resume":      {{method: "POST", path: "/threads/{thread}/plan/resume"}},
	"POST /threads/:id/plan/cancel":      {{method: "POST", path: "/threads/{thread}/plan/cancel"}},
	"POST /threads/:id/resume":           {{method: "POST", path: "/threads/{thread}/resume", body: `{"route":"/job","resume":[{"interruptId":"perm-1","status":"resolved","payload":"once"}]}`}},
	"GET /threads/:id/runs":              {{method: "GET", path: "/threads/{thread}/runs", annStatus: 200}, {method: "GET", path: "/threads/{thread}/runs?limit=10", annStatus: 200}},
	"POST /threads/:id/runs":             {{method: "POST", path: "/threads/{thread}/runs", body: lgRunBody("again"), annStatus: 200}},
	"GET /threads/:id/runs/:run":         {{method: "GET", path: "/threads/{thread}/runs/{run}", annStatus: 200}},
	"POST /threads/:id/runs/:run/cancel": {{method: "POST", path: "/threads/{thread}/runs/{run}/cancel"}},
	"GET /threads/:id/runs/:run/join":    {{method: "GET", path: "/threads/{thread}/runs/{run}/join", annStatus: 200}},
	"GET /threads/:id/runs/:run/stream":  {{method: "GET", path: "/threads/{thread}/runs/{run}/stream", annStatus: 200, stream: true}},
	"GET /threads/:id/runs/:run/webhook": {{method: "GET", path: "/threads/{thread}/runs/{run}/webhook", annStatus: 404, annKind: "webhook_not_found"}},
	"POST /threads/:id/runs/crons":       {{method: "POST", path: "/threads/{thread}/runs/crons", body: `{"assistant_id":"job","schedule":"0 0 1 1 *","input":{"messages":[{"role":"user","content":"tick"}]}}`, annStatus: 200}},
	"POST /threads/:id/runs/stream":      {{method: "POST", path: "/threads/{thread}/runs/stream", body: apptest.RunBody("/job", "again"), annStatus: 200}, {method: "POST", path: "/threads/{thread}/runs/stream", body: lgRunBody("again"), annStatus: 200}},
	"POST /threads/:id/runs/wait":        {{method: "POST", path: "/threads/{thread}/runs/wait", body: apptest.RunBody("/job", "again"), annStatus: 200}, {method: "POST", path: "/threads/{thread}/runs/wait", body: lgRunBody("again"), annStatus: 200}},
	"GET /threads/:id/state":             {{method: "GET", path: "/threads/{thread}/state", annStatus: 200}},
	"POST /threads/:id/state":            {{method: "POST", path: "/threads/{thread}/state", body: `{"values":{}}`}},
	"PATCH /threads/:id/state":           {{method: "PATCH", path: "/threads/{thread}/state", body: `{"metadata":{}}`}},
	"GET /threads/:id/state/:checkpoint": {{method: "GET", path: "/threads/{thread}/state/{checkpoint}", annStatus: 200}},
	"POST /threads/:id/state/checkpoint": {{method: "POST", path: "/threads/{thread}/state/checkpoint", body: `{"checkpoint":{"checkpoint_id":"{checkpoint}"}}`, annStatus: 200}},
	"GET /threads/:id/stream":            {{method: "GET", path: "/threads/{thread}/stream", annStatus: 200, stream: true}},
	"GET /runs/:run/stream":              {{method: "GET", path: "/runs/{run}/stream", annStatus: 200, stream: true}},
	"GET /threads/:id/tool-outputs/*":    {{method: "GET", path: "/threads/{thread}/tool-outputs/out_none", annStatus: 404, annKind: "tool_output_not_found"}},
	"POST /agui/*":                       {{method: "POST", path: "/agui/job", body: `{"threadId":"{thread}","runId":"agui-again","messages":[{"id":"m-2","role":"user","content":"again"}]}`, annStatus: 200, stream: true}},
	"POST /v1/chat/completions":          {{method: "POST", path: "/v1/chat/completions", body: `{"model":"job","messages":[{"role":"user","content":"again"}]}`, header: map[string]string{"Dawn-Thread-Id": "{thread}"}, annStatus: 200}},
	"DELETE /threads/:id/runs/:run":      {{method: "DELETE", path: "/threads/{thread}/runs/{run}"}},
	"DELETE /threads/:id":                {{method: "DELETE", path: "/threads/{thread}", annStatus: 204}},
}

// ownerLast are the endpoints the matrix calls last, in this order: they
// delete what the others read.
var ownerLast = []string{"DELETE /threads/:id/runs/:run", "DELETE /threads/:id"}

// cronEndpoints take a cron id: bob's calls on ann's cron answer as a
// missing cron. cronOrder is the order the matrix calls them.
var cronEndpoints = map[string]ownerCall{
	"PATCH /runs/crons/:cron":  {method: "PATCH", path: "/runs/crons/{cron}", body: `{"schedule":"0 0 2 1 *"}`, annStatus: 200},
	"DELETE /runs/crons/:cron": {method: "DELETE", path: "/runs/crons/{cron}"},
}

var cronOrder = []string{"PATCH /runs/crons/:cron", "DELETE /runs/crons/:cron"}

// threadFree are the endpoints that name no thread or run, with why
// ownership does not reach them (or how the matrix checks it otherwise).
var threadFree = map[string]string{
	"GET /healthz":                                    "a probe",
	"GET /readyz":                                     "a probe",
	"GET /routes":                                     "the app's routes, the same for everyone",
	"GET /approvals":                                  "remembered decisions, filtered by user (a user sees their own and the app's; TestAuditAndApprovalsOverHTTP)",
	"DELETE /approvals/:key":                          "revokes the caller's own remembered decision; another user's answers 404 (TestAuditAndApprovalsOverHTTP)",
	"GET /audit":                                      "the audit log, for the service credential only: users get 403 (TestAuditAndApprovalsOverHTTP)",
	"GET /memories":                                   "long-term memories are per user, in the caller's own items; the service names a user (TestGovernedMemoryOverHTTP)",
	"GET /memories/export":                            "long-term memories are per user, in the caller's own items; the service names a user (TestGovernedMemoryOverHTTP)",
	"POST /memories/approve":                          "long-term memories are per user, in the caller's own items; the service names a user (TestGovernedMemoryOverHTTP)",
	"POST /memories/reject":                           "long-term memories are per user, in the caller's own items; the service names a user (TestGovernedMemoryOverHTTP)",
	"POST /memories/edit":                             "long-term memories are per user, in the caller's own items; the service names a user (TestGovernedMemoryOverHTTP)",
	"POST /memories/forget":                           "long-term memories are per user, in the caller's own items; the service names a user (TestGovernedMemoryOverHTTP)",
	"DELETE /users/:id/data":                          "forgets a user, for the service credential only: users get 403 (TestForgetUserAcrossReplicas)",
	"POST /threads":                                   "creates a thread owned by the caller (the matrix's first call on Dawn's and LangGraph's surfaces)",
	"POST /threads/search":                            "filtered by owner in the store; the matrix checks bob's page",
	"POST /threads/count":                             "filtered by owner in the store; the matrix checks bob's count",
	"POST /assistants":                                "assistants are the app's configuration, shared: the service credential changes them, a user gets 403 (TestAssistantsAreSharedConfiguration)",
	"POST /assistants/search":                         "assistants are the app's configuration, shared: everyone reads them",
	"POST /assistants/count":                          "assistants are the app's configuration, shared: everyone reads them",
	"GET /assistants/:assistant":                      "assistants are the app's configuration, shared: everyone reads them",
	"PATCH /assistants/:assistant":                    "assistants are the app's configuration, shared: the service credential changes them, a user gets 403 (TestAssistantsAreSharedConfiguration)",
	"DELETE /assistants/:assistant":                   "assistants are the app's configuration, shared: the service credential changes them, a user gets 403 (TestAssistantsAreSharedConfiguration)",
	"GET /assistants/:assistant/graph":                "assistants are the app's configuration, shared: everyone reads them",
	"GET /assistants/:assistant/schemas":              "assistants are the app's configuration, shared: everyone reads them",
	"GET /assistants/:assistant/subgraphs":            "assistants are the app's configuration, shared: everyone reads them",
	"GET /assistants/:assistant/subgraphs/:namespace": "assistants are the app's configuration, shared: everyone reads them",
	"POST /assistants/:assistant/versions":            "assistants are the app's configuration, shared: everyone reads them",
	"POST /assistants/:assistant/latest":              "assistants are the app's configuration, shared: the service credential changes them, a user gets 403 (TestAssistantsAreSharedConfiguration)",
	"GET /info":                                       "the server's version and features, the same for everyone",
	"GET /ok":                                         "a probe",
	"POST /runs":                                      "a stateless run on a thread of its own, deleted after it",
	"POST /runs/stream":                               "a stateless run on a thread of its own, deleted after it",
	"POST /runs/wait":                                 "a stateless run on a thread of its own, deleted after it",
	"POST /runs/batch":                                "stateless runs, each on a thread of its own, deleted after it",
	"POST /runs/crons":                                "creates a cron owned by the caller (the matrix's cron)",
	"POST /runs/crons/search":                         "filtered by owner in the store; the matrix checks bob's page",
	"POST /runs/crons/count":                          "filtered by owner in the store; the matrix checks bob's count",
	"PUT /store/items":                                "items are per user: the matrix checks bob cannot read ann's",
	"GET /store/items":                                "items are per user: the matrix checks bob cannot read ann's",
	"DELETE /store/items":                             "items are per user: the matrix checks bob cannot read ann's",
	"POST /store/items/search":                        "items are per user: the matrix checks bob's search",
	"POST /store/namespaces":                          "items are per user: the matrix checks bob's namespaces",
	"GET /v1/models":                                  "the app's routes as models, shared",
	"GET /v1/models/*":                                "the app's routes as models, shared",
	"GET /mcp":                                        "MCP session; its tools take a thread id through the same owner check (threads the caller cannot see do not exist)",
	"POST /mcp":                                       "MCP session; its tools take a thread id through the same owner check (threads the caller cannot see do not exist)",
	"DELETE /mcp":                                     "MCP session; its tools take a thread id through the same owner check (threads the caller cannot see do not exist)",
	"POST /a2a/*":                                     "A2A JSON-RPC: a contextId is a thread and a task a run; its errors are JSON-RPC errors (HTTP 200), so the matrix checks them apart (matrix.a2a)",
	"GET /a2a":                                        "the agent cards of the app's routes, shared",
	"GET /a2a/*":                                      "the agent cards of the app's routes, shared",
	"GET /.well-known/agent-card.json":                "the agent cards of the app's routes, shared",
}

// ownerApp is an app whose route "job" has a harness plan and a thread
// workspace, so that every capability endpoint under /threads/:id/
// answers for the thread's owner.
func ownerApp(t *testing.T) string {
	return apptest.WriteApp(t, map[string]string{
		"job/agent.md": "---\nworkspace: thread\n---\nYou do the job.",
		"job/plan.md":  "---\nenforce: true\n---\n- [ ] Step 1\n",
	})
}

// holdGate holds the runs whose message is "hold" until it is released.
type holdGate struct {
	mu sync.Mutex
	ch chan struct{}
}

// arm makes the next "hold" runs wait; release lets them go on.
func (g *holdGate) arm() {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.ch = make(chan struct{})
}

func (g *holdGate) release() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.ch != nil {
		close(g.ch)
		g.ch = nil
	}
}

func (g *holdGate) wait() {
	g.mu.Lock()
	ch := g.ch
	g.mu.Unlock()
	if ch != nil {
		<-ch
	}
}

// modelFor is every run's model: it writes notes.md into the thread's
// workspace and calls noteCaller, then replies; a run whose message is
// "hold" waits for gate first.
func modelFor(gate *holdGate) func([]llms.MessageContent, llms.CallOptions) (*llms.ContentResponse, error) {
	return func(msgs []llms.MessageContent, opts llms.CallOptions) (*llms.ContentResponse, error) {
		if last, ok := lastTurn(msgs); ok && last.Role == llms.ChatMessageTypeHuman {
			for _, p := range last.Parts {
				if tc, ok := p.(llms.TextContent); ok && tc.Text == "hold" {
					gate.wait()
				}
			}
		}
		return writeThenReply(msgs, opts)
	}
}

// writeThenReply writes notes.md into the thread's workspace and calls
// noteCaller, then replies.
func writeThenReply(msgs []llms.MessageContent, _ llms.CallOptions) (*llms.ContentResponse, error) {
	if last, ok := lastTurn(msgs); ok && last.Role == llms.ChatMessageTypeTool {
		return &llms.ContentResponse{Choices: []*llms.ContentChoice{{Content: "done", StopReason: "stop"}}}, nil
	}
	calls := []llms.ToolCall{
		{ID: "call-write", Type: "function", FunctionCall: &llms.FunctionCall{Name: "writeFile", Arguments: `{"path":"notes.md","content":"hello"}`}},
		{ID: "call-remember", Type: "function", FunctionCall: &llms.FunctionCall{Name: "noteCaller", Arguments: `{}`}},
	}
	return &llms.ContentResponse{Choices: []*llms.ContentChoice{{StopReason: "tool_calls", ToolCalls: calls, FuncCall: calls[0].FunctionCall}}}, nil
}

// lastTurn is the last message of the conversation: the per-turn state
// block (a system message opening "## Current state", such as the
// route's plan) that follows it is not part of it.
func lastTurn(msgs []llms.MessageContent) (llms.MessageContent, bool) {
	for i := len(msgs) - 1; i >= 0; i-- {
		m := msgs[i]
		if m.Role == llms.ChatMessageTypeSystem && len(m.Parts) > 0 {
			if tc, ok := m.Parts[0].(llms.TextContent); ok && strings.HasPrefix(tc.Text, "## Current state") {
				continue
			}
		}
		return m, true
	}
	return llms.MessageContent{}, false
}

// rememberTool keeps, in the item store, the user the run acts for under
// ["tool-notes"] "last": each user's runs write their own item.
var rememberTool = dawn.Tools(dawn.Tool("noteCaller", "Remember who asked.", func(ctx context.Context, _ struct{}) (string, error) {
	id, _ := dawn.IdentityFrom(ctx)
	value, _ := json.Marshal(map[string]string{"by": id.User})
	return "ok", dawn.Store(ctx).Put(ctx, []string{"tool-notes"}, "last", value)
}))

// lgRunBody is a LangGraph run request on the "job" assistant.
func lgRunBody(message string) string {
	return `{"assistant_id":"job","input":{"messages":[{"role":"user","content":"` + message + `"}]}}`
}

// serviceKey is the matrix's service credential (DAWN_API_KEY).
const serviceKey = "matrix-service-key"

// credentials are the real tokens of ann and bob, and the service key,
// that the servers of one matrix run verify.
type credentials struct {
	auth   *auth.Authenticator
	tokens map[string]string
}

// newCredentials configures authentication by kind: "hs256", JWTs signed
// with a shared secret, or "rs256", JWTs signed with a key the test
// publishes as a JWKS over loopback.
func newCredentials(t *testing.T, kind string) credentials {
	t.Helper()
	const secret = "matrix-secret-of-at-least-32-bytes!"
	cfg := auth.JWT{SecretEnv: "MATRIX_JWT_SECRET", Audience: "dawn"}
	sign := func(user string) string { return authtest.HS256(t, secret, authtest.Claims(user, "", "dawn")) }
	if kind == "rs256" {
		jwks := authtest.NewJWKS(t)
		cfg = auth.JWT{JWKSURL: jwks.URL, Audience: "dawn"}
		sign = func(user string) string { return jwks.Sign(t, authtest.Claims(user, "", "dawn")) }
	}
	a, err := auth.New(t.Context(), auth.Options{
		Config: auth.Config{JWT: &cfg}, APIKey: serviceKey,
		Env: func(k string) string {
			if k == "MATRIX_JWT_SECRET" {
				return secret
			}
			return ""
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	return credentials{auth: a, tokens: map[string]string{"ann": sign("ann"), "bob": sign("bob"), "service": serviceKey}}
}

// ownerServers starts the matrix's servers: one on SQLite, or two
// replicas on one Postgres database; ann and bob reach them through
// urls(user, i), which alternates replicas.
func ownerServers(t *testing.T, replicas bool, creds credentials, gate *holdGate) (urls func(user string, i int) string, routes []string) {
	dir := ownerApp(t)
	model := dawntest.Script().Then(modelFor(gate)).Repeat()
	opts := apptest.Options{Auth: creds.auth, Tools: rememberTool}
	n := 1
	if replicas {
		opts.StorePath = pgtest.Database(t)
		n = 2
	}
	var bases []string
	for range n {
		h := apptest.New(t, dir, model, opts)
		srv := httptest.NewServer(h.API)
		t.Cleanup(srv.Close)
		bases = append(bases, srv.URL)
		if routes == nil {
			for _, r := range h.API.Echo().Routes() {
				routes = append(routes, r.Method+" "+r.Path)
			}
		}
	}
	return func(user string, i int) string {
		if user == "bob" {
			i++
		}
		return bases[i%len(bases)]
	}, routes
}

// TestOwnershipMatrix runs the matrix on SQLite and on two replicas of
// one Postgres database, with users named by HS256 JWTs and by RS256
// JWTs whose key the test serves as a JWKS.
func TestOwnershipMatrix(t *testing.T) {
	for _, replicas := range []bool{false, true} {
		for _, kind := range []string{"hs256", "rs256"} {
			name := "sqlite-" + kind
			if replicas {
				name = "postgres-replicas-" + kind
			}
			t.Run(name, func(t *testing.T) {
				creds := newCredentials(t, kind)
				gate := &holdGate{}
				t.Cleanup(gate.release)
				urls, routes := ownerServers(t, replicas, creds, gate)
				checkClassified(t, routes)
				for _, surface := range []string{"dawn", "langgraph", "agui"} {
					t.Run(surface, func(t *testing.T) {
						m := &matrix{t: t, urls: urls, tokens: creds.tokens, gate: gate, thread: surface + "-ann-" + name}
						m.createOn(surface)
						m.endpoints()
						m.searches()
						m.crons()
						m.items()
						m.mcp()
						m.a2a()
						m.busy()
						m.last()
					})
				}
			})
		}
	}
}

// checkClassified fails for an endpoint the matrix does not name: a new
// endpoint must be added to threadEndpoints (or cronEndpoints) or, with
// the reason, to threadFree.
func checkClassified(t *testing.T, routes []string) {
	t.Helper()
	served := map[string]bool{}
	for _, r := range routes {
		served[r] = true
		_, thread := threadEndpoints[r]
		_, cron := cronEndpoints[r]
		_, free := threadFree[r]
		if !thread && !cron && !free {
			t.Errorf("endpoint %s is not classified: add it to threadEndpoints with the calls that name a thread or run, or to threadFree with why no thread is reached", r)
		}
	}
	for _, set := range []map[string]string{keysOf(threadEndpoints), keysOf(cronEndpoints), threadFree} {
		for r := range set {
			if !served[r] {
				t.Errorf("the matrix names %s, which the router does not serve: remove it", r)
			}
		}
	}
}

func keysOf[V any](m map[string]V) map[string]string {
	out := map[string]string{}
	for k := range m {
		out[k] = ""
	}
	return out
}

// matrix is one surface's run of the matrix: ann's thread and run, the
// cron and the ids bob's calls use.
type matrix struct {
	t           *testing.T
	urls        func(user string, i int) string
	thread, run string
	// checkpoint is the id of a checkpoint of ann's thread (its first
	// run's last step).
	checkpoint string
	cron       string
	calls      int
	missing    int
	// tokens are each user's credential ("service": the service key).
	tokens map[string]string
	// gate holds ann's "hold" run for busy.
	gate *holdGate
}

// do sends c as user, with ids filled in for thread; it returns the
// status and the body (empty for a stream).
func (m *matrix) do(user string, c ownerCall, thread, run, cron string) (int, string) {
	m.t.Helper()
	fill := strings.NewReplacer("{thread}", thread, "{run}", run, "{checkpoint}", m.checkpoint, "{cron}", cron)
	m.calls++
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, c.method, m.urls(user, m.calls)+fill.Replace(c.path), strings.NewReader(fill.Replace(c.body)))
	if err != nil {
		m.t.Fatal(err)
	}
	if c.body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Authorization", "Bearer "+m.tokens[user])
	for k, v := range c.header {
		req.Header.Set(k, fill.Replace(v))
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		m.t.Fatalf("%s %s as %s: %v", c.method, c.path, user, err)
	}
	defer resp.Body.Close()
	if c.stream && resp.StatusCode < 300 {
		drainSSE(resp.Body)
		return resp.StatusCode, ""
	}
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body)
}

// drainSSE reads a stream until its run ends (an end or done event), or
// its first comment when it is a thread's idle stream.
func drainSSE(r io.Reader) {
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "event: end") || strings.HasPrefix(line, "event: done") ||
			strings.Contains(line, `"RUN_FINISHED"`) || strings.Contains(line, `"RUN_ERROR"`) || strings.HasPrefix(line, ":") {
			return
		}
	}
}

// createOn creates ann's thread on surface and runs once on it.
func (m *matrix) createOn(surface string) {
	t := m.t
	switch surface {
	case "dawn":
		m.mustStatus("ann", ownerCall{method: "POST", path: "/threads", body: `{"thread_id":"{thread}"}`}, 200)
		m.mustStatus("ann", ownerCall{method: "POST", path: "/threads/{thread}/runs/wait", body: apptest.RunBody("/job", "go")}, 200)
	case "langgraph":
		m.mustStatus("ann", ownerCall{method: "POST", path: "/threads", body: `{"thread_id":"{thread}","metadata":{"by":"langgraph"},"if_exists":"raise"}`}, 200)
		m.mustStatus("ann", ownerCall{method: "POST", path: "/threads/{thread}/runs/wait", body: lgRunBody("go")}, 200)
	case "agui":
		m.mustStatus("ann", ownerCall{method: "POST", path: "/agui/job", body: `{"threadId":"{thread}","runId":"agui-1","messages":[{"id":"m-1","role":"user","content":"go"}]}`, stream: true}, 200)
	}
	_, body := m.do("ann", ownerCall{method: "GET", path: "/threads/{thread}/runs"}, m.thread, "", "")
	var runs []struct {
		RunID string `json:"run_id"`
	}
	if err := json.Unmarshal([]byte(body), &runs); err != nil || len(runs) == 0 {
		t.Fatalf("ann's runs on %s: %v %s", m.thread, err, body)
	}
	m.run = runs[len(runs)-1].RunID
	_, body = m.do("ann", ownerCall{method: "GET", path: "/threads/{thread}/history?limit=1"}, m.thread, "", "")
	var history []struct {
		Checkpoint struct {
			ID string `json:"checkpoint_id"`
		} `json:"checkpoint"`
	}
	if err := json.Unmarshal([]byte(body), &history); err != nil || len(history) == 0 || history[0].Checkpoint.ID == "" {
		t.Fatalf("ann's checkpoints on %s: %v %s", m.thread, err, body)
	}
	m.checkpoint = history[0].Checkpoint.ID
	// bob has a thread of his own, which his searches must find.
	m.mustStatus("bob", ownerCall{method: "POST", path: "/threads", body: `{"thread_id":"bob-` + m.thread + `"}`}, 200)
}

func (m *matrix) mustStatus(user string, c ownerCall, want int) string {
	m.t.Helper()
	got, body := m.do(user, c, m.thread, m.run, m.cron)
	if got != want {
		m.t.Fatalf("%s %s as %s: %d %s, want %d", c.method, c.path, user, got, body, want)
	}
	return body
}

// endpoints runs every thread endpoint but the last ones: bob first,
// then ann.
func (m *matrix) endpoints() {
	keys := slices.Sorted(func(yield func(string) bool) {
		for k := range threadEndpoints {
			if !slices.Contains(ownerLast, k) && !yield(k) {
				return
			}
		}
	})
	for _, k := range keys {
		for _, c := range threadEndpoints[k] {
			m.check(k, c)
		}
	}
}

// check runs c as bob on ann's thread (the answer a missing thread gets,
// 404 where a missing thread would be created) and then as ann (her
// normal answer).
func (m *matrix) check(key string, c ownerCall) {
	t := m.t
	t.Helper()
	status, body := m.do("bob", c, m.thread, m.run, m.cron)
	m.sameAsMissing(key, c, status, body)
	if strings.Contains(c.path+c.body, "{run}") {
		m.crossRun(key, c)
	}
	if strings.Contains(c.path+c.body, "{checkpoint}") {
		m.crossCheckpoint(key, c)
	}
	m.waitIdle()
	status, body = m.do("ann", c, m.thread, m.run, m.cron)
	switch {
	case c.annStatus != 0 && status != c.annStatus:
		t.Errorf("%s (%s %s) as ann: %d %s, want %d", key, c.method, c.path, status, body, c.annStatus)
	case status == http.StatusNotFound && c.annKind != "" && !strings.Contains(body, `"kind":"`+c.annKind+`"`):
		t.Errorf("%s (%s %s) as ann on her own thread: 404 %s, want %s", key, c.method, c.path, body, c.annKind)
	case status == http.StatusNotFound && c.annKind == "":
		t.Errorf("%s (%s %s) as ann on her own thread: 404 %s", key, c.method, c.path, body)
	}
}

// crossRun checks that ann's run named under bob's own thread reads as a
// run his thread does not have.
func (m *matrix) crossRun(key string, c ownerCall) {
	m.t.Helper()
	own := "bob-" + m.thread
	status, got := m.do("bob", c, own, m.run, m.cron)
	wantStatus, want := m.do("bob", c, own, "no-such-run", m.cron)
	norm := strings.NewReplacer(m.run, "{run}", "no-such-run", "{run}")
	if status < 300 || status != wantStatus || norm.Replace(got) != norm.Replace(want) {
		m.t.Errorf("%s (%s %s) as bob with ann's run on his own thread: %d %s; want what a missing run gets: %d %s", key, c.method, c.path, status, got, wantStatus, want)
	}
}

// crossCheckpoint checks that ann's checkpoint named under bob's own
// thread reads as a checkpoint his thread does not have (an error, or
// for a history page before it, the same empty page).
func (m *matrix) crossCheckpoint(key string, c ownerCall) {
	m.t.Helper()
	own, annCheckpoint := "bob-"+m.thread, m.checkpoint
	status, got := m.do("bob", c, own, m.run, m.cron)
	m.checkpoint = "no-such-checkpoint"
	wantStatus, want := m.do("bob", c, own, m.run, m.cron)
	m.checkpoint = annCheckpoint
	norm := strings.NewReplacer(annCheckpoint, "{checkpoint}", "no-such-checkpoint", "{checkpoint}")
	if status != wantStatus || norm.Replace(got) != norm.Replace(want) {
		m.t.Errorf("%s (%s %s) as bob with ann's checkpoint on his own thread: %d %s; want what a missing checkpoint gets: %d %s", key, c.method, c.path, status, got, wantStatus, want)
	}
}

// waitIdle waits (up to 30 seconds) until ann's thread has no run in
// flight, so that her next call gets its answer for an idle thread and
// not 409 from a run an earlier call started in the background.
func (m *matrix) waitIdle() {
	m.t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		status, body := m.do("ann", ownerCall{method: "GET", path: "/threads/{thread}"}, m.thread, m.run, m.cron)
		if status != http.StatusOK || !strings.Contains(body, `"status":"busy"`) {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	m.t.Fatalf("ann's thread %s is still busy after 30 seconds", m.thread)
}

// sameAsMissing checks that bob's answer on ann's thread reads as the
// answer for a thread (and run) that does not exist, ids aside; where a
// call creates a missing thread (a run), bob's must be 404.
func (m *matrix) sameAsMissing(key string, c ownerCall, status int, got string) {
	m.t.Helper()
	if status < 300 {
		m.t.Errorf("%s (%s %s) as bob on ann's thread: %d %s", key, c.method, c.path, status, got)
		return
	}
	// A fresh id each time: a run on a missing thread creates it.
	m.missing++
	missing, missingRun := fmt.Sprintf("no-such-thread-%d", m.missing), "no-such-run"
	wantStatus, want := m.do("bob", c, missing, missingRun, m.cron)
	if wantStatus < 300 {
		if status != http.StatusNotFound {
			m.t.Errorf("%s (%s %s) as bob on ann's thread: %d %s, want 404", key, c.method, c.path, status, got)
		}
		return
	}
	norm := strings.NewReplacer(m.thread, "{thread}", m.run, "{run}", missing, "{thread}", missingRun, "{run}")
	if status != wantStatus || norm.Replace(got) != norm.Replace(want) {
		m.t.Errorf("%s (%s %s): bob's answer on ann's thread differs from a missing thread's:\n got %d %s\nwant %d %s", key, c.method, c.path, status, got, wantStatus, want)
	}
}

// searches checks that bob's searches and counts hold his thread and
// never ann's, on both wires' search endpoints.
func (m *matrix) searches() {
	t := m.t
	for _, user := range []string{"bob", "ann"} {
		body := m.mustStatus(user, ownerCall{method: "POST", path: "/threads/search", body: `{"limit":1000}`}, 200)
		var found []struct {
			ID string `json:"thread_id"`
		}
		if err := json.Unmarshal([]byte(body), &found); err != nil {
			t.Fatalf("search as %s: %v %s", user, err, body)
		}
		var ids []string
		for _, f := range found {
			ids = append(ids, f.ID)
		}
		hasAnn, hasBob := slices.Contains(ids, m.thread), slices.Contains(ids, "bob-"+m.thread)
		if user == "bob" && (hasAnn || !hasBob) {
			t.Errorf("bob's search: %v, want bob-%s and never %s", ids, m.thread, m.thread)
		}
		if user == "ann" && (!hasAnn || hasBob) {
			t.Errorf("ann's search: %v, want %s and never bob's", ids, m.thread)
		}
		countBody := m.mustStatus(user, ownerCall{method: "POST", path: "/threads/count", body: `{}`}, 200)
		if countBody = strings.TrimSpace(countBody); countBody != fmt.Sprint(len(ids)) {
			t.Errorf("%s's count %s, but their search finds %d threads", user, countBody, len(ids))
		}
	}
	// The service credential sees both.
	req, _ := http.NewRequest("POST", m.urls("ann", 0)+"/threads/count", strings.NewReader(`{}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+m.tokens["service"])
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var n int
	if err := json.NewDecoder(resp.Body).Decode(&n); err != nil || n < 2 {
		t.Errorf("the service's count: %d (%v), want every user's threads", n, err)
	}
}

// crons checks ann's cron: bob cannot change, delete or find it.
func (m *matrix) crons() {
	t := m.t
	body := m.mustStatus("ann", ownerCall{method: "POST", path: "/runs/crons", body: `{"assistant_id":"job","schedule":"0 0 1 1 *","input":{"messages":[{"role":"user","content":"tick"}]}}`}, 200)
	var cron struct {
		ID string `json:"cron_id"`
	}
	if err := json.Unmarshal([]byte(body), &cron); err != nil || cron.ID == "" {
		t.Fatalf("ann's cron: %v %s", err, body)
	}
	m.cron = cron.ID
	for _, user := range []string{"bob", "ann"} {
		body := m.mustStatus(user, ownerCall{method: "POST", path: "/runs/crons/search", body: `{"limit":1000}`}, 200)
		var found []struct {
			ID string `json:"cron_id"`
		}
		if err := json.Unmarshal([]byte(body), &found); err != nil {
			t.Fatalf("%s's cron search: %v %s", user, err, body)
		}
		if has := strings.Contains(body, m.cron); has != (user == "ann") {
			t.Errorf("%s's cron search holds ann's cron: %v, want %v: %s", user, has, user == "ann", body)
		}
		count := m.mustStatus(user, ownerCall{method: "POST", path: "/runs/crons/count", body: `{}`}, 200)
		if strings.TrimSpace(count) != fmt.Sprint(len(found)) {
			t.Errorf("%s's cron count %s, but their search finds %d", user, count, len(found))
		}
	}
	for _, k := range cronOrder {
		c := cronEndpoints[k]
		status, body := m.do("bob", c, m.thread, m.run, m.cron)
		if status != http.StatusNotFound {
			t.Errorf("%s as bob on ann's cron: %d %s, want 404", k, status, body)
		}
		if _, want := m.do("bob", c, m.thread, m.run, "no-such-cron"); status == http.StatusNotFound &&
			strings.ReplaceAll(body, m.cron, "{cron}") != strings.ReplaceAll(want, "no-such-cron", "{cron}") {
			t.Errorf("%s: bob's 404 on ann's cron %s differs from a missing cron's %s", k, body, want)
		}
		status, body = m.do("ann", c, m.thread, m.run, m.cron)
		if status == http.StatusNotFound || (c.annStatus != 0 && status != c.annStatus) {
			t.Errorf("%s as ann on her cron: %d %s", k, status, body)
		}
	}
}

// items checks that the item store is per user.
func (m *matrix) items() {
	t := m.t
	m.mustStatus("ann", ownerCall{method: "PUT", path: "/store/items", body: `{"namespace":["notes"],"key":"k","value":{"of":"ann"}}`}, 204)
	got := m.mustStatus("ann", ownerCall{method: "GET", path: "/store/items?namespace=notes&key=k"}, 200)
	if !strings.Contains(got, `"namespace":["notes"]`) || !strings.Contains(got, `"of":"ann"`) {
		t.Errorf("ann's item: %s", got)
	}
	status, body := m.do("bob", ownerCall{method: "GET", path: "/store/items?namespace=notes&key=k"}, "", "", "")
	wantStatus, want := m.do("bob", ownerCall{method: "GET", path: "/store/items?namespace=notes&key=no-such-key"}, "", "", "")
	if status != wantStatus || body != want || strings.Contains(body, "ann") {
		t.Errorf("bob reading ann's item: %d %s, want what a missing item gets: %d %s", status, body, wantStatus, want)
	}
	// A tool's items are the user's the run acts for: ann's runs wrote
	// hers, which she reads under the namespace the tool named.
	if got := m.mustStatus("ann", ownerCall{method: "GET", path: "/store/items?namespace=tool-notes&key=last"}, 200); !strings.Contains(got, `"by":"ann"`) || !strings.Contains(got, `"namespace":["tool-notes"]`) {
		t.Errorf("ann's tool item: %s, want the one her runs wrote", got)
	}
	for _, c := range []ownerCall{
		{method: "POST", path: "/store/items/search", body: `{"namespace_prefix":["notes"]}`},
		{method: "POST", path: "/store/namespaces", body: `{}`},
	} {
		if body := m.mustStatus("bob", c, 200); strings.Contains(body, `["notes"]`) || strings.Contains(body, "ann") {
			t.Errorf("bob's %s holds ann's items: %s", c.path, body)
		}
		if body := m.mustStatus("ann", c, 200); !strings.Contains(body, `["notes"]`) || strings.Contains(body, "users") {
			t.Errorf("ann's %s: %s, want her namespace as she named it", c.path, body)
		}
	}
}

// bearer adds a credential to every request of an MCP client.
type bearer string

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+string(b))
	return http.DefaultTransport.RoundTrip(r)
}

// mcp checks the MCP wire's thread_id argument: bob's call on ann's
// thread fails as a call on a thread that does not exist; ann's goes on
// her thread.
func (m *matrix) mcp() {
	t := m.t
	call := func(user, threadID string) *sdk.CallToolResult {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		c := sdk.NewClient(&sdk.Implementation{Name: "matrix", Version: "1"}, nil)
		tr := &sdk.StreamableClientTransport{Endpoint: m.urls(user, m.calls) + "/mcp", HTTPClient: &http.Client{Transport: bearer(m.tokens[user])}}
		s, err := c.Connect(ctx, tr, nil)
		if err != nil {
			t.Fatalf("MCP as %s: %v", user, err)
		}
		defer s.Close()
		res, err := s.CallTool(ctx, &sdk.CallToolParams{Name: "job", Arguments: map[string]any{"message": "again", "thread_id": threadID}})
		if err != nil {
			t.Fatalf("MCP call as %s: %v", user, err)
		}
		return res
	}
	text := func(res *sdk.CallToolResult) string {
		var b strings.Builder
		for _, c := range res.Content {
			if tc, ok := c.(*sdk.TextContent); ok {
				b.WriteString(tc.Text)
			}
		}
		return b.String()
	}
	got, want := call("bob", m.thread), call("bob", "no-such-mcp-thread")
	if !got.IsError || strings.ReplaceAll(text(got), m.thread, "{thread}") != strings.ReplaceAll(text(want), "no-such-mcp-thread", "{thread}") {
		t.Errorf("MCP call as bob on ann's thread: error %v %q; want what a missing thread gets: %q", got.IsError, text(got), text(want))
	}
	m.waitIdle()
	if res := call("ann", m.thread); res.IsError {
		t.Errorf("MCP call as ann on her thread: %q", text(res))
	}
	m.waitIdle()
}

// a2a checks the A2A endpoint of route job: bob's message on ann's
// contextId reads as a missing context, and his tasks/get, tasks/cancel
// and tasks/resubscribe of ann's run (a task) answer what a missing task
// gets; ann's own get and message go through.
func (m *matrix) a2a() {
	t := m.t
	rpc := func(user, method, params string) string {
		t.Helper()
		status, body := m.do(user, ownerCall{method: "POST", path: "/a2a/job", body: `{"jsonrpc":"2.0","id":1,"method":"` + method + `","params":` + params + `}`}, m.thread, m.run, m.cron)
		if status != http.StatusOK {
			t.Fatalf("A2A %s as %s: %d %s", method, user, status, body)
		}
		// A stream's events are data lines; their SSE ids are random.
		var data []string
		for line := range strings.Lines(body) {
			if rest, ok := strings.CutPrefix(line, "data: "); ok {
				data = append(data, strings.TrimSpace(rest))
			}
		}
		if len(data) > 0 {
			return strings.Join(data, "\n")
		}
		return strings.TrimSpace(body)
	}
	send := func(contextID string) string {
		return `{"message":{"kind":"message","role":"user","messageId":"m-1","contextId":"` + contextID + `","parts":[{"kind":"text","text":"again"}]}}`
	}
	if got := rpc("bob", "message/send", send(m.thread)); !strings.Contains(got, `"error"`) || !strings.Contains(got, "not found") {
		t.Errorf("A2A message/send as bob on ann's contextId: %s, want not found", got)
	}
	for _, method := range []string{"tasks/get", "tasks/cancel", "tasks/resubscribe"} {
		got := rpc("bob", method, `{"id":"`+m.run+`"}`)
		want := rpc("bob", method, `{"id":"no-such-run"}`)
		if !strings.Contains(got, `"error"`) || strings.ReplaceAll(got, m.run, "{run}") != strings.ReplaceAll(want, "no-such-run", "{run}") {
			t.Errorf("A2A %s as bob on ann's task: %s; want what a missing task gets: %s", method, got, want)
		}
	}
	if got := rpc("ann", "tasks/get", `{"id":"`+m.run+`"}`); !strings.Contains(got, `"result"`) {
		t.Errorf("A2A tasks/get as ann on her task: %s", got)
	}
	m.waitIdle()
	if got := rpc("ann", "message/send", send(m.thread)); !strings.Contains(got, `"result"`) {
		t.Errorf("A2A message/send as ann on her contextId: %s", got)
	}
	m.waitIdle()
}

// busy checks that bob cannot reach ann's run in flight: not by a run
// with multitask_strategy "interrupt" (which stops the thread's run before
// it starts its own), nor by a cancel, a join, a delete or a plan signal;
// ann's run ends as it would have.
func (m *matrix) busy() {
	t := m.t
	m.gate.arm()
	body := m.mustStatus("ann", ownerCall{method: "POST", path: "/threads/{thread}/runs", body: lgRunBody("hold")}, 200)
	var live struct {
		RunID string `json:"run_id"`
	}
	if err := json.Unmarshal([]byte(body), &live); err != nil || live.RunID == "" {
		t.Fatalf("ann's held run: %v %s", err, body)
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		_, th := m.do("ann", ownerCall{method: "GET", path: "/threads/{thread}"}, m.thread, m.run, m.cron)
		if strings.Contains(th, `"status":"busy"`) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("ann's held run never made her thread busy: %s", th)
		}
		time.Sleep(10 * time.Millisecond)
	}
	for _, c := range []ownerCall{
		{method: "POST", path: "/threads/{thread}/runs/wait", body: `{"assistant_id":"job","input":{"messages":[{"role":"user","content":"mine"}]},"multitask_strategy":"interrupt","if_not_exists":"create"}`},
		{method: "POST", path: "/threads/{thread}/runs", body: `{"assistant_id":"job","input":{"messages":[{"role":"user","content":"mine"}]},"multitask_strategy":"interrupt","if_not_exists":"create"}`},
		{method: "POST", path: "/threads/{thread}/cancel"},
		{method: "POST", path: "/threads/{thread}/runs/{run}/cancel?wait=true"},
		{method: "GET", path: "/threads/{thread}/runs/{run}/join"},
		{method: "GET", path: "/threads/{thread}/runs/{run}/stream", stream: true},
		{method: "POST", path: "/threads/{thread}/plan/cancel"},
		{method: "DELETE", path: "/threads/{thread}"},
	} {
		if status, body := m.do("bob", c, m.thread, live.RunID, m.cron); status != http.StatusNotFound {
			t.Errorf("%s %s as bob on ann's run in flight: %d %s, want 404", c.method, c.path, status, body)
		}
	}
	m.gate.release()
	m.waitIdle()
	got := m.mustStatus("ann", ownerCall{method: "GET", path: "/threads/{thread}/runs/" + live.RunID}, 200)
	if !strings.Contains(got, `"status":"success"`) {
		t.Errorf("ann's run after bob's attempts: %s, want it to have run to its end", got)
	}
}

// last runs the endpoints that delete, bob first.
func (m *matrix) last() {
	for _, k := range ownerLast {
		for _, c := range threadEndpoints[k] {
			m.check(k, c)
		}
	}
}

// TestOwnershipDocListsEveryEndpoint: docs/ownership.md lists exactly the
// endpoints the router serves, which are those the matrix classifies.
func TestOwnershipDocListsEveryEndpoint(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "..", "docs", "ownership.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(data), "\n## Endpoints\n")
	if !ok {
		t.Fatal("docs/ownership.md has no Endpoints section")
	}
	listed := map[string]bool{}
	for _, m := range regexp.MustCompile("`((?:GET|POST|PUT|PATCH|DELETE) /[^`]*)`").FindAllStringSubmatch(section, -1) {
		listed[m[1]] = true
	}
	h := apptest.New(t, ownerApp(t), dawntest.Script().Reply("x"), apptest.Options{Tools: rememberTool})
	served := map[string]bool{}
	for _, r := range h.API.Echo().Routes() {
		served[r.Method+" "+r.Path] = true
	}
	for r := range served {
		if !listed[r] {
			t.Errorf("docs/ownership.md does not list %s; add it to the list its owner check belongs to", r)
		}
	}
	for r := range listed {
		if !served[r] {
			t.Errorf("docs/ownership.md lists %s, which the server does not serve", r)
		}
	}
}

// TestCronTicksRunAsTheirOwner: the thread a tick of ann's cron creates
// is ann's: her search finds it, bob's does not.
func TestCronTicksRunAsTheirOwner(t *testing.T) {
	creds := newCredentials(t, "hs256")
	h := apptest.New(t, ownerApp(t), dawntest.Script().Then(writeThenReply).Repeat(), apptest.Options{Tools: rememberTool, Auth: creds.auth})
	env := map[string]string{"DAWN_CRON_SECONDS": "1", "DAWN_CRON_INTERVAL": "50ms"}
	srv := httptest.NewServer(server.New(h.Runs, server.Options{Auth: creds.auth, Env: func(k string) string { return env[k] }}))
	t.Cleanup(srv.Close)
	m := &matrix{t: t, urls: func(string, int) string { return srv.URL }, tokens: creds.tokens}
	m.mustStatus("ann", ownerCall{method: "POST", path: "/runs/crons", body: `{"assistant_id":"job","schedule":"* * * * * *","on_run_completed":"keep","input":{"messages":[{"role":"user","content":"tick"}]}}`}, 200)
	deadline := time.Now().Add(30 * time.Second)
	for {
		if strings.TrimSpace(m.mustStatus("ann", ownerCall{method: "POST", path: "/threads/count", body: `{}`}, 200)) != "0" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("no tick of ann's cron made a thread of hers within 30 seconds")
		}
		time.Sleep(50 * time.Millisecond)
	}
	if n := strings.TrimSpace(m.mustStatus("bob", ownerCall{method: "POST", path: "/threads/count", body: `{}`}, 200)); n != "0" {
		t.Errorf("bob counts %s threads; the ticks' threads are ann's", n)
	}
}
