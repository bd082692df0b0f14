package server_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/dawn-go/dawn/internal/apptest"
	"github.com/dawn-go/dawn/internal/auth"
	"github.com/dawn-go/dawn/internal/auth/authtest"
	"github.com/dawn-go/dawn/internal/pgtest"
	"github.com/dawn-go/dawn/internal/store"
	"github.com/dawn-go/dawn/internal/store/dialect"
	"github.com/dawn-go/dawn/internal/store/erasecheck"
	"github.com/tmc/langchaingo/llms"
)

// forgetModel is modelFor's model, except that a held run's model call
// ends when the run is cancelled, as a provider's request does.
type forgetModel struct{ gate *holdGate }

func (m forgetModel) GenerateContent(ctx context.Context, msgs []llms.MessageContent, options ...llms.CallOption) (*llms.ContentResponse, error) {
	var opts llms.CallOptions
	for _, o := range options {
		o(&opts)
	}
	if last, ok := lastTurn(msgs); ok && last.Role == llms.ChatMessageTypeHuman && len(last.Parts) == 1 && last.Parts[0] == (llms.TextContent{Text: "hold"}) {
		m.gate.mu.Lock()
		ch := m.gate.ch
		m.gate.mu.Unlock()
		if ch != nil {
			select {
			case <-ch:
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		}
	}
	return writeThenReply(msgs, opts)
}

func (m forgetModel) Call(ctx context.Context, prompt string, options ...llms.CallOption) (string, error) {
	return llms.GenerateFromSinglePrompt(ctx, m, prompt, options...)
}

// forgetUsers are the people of the forget test: names no other text of
// the database holds, so a row that holds one is that person's.
const forgetAnn, forgetBob = "ann-fz7", "bob-fz7"

// forgetReplicas starts two replicas of the owner app on one Postgres
// database, with JWTs for ann and bob and the service key; it returns
// their URLs, the tokens by user, and the database.
func forgetReplicas(t *testing.T, gate *holdGate) (urls [2]string, tokens map[string]string, dsn string) {
	t.Helper()
	const secret = "forget-secret-of-at-least-32-bytes!!"
	cfg := auth.JWT{SecretEnv: "FORGET_JWT_SECRET", Audience: "dawn"}
	a, err := auth.New(t.Context(), auth.Options{Config: auth.Config{JWT: &cfg}, APIKey: serviceKey,
		Env: func(k string) string {
			if k == "FORGET_JWT_SECRET" {
				return secret
			}
			return ""
		}})
	if err != nil {
		t.Fatal(err)
	}
	tokens = map[string]string{"service": serviceKey}
	for _, u := range []string{forgetAnn, forgetBob} {
		tokens[u] = authtest.HS256(t, secret, authtest.Claims(u, "", "dawn"))
	}
	dsn = pgtest.Database(t)
	dir := ownerApp(t)
	model := forgetModel{gate}
	for i := range urls {
		h := apptest.New(t, dir, model, apptest.Options{Auth: a, Tools: rememberTool, StorePath: dsn})
		srv := httptest.NewServer(h.API)
		t.Cleanup(srv.Close)
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() { defer close(done); h.Runs.SweepQueue(ctx) }()
		t.Cleanup(func() { cancel(); <-done })
		urls[i] = srv.URL
	}
	t.Cleanup(gate.release) // before the servers close: a held run keeps its stream open
	return urls, tokens, dsn
}

// call sends one request as token and returns its status and body.
func forgetCall(t *testing.T, token, method, url, body string) (int, string) {
	t.Helper()
	resp := authed(t, method, url, token, body)
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(raw)
}

// personOnReplica gives user data on every surface of the replica at url:
// a finished run (events, checkpoints, the workspace file, a tool's store
// item), a store item put over the API, and a cron.
func personOnReplica(t *testing.T, url, token, user string) {
	t.Helper()
	for _, c := range []struct{ method, path, body string }{
		{"POST", "/threads/" + user + "-done/runs/wait", apptest.RunBody("/job", "go "+user)},
		{"PUT", "/store/items", `{"namespace":["notes"],"key":"k","value":{"who":"` + user + `"}}`},
		{"POST", "/runs/crons", `{"assistant_id":"job","schedule":"0 0 1 1 *","input":{"messages":[{"role":"user","content":"tick ` + user + `"}]}}`},
	} {
		if status, raw := forgetCall(t, token, c.method, url+c.path, c.body); status >= 300 {
			t.Fatalf("%s %s as %s: %d %s", c.method, c.path, user, status, raw)
		}
	}
}

// TestForgetUserAcrossReplicas: ann and bob have data on every surface
// of two replicas sharing Postgres, and ann has a run in flight on
// replica A with a run queued behind it. The service credential forgets
// ann on replica B: her run on A stops and writes nothing after, no
// table of the schema keeps a row of hers, bob's are all there and his
// thread still works; one audit entry records it; forgetting her again
// answers with zero counts; a user may not forget anyone.
func TestForgetUserAcrossReplicas(t *testing.T) {
	gate := &holdGate{}
	urls, tokens, dsn := forgetReplicas(t, gate)
	for _, u := range []string{forgetAnn, forgetBob} {
		personOnReplica(t, urls[0], tokens[u], u)
		personOnReplica(t, urls[1], tokens[u], u+"-b")
	}
	gate.arm()
	live := authed(t, "POST", urls[0]+"/threads/"+forgetAnn+"-live/runs/stream", tokens[forgetAnn], apptest.RunBody("/job", "hold"))
	streamDone := make(chan string, 1)
	go func() { raw, _ := io.ReadAll(live.Body); live.Body.Close(); streamDone <- string(raw) }()
	st, err := store.Open(dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	waitFor(t, func() bool {
		th, err := st.GetThread(context.Background(), forgetAnn+"-live")
		return err == nil && th.Status == store.StatusBusy
	})
	if status, raw := forgetCall(t, tokens[forgetAnn], "POST", urls[1]+"/threads/"+forgetAnn+"-live/runs", `{"assistant_id":"job","multitask_strategy":"enqueue","input":{"messages":[{"role":"user","content":"later"}]}}`); status >= 300 {
		t.Fatalf("queue a run behind the live one: %d %s", status, raw)
	}

	p, _, _ := store.PeekerOf(st)
	ctx := context.Background()
	annPKs, bobPKs := ownedPKs(t, p, forgetAnn), ownedPKs(t, p, forgetBob)
	if len(annPKs) != 3 || len(bobPKs) != 2 {
		t.Fatalf("threads: ann %v, bob %v; want 3 and 2", annPKs, bobPKs)
	}
	bobBefore, err := erasecheck.Leftovers(ctx, p, true, forgetBob, bobPKs)
	if err != nil {
		t.Fatal(err)
	}
	if status, raw := forgetCall(t, tokens[forgetBob], "DELETE", urls[1]+"/users/"+forgetAnn+"/data", ""); status != http.StatusForbidden {
		t.Fatalf("bob forgetting ann: %d %s, want 403", status, raw)
	}
	status, raw := forgetCall(t, tokens["service"], "DELETE", urls[1]+"/users/"+forgetAnn+"/data", "")
	var got struct {
		Counts      map[string]int `json:"counts"`
		StoppedRuns int            `json:"stopped_runs"`
	}
	if status != http.StatusOK || json.Unmarshal([]byte(raw), &got) != nil {
		t.Fatalf("forget ann on replica B: %d %s", status, raw)
	}
	if got.StoppedRuns != 1 || got.Counts["threads"] != 3 || got.Counts["crons"] != 2 || got.Counts["store_items"] < 2 {
		t.Errorf("forget ann: %s", raw)
	}
	select {
	case body := <-streamDone:
		if !strings.Contains(body, `"cancelled":true`) {
			t.Errorf("ann's live run on replica A did not end cancelled: %s", body)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("ann's live run on replica A did not stop")
	}
	gate.release()
	time.Sleep(200 * time.Millisecond) // a run that writes back would do so now

	left, err := erasecheck.Leftovers(ctx, p, true, forgetAnn, annPKs)
	if err != nil {
		t.Fatal(err)
	}
	if len(left) > 0 {
		t.Errorf("rows of ann left after forgetting her: %v", left)
	}
	bobAfter, err := erasecheck.Leftovers(ctx, p, true, forgetBob, bobPKs)
	if err != nil {
		t.Fatal(err)
	}
	if len(bobBefore) == 0 || len(bobAfter) != len(bobBefore) {
		t.Errorf("bob's rows: before %v, after %v", bobBefore, bobAfter)
	}
	for table, n := range bobBefore {
		if bobAfter[table] != n {
			t.Errorf("bob's rows of %s: %d before, %d after", table, n, bobAfter[table])
		}
	}
	if status, raw := forgetCall(t, tokens[forgetBob], "POST", urls[0]+"/threads/"+forgetBob+"-done/runs/wait", apptest.RunBody("/job", "again")); status != http.StatusOK {
		t.Errorf("bob's thread after ann was forgotten: %d %s", status, raw)
	}
	if status, raw := forgetCall(t, tokens[forgetAnn], "GET", urls[0]+"/threads/"+forgetAnn+"-done", ""); status != http.StatusNotFound {
		t.Errorf("ann's thread after she was forgotten: %d %s", status, raw)
	}
	checkForgetAgain(t, urls[0], tokens["service"])
}

// ownedPKs reads the pks of the threads user owns.
func ownedPKs(t *testing.T, p dialect.Peeker, user string) []int64 {
	t.Helper()
	var list string
	if err := p.Peek(context.Background(), `SELECT coalesce(string_agg(pk::text, ','), '') FROM threads WHERE owner = $1`, []any{user}, &list); err != nil {
		t.Fatal(err)
	}
	var out []int64
	for f := range strings.SplitSeq(list, ",") {
		if pk, err := strconv.ParseInt(f, 10, 64); err == nil {
			out = append(out, pk)
		}
	}
	return out
}

// checkForgetAgain forgets ann again (zero counts) and reads the audit
// log: one forget entry per request, by the service, with no trace of
// ann's id.
func checkForgetAgain(t *testing.T, url, service string) {
	t.Helper()
	status, raw := forgetCall(t, service, "DELETE", url+"/users/"+forgetAnn+"/data", "")
	var again struct {
		Counts map[string]int `json:"counts"`
	}
	if status != http.StatusOK || json.Unmarshal([]byte(raw), &again) != nil {
		t.Fatalf("forget ann again: %d %s", status, raw)
	}
	for table, n := range again.Counts {
		if n != 0 {
			t.Errorf("forgetting ann again deleted %d rows of %s", n, table)
		}
	}
	_, raw = forgetCall(t, service, "GET", url+"/audit?limit=1000", "")
	var log struct {
		Entries []struct {
			Action  string          `json:"action"`
			Service bool            `json:"service"`
			Detail  json.RawMessage `json:"detail"`
		} `json:"entries"`
	}
	if err := json.Unmarshal([]byte(raw), &log); err != nil {
		t.Fatal(err)
	}
	forgets := 0
	for _, e := range log.Entries {
		if e.Action == "forget" {
			forgets++
			if !e.Service || !strings.Contains(string(e.Detail), `"counts"`) || !strings.Contains(string(e.Detail), `"subject":"sha256:`) {
				t.Errorf("forget audit entry: %+v %s", e, e.Detail)
			}
		}
	}
	if forgets != 2 || strings.Contains(raw, forgetAnn) {
		t.Errorf("audit log after two forgets: %d forget entries; %s", forgets, raw)
	}
}
