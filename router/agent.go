package router

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	"gopkg.in/yaml.v3"
)

// MaxAgentFileSize is the largest agent.md Dawn reads: 256 KiB.
const MaxAgentFileSize = 256 << 10

// frontMatterKeys lists the keys agent.md front matter may hold.
const frontMatterKeys = "model, description, tools, max_turns, approve"

var utf8BOM = []byte{0xEF, 0xBB, 0xBF}

// ParseAgent parses agent.md: optional YAML front matter between "---"
// lines at the very top, then the Markdown prompt. path is used in errors
// and kept as Agent.File. A UTF-8 byte order mark and CRLF line endings are
// accepted. Errors are *Problem values naming the file, and the line when
// there is one.
func ParseAgent(path string, data []byte) (Agent, error) {
	agent := Agent{File: path}
	if len(data) > MaxAgentFileSize {
		return agent, &Problem{Path: path, Msg: fmt.Sprintf("the file is larger than the %d KiB limit: shorten the prompt", MaxAgentFileSize>>10)}
	}
	data = bytes.TrimPrefix(data, utf8BOM)
	if !utf8.Valid(data) {
		return agent, &Problem{Path: path, Msg: "the file is not UTF-8 text: save it as UTF-8"}
	}
	text := string(data)
	if strings.Contains(text, "\r\n") {
		text = strings.ReplaceAll(text, "\r\n", "\n")
	}
	front, body, hasFront := splitFrontMatter(text)
	if hasFront && front == nil {
		return agent, &Problem{Path: path, Line: 1, Msg: `front matter starts with "---" but has no closing "---" line: add one after the last key, or remove the first line if the file has no front matter`}
	}
	if front != nil {
		if err := decodeFrontMatter(path, *front, &agent); err != nil {
			return agent, err
		}
	}
	agent.Prompt = strings.TrimSpace(body)
	return agent, nil
}

// splitFrontMatter splits text into front matter and body. hasFront reports
// whether the first line is "---"; front is nil when no closing line follows.
func splitFrontMatter(text string) (front *string, body string, hasFront bool) {
	first, rest, found := strings.Cut(text, "\n")
	if !isFence(first) {
		return nil, text, false
	}
	if !found {
		return nil, "", true
	}
	for offset := 0; offset <= len(rest); {
		line, _, more := strings.Cut(rest[offset:], "\n")
		if isFence(line) {
			f := rest[:offset]
			end := offset + len(line)
			if more {
				end++
			}
			return &f, rest[end:], true
		}
		if !more {
			break
		}
		offset += len(line) + 1
	}
	return nil, "", true
}

func isFence(line string) bool {
	return strings.TrimRight(line, " \t") == "---"
}

// decodeFrontMatter checks every key and value of the front matter and fills
// agent. YAML line n is file line n+1, after the opening "---".
func decodeFrontMatter(path, front string, agent *Agent) (err error) {
	defer func() {
		// A YAML library bug must not take down "dawn check" or the server.
		if r := recover(); r != nil {
			err = &Problem{Path: path, Msg: fmt.Sprintf("front matter could not be parsed (%v): simplify it", r)}
		}
	}()
	var doc yaml.Node
	if err := yaml.Unmarshal([]byte(front), &doc); err != nil {
		line, msg := yamlErrorLine(err)
		if line > 0 {
			line++
		}
		return &Problem{Path: path, Line: line, Msg: "front matter is not valid YAML: " + msg}
	}
	if len(doc.Content) == 0 {
		return nil
	}
	root := resolveAlias(doc.Content[0])
	if isNull(root) {
		return nil
	}
	if root.Kind != yaml.MappingNode {
		return &Problem{Path: path, Line: root.Line + 1, Msg: "front matter must be \"key: value\" lines; allowed keys: " + frontMatterKeys}
	}
	seen := make(map[string]bool, len(root.Content)/2)
	for i := 0; i+1 < len(root.Content); i += 2 {
		key, value := root.Content[i], resolveAlias(root.Content[i+1])
		if key.Kind != yaml.ScalarNode {
			return &Problem{Path: path, Line: key.Line + 1, Msg: "front matter keys must be plain names; allowed keys: " + frontMatterKeys}
		}
		if seen[key.Value] {
			return &Problem{Path: path, Line: key.Line + 1, Msg: fmt.Sprintf("front matter key %q appears twice: keep one", key.Value)}
		}
		seen[key.Value] = true
		if msg := setField(agent, key.Value, value); msg != "" {
			return &Problem{Path: path, Line: key.Line + 1, Msg: msg}
		}
	}
	return nil
}

// setField sets one front matter key on agent, or says what is wrong.
func setField(agent *Agent, key string, value *yaml.Node) string {
	switch key {
	case "model":
		s, ok := scalarText(value)
		if !ok {
			return `front matter key "model" must be a model name, e.g. model: offline`
		}
		agent.Model = s
	case "description":
		s, ok := scalarText(value)
		if !ok {
			return `front matter key "description" must be text on one line, or a YAML block (description: |)`
		}
		agent.Description = s
	case "tools":
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
		agent.Approve = tools
	case "max_turns":
		n, ok := wholeNumber(value)
		if !ok {
			return fmt.Sprintf(`front matter key "max_turns" must be a whole number of 0 or more, got %q`, value.Value)
		}
		agent.MaxTurns = n
	default:
		return fmt.Sprintf("unknown front matter key %q; allowed keys: %s", key, frontMatterKeys)
	}
	return ""
}

func toolList(value *yaml.Node) ([]string, string) {
	const want = `front matter key "tools" must be a list of tool names, e.g. tools: [search, fetch]`
	if isNull(value) {
		return nil, ""
	}
	if value.Kind != yaml.SequenceNode {
		return nil, want
	}
	tools := make([]string, 0, len(value.Content))
	for i, item := range value.Content {
		name, ok := scalarText(resolveAlias(item))
		if !ok || strings.TrimSpace(name) == "" {
			return nil, fmt.Sprintf("%s; item %d is not a name", want, i+1)
		}
		tools = append(tools, name)
	}
	return tools, ""
}

func wholeNumber(value *yaml.Node) (int, bool) {
	if isNull(value) {
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
	if isNull(value) {
		return "", true
	}
	if value.Kind != yaml.ScalarNode {
		return "", false
	}
	return value.Value, true
}

func isNull(n *yaml.Node) bool {
	return n == nil || (n.Kind == yaml.ScalarNode && n.ShortTag() == "!!null")
}

func resolveAlias(n *yaml.Node) *yaml.Node {
	for i := 0; n != nil && n.Kind == yaml.AliasNode && i < 100; i++ {
		n = n.Alias
	}
	return n
}

// yamlErrorLine splits "yaml: line 3: msg" into 3 and "msg".
func yamlErrorLine(err error) (int, string) {
	msg := strings.TrimPrefix(err.Error(), "yaml: ")
	rest, ok := strings.CutPrefix(msg, "line ")
	if !ok {
		return 0, msg
	}
	num, text, ok := strings.Cut(rest, ": ")
	n, convErr := strconv.Atoi(num)
	if !ok || convErr != nil {
		return 0, msg
	}
	return n, text
}
