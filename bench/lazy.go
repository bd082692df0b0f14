package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/dawn-go/dawn/internal/tokens"
)

// The lazy-model harness scenario (issue #18's row "tokens per completed
// plan, the lazy-model harness scenario"): a model that, given six items,
// completes four and claims to be done. The route with the harness
// (enforce: true, evidence: required) corrects it and it finishes; the
// route without lets it stop at four. It is the in-process test
// TestLazyModelWithAndWithoutTheGate (internal/server/lazy_test.go) over
// the real wire: `dawn start` against lazyMock.

// lazyItems is the plan's length.
const lazyItems = 6

// lazyUser is the run's user message, as in the in-process test.
const lazyUser = "do all six"

// writeLazyApp writes the scenario's app into dir, as the in-process
// test's enforcedApp(t, "evidence: required\n", 6) with a model: job (the
// harness on) and open (no harness), each with the six-item plan.
func writeLazyApp(dir, model string) error {
	var items strings.Builder
	for i := 1; i <= lazyItems; i++ {
		fmt.Fprintf(&items, "- [ ] Step %d\n", i)
	}
	agent := func(text string) string { return "---\nmodel: " + model + "\n---\n" + text }
	return writeFiles(dir, map[string]string{
		"job/agent.md":  agent("You do the job."),
		"job/plan.md":   "---\nenforce: true\nevidence: required\n---\n" + items.String(),
		"open/agent.md": agent("No harness here."),
		"open/plan.md":  items.String(),
	})
}

// lazyRequest is what the lazy model reads of a chat completion request.
type lazyRequest struct {
	Stream   bool `json:"stream"`
	Messages []struct {
		Role      string          `json:"role"`
		Content   json.RawMessage `json:"content"`
		ToolCalls []struct {
			Function struct {
				Name      string `json:"name"`
				Arguments string `json:"arguments"`
			} `json:"function"`
		} `json:"tool_calls"`
	} `json:"messages"`
	Tools []struct {
		Function json.RawMessage `json:"function"`
	} `json:"tools"`
}

// text is a message's content as text: a string, or the text parts of
// an array of parts.
func contentText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var parts []struct {
		Text string `json:"text"`
	}
	_ = json.Unmarshal(raw, &parts)
	var b strings.Builder
	for _, p := range parts {
		b.WriteString(p.Text)
	}
	return b.String()
}

// lazyDecision is the lazy model's answer: a writeTodos call with done of
// the six items completed (done > 0), or text.
type lazyDecision struct {
	Done     int
	Evidence bool // the arguments carry evidence and a reason (the harness's writeTodos)
	CallID   string
	Text     string
}

// decideLazy is lazyModel (internal/server/lazy_test.go) over the wire:
// the first turn marks four of six items completed; after one tool result
// it claims "All six items are done."; when the last message is the
// harness's correction it completes all six.
func decideLazy(req *lazyRequest) lazyDecision {
	enforced := false
	for _, tl := range req.Tools {
		var f struct{ Name string }
		_ = json.Unmarshal(tl.Function, &f)
		enforced = enforced || f.Name == "stepFailed"
	}
	corrected := false
	if n := len(req.Messages); n > 0 {
		last := req.Messages[n-1]
		corrected = last.Role == "user" && strings.Contains(contentText(last.Content), "Plan harness")
	}
	toolResults := 0
	for _, m := range req.Messages {
		if m.Role == "tool" {
			toolResults++
		}
	}
	d := lazyDecision{Evidence: enforced, CallID: fmt.Sprintf("call_%d", toolResults)}
	switch {
	case corrected:
		d.Done = lazyItems
	case toolResults == 0:
		d.Done = 4
	case toolResults == 1:
		d.Text = "All six items are done."
	default:
		d.Text = "All six items are done, for real now."
	}
	return d
}

// args are the writeTodos arguments of d, as the in-process test's
// list(6, done, enforced) (without reason when not enforced: Dawn's own
// writeTodos takes only todos).
func (d lazyDecision) args() string {
	var todos []map[string]string
	for i := 1; i <= lazyItems; i++ {
		t := map[string]string{"content": fmt.Sprintf("Step %d", i), "status": "pending"}
		switch {
		case i <= d.Done:
			t["status"] = "completed"
			if d.Evidence {
				t["evidence"] = fmt.Sprintf("checked step %d", i)
			}
		case i == d.Done+1:
			t["status"] = "in_progress"
		}
		todos = append(todos, t)
	}
	arg := map[string]any{"todos": todos}
	if d.Evidence {
		arg["reason"] = fmt.Sprintf("finished %d", d.Done)
	}
	b, _ := json.Marshal(arg)
	return string(b)
}

