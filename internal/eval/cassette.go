package eval

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/dawn-go/dawn/internal/runner"
	"github.com/tmc/langchaingo/llms"
)

// CassetteExt ends the name of the recording of an eval file's model calls,
// kept beside it: basics.yaml is recorded in basics.cassette.json.
const CassetteExt = ".cassette.json"

// cassetteVersion is the version of the cassette format written.
const cassetteVersion = 1

// maxCassetteBytes bounds a cassette file read for a replay.
const maxCassetteBytes = 64 << 20

// CassettePath is the cassette of the eval file file.
func CassettePath(file string) string {
	return strings.TrimSuffix(file, filepath.Ext(file)) + CassetteExt
}

// Cassette holds the recorded model calls of an eval file's cases, one
// tape per case, by case name.
type Cassette struct {
	Version int              `json:"version"`
	Cases   map[string]*Tape `json:"cases"`
}

// Tape is the model calls of one run of a case, in the order they were
// made.
type Tape struct {
	Calls []TapeCall `json:"calls"`
}

// TapeCall is one recorded model call: the model, what the run sent (its
// messages and the names of the tools it offered), and what came back:
// the answer or the error.
type TapeCall struct {
	Model    string       `json:"model"`
	Messages []CallMsg    `json:"messages"`
	Tools    []string     `json:"tools,omitempty"`
	Choices  []CallChoice `json:"choices,omitempty"`
	Error    string       `json:"error,omitempty"`
}

// CallMsg is one message of a model call's request.
type CallMsg struct {
	Role        string         `json:"role"`
	Text        string         `json:"text,omitempty"`
	ToolCalls   []CallToolCall `json:"tool_calls,omitempty"`
	ToolResults []CallResult   `json:"tool_results,omitempty"`
	// Other counts parts of other kinds (images, binary data), which are
	// not recorded.
	Other int `json:"other,omitempty"`
}

// CallToolCall is a tool call, in a request or an answer.
type CallToolCall struct {
	ID        string `json:"id"`
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

// CallResult is a tool's result sent to the model.
type CallResult struct {
	ID      string `json:"id"`
	Name    string `json:"name"`
	Content string `json:"content"`
}

// CallChoice is one choice of a model's answer.
type CallChoice struct {
	Content    string         `json:"content,omitempty"`
	StopReason string         `json:"stop_reason,omitempty"`
	ToolCalls  []CallToolCall `json:"tool_calls,omitempty"`
	Reasoning  string         `json:"reasoning,omitempty"`
	// Info is the provider's generation info that JSON can hold (token
	// usage, mostly).
	Info map[string]any `json:"info,omitempty"`
}

// Tapes records the model calls of eval attempts into cassettes beside
// their eval files, or replays them from there instead of calling any
// model. Each attempt gets a tape of its own through its context; the
// models Models makes read it from there.
type Tapes struct {
	replay    bool
	mu        sync.Mutex
	cassettes map[string]*Cassette // by cassette path
}

// NewRecorder returns Tapes that record: each case's calls go into the
// cassette of its eval file, written by Save.
func NewRecorder() *Tapes { return &Tapes{cassettes: map[string]*Cassette{}} }

// LoadReplay returns Tapes that replay the cassettes of the cases' eval
// files. A missing or unreadable cassette is an error naming it.
func LoadReplay(cases []Case) (*Tapes, error) {
	t := &Tapes{replay: true, cassettes: map[string]*Cassette{}}
	var errs []error
	for _, c := range cases {
		path := CassettePath(c.File)
		if _, ok := t.cassettes[path]; ok {
			continue
		}
		cas, err := readCassette(path)
		if err != nil {
			errs = append(errs, err)
			cas = &Cassette{}
		}
		t.cassettes[path] = cas
	}
	return t, errors.Join(errs...)
}

func readCassette(path string) (*Cassette, error) {
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("%s: no recording to replay; record one with dawn eval --record (against the real model)", path)
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var buf bytes.Buffer
	if n, err := buf.ReadFrom(io.LimitReader(f, maxCassetteBytes+1)); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	} else if n > maxCassetteBytes {
		return nil, fmt.Errorf("%s: over %d MiB; record fewer cases per eval file", path, maxCassetteBytes>>20)
	}
	var cas Cassette
	if err := json.Unmarshal(buf.Bytes(), &cas); err != nil {
		return nil, fmt.Errorf("%s: not a cassette (%v); record it again with dawn eval --record", path, err)
	}
	if cas.Version != cassetteVersion {
		return nil, fmt.Errorf("%s: cassette version %d, this dawn reads version %d; record it again with dawn eval --record", path, cas.Version, cassetteVersion)
	}
	return &cas, nil
}

