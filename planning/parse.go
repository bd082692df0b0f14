package planning

import (
	"bytes"
	"fmt"
	"slices"
	"strings"

	"github.com/dawn-go/dawn/harness"
	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/extension"
	extast "github.com/yuin/goldmark/extension/ast"
	"github.com/yuin/goldmark/text"
)

// markdown parses plan.md with GitHub's task-list extension. Its parser keeps
// no state between calls, so one instance serves every goroutine.
var markdown = goldmark.New(goldmark.WithExtensions(extension.TaskList))

var bom = []byte("\xef\xbb\xbf")

// Parse returns the task-list items of a Markdown document in document order.
// Nested items are flattened, a parent before its children. "[ ]" is Pending;
// "[x]" and "[X]" are Completed. An item's content is the raw source text of
// its own first block (the line with the checkbox plus any lazy continuation
// lines, joined by single spaces), without the checkbox and trimmed; inline
// markup is kept as written, so "- [ ] Check **account** context" gives
// "Check **account** context". Nested items' text is not part of their
// parent's content. Items with no text, list items without a checkbox, and
// everything else in the document (including code blocks) are ignored.
//
// Parse never returns nil: a document without task items gives an empty list.
func Parse(src []byte) []Todo {
	return parseDoc(src, false).todos
}

// postconditionHeadings name the sections whose checklist items are
// postconditions rather than plan items, in a plan.md with enforce: true.
var postconditionHeadings = []string{"done when", "postconditions", "acceptance criteria"}

// parsed is a parsed plan.md body: its todos and postconditions, and the
// verifier line of each ("" for none), by index.
type parsed struct {
	todos                  []Todo
	post                   []string
	todoVerify, postVerify []string
}

// parseDoc is Parse; with sections, task items under a "Done when" heading
// (or "Postconditions", "Acceptance criteria"; any level, up to the next
// heading of the same or a higher level) are returned as postconditions
// instead of todos, and each item's verifier (a nested "- verify: …"
// bullet without a checkbox) is kept.
func parseDoc(src []byte, sections bool) parsed {
	out := parsed{todos: []Todo{}}
	src = normalize(src)
	if len(src) == 0 {
		return out
	}
	doc := markdown.Parser().Parse(text.NewReader(src))
	inPost, postLevel := false, 0
	_ = ast.Walk(doc, func(n ast.Node, entering bool) (ast.WalkStatus, error) {
		if !entering {
			return ast.WalkContinue, nil
		}
		if h, ok := n.(*ast.Heading); ok && sections {
			if inPost && h.Level <= postLevel {
				inPost = false
			}
			title := strings.ToLower(strings.TrimSpace(itemText(h, src)))
			if slices.Contains(postconditionHeadings, strings.TrimRight(title, ":")) {
				inPost, postLevel = true, h.Level
			}
			return ast.WalkSkipChildren, nil
		}
		box, ok := n.(*extast.TaskCheckBox)
		if !ok {
			return ast.WalkContinue, nil
		}
		content := itemText(box.Parent(), src)
		if content == "" {
			return ast.WalkContinue, nil
		}
		verify := ""
		if sections {
			verify = verifyLine(box.Parent(), src)
		}
		if inPost {
			out.post, out.postVerify = append(out.post, content), append(out.postVerify, verify)
			return ast.WalkContinue, nil
		}
		status := Pending
		if box.IsChecked {
			status = Completed
		}
		out.todos, out.todoVerify = append(out.todos, Todo{Content: content, Status: status}), append(out.todoVerify, verify)
		return ast.WalkContinue, nil
	})
	return out
}

// verifyLine is the text after "verify:" of the first bullet without a
// checkbox nested under the task item whose first block is block, or "".
func verifyLine(block ast.Node, src []byte) string {
	if block == nil || block.Parent() == nil {
		return ""
	}
	for list := block.Parent().FirstChild(); list != nil; list = list.NextSibling() {
		if _, ok := list.(*ast.List); !ok {
			continue
		}
		for li := list.FirstChild(); li != nil; li = li.NextSibling() {
			first := li.FirstChild()
			if first == nil {
				continue
			}
			if _, box := first.FirstChild().(*extast.TaskCheckBox); box {
				continue
			}
			if rest, ok := strings.CutPrefix(itemText(first, src), harness.VerifyPrefix); ok {
				return strings.TrimSpace(rest)
			}
		}
	}
	return ""
}

// normalize drops a UTF-8 byte order mark and turns CRLF and lone CR line
// endings into LF. It copies src only when it has a CR.
func normalize(src []byte) []byte {
	src = bytes.TrimPrefix(src, bom)
	if bytes.IndexByte(src, '\r') < 0 {
		return src
	}
	src = bytes.ReplaceAll(src, []byte("\r\n"), []byte("\n"))
	return bytes.ReplaceAll(src, []byte("\r"), []byte("\n"))
}

// itemText is the source text of block, the first block of a task-list item,
// without its leading checkbox. The task-list parser only makes a checkbox
// when the block's first line starts with "[ ]", "[x]" or "[X]", so the first
// three bytes after any indentation are the checkbox.
func itemText(block ast.Node, src []byte) string {
	if block == nil {
		return ""
	}
	lines := block.Lines()
	var b strings.Builder
	for i := range lines.Len() {
		seg := lines.At(i)
		line := bytes.TrimSpace(seg.Value(src))
		if i == 0 && len(line) >= 3 && line[0] == '[' && line[2] == ']' {
			line = bytes.TrimSpace(line[3:])
		}
		if len(line) == 0 {
			continue
		}
		if b.Len() > 0 {
			b.WriteByte(' ')
		}
		b.Write(line)
	}
	return b.String()
}

// LoadSeed reads the plan.md at path and returns its seed: the task-list
// items, without front matter (and, with enforce: true, without the
// postconditions). A file larger than MaxSeedBytes is not parsed: the seed is
// empty and warning says why, naming the file, its size and the limit;
// planning stays on. The file is only read, never written.
func LoadSeed(path string) (todos []Todo, warning string, err error) {
	f, err := LoadFile(path)
	return f.Seed, f.Warning, err
}

func tooBig(path string, size int64) string {
	return fmt.Sprintf("%s is %d bytes, over the %d byte (64 KiB) limit for a plan seed, so it was not parsed and the plan starts empty; shorten the file to seed the plan", path, size, MaxSeedBytes)
}
