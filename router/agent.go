package router

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/dawn-go/dawn/internal/yamldoc"
	"gopkg.in/yaml.v3"
)

// MaxAgentFileSize is the largest agent.md Dawn reads: 256 KiB.
const MaxAgentFileSize = 256 << 10

// frontMatterKeys lists the keys agent.md front matter may hold.
const frontMatterKeys = "model, description, tools, max_turns, temperature, approve"

var utf8BOM = []byte{0xEF, 0xBB, 0xBF}

// Claims are the front matter keys capabilities read from agent.md beyond
// the router's own; ParseAgentWith keeps their values in Agent.Sections.
type Claims struct {
	// Keys are the claimed keys, such as "workspace".
	Keys []string
	// Any keeps every key the router does not own, unchecked: for a
	// capability that reads its own key from a route folder's agent.md,
	// which discovery has already checked against the app's claims.
	Any bool
}

// Section is the YAML value of a front matter key a capability claims, with
// its line numbers (a node's Line is its line in the front matter; add 1
// for the line in agent.md).
type Section = yaml.Node

// allowed lists the keys front matter may hold under c, for messages.
func (c Claims) allowed() string {
	if len(c.Keys) == 0 {
		return frontMatterKeys
	}
	keys := slices.Clone(c.Keys)
	slices.Sort(keys)
	return frontMatterKeys + ", " + strings.Join(slices.Compact(keys), ", ")
}

// ParseAgent parses agent.md: optional YAML front matter between "---"
// lines at the very top, then the Markdown prompt. path is used in errors
// and kept as Agent.File. A UTF-8 byte order mark and CRLF line endings are
// accepted. Errors are *Problem values naming the file, and the line when
// there is one. Only the router's own front matter keys are accepted; see
// ParseAgentWith for the keys capabilities claim.
func ParseAgent(path string, data []byte) (Agent, error) {
	return ParseAgentWith(path, data, Claims{})
}

// ParseAgentWith is ParseAgent that also accepts the front matter keys
// claims names, keeping their YAML values in Agent.Sections for the
// capabilities that read them.
func ParseAgentWith(path string, data []byte, claims Claims) (Agent, error) {
	agent := Agent{File: path}
	if len(data) > MaxAgentFileSize {
		return agent, &Problem{Path: path, Msg: fmt.Sprintf("the file is larger than the %d KiB limit: shorten the prompt", MaxAgentFileSize>>10)}
	}
	data = bytes.TrimPrefix(data, utf8BOM)
	if !utf8.Valid(data) {
		return agent, &Problem{Path: path, Msg: "the file is not UTF-8 text: save it as UTF-8"}
	}
	if bytes.Contains(data, []byte("\r\n")) {
		data = bytes.ReplaceAll(data, []byte("\r\n"), []byte("\n"))
	}
	front, body, err := yamldoc.SplitFrontMatter(data)
	if err != nil {
		return agent, &Problem{Path: path, Line: 1, Msg: err.Error()}
	}
	if front != nil {
		if err := decodeFrontMatter(path, front, &agent, claims); err != nil {
			return agent, err
		}
	}
	agent.Prompt = strings.TrimSpace(string(body))
	return agent, nil
}

// decodeFrontMatter checks every key and value of the front matter and fills
// agent. YAML line n is file line n+1, after the opening "---".
func decodeFrontMatter(path string, front []byte, agent *Agent, claims Claims) (err error) {
	defer func() {
		// A YAML library bug must not take down "dawn check" or the server.
		if r := recover(); r != nil {
			err = &Problem{Path: path, Msg: fmt.Sprintf("front matter could not be parsed (%v): simplify it", r)}
		}
	}()
	root, err := yamldoc.Mapping(front)
	var syntax *yamldoc.SyntaxError
	var notMapping *yamldoc.NotMappingError
	switch {
	case errors.As(err, &syntax):
		line := syntax.Line
		if line > 0 {
			line++
		}
		return &Problem{Path: path, Line: line, Msg: "front matter is not valid YAML: " + syntax.Msg}
	case errors.As(err, &notMapping):
		return &Problem{Path: path, Line: notMapping.Line + 1, Msg: "front matter must be \"key: value\" lines; allowed keys: " + claims.allowed()}
	case err != nil:
		return &Problem{Path: path, Msg: "front matter: " + err.Error()}
	}
	seen := map[string]bool{}
	for key, value := range yamldoc.Pairs(root) {
		if key.Kind != yaml.ScalarNode {
			return &Problem{Path: path, Line: key.Line + 1, Msg: "front matter keys must be plain names; allowed keys: " + claims.allowed()}
		}
		if seen[key.Value] {
			return &Problem{Path: path, Line: key.Line + 1, Msg: fmt.Sprintf("front matter key %q appears twice: keep one", key.Value)}
		}
		seen[key.Value] = true
		if !routerKey(key.Value) && (claims.Any || slices.Contains(claims.Keys, key.Value)) {
			if agent.Sections == nil {
				agent.Sections = map[string]*Section{}
			}
			agent.Sections[key.Value] = value
			continue
		}
		if msg := setField(agent, key.Value, value); msg != "" {
			if !routerKey(key.Value) {
				msg = fmt.Sprintf("unknown front matter key %q; allowed keys: %s", key.Value, claims.allowed())
			}
			return &Problem{Path: path, Line: key.Line + 1, Msg: msg}
		}
	}
	return nil
}