// Replaying reports whether t replays rather than records.
func (t *Tapes) Replaying() bool { return t.replay }

// Models returns the model factory of the runs: in a recording, base's
// models, recording the calls of attempts; in a replay, models that answer
// from the attempt's tape and never call base.
func (t *Tapes) Models(base runner.ModelFactory) runner.ModelFactory {
	if t.replay {
		return func(spec string) (llms.Model, error) { return &replayModel{spec: spec}, nil }
	}
	return func(spec string) (llms.Model, error) {
		m, err := base(spec)
		if err != nil {
			return nil, err
		}
		return &recordingModel{spec: spec, inner: m}, nil
	}
}

// Save writes the cassettes recorded and returns their paths, sorted.
// A cassette keeps the tapes of cases not run this time (another --route).
func (t *Tapes) Save() ([]string, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	var paths []string
	for path, cas := range t.cassettes {
		if old, err := readCassette(path); err == nil {
			for name, tape := range old.Cases {
				if _, ok := cas.Cases[name]; !ok {
					cas.Cases[name] = tape
				}
			}
		}
		data, err := json.MarshalIndent(cas, "", "  ")
		if err != nil {
			return paths, fmt.Errorf("%s: %w", path, err)
		}
		if err := os.WriteFile(path, append(data, '\n'), 0o644); err != nil {
			return paths, err
		}
		paths = append(paths, path)
	}
	slices.Sort(paths)
	return paths, nil
}

// tapeKey carries an attempt's tape in its context.
type tapeKey struct{}

// tape is one attempt's tape: being recorded, or being played.
type tape struct {
	mu    sync.Mutex
	calls []TapeCall
	// used marks the calls played; made counts the calls the run made.
	used []bool
	made int
	// missing is set when the case has no recording.
	missing string
}

// begin gives the attempt of c its tape, in the context returned.
func (t *Tapes) begin(ctx context.Context, c *Case) (context.Context, *tape) {
	tp := &tape{}
	if t.replay {
		t.mu.Lock()
		cas := t.cassettes[CassettePath(c.File)]
		t.mu.Unlock()
		if rec := cas.tape(c.Name); rec != nil {
			tp.calls = rec.Calls
			tp.used = make([]bool, len(rec.Calls))
		} else {
			tp.missing = fmt.Sprintf("%s has no recording of case %q; record it with dawn eval --record", CassettePath(c.File), c.Name)
		}
	}
	return context.WithValue(ctx, tapeKey{}, tp), tp
}

// tape returns the tape of the case named name, or nil.
func (cas *Cassette) tape(name string) *Tape {
	if cas == nil {
		return nil
	}
	return cas.Cases[name]
}

// end files a recorded tape in its cassette, or checks that a replay used
// the whole tape. It returns the replay's result, or nil.
func (t *Tapes) end(c *Case, tp *tape) *Result {
	tp.mu.Lock()
	defer tp.mu.Unlock()
	if !t.replay {
		t.mu.Lock()
		defer t.mu.Unlock()
		path := CassettePath(c.File)
		cas := t.cassettes[path]
		if cas == nil {
			cas = &Cassette{Version: cassetteVersion, Cases: map[string]*Tape{}}
			t.cassettes[path] = cas
		}
		cas.Cases[c.Name] = &Tape{Calls: tp.calls}
		return nil
	}
	r := Result{Expectation: ExpectReplay, Pass: true, Detail: fmt.Sprintf("%d model call(s) replayed", tp.made)}
	switch left := len(tp.used) - countTrue(tp.used); {
	case tp.missing != "":
		r.Pass, r.Detail = false, tp.missing
	case tp.made > len(tp.calls) || tp.diverged():
		r.Pass, r.Detail = false, "the run diverged from the recording (the run's error says where)"
	case left > 0:
		r.Pass, r.Detail = false, fmt.Sprintf("the run made %d model call(s); the recording has %d: the run diverged after call %d", tp.made, len(tp.calls), tp.made)
	}
	return &r
}

// diverged reports whether a call of the run matched no recorded call.
func (tp *tape) diverged() bool { return tp.made > countTrue(tp.used) }

