package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/dawn-go/dawn/internal/tokens"
)

// The cached-prefix scenario: one thread of --cache-turns user turns on a
// planning route. On each turn the model rewrites the plan with writeTodos
// and then answers, so every turn changes the live plan. A provider's
// prompt cache bills the leading tokens a request shares with the thread's
// previous request; the figure is that share of each request's input
// tokens (o200k, counted offline), read from what the mock model was sent.

// cacheItems is the scenario plan's length.
const cacheItems = 5

// cacheAnswer is what the model says after each plan change: a short
// paragraph, so the conversation grows as a real one does.
const cacheAnswer = "Here is where things stand. I checked the account, looked at the last invoices and compared them with the plan you chose; the numbers match, the renewal date is unchanged and nothing needs your attention before the next step. Tell me when to go on."

// cacheMessage is one message of a chat completion request, as a string
// that is equal for two equal messages, and its o200k tokens.
type cacheMessage struct {
	Role   string
	Key    string
	Tokens int
}

// cacheRequest is one model request the mock got: its messages and the
// tokens of its tool definitions (sent before the messages).
type cacheRequest struct {
	Messages   []cacheMessage
	ToolTokens int
	CacheKey   string
}

func (r cacheRequest) total() int {
	n := r.ToolTokens
	for _, m := range r.Messages {
		n += m.Tokens
	}
	return n
}

// sharedPrefix is the tokens r begins with that prev also begins with: the
// tool definitions when they are equal, then each leading message equal in
// both.
func (r cacheRequest) sharedPrefix(prev cacheRequest) int {
	n := r.ToolTokens
	for i, m := range r.Messages {
		if i >= len(prev.Messages) || prev.Messages[i].Key != m.Key {
			break
		}
		n += m.Tokens
	}
	return n
}

// withStateInSystemPrompt is r as it would be with the per-turn state
// block joined into the system prompt, the layout before the state block:
// the first message changes whenever the state does.
func (r cacheRequest) withStateInSystemPrompt() cacheRequest {
	n := len(r.Messages)
	if n < 2 || r.Messages[n-1].Role != "system" || r.Messages[0].Role != "system" {
		return r
	}
	out := r
	out.Messages = slices.Clone(r.Messages[:n-1])
	block := r.Messages[n-1]
	out.Messages[0] = cacheMessage{Role: "system", Key: out.Messages[0].Key + "\n\n" + block.Key, Tokens: out.Messages[0].Tokens + block.Tokens}
	return out
}

// cacheMock is an OpenAI chat-completions server on loopback that plays
// the scenario's model and keeps every request.
type cacheMock struct {
	url  string
	srv  *http.Server
	mu   sync.Mutex
	reqs []cacheRequest
}

func startCacheMock() (*cacheMock, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	m := &cacheMock{url: "http://" + ln.Addr().String() + "/v1"}
	m.srv = &http.Server{Handler: http.HandlerFunc(m.serve), ReadHeaderTimeout: time.Minute}
	go func() { _ = m.srv.Serve(ln) }()
	return m, nil
}

func (m *cacheMock) close() { _ = m.srv.Close() }

// cacheWire is what the mock reads of a request.
type cacheWire struct {
	Stream         bool              `json:"stream"`
	Messages       []json.RawMessage `json:"messages"`
	Tools          []json.RawMessage `json:"tools"`
	PromptCacheKey string            `json:"prompt_cache_key"`
}

type cacheWireMessage struct {
	Role      string          `json:"role"`
	Content   json.RawMessage `json:"content"`
	ToolCalls []struct {
		Function struct {
			Name      string `json:"name"`
			Arguments string `json:"arguments"`
		} `json:"function"`
	} `json:"tool_calls"`
}

