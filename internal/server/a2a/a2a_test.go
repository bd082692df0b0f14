package a2a_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/a2a"
	"github.com/a2aproject/a2a-go/a2aclient"
	"github.com/a2aproject/a2a-go/a2aclient/agentcard"
	"github.com/dawn-go/dawn/capabilities"
	"github.com/dawn-go/dawn/internal/apptest"
	"github.com/dawn-go/dawn/internal/auth"
	"github.com/dawn-go/dawn/internal/auth/authtest"
	"github.com/dawn-go/dawn/internal/pgtest"
	"github.com/dawn-go/dawn/internal/server"
	dawna2a "github.com/dawn-go/dawn/internal/server/a2a"
	"github.com/tmc/langchaingo/llms"
)

const secret = "a2a-test-secret-of-at-least-32-bytes"

// testModel answers by the user's newest message: "plan" writes the four
// todos of the support route's plan, all done; "release" calls release;
// "slow" waits until the test lets it go, or the run is cancelled;
// anything else is answered at once. After a tool call it answers.
type testModel struct {
	mu   sync.Mutex
	gate chan struct{}
}

func (m *testModel) Call(ctx context.Context, prompt string, options ...llms.CallOption) (string, error) {
	return llms.GenerateFromSinglePrompt(ctx, m, prompt, options...)
}