func countTrue(bs []bool) int {
	n := 0
	for _, b := range bs {
		if b {
			n++
		}
	}
	return n
}

// ExpectReplay names the result that says a replay matched its recording.
const ExpectReplay = "replay"

// tapeFrom returns ctx's tape, or nil.
func tapeFrom(ctx context.Context) *tape {
	tp, _ := ctx.Value(tapeKey{}).(*tape)
	return tp
}

// recordingModel calls its model and records each call on the attempt's
// tape; calls outside an attempt are not recorded.
type recordingModel struct {
	spec  string
	inner llms.Model
}

func (m *recordingModel) GenerateContent(ctx context.Context, msgs []llms.MessageContent, options ...llms.CallOption) (*llms.ContentResponse, error) {
	tp := tapeFrom(ctx)
	if tp == nil {
		return m.inner.GenerateContent(ctx, msgs, options...)
	}
	co := callOptions(options)
	call := TapeCall{Model: m.spec, Messages: callMessages(msgs), Tools: toolNames(co)}
	resp, err := m.inner.GenerateContent(ctx, msgs, options...)
	if err != nil {
		call.Error = err.Error()
	} else {
		call.Choices = callChoices(resp)
	}
	tp.mu.Lock()
	tp.calls = append(tp.calls, call)
	tp.made++
	tp.mu.Unlock()
	return resp, err
}

func (m *recordingModel) Call(ctx context.Context, prompt string, options ...llms.CallOption) (string, error) {
	return llms.GenerateFromSinglePrompt(ctx, m, prompt, options...)
}

// replayModel answers from the attempt's tape: the first call not yet
// played whose model and request are the ones made. A request that
// matches none is an error naming the call and where it differs.
type replayModel struct{ spec string }

func (m *replayModel) GenerateContent(ctx context.Context, msgs []llms.MessageContent, options ...llms.CallOption) (*llms.ContentResponse, error) {
	tp := tapeFrom(ctx)
	if tp == nil {
		return nil, fmt.Errorf("model %s: a replay answers only the model calls of eval cases", m.spec)
	}
	co := callOptions(options)
	made := TapeCall{Model: m.spec, Messages: callMessages(msgs), Tools: toolNames(co)}
	call, err := tp.play(made)
	if err != nil {
		return nil, err
	}
	if call.Error != "" {
		return nil, fmt.Errorf("%s (replayed)", call.Error)
	}
	return contentResponse(call.Choices), nil
}

func (m *replayModel) Call(ctx context.Context, prompt string, options ...llms.CallOption) (string, error) {
	return llms.GenerateFromSinglePrompt(ctx, m, prompt, options...)
}

// play finds the recorded call for made and marks it played. The model's
// name is not matched: a replay answers for whichever model the route
// names now, as long as the run asks the same.
func (tp *tape) play(made TapeCall) (TapeCall, error) {
	tp.mu.Lock()
	defer tp.mu.Unlock()
	tp.made++
	n := tp.made
	if tp.missing != "" {
		return TapeCall{}, errors.New(tp.missing)
	}
	want := requestKey(made)
	first := -1
	for i, c := range tp.calls {
		if tp.used[i] {
			continue
		}
		if first < 0 {
			first = i
		}
		if requestKey(c) == want {
			tp.used[i] = true
			return c, nil
		}
	}
	if first < 0 {
		return TapeCall{}, fmt.Errorf("replay diverged at model call %d: the recording has only %d call(s); the run asks the model again (record the case again if that is intended)", n, len(tp.calls))
	}
	return TapeCall{}, fmt.Errorf("replay diverged at model call %d: %s; record the case again if that is intended", n, difference(tp.calls[first], made))
}

// uuidRE matches the random ids (threads, runs, interrupts) that differ
// between a recording and its replay.
var uuidRE = regexp.MustCompile(`[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`)

// requestKey is what a replayed request must match: the messages and the
// tools, with random ids masked.
func requestKey(c TapeCall) string {
	data, _ := json.Marshal(struct {
		M []CallMsg
		T []string
	}{c.Messages, c.Tools})
	return uuidRE.ReplaceAllString(string(data), "<id>")
}

