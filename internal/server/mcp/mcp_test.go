package mcp_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dawn-go/dawn/capabilities"
	"github.com/dawn-go/dawn/dawntest"
	"github.com/dawn-go/dawn/internal/apptest"
	"github.com/dawn-go/dawn/internal/models"
	"github.com/dawn-go/dawn/internal/server"
	dawnmcp "github.com/dawn-go/dawn/internal/server/mcp"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/tmc/langchaingo/llms"
)

const apiKey = "test-key"

// serve serves the app in dir on the offline model behind apiKey, over
// loopback, and returns its base URL.
func serve(t *testing.T, dir string, tools ...capabilities.AppTool) string {
	t.Helper()
	return serveModel(t, dir, models.NewOffline(), tools...)
}

// serveModel is serve on model.
func serveModel(t *testing.T, dir string, model llms.Model, tools ...capabilities.AppTool) string {
	t.Helper()
	h := apptest.New(t, dir, model, apptest.Options{Tools: tools})
	srv := httptest.NewServer(server.New(h.Runs, server.Options{APIKey: apiKey}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// keyed adds the API key to every request, as a client configured with a
// bearer token does.
type keyed struct{ key string }

func (k keyed) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+k.key)
	return http.DefaultTransport.RoundTrip(r)
}

// connect opens an MCP session on base's /mcp with the official Go client.
func connect(t *testing.T, base string, opts *sdk.ClientOptions) *sdk.ClientSession {
	t.Helper()
	c := sdk.NewClient(&sdk.Implementation{Name: "test", Version: "1"}, opts)
	tr := &sdk.StreamableClientTransport{Endpoint: base + "/mcp", HTTPClient: &http.Client{Transport: keyed{apiKey}}}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	s, err := c.Connect(ctx, tr, nil)
	if err != nil {
		t.Fatalf("connecting to %s/mcp: %v", base, err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func callTool(t *testing.T, s *sdk.ClientSession, p *sdk.CallToolParams) *sdk.CallToolResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	res, err := s.CallTool(ctx, p)
	if err != nil {
		t.Fatalf("calling %s: %v", p.Name, err)
	}
	return res
}

func text(res *sdk.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*sdk.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

func structured(t *testing.T, res *sdk.CallToolResult) map[string]any {
	t.Helper()
	raw, err := json.Marshal(res.StructuredContent)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatalf("structured content %s is not an object: %v", raw, err)
	}
	return m
}

func TestToolName(t *testing.T) {
	for _, tc := range []struct{ id, want string }{
		{"/", "index"},
		{"/plain", "plain"},
		{"/support/[tenant]", "support_tenant"},
		{"/docs/[...slug]", "docs_slug"},
		{"/docs/[[...slug]]", "docs_slug"},
		{"/blog-posts/v1.2", "blog-posts_v1_2"},
	} {
		if got := dawnmcp.ToolName(tc.id); got != tc.want {
			t.Errorf("ToolName(%q) = %q, want %q", tc.id, got, tc.want)
		}
	}
}

func TestListToolsShowsRoutes(t *testing.T) {
	dir := apptest.WriteApp(t, map[string]string{
		"support/[tenant]/agent.md":              "---\ndescription: Answers support questions\n---\nYou help customers.",
		"support/[tenant]/state.yaml":            "priority:\n  type: string\n  default: normal\n",
		"research/agent.md":                      "Lead researcher.",
		"research/subagents/researcher/agent.md": "Researcher.",
	})
	s := connect(t, serve(t, dir), nil)
	res, err := s.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	schemas := map[string]map[string]any{}
	for _, tool := range res.Tools {
		names = append(names, tool.Name)
		raw, _ := json.Marshal(tool.InputSchema)
		var m map[string]any
		_ = json.Unmarshal(raw, &m)
		schemas[tool.Name] = m
	}
	if want := []string{"research", "support_tenant"}; !slices.Equal(names, want) {
		t.Fatalf("tools = %v, want %v (the subagent is not a tool)", names, want)
	}
	sch := schemas["support_tenant"]
	props, _ := sch["properties"].(map[string]any)
	for _, p := range []string{"tenant", "priority", "message", "thread_id"} {
		if _, ok := props[p]; !ok {
			t.Errorf("support_tenant's schema has no %q property: %v", p, sch)
		}
	}
	var required []string
	for _, r := range sch["required"].([]any) {
		required = append(required, r.(string))
	}
	slices.Sort(required)
	if want := []string{"message", "tenant"}; !slices.Equal(required, want) {
		t.Errorf("required = %v, want %v", required, want)
	}
}

func TestCallToolAnswersAndContinuesThread(t *testing.T) {
	dir := apptest.WriteApp(t, map[string]string{"plain/agent.md": "No plan here."})
	s := connect(t, serve(t, dir), nil)
	res := callTool(t, s, &sdk.CallToolParams{Name: "plain", Arguments: map[string]any{"message": "hello"}})
	if res.IsError || text(res) == "" {
		t.Fatalf("result = error %v, text %q; want the run's answer", res.IsError, text(res))
	}
	first := structured(t, res)
	threadID, _ := first["thread_id"].(string)
	if threadID == "" || first["answer"] != text(res) {
		t.Fatalf("structured content %v: want thread_id and the answer", first)
	}
	again := callTool(t, s, &sdk.CallToolParams{Name: "plain", Arguments: map[string]any{"message": "more", "thread_id": threadID}})
	if again.IsError || structured(t, again)["thread_id"] != threadID {
		t.Fatalf("second call = %q, %v: want it on thread %s", text(again), again.StructuredContent, threadID)
	}
	unknown := callTool(t, s, &sdk.CallToolParams{Name: "plain", Arguments: map[string]any{"message": "x", "thread_id": "no-such-thread"}})
	if !unknown.IsError || !strings.Contains(text(unknown), "no-such-thread") {
		t.Fatalf("call on an unknown thread = %v %q; want an error naming it", unknown.IsError, text(unknown))
	}
	missing := callTool(t, s, &sdk.CallToolParams{Name: "plain", Arguments: map[string]any{}})
	if !missing.IsError || !strings.Contains(text(missing), `"message"`) {
		t.Fatalf("call without message = %v %q; want an error naming message", missing.IsError, text(missing))
	}
}

func TestCallToolFillsParamsAndState(t *testing.T) {
	dir := apptest.WriteApp(t, map[string]string{
		"support/[tenant]/agent.md":   "You help customers.",
		"support/[tenant]/state.yaml": "priority:\n  type: string\n  default: normal\n",
	})
	s := connect(t, serve(t, dir), nil)
	res := callTool(t, s, &sdk.CallToolParams{Name: "support_tenant", Arguments: map[string]any{"message": "hi", "tenant": "acme", "priority": "high"}})
	if res.IsError {
		t.Fatalf("call failed: %s", text(res))
	}
	st, _ := structured(t, res)["state"].(map[string]any)
	if st["priority"] != "high" {
		t.Fatalf("structured state = %v, want priority high", st)
	}
	spaced := callTool(t, s, &sdk.CallToolParams{Name: "support_tenant", Arguments: map[string]any{"message": "hi", "tenant": "acme corp?"}})
	if spaced.IsError {
		t.Fatalf("a tenant with a space and '?': %s", text(spaced))
	}
	bad := callTool(t, s, &sdk.CallToolParams{Name: "support_tenant", Arguments: map[string]any{"message": "hi", "tenant": "a/b"}})
	if !bad.IsError || !strings.Contains(text(bad), "tenant") {
		t.Fatalf("tenant with a slash = %v %q; want an error naming tenant", bad.IsError, text(bad))
	}
}

func TestProgressCarriesPlanUpdates(t *testing.T) {
	dir := apptest.WriteApp(t, map[string]string{
		"support/[tenant]/agent.md": "You help customers.",
		"support/[tenant]/plan.md":  "- [ ] Understand the customer request\n- [ ] Write the final response\n",
	})
	var mu sync.Mutex
	var got []*sdk.ProgressNotificationParams
	s := connect(t, serve(t, dir), &sdk.ClientOptions{ProgressNotificationHandler: func(_ context.Context, r *sdk.ProgressNotificationClientRequest) {
		mu.Lock()
		defer mu.Unlock()
		got = append(got, r.Params)
	}})
	p := &sdk.CallToolParams{Name: "support_tenant", Arguments: map[string]any{"message": "my order is late", "tenant": "acme"}}
	p.SetProgressToken("tok-1")
	res := callTool(t, s, p)
	if res.IsError {
		t.Fatalf("call failed: %s", text(res))
	}
	// The client hands notifications to its handler on goroutines of
	// their own, so the last may land just after the result.
	var plans []string
	deadline := time.Now().Add(5 * time.Second)
	for {
		plans = plans[:0]
		mu.Lock()
		for _, n := range got {
			if n.ProgressToken != "tok-1" {
				t.Errorf("progress token = %v, want tok-1", n.ProgressToken)
			}
			if strings.HasPrefix(n.Message, "plan_update ") {
				plans = append(plans, n.Message)
			}
		}
		total := len(got)
		mu.Unlock()
		done := slices.ContainsFunc(plans, func(p string) bool {
			return strings.Contains(p, `{"content":"Write the final response","status":"completed"}`)
		})
		if done {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("plan_update progress among %d notifications: %q; want the plan's items with their status, ending with every item completed", total, plans)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestParkedApprovalIsReported(t *testing.T) {
	dir := apptest.WriteApp(t, map[string]string{"ops/agent.md": "---\napprove: [release]\n---\nYou release."})
	var mu sync.Mutex
	var released []string
	release := capabilities.AppTool{Tool: capabilities.Func("release", "Release a version.", func(_ context.Context, in struct {
		Version string `json:"version"`
	}) (string, error) {
		mu.Lock()
		defer mu.Unlock()
		released = append(released, in.Version)
		return "released", nil
	})}
	// The offline model never calls a tool a person must approve: a
	// scripted model does.
	model := dawntest.Script().CallTool("release", map[string]any{"version": "1.2"}).Reply("released")
	base := serveModel(t, dir, model, release)
	s := connect(t, base, nil)
	res := callTool(t, s, &sdk.CallToolParams{Name: "ops", Arguments: map[string]any{"message": "ship it"}})
	if res.IsError {
		t.Fatalf("a parked run is not an error: %s", text(res))
	}
	st := structured(t, res)
	threadID, _ := st["thread_id"].(string)
	ins, _ := st["interrupts"].([]any)
	if len(ins) != 1 {
		t.Fatalf("structured content %v: want one interrupt", st)
	}
	id, _ := ins[0].(map[string]any)["interruptId"].(string)
	msg := text(res)
	if id == "" || !strings.Contains(msg, id) || !strings.Contains(msg, "POST /threads/"+threadID+"/resume") {
		t.Fatalf("text %q: want the interrupt id %q and how to resume thread %s", msg, id, threadID)
	}
	mu.Lock()
	n := len(released)
	mu.Unlock()
	if n != 0 {
		t.Fatalf("release ran %d times before approval", n)
	}

	body := `{"route":"/ops","resume":[{"interruptId":"` + id + `","status":"resolved","payload":"once"}]}`
	req, _ := http.NewRequest(http.MethodPost, base+"/threads/"+threadID+"/resume", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+apiKey)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	apptest.ReadSSE(t, resp)
	mu.Lock()
	defer mu.Unlock()
	if len(released) != 1 {
		t.Fatalf("after resuming as the text says, release ran %d times, want 1", len(released))
	}
}

func TestMCPNeedsAPIKey(t *testing.T) {
	dir := apptest.WriteApp(t, map[string]string{"plain/agent.md": "No plan here."})
	base := serve(t, dir)
	resp, err := http.Post(base+"/mcp", "application/json", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("POST /mcp without the key = %d, want 401", resp.StatusCode)
	}
	c := sdk.NewClient(&sdk.Implementation{Name: "test", Version: "1"}, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if s, err := c.Connect(ctx, &sdk.StreamableClientTransport{Endpoint: base + "/mcp", MaxRetries: -1}, nil); err == nil {
		s.Close()
		t.Fatal("the Go client connected without the API key")
	}
}

func TestToolNameCollisionNamesBothRoutes(t *testing.T) {
	dir := apptest.WriteApp(t, map[string]string{"a/b/agent.md": "One.", "a_b/agent.md": "Two."})
	base := serve(t, dir)
	req, _ := http.NewRequest(http.MethodPost, base+"/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Authorization", "Bearer "+apiKey)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var e struct {
		Error struct {
			Message string `json:"message"`
		} `json:"error"`
	}
	raw := make([]byte, 4096)
	n, _ := resp.Body.Read(raw)
	_ = json.Unmarshal(raw[:n], &e)
	body := string(raw[:n])
	if resp.StatusCode != http.StatusInternalServerError || !strings.Contains(body, "/a/b") || !strings.Contains(body, "/a_b") {
		t.Fatalf("POST /mcp with colliding tool names = %d %s; want 500 naming both routes", resp.StatusCode, body)
	}
}

func TestCancelledCallCancelsItsRun(t *testing.T) {
	dir := apptest.WriteApp(t, map[string]string{"plain/agent.md": "No plan here."})
	hold := make(chan struct{})
	defer close(hold)
	model := dawntest.Script().Wait(hold).Reply("too late")
	base := serveModel(t, dir, model)
	s := connect(t, base, nil)

	req, _ := http.NewRequest(http.MethodPost, base+"/threads", strings.NewReader(`{"thread_id":"held"}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+apiKey)
	resp, err := http.DefaultClient.Do(req)
	if err != nil || resp.StatusCode/100 != 2 {
		t.Fatalf("creating the thread: %v %v", resp, err)
	}
	resp.Body.Close()

	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() {
		_, err := s.CallTool(ctx, &sdk.CallToolParams{Name: "plain", Arguments: map[string]any{"message": "wait", "thread_id": "held"}})
		errc <- err
	}()
	status := func() string {
		req, _ := http.NewRequest(http.MethodGet, base+"/threads/held/runs", nil)
		req.Header.Set("Authorization", "Bearer "+apiKey)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var runs []struct {
			Status string `json:"status"`
		}
		_ = json.NewDecoder(resp.Body).Decode(&runs)
		if len(runs) == 0 {
			return ""
		}
		return runs[0].Status
	}
	deadline := time.Now().Add(10 * time.Second)
	for status() != "running" {
		if time.Now().After(deadline) {
			t.Fatalf("the call's run did not start: status %q", status())
		}
		time.Sleep(10 * time.Millisecond)
	}
	cancel()
	<-errc
	for st := status(); st == "running"; st = status() {
		if time.Now().After(deadline) {
			t.Fatalf("the run of a cancelled call is still %q", st)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestServedBehindAProxy: a reverse proxy on the same machine that keeps
// the public Host header reaches /mcp, as it reaches the rest of the API.
func TestServedBehindAProxy(t *testing.T) {
	dir := apptest.WriteApp(t, map[string]string{"plain/agent.md": "No plan here."})
	base := serve(t, dir)
	req, _ := http.NewRequest(http.MethodPost, base+"/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`))
	req.Host = "agents.example.com"
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Authorization", "Bearer "+apiKey)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), `"name":"plain"`) {
		t.Fatalf("tools/list with Host agents.example.com = %d %s; want the tools", resp.StatusCode, body)
	}
}