func (m *testModel) GenerateContent(ctx context.Context, msgs []llms.MessageContent, _ ...llms.CallOption) (*llms.ContentResponse, error) {
	text := func(s string) *llms.ContentResponse {
		return &llms.ContentResponse{Choices: []*llms.ContentChoice{{Content: s, StopReason: "stop"}}}
	}
	call := func(name string, args any) *llms.ContentResponse {
		raw, _ := json.Marshal(args)
		c := llms.ToolCall{ID: fmt.Sprintf("call-%d", len(msgs)), Type: "function", FunctionCall: &llms.FunctionCall{Name: name, Arguments: string(raw)}}
		return &llms.ContentResponse{Choices: []*llms.ContentChoice{{ToolCalls: []llms.ToolCall{c}}}}
	}
	if afterTool(msgs) {
		return text("Done: " + apptest.LastUser(msgs) + "."), nil
	}
	user := apptest.LastUser(msgs)
	switch {
	case strings.Contains(user, "plan"):
		return call("writeTodos", apptest.FourTodos(4)), nil
	case strings.Contains(user, "ship"):
		return call("writeTodos", map[string]any{"todos": []map[string]string{{"content": "Ship the release", "status": "completed"}}}), nil
	case strings.Contains(user, "release"):
		return call("release", map[string]string{"version": "1.2"}), nil
	case strings.Contains(user, "slow"):
		m.mu.Lock()
		gate := m.gate
		m.mu.Unlock()
		select {
		case <-gate:
			return text("Slow done."), nil
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	return text("Hello from A2A."), nil
}

// afterTool reports whether a tool result follows the newest user
// message (a per-turn state prompt may come after both).
func afterTool(msgs []llms.MessageContent) bool {
	for i := len(msgs) - 1; i >= 0; i-- {
		switch msgs[i].Role {
		case llms.ChatMessageTypeTool:
			return true
		case llms.ChatMessageTypeHuman:
			return false
		}
	}
	return false
}

// a2aApp is a support route with a plan, an ops route whose release
// calls wait for approval, and a route with a subagent.
func a2aApp(t testing.TB) string {
	return apptest.WriteApp(t, map[string]string{
		"support/[tenant]/agent.md":              "---\ndescription: Answers customer questions.\n---\nYou help customers.",
		"support/[tenant]/plan.md":               "- [ ] Understand the customer request\n- [ ] Check account context\n- [ ] Decide whether to answer or escalate\n- [ ] Write the final response\n",
		"ops/agent.md":                           "---\ndescription: Releases versions.\napprove: [release]\n---\nYou release.",
		"ship/agent.md":                          "---\ndescription: Ships releases on an approved plan.\n---\nYou ship.",
		"ship/plan.md":                           "---\nenforce: true\napproval: required\n---\n- [ ] Ship the release\n",
		"research/agent.md":                      "Lead researcher.",
		"research/subagents/researcher/agent.md": "Researcher.",
	})
}

var release = capabilities.AppTool{Tool: capabilities.Func("release", "Release a version.", func(_ context.Context, in struct {
	Version string `json:"version"`
}) (string, error) {
	return "released " + in.Version, nil
})}

// serve serves the app with JWT authentication (and the service key
// "svc") on the SQLite file db, over loopback.
func serve(t testing.TB, dir, db string, model *testModel) string {
	t.Helper()
	a, err := auth.New(t.Context(), auth.Options{Config: auth.Config{JWT: &auth.JWT{SecretEnv: "SECRET", Audience: "dawn"}}, APIKey: "svc", Env: func(string) string { return secret }})
	if err != nil {
		t.Fatal(err)
	}
	h := apptest.New(t, dir, model, apptest.Options{Tools: []capabilities.AppTool{release}, StorePath: db})
	srv := httptest.NewServer(server.New(h.Runs, server.Options{Auth: a}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// bearer adds a token to every request.
type bearer struct{ token string }

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return http.DefaultTransport.RoundTrip(r)
}

// client is user's A2A client of the agent at base+/a2a+route, made from
// its agent card as the SDK resolves it.
func client(t testing.TB, base, route, user string) (*a2aclient.Client, *a2a.AgentCard) {
	t.Helper()
	token := authtest.HS256(t, secret, authtest.Claims(user, "", "dawn"))
	hc := &http.Client{Transport: bearer{token}}
	card, err := agentcard.NewResolver(hc).Resolve(t.Context(), base+"/a2a"+route)
	if err != nil {
		t.Fatalf("resolving the card of %s: %v", route, err)
	}
	c, err := a2aclient.NewFromCard(t.Context(), card, a2aclient.WithJSONRPCTransport(hc))
	if err != nil {
		t.Fatal(err)
	}
	return c, card
}

func userText(ctxID, text string) *a2a.MessageSendParams {
	m := a2a.NewMessage(a2a.MessageRoleUser, a2a.TextPart{Text: text})
	m.ContextID = ctxID
	return &a2a.MessageSendParams{Message: m}
}

func collect(t *testing.T, events func(func(a2a.Event, error) bool)) []a2a.Event {
	t.Helper()
	var out []a2a.Event
	for e, err := range events {
		if err != nil {
			t.Fatalf("stream: %v", err)
		}
		out = append(out, e)
	}
	return out
}

// TestAgentCard: each route's card names it, describes it from agent.md,
// lists its tools and plan as skills and the server's auth, and points at
// its endpoint; subagents have none, and GET /a2a lists the agents.
func TestAgentCard(t *testing.T) {
	base := serve(t, a2aApp(t), filepath.Join(t.TempDir(), "dawn.db"), &testModel{})
	_, card := client(t, base, "/support/acme", "ann")
	if card.Name != "/support/[tenant]" || card.Description != "Answers customer questions." || card.URL != base+"/a2a/support/acme/" ||
		card.ProtocolVersion != "0.3.0" || !card.Capabilities.Streaming || card.PreferredTransport != a2a.TransportProtocolJSONRPC {
		t.Fatalf("card = %+v", card)
	}
	main := card.Skills[0]
	if main.ID != "/support/[tenant]" || !slices.Contains(main.Tags, "planning") || !slices.Contains(main.Examples, "Check account context") {
		t.Errorf("route skill = %+v, want planning with the seed as examples", main)
	}
	if !slices.ContainsFunc(card.Skills, func(s a2a.AgentSkill) bool { return s.Name == "writeTodos" }) {
		t.Errorf("skills = %+v, want writeTodos", card.Skills)
	}
	if _, ok := card.SecuritySchemes["bearer"].(a2a.HTTPAuthSecurityScheme); !ok {
		t.Errorf("security schemes = %+v, want bearer", card.SecuritySchemes)
	}
	if _, ok := card.SecuritySchemes["apiKey"].(a2a.APIKeySecurityScheme); !ok {
		t.Errorf("security schemes = %+v, want the X-Api-Key", card.SecuritySchemes)
	}

	token := authtest.HS256(t, secret, authtest.Claims("ann", "", "dawn"))
	get := func(path string, v any) int {
		req, _ := http.NewRequest(http.MethodGet, base+path, nil)
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		if v != nil {
			_ = json.NewDecoder(resp.Body).Decode(v)
		}
		return resp.StatusCode
	}
	if code := get("/a2a/research/subagents/researcher"+"/.well-known/agent-card.json", nil); code != http.StatusNotFound {
		t.Errorf("a subagent's card: %d, want 404", code)
	}
	var list struct {
		Agents []a2a.AgentCard `json:"agents"`
	}
	get("/a2a", &list)
	var names []string
	for _, c := range list.Agents {
		names = append(names, c.Name)
	}
	if !slices.Equal(names, []string{"/ops", "/research", "/ship", "/support/[tenant]"}) {
		t.Errorf("GET /a2a lists %v", names)
	}
	var root a2a.AgentCard
	if code := get("/.well-known/agent-card.json?route=/ops", &root); code != http.StatusOK || root.Name != "/ops" {
		t.Errorf("root card ?route=/ops: %d %+v", code, root.Name)
	}
	if code := get("/.well-known/agent-card.json", nil); code != http.StatusNotFound {
		t.Errorf("root card without ?route= on an app of four: %d, want 404", code)
	}
}

// TestSendStreamGet drives a route through the Go SDK: a blocking send,
// a stream whose status updates carry the plan and whose artifacts are the
// answer and the final plan, and get.
func TestSendStreamGet(t *testing.T) {
	model := &testModel{}
	base := serve(t, a2aApp(t), filepath.Join(t.TempDir(), "dawn.db"), model)
	c, _ := client(t, base, "/support/acme", "ann")
	ctx := t.Context()

	res, err := c.SendMessage(ctx, userText("", "hi"))
	if err != nil {
		t.Fatal(err)
	}
	task, ok := res.(*a2a.Task)
	if !ok || task.Status.State != a2a.TaskStateCompleted || task.ContextID == "" || len(task.Artifacts) == 0 || textOf(task.Artifacts[0].Parts) != "Hello from A2A." {
		raw, _ := json.Marshal(res)
		t.Fatalf("send = %s", raw)
	}

	events := collect(t, c.SendStreamingMessage(ctx, userText(task.ContextID, "make a plan")))
	if first, ok := events[0].(*a2a.Task); !ok || first.Status.State != a2a.TaskStateWorking || first.ContextID != task.ContextID {
		t.Fatalf("first event = %#v, want the working task on the same context", events[0])
	}
	var plans [][]any
	var artifacts = map[string]*a2a.Artifact{}
	for _, e := range events {
		switch e := e.(type) {
		case *a2a.TaskStatusUpdateEvent:
			if e.Status.Message != nil && e.Status.Message.Metadata["dawn_event"] == "plan_update" {
				d := e.Status.Message.Parts[0].(a2a.DataPart)
				plans = append(plans, d.Data["todos"].([]any))
			}
		case *a2a.TaskArtifactUpdateEvent:
			artifacts[e.Artifact.Name] = e.Artifact
		}
	}
	last, ok := events[len(events)-1].(*a2a.TaskStatusUpdateEvent)
	if !ok || !last.Final || last.Status.State != a2a.TaskStateCompleted {
		t.Fatalf("last event = %#v, want the final completed status", events[len(events)-1])
	}
	if len(plans) != 1 || len(plans[0]) != 4 {
		t.Fatalf("plan updates = %v, want one of four todos", plans)
	}
	if a := artifacts["answer"]; a == nil || textOf(a.Parts) != "Done: make a plan." {
		t.Errorf("answer artifact = %+v", a)
	}
	if a := artifacts["todos"]; a == nil || len(a.Parts[0].(a2a.DataPart).Data["todos"].([]any)) != 4 {
		t.Errorf("todos artifact = %+v", a)
	}

	got, err := c.GetTask(ctx, &a2a.TaskQueryParams{ID: last.TaskID})
	// The answer, the todos and the plan's revisions (plan_revisions).
	if err != nil || got.Status.State != a2a.TaskStateCompleted || len(got.Artifacts) != 3 || got.Artifacts[2].Name != "plan_revisions" {
		t.Fatalf("get = %+v, %v", got, err)
	}

	// A server without webhook settings sends no push notifications:
	// asking for them is refused, not ignored.
	push := userText(task.ContextID, "hi")
	push.Config = &a2a.MessageSendConfig{PushConfig: &a2a.PushConfig{URL: "http://127.0.0.1:9/hook"}}
	if _, err := c.SendMessage(ctx, push); !errors.Is(err, a2a.ErrPushNotificationNotSupported) {
		t.Errorf("a message asking for push notifications: %v, want push notifications not supported", err)
	}

}

// TestCancelAndResubscribe: a slow task's stream is dropped, the task goes
// on, a resubscribe picks it up, and a cancel stops it, which ends the
// resubscribed stream.
func TestCancelAndResubscribe(t *testing.T) {
	model := &testModel{gate: make(chan struct{})}
	base := serve(t, a2aApp(t), filepath.Join(t.TempDir(), "dawn.db"), model)
	c, _ := client(t, base, "/support/acme", "ann")
	ctx := t.Context()
	sctx, drop := context.WithCancel(ctx)
	var slowID a2a.TaskID
	for e, err := range c.SendStreamingMessage(sctx, userText("", "slow")) {
		if err != nil {
			t.Fatal(err)
		}
		slowID = e.(*a2a.Task).ID
		break
	}
	drop()
	if got, err := c.GetTask(ctx, &a2a.TaskQueryParams{ID: slowID}); err != nil || got.Status.State != a2a.TaskStateWorking {
		t.Fatalf("the slow task after its stream dropped: %+v, %v; want it working", got, err)
	}
	resub := make(chan []a2a.Event, 1)
	go func() {
		var out []a2a.Event
		for e, err := range c.ResubscribeToTask(ctx, &a2a.TaskIDParams{ID: slowID}) {
			if err != nil {
				break
			}
			out = append(out, e)
		}
		resub <- out
	}()
	time.Sleep(100 * time.Millisecond)
	cancelled, err := c.CancelTask(ctx, &a2a.TaskIDParams{ID: slowID})
	if err != nil || cancelled.Status.State != a2a.TaskStateCanceled {
		t.Fatalf("cancel = %+v, %v", cancelled, err)
	}
	select {
	case out := <-resub:
		end, ok := out[len(out)-1].(*a2a.TaskStatusUpdateEvent)
		if _, first := out[0].(*a2a.Task); !first || !ok || !end.Final || end.Status.State != a2a.TaskStateCanceled {
			t.Fatalf("resubscribed events = %#v, want the task, then its final canceled status", out)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the resubscribed stream did not end with the cancel")
	}
	if _, err := c.CancelTask(ctx, &a2a.TaskIDParams{ID: slowID}); !errors.Is(err, a2a.ErrTaskNotCancelable) {
		t.Errorf("cancelling an ended task: %v, want task not cancelable", err)
	}
}

func textOf(parts a2a.ContentParts) string {
	var b strings.Builder
	for _, p := range parts {
		if tp, ok := p.(a2a.TextPart); ok {
			b.WriteString(tp.Text)
		}
	}
	return b.String()
}

// TestApprovalAsInputRequired: a call that needs approval parks the task
// as input-required with the interrupt; a follow-up message on the task
// with the decision resumes it, on a second server sharing the store.
func TestApprovalAsInputRequired(t *testing.T) {
	dir := a2aApp(t)
	db := filepath.Join(t.TempDir(), "dawn.db")
	model := &testModel{}
	a, _ := client(t, serve(t, dir, db, model), "/ops", "ann")
	b, _ := client(t, serve(t, dir, db, model), "/ops", "ann")
	ctx := t.Context()

	res, err := a.SendMessage(ctx, userText("", "release 1.2"))
	if err != nil {
		t.Fatal(err)
	}
	task := res.(*a2a.Task)
	if task.Status.State != a2a.TaskStateInputRequired || task.Status.Message == nil {
		t.Fatalf("send = %+v, want input-required with the question", task.Status)
	}
	d := task.Status.Message.Parts[1].(a2a.DataPart)
	asked := d.Data["interrupts"].([]any)[0].(map[string]any)
	if asked["kind"] != "tool" || asked["detail"].(map[string]any)["toolName"] != "release" {
		t.Fatalf("asked = %v, want the release call", asked)
	}

	// A new message without the task cannot go past the question.
	if _, err := a.SendMessage(ctx, userText(task.ContextID, "hi")); !errors.Is(err, a2a.ErrInvalidParams) {
		t.Errorf("a new message on a waiting context: %v, want invalid params", err)
	}
	// A decision the question does not take changes nothing.
	bad := userText(task.ContextID, "maybe")
	bad.Message.TaskID = task.ID
	if _, err := b.SendMessage(ctx, bad); !errors.Is(err, a2a.ErrInvalidParams) {
		t.Errorf("answer %q: %v, want invalid params", "maybe", err)
	}

	answer := userText(task.ContextID, "once")
	answer.Message.TaskID = task.ID
	events := collect(t, b.SendStreamingMessage(ctx, answer))
	end := events[len(events)-1].(*a2a.TaskStatusUpdateEvent)
	if end.TaskID != task.ID || end.Status.State != a2a.TaskStateCompleted || textOf(end.Status.Message.Parts) != "Done: release 1.2." {
		t.Fatalf("the resumed task ended %+v, want completed under the same task id", end)
	}
	got, err := a.GetTask(ctx, &a2a.TaskQueryParams{ID: task.ID})
	if err != nil || got.Status.State != a2a.TaskStateCompleted {
		t.Fatalf("get after the answer = %+v, %v", got, err)
	}
}

// TestPlanApprovalAsInputRequired: a plan that needs a person's approval
// parks the task as input-required with the proposed plan; the text
// "approve" on the task runs it.
func TestPlanApprovalAsInputRequired(t *testing.T) {
	c, _ := client(t, serve(t, a2aApp(t), filepath.Join(t.TempDir(), "dawn.db"), &testModel{}), "/ship", "ann")
	ctx := t.Context()
	res, err := c.SendMessage(ctx, userText("", "ship it"))
	if err != nil {
		t.Fatal(err)
	}
	task := res.(*a2a.Task)
	if task.Status.State != a2a.TaskStateInputRequired {
		t.Fatalf("send = %+v, want input-required", task.Status)
	}
	asked := task.Status.Message.Parts[1].(a2a.DataPart).Data["interrupts"].([]any)[0].(map[string]any)
	if asked["kind"] != "plan" {
		t.Fatalf("asked = %v, want the plan", asked)
	}
	answer := userText(task.ContextID, "approve")
	answer.Message.TaskID = task.ID
	res, err = c.SendMessage(ctx, answer)
	if err != nil {
		t.Fatal(err)
	}
	if got := res.(*a2a.Task); got.ID != task.ID || got.Status.State != a2a.TaskStateCompleted {
		raw, _ := json.Marshal(got)
		t.Fatalf("after approve: %s, want the same task completed", raw)
	}
}

// TestOtherUsersContextIsMissing: bob cannot run on, read, answer,
// resubscribe to or cancel ann's context and tasks: each reads as missing.
func TestOtherUsersContextIsMissing(t *testing.T) {
	model := &testModel{gate: make(chan struct{})}
	base := serve(t, a2aApp(t), filepath.Join(t.TempDir(), "dawn.db"), model)
	ann, _ := client(t, base, "/support/acme", "ann")
	bob, _ := client(t, base, "/support/acme", "bob")
	ctx := t.Context()
	res, err := ann.SendMessage(ctx, userText("", "hi"))
	if err != nil {
		t.Fatal(err)
	}
	task := res.(*a2a.Task)

	if _, err := bob.SendMessage(ctx, userText(task.ContextID, "hi")); !errors.Is(err, a2a.ErrInvalidParams) || !strings.Contains(err.Error(), "not found") {
		t.Errorf("bob sends on ann's context: %v, want not found", err)
	}
	if _, err := bob.GetTask(ctx, &a2a.TaskQueryParams{ID: task.ID}); !errors.Is(err, a2a.ErrTaskNotFound) {
		t.Errorf("bob gets ann's task: %v, want task not found", err)
	}
	if _, err := bob.CancelTask(ctx, &a2a.TaskIDParams{ID: task.ID}); !errors.Is(err, a2a.ErrTaskNotFound) {
		t.Errorf("bob cancels ann's task: %v, want task not found", err)
	}
	for _, err := range bob.ResubscribeToTask(ctx, &a2a.TaskIDParams{ID: task.ID}) {
		if !errors.Is(err, a2a.ErrTaskNotFound) {
			t.Errorf("bob resubscribes to ann's task: %v, want task not found", err)
		}
		break
	}
	if _, err := ann.GetTask(ctx, &a2a.TaskQueryParams{ID: task.ID}); err != nil {
		t.Errorf("ann gets her task: %v", err)
	}
}

// TestPerUserLimits: each new context is a thread of the caller's, so
// limits.per_user.threads bounds them: past it, a message that would
// start a context is refused with the limit named, and the user's
// existing context goes on.
func TestPerUserLimits(t *testing.T) {
	dir := a2aApp(t)
	if err := os.WriteFile(filepath.Join(dir, "dawn.yaml"), []byte("limits:\n  per_user:\n    threads: 1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	c, _ := client(t, serve(t, dir, filepath.Join(t.TempDir(), "dawn.db"), &testModel{}), "/support/acme", "ann")
	ctx := t.Context()
	res, err := c.SendMessage(ctx, userText("", "hi"))
	if err != nil {
		t.Fatal(err)
	}
	first := res.(*a2a.Task)
	if _, err := c.SendMessage(ctx, userText("", "hi again")); !errors.Is(err, a2a.ErrServerError) || !strings.Contains(err.Error(), "limits.per_user.threads") {
		t.Fatalf("a second context past limits.per_user.threads 1: %v, want a server error naming the limit", err)
	}
	if _, err := c.SendMessage(ctx, userText(first.ContextID, "hi again")); err != nil {
		t.Fatalf("the existing context: %v", err)
	}
}

// TestStreamKeepAlive: a stream idle while the model thinks gets
// keep-alive comments between its events, and still ends with the task's
// final status, which the SDK reads as ever.
func TestStreamKeepAlive(t *testing.T) {
	t.Cleanup(dawna2a.SetKeepAlive(20 * time.Millisecond))
	model := &testModel{gate: make(chan struct{})}
	base := serve(t, a2aApp(t), filepath.Join(t.TempDir(), "dawn.db"), model)
	body := `{"jsonrpc":"2.0","id":1,"method":"message/stream","params":{"message":{"kind":"message","role":"user","messageId":"m-1","parts":[{"kind":"text","text":"slow"}]}}}`
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, base+"/a2a/support/acme", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+authtest.HS256(t, secret, authtest.Claims("ann", "", "dawn")))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	var kept, final bool
	var lines []string
	for sc.Scan() {
		line := sc.Text()
		lines = append(lines, line)
		if line == ": keep-alive" && !kept {
			kept = true
			close(model.gate)
		}
		if strings.HasPrefix(line, "data: ") && strings.Contains(line, `"final":true`) {
			final = true
		}
	}
	if !kept || !final {
		t.Fatalf("stream (keep-alive %v, final %v):\n%s", kept, final, strings.Join(lines, "\n"))
	}
	// Every event is an id line, then its data line, then a blank line.
	for i, line := range lines {
		if strings.HasPrefix(line, "id: ") && (i+1 >= len(lines) || !strings.HasPrefix(lines[i+1], "data: ")) {
			t.Fatalf("an event was split at line %d:\n%s", i, strings.Join(lines, "\n"))
		}
	}
}

// TestReplicas: two servers share one Postgres database. A task started
// on one, its stream dropped, is read, resubscribed to and cancelled on
// the other, and a task waiting for input on one is answered on the
// other.
func TestReplicas(t *testing.T) {
	dir, db := a2aApp(t), pgtest.Database(t)
	model := &testModel{gate: make(chan struct{})}
	a, _ := client(t, serve(t, dir, db, model), "/support/acme", "ann")
	b, _ := client(t, serve(t, dir, db, model), "/support/acme", "ann")
	ctx := t.Context()

	sctx, drop := context.WithCancel(ctx)
	var slowID a2a.TaskID
	for e, err := range a.SendStreamingMessage(sctx, userText("", "slow")) {
		if err != nil {
			t.Fatal(err)
		}
		slowID = e.(*a2a.Task).ID
		break
	}
	drop()
	if got, err := b.GetTask(ctx, &a2a.TaskQueryParams{ID: slowID}); err != nil || got.Status.State != a2a.TaskStateWorking {
		t.Fatalf("the task on the other replica: %+v, %v; want it working", got, err)
	}
	resub := make(chan []a2a.Event, 1)
	go func() {
		var out []a2a.Event
		for e, err := range b.ResubscribeToTask(ctx, &a2a.TaskIDParams{ID: slowID}) {
			if err != nil {
				break
			}
			out = append(out, e)
		}
		resub <- out
	}()
	time.Sleep(200 * time.Millisecond)
	if got, err := b.CancelTask(ctx, &a2a.TaskIDParams{ID: slowID}); err != nil || got.Status.State != a2a.TaskStateCanceled {
		t.Fatalf("cancel on the other replica = %+v, %v", got, err)
	}
	select {
	case out := <-resub:
		end, ok := out[len(out)-1].(*a2a.TaskStatusUpdateEvent)
		if !ok || !end.Final || end.Status.State != a2a.TaskStateCanceled {
			t.Fatalf("resubscribed on the other replica: %#v, want the final canceled status last", out)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the stream resubscribed on the other replica did not end with the cancel")
	}

	opsA, _ := client(t, serve(t, dir, db, model), "/ops", "ann")
	opsB, _ := client(t, serve(t, dir, db, model), "/ops", "ann")
	res, err := opsA.SendMessage(ctx, userText("", "release 1.2"))
	if err != nil {
		t.Fatal(err)
	}
	task := res.(*a2a.Task)
	answer := userText(task.ContextID, "once")
	answer.Message.TaskID = task.ID
	res, err = opsB.SendMessage(ctx, answer)
	if err != nil {
		t.Fatal(err)
	}
	if got := res.(*a2a.Task); got.ID != task.ID || got.Status.State != a2a.TaskStateCompleted {
		t.Fatalf("answered on the other replica: %+v", got.Status)
	}
}

// TestCancelQueuedTask: a run queued on a context (here a delayed
// LangGraph run) is a task too: cancelling it takes it off the queue.
func TestCancelQueuedTask(t *testing.T) {
	base := serve(t, a2aApp(t), filepath.Join(t.TempDir(), "dawn.db"), &testModel{})
	c, _ := client(t, base, "/ops", "ann")
	ctx := t.Context()
	res, err := c.SendMessage(ctx, userText("", "hi"))
	if err != nil {
		t.Fatal(err)
	}
	contextID := res.(*a2a.Task).ContextID
	body := `{"assistant_id":"ops","after_seconds":3600,"input":{"messages":[{"role":"user","content":"later"}]}}`
	req, _ := http.NewRequest(http.MethodPost, base+"/threads/"+contextID+"/runs", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+authtest.HS256(t, secret, authtest.Claims("ann", "", "dawn")))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var queued struct {
		RunID  string `json:"run_id"`
		Status string `json:"status"`
	}
	err = json.NewDecoder(resp.Body).Decode(&queued)
	resp.Body.Close()
	if err != nil || queued.Status != "pending" {
		t.Fatalf("queueing a delayed run: %d %+v %v", resp.StatusCode, queued, err)
	}
	if got, err := c.GetTask(ctx, &a2a.TaskQueryParams{ID: a2a.TaskID(queued.RunID)}); err != nil || got.Status.State != a2a.TaskStateSubmitted {
		t.Fatalf("the queued task: %+v, %v; want submitted", got, err)
	}
	got, err := c.CancelTask(ctx, &a2a.TaskIDParams{ID: a2a.TaskID(queued.RunID)})
	if err != nil || got.Status.State != a2a.TaskStateCanceled {
		t.Fatalf("cancelling the queued task: %+v, %v; want canceled", got, err)
	}
}

// TestBadInput: a request the endpoint cannot take gets a JSON-RPC error
// with A2A's code that names the field and what to send, and the server
// keeps serving; a path without a route is Dawn's 404.
func TestBadInput(t *testing.T) {
	base := serve(t, a2aApp(t), filepath.Join(t.TempDir(), "dawn.db"), &testModel{})
	token := authtest.HS256(t, secret, authtest.Claims("ann", "", "dawn"))
	post := func(path, body string) (int, string) {
		req, _ := http.NewRequest(http.MethodPost, base+path, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var b strings.Builder
		sc := bufio.NewScanner(resp.Body)
		for sc.Scan() {
			b.WriteString(sc.Text())
		}
		return resp.StatusCode, b.String()
	}
	send := func(msg string) string {
		return `{"jsonrpc":"2.0","id":1,"method":"message/send","params":{"message":` + msg + `}}`
	}
	for _, tc := range []struct{ body, code, says string }{
		{`{"jsonrpc":"2.0","id":1,"method":"message/send","params":`, "-32700", "parse error"},
		{`{"jsonrpc":"2.0","id":1,"method":"tasks/nope","params":{}}`, "-32601", "method not found"},
		{`{"jsonrpc":"2.0","id":1,"method":"message/send","params":{}}`, "-32602", "params.message is required"},
		{send(`{"kind":"message","role":"agent","messageId":"m","parts":[{"kind":"text","text":"hi"}]}`), "-32602", `message.role must be \"user\"`},
		{send(`{"kind":"message","role":"user","messageId":"m","parts":[]}`), "-32602", "message.parts must hold text"},
		{send(`{"kind":"message","role":"user","messageId":"m","contextId":"a b","parts":[{"kind":"text","text":"hi"}]}`), "-32602", "message.contextId"},
		{send(`{"kind":"message","role":"user","messageId":"m","parts":[{"kind":"file","file":{"uri":"http://x/y"}}]}`), "-32005", "message.parts[0] is a file part"},
		{send(`{"kind":"message","role":"user","messageId":"m","taskId":"no-such-task","parts":[{"kind":"text","text":"once"}]}`), "-32001", `task \"no-such-task\" not found`},
		{`{"jsonrpc":"2.0","id":1,"method":"tasks/get","params":{}}`, "-32602", "params.id is required"},
	} {
		status, body := post("/a2a/support/acme", tc.body)
		if status != http.StatusOK || !strings.Contains(body, `"code":`+tc.code) || !strings.Contains(body, tc.says) {
			t.Errorf("%s:\n got %d %s\nwant code %s saying %q", tc.body, status, body, tc.code, tc.says)
		}
	}
	if status, body := post("/a2a/nowhere", send(`{}`)); status != http.StatusNotFound || !strings.Contains(body, "route_not_found") {
		t.Errorf("an unknown route: %d %s, want 404 route_not_found", status, body)
	}
	if status, body := post("/a2a/research/subagents/researcher", send(`{}`)); status != http.StatusNotFound || !strings.Contains(body, "subagent") {
		t.Errorf("a subagent: %d %s, want 404 saying it is a subagent", status, body)
	}
	c, _ := client(t, base, "/support/acme", "ann")
	if _, err := c.SendMessage(t.Context(), userText("", "hi")); err != nil {
		t.Errorf("after the bad requests: %v", err)
	}
}