// difference says how made differs from the recorded call rec: the model,
// the tools, the number of messages or the first message that differs.
func difference(rec, made TapeCall) string {
	for i := range min(len(rec.Messages), len(made.Messages)) {
		if msgKey(rec.Messages[i]) != msgKey(made.Messages[i]) {
			a, b := msgText(rec.Messages[i]), msgText(made.Messages[i])
			if a == b {
				a, b = msgKey(rec.Messages[i]), msgKey(made.Messages[i])
			}
			return fmt.Sprintf("message %d (%s) differs: the run sent %s, the recording has %s", i+1, made.Messages[i].Role, clip(b), clip(a))
		}
	}
	if len(rec.Messages) != len(made.Messages) {
		return fmt.Sprintf("the run sent %d message(s), the recording has %d", len(made.Messages), len(rec.Messages))
	}
	return fmt.Sprintf("the tools offered differ: the run offered %v, the recording %v", made.Tools, rec.Tools)
}

// msgText is a message as a person reads it: its text, the tools it
// calls, the results it carries.
func msgText(m CallMsg) string {
	var parts []string
	if m.Text != "" {
		parts = append(parts, m.Text)
	}
	for _, c := range m.ToolCalls {
		parts = append(parts, fmt.Sprintf("call %s %s", c.Name, c.Arguments))
	}
	for _, r := range m.ToolResults {
		parts = append(parts, fmt.Sprintf("result of %s: %s", r.Name, r.Content))
	}
	return strings.Join(parts, "; ")
}

func msgKey(m CallMsg) string {
	data, _ := json.Marshal(m)
	return uuidRE.ReplaceAllString(string(data), "<id>")
}

func callOptions(options []llms.CallOption) llms.CallOptions {
	var co llms.CallOptions
	for _, o := range options {
		o(&co)
	}
	return co
}

func toolNames(co llms.CallOptions) []string {
	var names []string
	for _, t := range co.Tools {
		if t.Function != nil {
			names = append(names, t.Function.Name)
		}
	}
	return names
}

// callMessages records the messages of a request.
func callMessages(msgs []llms.MessageContent) []CallMsg {
	out := make([]CallMsg, 0, len(msgs))
	for _, m := range msgs {
		cm := CallMsg{Role: string(m.Role)}
		var text []string
		for _, p := range m.Parts {
			switch p := p.(type) {
			case llms.TextContent:
				text = append(text, p.Text)
			case llms.ToolCall:
				cm.ToolCalls = append(cm.ToolCalls, toolCallOf(p))
			case llms.ToolCallResponse:
				cm.ToolResults = append(cm.ToolResults, CallResult{ID: p.ToolCallID, Name: p.Name, Content: p.Content})
			default:
				cm.Other++
			}
		}
		cm.Text = strings.Join(text, "\n")
		out = append(out, cm)
	}
	return out
}

func toolCallOf(tc llms.ToolCall) CallToolCall {
	c := CallToolCall{ID: tc.ID}
	if tc.FunctionCall != nil {
		c.Name, c.Arguments = tc.FunctionCall.Name, tc.FunctionCall.Arguments
	}
	return c
}

// callChoices records an answer's choices.
func callChoices(resp *llms.ContentResponse) []CallChoice {
	if resp == nil {
		return nil
	}
	out := make([]CallChoice, 0, len(resp.Choices))
	for _, ch := range resp.Choices {
		if ch == nil {
			continue
		}
		c := CallChoice{Content: ch.Content, StopReason: ch.StopReason, Reasoning: ch.ReasoningContent, Info: jsonInfo(ch.GenerationInfo)}
		for _, tc := range ch.ToolCalls {
			c.ToolCalls = append(c.ToolCalls, toolCallOf(tc))
		}
		out = append(out, c)
	}
	return out
}

// jsonInfo keeps the entries of info that JSON can hold.
func jsonInfo(info map[string]any) map[string]any {
	out := map[string]any{}
	for k, v := range info {
		if _, err := json.Marshal(v); err == nil {
			out[k] = v
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// contentResponse rebuilds a recorded answer.
func contentResponse(choices []CallChoice) *llms.ContentResponse {
	resp := &llms.ContentResponse{}
	for _, c := range choices {
		ch := &llms.ContentChoice{Content: c.Content, StopReason: c.StopReason, ReasoningContent: c.Reasoning, GenerationInfo: c.Info}
		for _, tc := range c.ToolCalls {
			ch.ToolCalls = append(ch.ToolCalls, llms.ToolCall{ID: tc.ID, Type: "function", FunctionCall: &llms.FunctionCall{Name: tc.Name, Arguments: tc.Arguments}})
		}
		resp.Choices = append(resp.Choices, ch)
	}
	return resp
}