func (m *cacheMock) serve(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		return
	}
	var wire cacheWire
	if err := json.Unmarshal(body, &wire); err != nil || !strings.HasSuffix(r.URL.Path, "/chat/completions") {
		http.Error(w, `{"error":{"message":"the load tool's mock serves chat completions only"}}`, http.StatusBadRequest)
		return
	}
	req := cacheRequest{CacheKey: wire.PromptCacheKey}
	for _, t := range wire.Tools {
		req.ToolTokens += tokens.Count(string(t))
	}
	users, last := 0, ""
	for _, raw := range wire.Messages {
		var msg cacheWireMessage
		_ = json.Unmarshal(raw, &msg)
		text := contentText(msg.Content)
		n := 3 + tokens.Count(text)
		for _, c := range msg.ToolCalls {
			n += 3 + tokens.Count(c.Function.Name+c.Function.Arguments)
		}
		req.Messages = append(req.Messages, cacheMessage{Role: msg.Role, Key: string(raw), Tokens: n})
		if msg.Role != "system" {
			last = msg.Role
		}
		if msg.Role == "user" {
			users++
		}
	}
	m.mu.Lock()
	m.reqs = append(m.reqs, req)
	m.mu.Unlock()

	var delta, finish string
	if last == "user" {
		args := cachePlan(users)
		delta, finish = `{"role":"assistant","content":null,"tool_calls":[{"index":0,"id":"call_`+strconv.Itoa(users)+`","type":"function","function":{"name":"writeTodos","arguments":`+strconv.Quote(args)+`}}]}`, "tool_calls"
	} else {
		delta, finish = `{"role":"assistant","content":`+strconv.Quote(cacheAnswer)+`}`, "stop"
	}
	usage := mockUsage(req.total(), 40)
	if wire.Stream {
		const head = `data: {"id":"chatcmpl-cache","object":"chat.completion.chunk","created":1,"model":"gpt-4o-mini","choices":[`
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = io.WriteString(w, head+`{"index":0,"delta":`+delta+`,"finish_reason":null}]}`+"\n\n"+
			head+`{"index":0,"delta":{},"finish_reason":"`+finish+`"}]}`+"\n\n"+
			head+`],"usage":`+usage+`}`+"\n\n"+"data: [DONE]\n\n")
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = io.WriteString(w, `{"id":"chatcmpl-cache","object":"chat.completion","created":1,"model":"gpt-4o-mini","choices":[{"index":0,"message":`+
		delta+`,"finish_reason":"`+finish+`"}],"usage":`+usage+`}`)
}

// cachePlan is the writeTodos arguments of user turn n: the plan moves on
// one item per turn and starts over, so every turn changes it.
func cachePlan(n int) string {
	var todos []map[string]string
	cur := (n - 1) % cacheItems
	for i := range cacheItems {
		status := "pending"
		switch {
		case i < cur:
			status = "completed"
		case i == cur:
			status = "in_progress"
		}
		todos = append(todos, map[string]string{"content": fmt.Sprintf("Step %d of round %d", i+1, (n-1)/cacheItems+1), "status": status})
	}
	b, _ := json.Marshal(map[string]any{"todos": todos})
	return string(b)
}

func (m *cacheMock) requests() []cacheRequest {
	m.mu.Lock()
	defer m.mu.Unlock()
	return slices.Clone(m.reqs)
}

// cacheShares are the cached-prefix figures of one layout.
type cacheShares struct {
	Layout string `json:"layout"`
	// Median and Min are over the requests after the first, each the
	// share of its input tokens that is a prefix of the previous request.
	Median float64 `json:"median_share"`
	Min    float64 `json:"min_share"`
	// Overall is the shared-prefix tokens over the input tokens of those
	// requests.
	Overall float64 `json:"overall_share"`
}

// cacheResult is what --cache measured.
type cacheResult struct {
	Binary      string        `json:"binary"`
	Turns       int           `json:"turns"`
	Requests    int           `json:"requests"`
	InputTokens int           `json:"input_tokens"`
	CacheKeys   []string      `json:"prompt_cache_keys"`
	Layouts     []cacheShares `json:"layouts"`
}

