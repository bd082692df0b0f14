// Package yamldoc reads the small YAML documents Dawn's users write by hand:
// front matter at the top of a Markdown file (agent.md, plan.md), state.yaml
// and dawn.yaml. SplitFrontMatter cuts the front matter off, Mapping parses
// a document down to its top-level mapping, and Pairs walks a mapping's
// keys in order, so that every reader reports problems with its own words
// and the line of the key at fault.
package yamldoc

import (
	"bytes"
	"errors"
	"fmt"
	"iter"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"
)

// ErrUnclosed is returned by SplitFrontMatter for a file whose first line
// opens front matter that no later line closes.
var ErrUnclosed = errors.New(`front matter starts with "---" but has no closing "---" line: add one after the last key, or remove the first line if the file has no front matter`)

// SplitFrontMatter separates the YAML front matter at the top of a Markdown
// file from its body. Front matter is the lines between a first line "---"
// and the next line "---" (trailing spaces and tabs allowed on both). data
// must already have "\n" line endings. front is nil when the file has no
// front matter; it is empty, not nil, for an empty block.
func SplitFrontMatter(data []byte) (front, body []byte, err error) {
	first, rest, found := bytes.Cut(data, []byte("\n"))
	if !isFence(first) {
		return nil, data, nil
	}
	if !found {
		return nil, nil, ErrUnclosed
	}
	for offset := 0; offset <= len(rest); {
		line, _, more := bytes.Cut(rest[offset:], []byte("\n"))
		if isFence(line) {
			end := offset + len(line)
			if more {
				end++
			}
			return rest[:offset:offset], rest[end:], nil
		}
		if !more {
			break
		}
		offset += len(line) + 1
	}
	return nil, nil, ErrUnclosed
}

func isFence(line []byte) bool {
	return string(bytes.TrimRight(line, " \t")) == "---"
}

// SyntaxError is a document that is not valid YAML. Line is the document's
// line yaml.v3 names (from 1), or 0 when it names none.
type SyntaxError struct {
	Line int
	Msg  string
}

func (e *SyntaxError) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("yaml: line %d: %s", e.Line, e.Msg)
	}
	return "yaml: " + e.Msg
}

// NotMappingError is a document whose top level is not a mapping of keys.
type NotMappingError struct{ Line int }

func (e *NotMappingError) Error() string {
	return fmt.Sprintf("line %d: expected a mapping of keys", e.Line)
}

// Mapping parses src as one YAML document and returns its top-level
// mapping, aliases resolved. An empty document, or one that is only null,
// gives nil and no error. A document that is not YAML is a *SyntaxError and
// one whose top level is not a mapping a *NotMappingError. A panic in the
// YAML library is returned as a *SyntaxError, so a hand-written file never
// takes down `dawn check` or the server.
func Mapping(src []byte) (root *yaml.Node, err error) {
	defer func() {
		if r := recover(); r != nil {
			root, err = nil, &SyntaxError{Msg: fmt.Sprintf("the document could not be parsed (%v)", r)}
		}
	}()
	var doc yaml.Node
	if err := yaml.Unmarshal(src, &doc); err != nil {
		return nil, syntaxError(err)
	}
	if len(doc.Content) == 0 {
		return nil, nil
	}
	root = Resolve(doc.Content[0])
	if IsNull(root) {
		return nil, nil
	}
	if root.Kind != yaml.MappingNode {
		return nil, &NotMappingError{Line: root.Line}
	}
	return root, nil
}

// syntaxError splits yaml.v3's "yaml: line 3: msg" into its line and text.
func syntaxError(err error) *SyntaxError {
	msg := strings.TrimPrefix(err.Error(), "yaml: ")
	rest, ok := strings.CutPrefix(msg, "line ")
	if !ok {
		return &SyntaxError{Msg: msg}
	}
	num, text, ok := strings.Cut(rest, ": ")
	n, convErr := strconv.Atoi(num)
	if !ok || convErr != nil {
		return &SyntaxError{Msg: msg}
	}
	return &SyntaxError{Line: n, Msg: text}
}

// Pairs yields the keys and values of the mapping m in document order, each
// value with its aliases resolved. A nil m yields nothing.
func Pairs(m *yaml.Node) iter.Seq2[*yaml.Node, *yaml.Node] {
	return func(yield func(*yaml.Node, *yaml.Node) bool) {
		if m == nil {
			return
		}
		for i := 0; i+1 < len(m.Content); i += 2 {
			if !yield(m.Content[i], Resolve(m.Content[i+1])) {
				return
			}
		}
	}
}

// Resolve follows an alias node to the node it names.
func Resolve(n *yaml.Node) *yaml.Node {
	for i := 0; n != nil && n.Kind == yaml.AliasNode && i < 100; i++ {
		n = n.Alias
	}
	return n
}

// IsNull reports whether n is absent or YAML's null.
func IsNull(n *yaml.Node) bool {
	return n == nil || (n.Kind == yaml.ScalarNode && n.ShortTag() == "!!null")
}

// Temperature reads a sampling temperature, a number from 0 to 2; null is
// unset (nil). ok is false for anything else.
func Temperature(value *yaml.Node) (t *float64, ok bool) {
	if IsNull(value) {
		return nil, true
	}
	if value.Kind != yaml.ScalarNode || (value.ShortTag() != "!!int" && value.ShortTag() != "!!float") {
		return nil, false
	}
	var f float64
	if err := value.Decode(&f); err != nil || !(f >= 0 && f <= 2) {
		return nil, false
	}
	return &f, true
}

// Int reads a whole number. ok is false for anything else, a float such
// as 1.5 included (yaml.v3 would decode it into an int truncated).
func Int(n *yaml.Node) (v int, ok bool) {
	n = Resolve(n)
	if n == nil || n.Kind != yaml.ScalarNode || n.ShortTag() != "!!int" {
		return 0, false
	}
	return v, n.Decode(&v) == nil
}

// Duration reads a positive duration written as Go writes them ("30s",
// "2m", "1m30s"). The error says what to write; the caller names the key.
func Duration(n *yaml.Node) (time.Duration, error) {
	if n.Kind != yaml.ScalarNode {
		return 0, fmt.Errorf("must be a duration such as 30s or 2m")
	}
	d, err := time.ParseDuration(n.Value)
	if err != nil || d <= 0 {
		return 0, fmt.Errorf("must be a positive duration such as 30s or 2m, not %q", n.Value)
	}
	return d, nil
}