// promptSize is what the model read in one request, counted as the
// in-process test's promptSize counts it: each message's text, tool calls'
// name+arguments, tool results, and each tool's function definition as
// JSON; in bytes and o200k tokens.
func (req *lazyRequest) promptSize() (bytes, toks int) {
	add := func(s string) {
		bytes += len(s)
		toks += tokens.Count(s)
	}
	for _, m := range req.Messages {
		if text := contentText(m.Content); text != "" {
			add(text)
		}
		for _, c := range m.ToolCalls {
			add(c.Function.Name + c.Function.Arguments)
		}
	}
	for _, tl := range req.Tools {
		add(string(tl.Function))
	}
	return bytes, toks
}

// lazyUse is what the model was asked over a stretch of calls.
type lazyUse struct {
	Calls       int `json:"model_calls"`
	WireBytes   int `json:"request_bytes"` // request bodies
	PromptBytes int `json:"prompt_bytes"`  // as promptSize
	Prompt      int `json:"prompt_tokens"` // o200k tokens, as promptSize; the usage the mock reports
}

// bookingMock is the part the bench's scripted OpenAI servers share: a
// server on loopback that books every call to the current run (take), as
// the load tool runs one run at a time.
type bookingMock struct {
	url string
	srv *http.Server
	mu  sync.Mutex
	use lazyUse
}

// start serves h on a free loopback port.
func (m *bookingMock) start(h http.HandlerFunc) error {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	m.url = "http://" + ln.Addr().String() + "/v1"
	m.srv = &http.Server{Handler: h, ReadHeaderTimeout: time.Minute}
	go func() { _ = m.srv.Serve(ln) }()
	return nil
}

func (m *bookingMock) close() { _ = m.srv.Close() }

// take returns and resets what was asked since the last take.
func (m *bookingMock) take() lazyUse {
	m.mu.Lock()
	defer m.mu.Unlock()
	u := m.use
	m.use = lazyUse{}
	return u
}

// lazyMock is an OpenAI chat-completions server on loopback that plays the
// lazy model.
type lazyMock struct{ bookingMock }

func startLazyMock() (*lazyMock, error) {
	m := &lazyMock{}
	if err := m.start(m.serve); err != nil {
		return nil, err
	}
	return m, nil
}

