package main

import (
	"bytes"
	"context"
	"encoding/json"
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

// The context-budget scenario (--context): one thread of contextTurns
// runs, each a user message and the model's answer of about 1.5 KB, on two
// routes of `dawn start`: /on with context: {max_input_tokens: 8000,
// keep_recent_turns: 6}, and /off without context settings. The mock
// model books the o200k input tokens of every request it gets, the
// summary model's requests (on /on) apart, and the tool prints the
// thread's total input tokens per route.

// contextTurns is the thread's length in runs.
const contextTurns = 50

// contextBudget is /on's max_input_tokens.
const contextBudget = 8000

// contextAnswer is the mock model's answer to a user turn.
var contextAnswer = "Noted. " + strings.Repeat("The ledger entry was checked against the statement, the totals agree and nothing is left open for this line. ", 13)

// contextSummary is the mock model's answer to a summary request.
const contextSummary = "Summary: the user sent numbered ledger entries; each was checked against the statement and agreed; nothing is open."

func writeContextApp(dir, model string) error {
	agent := func(front, text string) string { return "---\nmodel: " + model + "\n" + front + "---\n" + text }
	return writeFiles(dir, map[string]string{
		"on/agent.md":  agent(fmt.Sprintf("context: {max_input_tokens: %d, keep_recent_turns: 6}\n", contextBudget), "You check the ledger with the user (context budget on)."),
		"off/agent.md": agent("", "You check the ledger with the user (no context budget)."),
	})
}

// contextUse is what one route's thread asked the model.
type contextUse struct {
	Calls        int `json:"model_calls"`
	Input        int `json:"input_tokens"`
	Largest      int `json:"largest_request_tokens"`
	SummaryCalls int `json:"summary_calls"`
	SummaryInput int `json:"summary_input_tokens"`
	Compactions  int `json:"compactions"`
}

// contextMock is an OpenAI chat-completions server on loopback that
// answers every user turn with contextAnswer and every summary request
// with contextSummary, booking the input tokens by route (told apart by
// the system prompt).
type contextMock struct {
	url string
	srv *http.Server
	mu  sync.Mutex
	use map[string]*contextUse
}

func startContextMock() (*contextMock, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	m := &contextMock{url: "http://" + ln.Addr().String() + "/v1", use: map[string]*contextUse{"/on": {}, "/off": {}}}
	m.srv = &http.Server{Handler: http.HandlerFunc(m.serve), ReadHeaderTimeout: time.Minute}
	go func() { _ = m.srv.Serve(ln) }()
	return m, nil
}

func (m *contextMock) close() { _ = m.srv.Close() }

func (m *contextMock) serve(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		return
	}
	var req lazyRequest
	if err := json.Unmarshal(body, &req); err != nil || len(req.Messages) == 0 {
		http.Error(w, `{"error":{"message":"not a chat completion request"}}`, http.StatusBadRequest)
		return
	}
	_, prompt := req.promptSize()
	system := contentText(req.Messages[0].Content)
	summary := strings.HasPrefix(system, "You condense")
	answer := contextAnswer
	m.mu.Lock()
	switch {
	case summary:
		answer = contextSummary
		u := m.use["/on"]
		u.SummaryCalls++
		u.SummaryInput += prompt
		u.Largest = max(u.Largest, prompt)
	default:
		route := "/off"
		if strings.Contains(system, "(context budget on)") {
			route = "/on"
		}
		u := m.use[route]
		u.Calls++
		u.Input += prompt
		u.Largest = max(u.Largest, prompt)
	}
	m.mu.Unlock()
	usage := mockUsage(prompt, tokens.Count(answer))
	msg := `{"role":"assistant","content":` + strconv.Quote(answer) + `}`
	if req.Stream {
		const head = `data: {"id":"chatcmpl-ctx","object":"chat.completion.chunk","created":1,"model":"gpt-4o-mini","choices":[`
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = io.WriteString(w, head+`{"index":0,"delta":`+msg+`,"finish_reason":"stop"}]}`+"\n\n"+head+`],"usage":`+usage+`}`+"\n\n"+"data: [DONE]\n\n")
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = io.WriteString(w, `{"id":"chatcmpl-ctx","object":"chat.completion","created":1,"model":"gpt-4o-mini","choices":[{"index":0,"message":`+msg+`,"finish_reason":"stop"}],"usage":`+usage+`}`)
}

// contextResult is what --context measured.
type contextResult struct {
	Binary     string                 `json:"binary"`
	Turns      int                    `json:"turns"`
	Budget     int                    `json:"max_input_tokens"`
	TokensFrom string                 `json:"tokens_from"`
	Routes     map[string]*contextUse `json:"routes"`
	// Ratio is /on's input tokens (summaries included) over /off's.
	Ratio float64 `json:"ratio"`
}

// contextMain runs --context and prints its result; the exit code is 1
// when a run failed or /on used more than half of /off's input tokens.
func contextMain(ctx context.Context, opts options) int {
	res, err := runContext(ctx, opts)
	if res != nil {
		if opts.json {
			enc := json.NewEncoder(os.Stdout)
			enc.SetIndent("", "  ")
			_ = enc.Encode(res)
		} else {
			writeContext(os.Stdout, res)
		}
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench --context:", err)
		return 1
	}
	if res.Ratio > 0.5 {
		fmt.Fprintf(os.Stderr, "bench --context: compaction used %.0f%% of the input tokens of the thread without it; the target is at most 50%%\n", 100*res.Ratio)
		return 1
	}
	return 0
}

func runContext(ctx context.Context, opts options) (*contextResult, error) {
	tmp, bin, err := scratch(ctx, opts, "dawncontext-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	app := filepath.Join(tmp, "app")
	if err := writeContextApp(app, "openai:gpt-4o-mini"); err != nil {
		return nil, err
	}
	mock, err := startContextMock()
	if err != nil {
		return nil, err
	}
	defer mock.close()
	srv, err := startDawn(ctx, bin, app, []string{"OPENAI_BASE_URL=" + mock.url, "OPENAI_API_KEY=test"})
	if err != nil {
		return nil, err
	}
	defer srv.stop(30 * time.Second)
	res := &contextResult{Binary: bin, Turns: contextTurns, Budget: contextBudget,
		TokensFrom: "o200k tokens of what the mock model was sent (message text, tool calls, tool results, tool definitions), as --lazy counts them"}
	if opts.dawn == "" {
		res.Binary = "./cmd/dawn (built)"
	}
	client := &http.Client{Timeout: time.Minute}
	tag := strconv.FormatInt(time.Now().UnixNano(), 36)
	for _, route := range []string{"/off", "/on"} {
		thread := "context-" + tag + "-" + strings.TrimPrefix(route, "/")
		for turn := 1; turn <= contextTurns; turn++ {
			msg := fmt.Sprintf("Entry %d: ", turn) + strings.Repeat(fmt.Sprintf("line %d of the ledger is office supplies bought on account; ", turn), 14)
			if err := contextRun(ctx, client, srv.url, route, thread, msg); err != nil {
				return res, fmt.Errorf("%s turn %d: %w", route, turn, err)
			}
		}
		if route == "/on" {
			n, err := compactions(ctx, client, srv.url, thread)
			if err != nil {
				return res, err
			}
			mock.mu.Lock()
			mock.use["/on"].Compactions = n
			mock.mu.Unlock()
		}
	}
	mock.mu.Lock()
	res.Routes = mock.use
	on, off := mock.use["/on"], mock.use["/off"]
	res.Ratio = float64(on.Input+on.SummaryInput) / float64(max(off.Input, 1))
	mock.mu.Unlock()
	return res, nil
}

// contextRun runs route on thread with one user message through runs/wait.
func contextRun(ctx context.Context, client *http.Client, base, route, thread, msg string) error {
	body, _ := json.Marshal(map[string]any{"route": route, "input": map[string]any{"messages": []map[string]string{{"role": "user", "content": msg}}}})
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, base+"/threads/"+thread+"/runs/wait", bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(io.LimitReader(resp.Body, 4<<20))
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("runs/wait answered %d: %s", resp.StatusCode, firstWords(string(out), 30))
	}
	var failed struct {
		Error string `json:"error"`
	}
	if json.Unmarshal(out, &failed) == nil && failed.Error != "" {
		return fmt.Errorf("the run failed: %s", failed.Error)
	}
	return nil
}

// compactions reads how many times the thread was compacted.
func compactions(ctx context.Context, client *http.Client, base, thread string) (int, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+"/threads/"+thread+"/state", nil)
	if err != nil {
		return 0, err
	}
	resp, err := client.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	var state struct {
		Values struct {
			Compaction struct {
				Count int `json:"count"`
			} `json:"compaction"`
		} `json:"values"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&state); err != nil {
		return 0, fmt.Errorf("GET /threads/%s/state: %w", thread, err)
	}
	return state.Values.Compaction.Count, nil
}

// writeContext prints r.
func writeContext(w io.Writer, r *contextResult) {
	fmt.Fprintf(w, "context budget: a %d-turn thread, max_input_tokens %d on /on, server %s\n", r.Turns, r.Budget, r.Binary)
	fmt.Fprintf(w, "  tokens: %s\n", r.TokensFrom)
	off, on := r.Routes["/off"], r.Routes["/on"]
	fmt.Fprintf(w, "  %-28s %12s %12s\n", "", "off", "on")
	fmt.Fprintf(w, "  %-28s %12d %12d\n", "model calls (turns)", off.Calls, on.Calls)
	fmt.Fprintf(w, "  %-28s %12d %12d\n", "input tokens of the turns", off.Input, on.Input)
	fmt.Fprintf(w, "  %-28s %12s %12d\n", "summary calls", "-", on.SummaryCalls)
	fmt.Fprintf(w, "  %-28s %12s %12d\n", "summary input tokens", "-", on.SummaryInput)
	fmt.Fprintf(w, "  %-28s %12d %12d\n", "total input tokens", off.Input, on.Input+on.SummaryInput)
	fmt.Fprintf(w, "  %-28s %12d %12d\n", "largest request (tokens)", off.Largest, on.Largest)
	fmt.Fprintf(w, "  %-28s %12s %12d\n", "compactions", "-", on.Compactions)
	fmt.Fprintf(w, "  on/off total input tokens: %.1f%% (target: at most 50%%)\n", 100*r.Ratio)
}
