package models

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/tmc/langchaingo/llms"
	"gopkg.in/yaml.v3"
)

// ProviderScript names a scripted model: "script:FILE" answers from the
// turns in FILE (see LoadScript).
const ProviderScript = "script"

// StateBlockHeading opens the per-turn state block the agent loop sends
// after the conversation as a last system message (the live plan, the
// harness's progress). A scripted model ignores it when it looks for the
// latest message.
const StateBlockHeading = "## Current state"

// maxScriptBytes bounds a script file.
const maxScriptBytes = 4 << 20

// Script is a parsed script file: the turns a scripted model answers with.
//
// A call is answered by the first turn whose When holds; else, by the
// turn's position: the Nth turn without a When answers the Nth model call
// since the user last spoke.
type Script struct {
	Turns []ScriptTurn `yaml:"turns" json:"turns"`
}

// ScriptTurn is one scripted answer: text, tool calls, or both.
type ScriptTurn struct {
	When      *ScriptWhen      `yaml:"when,omitempty" json:"when,omitempty"`
	Text      string           `yaml:"text,omitempty" json:"text,omitempty"`
	ToolCalls []ScriptToolCall `yaml:"tool_calls,omitempty" json:"tool_calls,omitempty"`
}

// ScriptWhen matches a call; every field set must hold. User and
// ToolResult match when the message contains the text.
type ScriptWhen struct {
	// Turn is the model call's number since the user last spoke, from 1.
	Turn int `yaml:"turn,omitempty" json:"turn,omitempty"`
	// User is text the latest user message contains. Alone, it matches
	// only the first call after that message.
	User string `yaml:"user,omitempty" json:"user,omitempty"`
	// Tool is the name of the tool whose result is the latest message.
	Tool string `yaml:"tool,omitempty" json:"tool,omitempty"`
	// ToolResult is text the latest message, a tool result, contains.
	ToolResult string `yaml:"tool_result,omitempty" json:"tool_result,omitempty"`
}

// ScriptToolCall is one tool call of a turn; Args is any YAML value,
// sent as JSON (a mapping for most tools).
type ScriptToolCall struct {
	Name string `yaml:"name" json:"name"`
	Args any    `yaml:"args,omitempty" json:"args,omitempty"`
}

// ParseScript reads a script file's data; file names it in errors.
func ParseScript(file string, data []byte) (*Script, error) {
	if len(data) > maxScriptBytes {
		return nil, fmt.Errorf("script %s: the file is over %d bytes", file, maxScriptBytes)
	}
	var s Script
	dec := yaml.NewDecoder(strings.NewReader(string(data)))
	dec.KnownFields(true)
	if err := dec.Decode(&s); err != nil {
		return nil, fmt.Errorf("script %s: %v; write turns: [{text: ..., tool_calls: [{name, args}], when: {turn, user, tool, tool_result}}]", file, err)
	}
	if len(s.Turns) == 0 {
		return nil, fmt.Errorf("script %s: turns is empty; list at least one turn with text or tool_calls", file)
	}
	for i, t := range s.Turns {
		if t.Text == "" && len(t.ToolCalls) == 0 {
			return nil, fmt.Errorf("script %s: turns[%d] has neither text nor tool_calls", file, i)
		}
		if t.When != nil && *t.When == (ScriptWhen{}) {
			return nil, fmt.Errorf("script %s: turns[%d].when is empty; set turn, user, tool or tool_result, or remove it", file, i)
		}
		for j, c := range t.ToolCalls {
			if strings.TrimSpace(c.Name) == "" {
				return nil, fmt.Errorf("script %s: turns[%d].tool_calls[%d].name is missing", file, i, j)
			}
			if _, err := json.Marshal(jsonable(c.Args)); err != nil {
				return nil, fmt.Errorf("script %s: turns[%d].tool_calls[%d].args cannot be sent as JSON: %v", file, i, j, err)
			}
		}
	}
	return &s, nil
}

// LoadScript reads and parses the script file at path.
func LoadScript(path string) (*Script, error) {
	data, err := readScript(path)
	if err != nil {
		return nil, err
	}
	return ParseScript(path, data)
}

func readScript(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("script %s: %w; model script:FILE names a YAML file of turns (see docs/models.md)", path, err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxScriptBytes+1))
	if err != nil {
		return nil, fmt.Errorf("script %s: %w", path, err)
	}
	return data, nil
}

// ScriptInDir returns spec with the file of each script:FILE model that is
// a relative path joined to dir, so that a script named in agent.md,
// dawn.yaml or an eval file is read from the app's folder whatever the
// working directory. Other models are left as they are.
func ScriptInDir(spec, dir string) string {
	if dir == "" || !strings.Contains(spec, ProviderScript+":") {
		return spec
	}
	parts := strings.Split(spec, ",")
	for i, part := range parts {
		provider, file, ok := strings.Cut(strings.TrimSpace(part), ":")
		if ok && strings.EqualFold(strings.TrimSpace(provider), ProviderScript) && !filepath.IsAbs(file) {
			parts[i] = ProviderScript + ":" + filepath.Join(dir, file)
		}
	}
	return strings.Join(parts, ",")
}

// scriptModel answers from a script file. It re-reads the file when it
// changes, so a scripted dev server follows edits.
type scriptModel struct {
	path string

	mu      sync.Mutex
	script  *Script
	modTime time.Time
	size    int64
}

// newScriptModel loads the script at path.
func newScriptModel(path string) (*scriptModel, error) {
	m := &scriptModel{path: path}
	if _, err := m.current(); err != nil {
		return nil, err
	}
	return m, nil
}