func shares(layout string, reqs []cacheRequest) cacheShares {
	var xs []float64
	prefix, total := 0, 0
	for i := 1; i < len(reqs); i++ {
		p, t := reqs[i].sharedPrefix(reqs[i-1]), reqs[i].total()
		prefix += p
		total += t
		xs = append(xs, float64(p)/float64(t))
	}
	s := cacheShares{Layout: layout}
	if len(xs) == 0 {
		return s
	}
	slices.Sort(xs)
	s.Median, s.Min, s.Overall = median(xs), xs[0], float64(prefix)/float64(total)
	return s
}

// cacheMain runs --cache and prints its result; the exit code is 1 when
// a run failed.
func cacheMain(ctx context.Context, opts options) int {
	res, err := runCache(ctx, opts)
	if res != nil {
		if opts.json {
			enc := json.NewEncoder(os.Stdout)
			enc.SetIndent("", "  ")
			_ = enc.Encode(res)
		} else {
			writeCache(os.Stdout, res)
		}
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench --cache:", err)
		return 1
	}
	return 0
}

func runCache(ctx context.Context, opts options) (*cacheResult, error) {
	tmp, bin, err := scratch(ctx, opts, "dawncache-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	app := filepath.Join(tmp, "app")
	var items strings.Builder
	for i := 1; i <= cacheItems; i++ {
		fmt.Fprintf(&items, "- [ ] Step %d\n", i)
	}
	if err := writeFiles(app, map[string]string{
		"work/agent.md": "---\nmodel: openai:gpt-4o-mini\n---\nYou help a customer with their account, step by step, and keep the plan current.",
		"work/plan.md":  items.String(),
	}); err != nil {
		return nil, err
	}
	mock, err := startCacheMock()
	if err != nil {
		return nil, err
	}
	defer mock.close()
	srv, err := startDawn(ctx, bin, app, []string{"OPENAI_BASE_URL=" + mock.url, "OPENAI_API_KEY=test"})
	if err != nil {
		return nil, err
	}
	defer srv.stop(30 * time.Second)
	client := &http.Client{Timeout: time.Minute}
	thread := "cache-" + strconv.FormatInt(time.Now().UnixNano(), 36)
	for turn := 1; turn <= opts.cacheTurns; turn++ {
		if err := cacheTurn(ctx, client, srv.url, thread, turn); err != nil {
			return nil, fmt.Errorf("turn %d: %w", turn, err)
		}
	}
	reqs := mock.requests()
	res := &cacheResult{Binary: bin, Turns: opts.cacheTurns, Requests: len(reqs)}
	if opts.dawn == "" {
		res.Binary = "./cmd/dawn (built)"
	}
	before := make([]cacheRequest, len(reqs))
	for i, r := range reqs {
		res.InputTokens += r.total()
		before[i] = r.withStateInSystemPrompt()
		if !slices.Contains(res.CacheKeys, r.CacheKey) {
			res.CacheKeys = append(res.CacheKeys, r.CacheKey)
		}
	}
	res.Layouts = []cacheShares{
		shares("as sent", reqs),
		shares("the same requests with the state block in the system prompt (the earlier layout)", before),
	}
	return res, nil
}

// cacheTurn runs one user turn of the thread with runs/wait.
func cacheTurn(ctx context.Context, client *http.Client, base, thread string, turn int) error {
	return contextRun(ctx, client, base, "/work", thread, fmt.Sprintf("Go on with the next step (message %d).", turn))
}

func writeCache(w io.Writer, r *cacheResult) {
	fmt.Fprintf(w, "cached-prefix share: one thread of %d turns (%d model requests, %d input tokens in all, o200k), server %s\n", r.Turns, r.Requests, r.InputTokens, r.Binary)
	fmt.Fprintf(w, "  prompt_cache_key values sent: %q\n", r.CacheKeys)
	fmt.Fprintf(w, "  share of each request's input tokens that begins the previous request (target: at least 90%%)\n")
	for _, s := range r.Layouts {
		fmt.Fprintf(w, "  %-82s median %5.1f%%  min %5.1f%%  overall %5.1f%%\n", s.Layout+":", 100*s.Median, 100*s.Min, 100*s.Overall)
	}
}