// routerKey reports whether key is one of the router's own front matter
// keys, which no capability can claim.
func routerKey(key string) bool {
	return slices.Contains(strings.Split(frontMatterKeys, ", "), key)
}

// setField sets one front matter key on agent, or says what is wrong.
func setField(agent *Agent, key string, value *yaml.Node) string {
	switch key {
	case "model":
		s, ok := scalarText(value)
		if !ok && value.Kind == yaml.SequenceNode {
			// A fallback list is kept as one string, joined by commas,
			// which is how models.New reads it.
			names, msg := toolList(value)
			s, ok = strings.Join(names, ","), msg == "" && len(names) > 0
		}
		if !ok {
			return `front matter key "model" must be a model name or a list of them tried in order, e.g. model: offline or model: [openai:gpt-4o-mini, anthropic:claude-3-5-haiku-latest]`
		}
		agent.Model = s
	case "description":
		s, ok := scalarText(value)
		if !ok {
			return `front matter key "description" must be text on one line, or a YAML block (description: |)`
		}
		agent.Description = s
	case "tools":
		if value.Kind == yaml.MappingNode {
			return toolPolicy(agent, value)
		}
		tools, msg := toolList(value)
		if msg != "" {
			return msg
		}
		agent.Tools = tools
	case "approve":
		tools, msg := toolList(value)
		if msg != "" {
			return strings.Replace(msg, `"tools" must be a list of tool names, e.g. tools: [search, fetch]`, `"approve" must be a list of tool names, e.g. approve: [deployProd]`, 1)
		}
		agent.Approve = union(agent.Approve, tools)
	case "max_turns":
		n, ok := wholeNumber(value)
		if !ok {
			return fmt.Sprintf(`front matter key "max_turns" must be a whole number of 0 or more, got %q`, value.Value)
		}
		agent.MaxTurns = n
	case "temperature":
		t, ok := yamldoc.Temperature(value)
		if !ok {
			return fmt.Sprintf(`front matter key "temperature" must be a number from 0 to 2, e.g. temperature: 0.2, got %q`, value.Value)
		}
		agent.Temperature = t
	default:
		return fmt.Sprintf("unknown front matter key %q; allowed keys: %s", key, frontMatterKeys)
	}
	return ""
}

// toolPolicy reads the mapping form of tools: {allow, deny, approve}.
func toolPolicy(agent *Agent, value *yaml.Node) string {
	const example = "tools: {allow: [search, fetch], deny: [runBash], approve: [deployProd]}"
	for k, v := range yamldoc.Pairs(value) {
		names, msg := toolList(yamldoc.Resolve(v))
		if msg != "" {
			return fmt.Sprintf(`front matter key "tools.%s" must be a list of tool names, like %s`, k.Value, example)
		}
		switch k.Value {
		case "allow":
			agent.Tools = names
		case "deny":
			agent.Deny = names
		case "approve":
			agent.Approve = union(agent.Approve, names)
		default:
			return fmt.Sprintf(`front matter key "tools" has an unknown key %q; allowed keys are allow, deny and approve, like %s, or a list of names`, k.Value, example)
		}
		if slices.Contains(names, "task") {
			return fmt.Sprintf(`front matter key "tools.%s" names "task", the subagent tool, which tool policy does not govern: a route has it when it has subagents; remove it`, k.Value)
		}
	}
	return ""
}

// union returns a with the names of b it lacks.
func union(a, b []string) []string {
	out := slices.Clone(a)
	for _, n := range b {
		if !slices.Contains(out, n) {
			out = append(out, n)
		}
	}
	return out
}

func toolList(value *yaml.Node) ([]string, string) {
	const want = `front matter key "tools" must be a list of tool names, e.g. tools: [search, fetch]`
	if yamldoc.IsNull(value) {
		return nil, ""
	}
	if value.Kind != yaml.SequenceNode {
		return nil, want
	}
	tools := make([]string, 0, len(value.Content))
	for i, item := range value.Content {
		name, ok := scalarText(yamldoc.Resolve(item))
		if !ok || strings.TrimSpace(name) == "" {
			return nil, fmt.Sprintf("%s; item %d is not a name", want, i+1)
		}
		tools = append(tools, name)
	}
	return tools, ""
}

func wholeNumber(value *yaml.Node) (int, bool) {
	if yamldoc.IsNull(value) {
		return 0, true
	}
	if value.Kind != yaml.ScalarNode || value.ShortTag() != "!!int" {
		return 0, false
	}
	var n int
	if err := value.Decode(&n); err != nil || n < 0 {
		return 0, false
	}
	return n, true
}

// scalarText returns a scalar's text; null is "".
func scalarText(value *yaml.Node) (string, bool) {
	if yamldoc.IsNull(value) {
		return "", true
	}
	if value.Kind != yaml.ScalarNode {
		return "", false
	}
	return value.Value, true
}