// current returns the script, re-read when the file changed.
func (m *scriptModel) current() (*Script, error) {
	info, err := os.Stat(m.path)
	if err != nil {
		return nil, fmt.Errorf("script %s: %w", m.path, err)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.script != nil && info.ModTime().Equal(m.modTime) && info.Size() == m.size {
		return m.script, nil
	}
	s, err := LoadScript(m.path)
	if err != nil {
		return nil, err
	}
	m.script, m.modTime, m.size = s, info.ModTime(), info.Size()
	return s, nil
}

// scriptCall is what a scripted model reads from a call's messages.
type scriptCall struct {
	turn       int // model calls since the user last spoke, this one included
	user       string
	tool       string // the latest message is this tool's result
	toolResult string
	callsSoFar int // tool calls in the conversation, for unique ids
}

// readScriptCall reads messages, skipping system messages (the state
// block among them) and user text that is a state block.
func readScriptCall(messages []llms.MessageContent) scriptCall {
	var c scriptCall
	names := map[string]string{} // tool name by call id
	for _, mc := range messages {
		if mc.Role == llms.ChatMessageTypeSystem {
			continue
		}
		for _, part := range mc.Parts {
			switch p := part.(type) {
			case llms.TextContent:
				if (mc.Role == llms.ChatMessageTypeHuman || mc.Role == llms.ChatMessageTypeGeneric) && !strings.HasPrefix(p.Text, StateBlockHeading) {
					c.user, c.turn, c.tool, c.toolResult = p.Text, 0, "", ""
				}
			case llms.ToolCall:
				c.callsSoFar++
				if p.FunctionCall != nil {
					names[p.ID] = p.FunctionCall.Name
				}
			case llms.ToolCallResponse:
				c.tool, c.toolResult = p.Name, p.Content
				if c.tool == "" {
					c.tool = names[p.ToolCallID]
				}
			}
		}
		if mc.Role == llms.ChatMessageTypeAI {
			c.turn++
			c.tool, c.toolResult = "", ""
		}
	}
	c.turn++
	return c
}

// holds reports whether c matches. User alone answers the user's message
// itself (the first call since it); with Turn, Tool or ToolResult it only
// narrows them to the conversation whose latest user message has the text.
func (w *ScriptWhen) holds(c scriptCall) bool {
	if w.User != "" && w.Turn == 0 && w.Tool == "" && w.ToolResult == "" && c.turn != 1 {
		return false
	}
	return (w.Turn == 0 || w.Turn == c.turn) &&
		(w.User == "" || strings.Contains(c.user, w.User)) &&
		(w.Tool == "" || w.Tool == c.tool) &&
		(w.ToolResult == "" || (c.tool != "" && strings.Contains(c.toolResult, w.ToolResult)))
}

// pick returns the turn that answers c.
func (s *Script) pick(c scriptCall) (ScriptTurn, bool) {
	for _, t := range s.Turns {
		if t.When != nil && t.When.holds(c) {
			return t, true
		}
	}
	n := 0
	for _, t := range s.Turns {
		if t.When != nil {
			continue
		}
		if n++; n == c.turn {
			return t, true
		}
	}
	return ScriptTurn{}, false
}

// GenerateContent answers with the script's turn for the call.
func (m *scriptModel) GenerateContent(ctx context.Context, messages []llms.MessageContent, options ...llms.CallOption) (*llms.ContentResponse, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	s, err := m.current()
	if err != nil {
		return nil, err
	}
	var opts llms.CallOptions
	for _, opt := range options {
		opt(&opts)
	}
	c := readScriptCall(messages)
	t, ok := s.pick(c)
	if !ok {
		return nil, m.noMatch(c)
	}
	if err := streamWords(ctx, opts.StreamingFunc, t.Text); t.Text != "" && err != nil {
		return nil, err
	}
	choice := &llms.ContentChoice{Content: t.Text, StopReason: "stop"}
	for i, tc := range t.ToolCalls {
		args, _ := json.Marshal(jsonable(tc.Args)) // checked by ParseScript
		if tc.Args == nil {
			args = []byte("{}")
		}
		call := llms.ToolCall{
			ID:           "call_script_" + strconv.Itoa(c.callsSoFar+i+1),
			Type:         "function",
			FunctionCall: &llms.FunctionCall{Name: tc.Name, Arguments: string(args)},
		}
		choice.ToolCalls = append(choice.ToolCalls, call)
	}
	if len(choice.ToolCalls) > 0 {
		choice.StopReason = "tool_calls"
		choice.FuncCall = choice.ToolCalls[0].FunctionCall
	}
	return &llms.ContentResponse{Choices: []*llms.ContentChoice{choice}}, nil
}

// noMatch says which call found no turn, and what it looked at.
func (m *scriptModel) noMatch(c scriptCall) error {
	var b strings.Builder
	fmt.Fprintf(&b, "script %s: no turn answers model call %d since the user's message %s", m.path, c.turn, strconv.Quote(shorten(c.user, 80)))
	if c.tool != "" {
		fmt.Fprintf(&b, " (latest message: the result of %s, %s)", c.tool, strconv.Quote(shorten(c.toolResult, 80)))
	}
	b.WriteString("; add a turn for it, or one with when: {turn, user, tool, tool_result} that matches")
	return errors.New(b.String())
}

// Call answers a single prompt.
func (m *scriptModel) Call(ctx context.Context, prompt string, options ...llms.CallOption) (string, error) {
	return llms.GenerateFromSinglePrompt(ctx, m, prompt, options...)
}

// jsonable turns what yaml.v3 decodes (maps with any keys) into values
// encoding/json can write.
func jsonable(v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, val := range x {
			out[k] = jsonable(val)
		}
		return out
	case map[any]any:
		out := make(map[string]any, len(x))
		for k, val := range x {
			out[fmt.Sprint(k)] = jsonable(val)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, val := range x {
			out[i] = jsonable(val)
		}
		return out
	}
	return v
}