func (m *lazyMock) serve(w http.ResponseWriter, r *http.Request) {
	if !strings.HasSuffix(r.URL.Path, "/chat/completions") {
		http.Error(w, `{"error":{"message":"the load tool's mock serves /v1/chat/completions only"}}`, http.StatusNotFound)
		return
	}
	body, err := io.ReadAll(r.Body)
	if err != nil {
		return
	}
	var req lazyRequest
	if err := json.Unmarshal(body, &req); err != nil {
		http.Error(w, `{"error":{"message":"not a chat completion request"}}`, http.StatusBadRequest)
		return
	}
	pb, pt := req.promptSize()
	m.mu.Lock()
	m.use.Calls++
	m.use.WireBytes += len(body)
	m.use.PromptBytes += pb
	m.use.Prompt += pt
	m.mu.Unlock()

	d := decideLazy(&req)
	var delta, finish string
	var completion int
	if d.Text != "" {
		delta, finish = `{"role":"assistant","content":`+strconv.Quote(d.Text)+`}`, "stop"
		completion = tokens.Count(d.Text)
	} else {
		args := d.args()
		delta, finish = `{"role":"assistant","content":null,"tool_calls":[{"index":0,"id":"`+d.CallID+`","type":"function","function":{"name":"writeTodos","arguments":`+strconv.Quote(args)+`}}]}`, "tool_calls"
		completion = tokens.Count("writeTodos" + args)
	}
	usage := mockUsage(pt, completion)
	if req.Stream {
		const head = `data: {"id":"chatcmpl-lazy","object":"chat.completion.chunk","created":1,"model":"gpt-4o-mini","choices":[`
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = io.WriteString(w, head+`{"index":0,"delta":`+delta+`,"finish_reason":null}]}`+"\n\n"+
			head+`{"index":0,"delta":{},"finish_reason":"`+finish+`"}]}`+"\n\n"+
			head+`],"usage":`+usage+`}`+"\n\n"+
			"data: [DONE]\n\n")
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = io.WriteString(w, `{"id":"chatcmpl-lazy","object":"chat.completion","created":1,"model":"gpt-4o-mini","choices":[{"index":0,"message":`+
		delta+`,"finish_reason":"`+finish+`"}],"usage":`+usage+`}`)
}

// lazyRun is one run of one route.
type lazyRun struct {
	lazyUse
	Completed int  `json:"completed"` // items completed in the thread's state
	PlanDone  bool `json:"plan_done"` // all six
}

// lazyRoute is a route's runs, one per round.
type lazyRoute struct {
	Route string    `json:"route"`
	Runs  []lazyRun `json:"runs"`
}

// lazyResult is what --lazy measured.
type lazyResult struct {
	Binary     string      `json:"binary"`
	Repeat     int         `json:"repeat"`
	TokensFrom string      `json:"tokens_from"`
	Open, Job  lazyRoute   `json:"-"`
	Routes     []lazyRoute `json:"routes"`
}

// lazyMain runs --lazy and prints its result; the exit code is 1 when a
// run failed or the enforced route did not complete its plan.
func lazyMain(ctx context.Context, opts options) int {
	res, err := runLazy(ctx, opts)
	if res != nil {
		if opts.json {
			enc := json.NewEncoder(os.Stdout)
			enc.SetIndent("", "  ")
			_ = enc.Encode(res)
		} else {
			writeLazy(os.Stdout, res)
		}
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench --lazy:", err)
		return 1
	}
	return 0
}

func runLazy(ctx context.Context, opts options) (*lazyResult, error) {
	tmp, bin, err := scratch(ctx, opts, "dawnlazy-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	app := filepath.Join(tmp, "app")
	if err := writeLazyApp(app, "openai:gpt-4o-mini"); err != nil {
		return nil, err
	}
	mock, err := startLazyMock()
	if err != nil {
		return nil, err
	}
	defer mock.close()
	srv, err := startDawn(ctx, bin, app, []string{"OPENAI_BASE_URL=" + mock.url, "OPENAI_API_KEY=test"})
	if err != nil {
		return nil, err
	}
	defer srv.stop(30 * time.Second)
	res := &lazyResult{
		Binary: bin, Repeat: opts.repeat,
		TokensFrom: "o200k tokens of what the mock model was sent, counted as the in-process test's promptSize (message text, tool calls, tool results, tool definitions); the usage it reports",
		Open:       lazyRoute{Route: "/open"}, Job: lazyRoute{Route: "/job"},
	}
	if opts.dawn == "" {
		res.Binary = "./cmd/dawn (built)"
	}
	client := &http.Client{Timeout: time.Minute}
	tag := strconv.FormatInt(time.Now().UnixNano(), 36)
	for round := range opts.repeat {
		// Alternate which route goes first, so neither always runs on a
		// colder server.
		routes := []*lazyRoute{&res.Open, &res.Job}
		if round%2 == 1 {
			routes[0], routes[1] = routes[1], routes[0]
		}
		for _, rt := range routes {
			thread := fmt.Sprintf("lazy-%s-%s-%d", tag, strings.TrimPrefix(rt.Route, "/"), round)
			run, err := lazyOnce(ctx, client, srv.url, rt.Route, thread)
			run.lazyUse = mock.take()
			if err != nil {
				return res, fmt.Errorf("%s round %d: %w", rt.Route, round+1, err)
			}
			rt.Runs = append(rt.Runs, run)
		}
	}
	res.Routes = []lazyRoute{res.Open, res.Job}
	for _, run := range res.Job.Runs {
		if !run.PlanDone {
			return res, fmt.Errorf("the enforced route completed %d of %d items; the harness should have made the lazy model finish", run.Completed, lazyItems)
		}
	}
	return res, nil
}

// lazyOnce runs route on a fresh thread with runs/wait and reads the
// thread's state: how many of the items are completed.
func lazyOnce(ctx context.Context, client *http.Client, base, route, thread string) (lazyRun, error) {
	var run lazyRun
	body, _ := json.Marshal(map[string]any{"route": route, "input": map[string]any{"messages": []map[string]string{{"role": "user", "content": lazyUser}}}})
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, base+"/threads/"+thread+"/runs/wait", bytes.NewReader(body))
	if err != nil {
		return run, err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := client.Do(req)
	if err != nil {
		return run, err
	}
	out, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return run, fmt.Errorf("runs/wait answered %d: %s", resp.StatusCode, firstWords(string(out), 30))
	}
	var failed struct {
		Error string `json:"error"`
	}
	if json.Unmarshal(out, &failed) == nil && failed.Error != "" {
		return run, fmt.Errorf("the run failed: %s", failed.Error)
	}
	req, err = http.NewRequestWithContext(ctx, http.MethodGet, base+"/threads/"+thread+"/state", nil)
	if err != nil {
		return run, err
	}
	resp, err = client.Do(req)
	if err != nil {
		return run, err
	}
	defer resp.Body.Close()
	var state struct {
		Values struct {
			Todos []struct {
				Status string `json:"status"`
			} `json:"todos"`
		} `json:"values"`
	}
	if resp.StatusCode != http.StatusOK {
		return run, fmt.Errorf("GET /threads/%s/state answered %d", thread, resp.StatusCode)
	}
	if err := json.NewDecoder(resp.Body).Decode(&state); err != nil {
		return run, fmt.Errorf("GET /threads/%s/state: %w", thread, err)
	}
	for _, td := range state.Values.Todos {
		if td.Status == "completed" {
			run.Completed++
		}
	}
	run.PlanDone = run.Completed == lazyItems && len(state.Values.Todos) == lazyItems
	return run, nil
}

// medRange is "median (min–max)" of xs.
func medRange(xs []float64) string {
	if len(xs) == 0 {
		return "-"
	}
	lo, hi := xs[0], xs[0]
	for _, x := range xs {
		lo, hi = min(lo, x), max(hi, x)
	}
	if lo == hi {
		return strconv.FormatFloat(lo, 'f', -1, 64)
	}
	return fmt.Sprintf("%s (%s–%s)", strconv.FormatFloat(median(xs), 'f', -1, 64), strconv.FormatFloat(lo, 'f', -1, 64), strconv.FormatFloat(hi, 'f', -1, 64))
}

// writeLazy prints r: per route, then the gate's overhead (enforced minus
// open, round by round).
func writeLazy(w io.Writer, r *lazyResult) {
	fmt.Fprintf(w, "lazy-model harness scenario: %d-item plan, %d round(s), server %s\n", lazyItems, r.Repeat, r.Binary)
	fmt.Fprintf(w, "  tokens: %s\n", r.TokensFrom)
	fmt.Fprintf(w, "  figures: median (min–max) over the rounds\n")
	col := func(rt lazyRoute, f func(lazyRun) float64) []float64 {
		var xs []float64
		for _, run := range rt.Runs {
			xs = append(xs, f(run))
		}
		return xs
	}
	for _, rt := range []lazyRoute{r.Open, r.Job} {
		name := "open (no harness)"
		if rt.Route == "/job" {
			name = "enforced (enforce: true, evidence: required)"
		}
		done := 0
		var perPlan []float64
		for _, run := range rt.Runs {
			if run.PlanDone {
				done++
				perPlan = append(perPlan, float64(run.Prompt))
			}
		}
		fmt.Fprintf(w, "  %s %s\n", rt.Route, name)
		fmt.Fprintf(w, "    model calls %s, request bytes on the wire %s, prompt bytes %s, o200k prompt tokens %s\n",
			medRange(col(rt, func(x lazyRun) float64 { return float64(x.Calls) })),
			medRange(col(rt, func(x lazyRun) float64 { return float64(x.WireBytes) })),
			medRange(col(rt, func(x lazyRun) float64 { return float64(x.PromptBytes) })),
			medRange(col(rt, func(x lazyRun) float64 { return float64(x.Prompt) })))
		perPlanText := "none: no run completed the plan"
		if len(perPlan) > 0 {
			perPlanText = medRange(perPlan)
		}
		fmt.Fprintf(w, "    items completed %s of %d; plan completed in %d of %d runs; tokens per completed plan %s\n",
			medRange(col(rt, func(x lazyRun) float64 { return float64(x.Completed) })), lazyItems, done, len(rt.Runs), perPlanText)
	}
	n := min(len(r.Open.Runs), len(r.Job.Runs))
	var calls, wire, pbytes, toks []float64
	for i := range n {
		o, j := r.Open.Runs[i], r.Job.Runs[i]
		calls = append(calls, float64(j.Calls-o.Calls))
		wire = append(wire, float64(j.WireBytes-o.WireBytes))
		pbytes = append(pbytes, float64(j.PromptBytes-o.PromptBytes))
		toks = append(toks, float64(j.Prompt-o.Prompt))
	}
	fmt.Fprintf(w, "  gate overhead (enforced − open): model calls +%s, request bytes +%s, prompt bytes +%s, o200k tokens +%s\n",
		medRange(calls), medRange(wire), medRange(pbytes), medRange(toks))
}

// setFlag reports whether the flag name was given on the command line.
func setFlag(fs *flag.FlagSet, name string) bool {
	set := false
	fs.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	return set
}
