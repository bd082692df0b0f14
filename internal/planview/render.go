package planview

import (
	"strconv"
	"strings"
	"unicode/utf8"
)

// Render returns the plan block for todos: a header such as
// "Plan (2/4 done)" and one line per item, each ending in "\n". Items are
// indented by two spaces and marked with Symbol. With width > 0 every line
// is cut to width runes, ending in "…", so the terminal never wraps it.
func Render(todos []Todo, width int) string {
	var b strings.Builder
	for _, line := range appendPlan(nil, todos, width) {
		b.WriteString(line)
		b.WriteByte('\n')
	}
	return b.String()
}

// Header is the first line of a plan block: "Plan (2/4 done)", or
// "Plan (empty)" for a plan with no items.
func Header(todos []Todo) string {
	if len(todos) == 0 {
		return "Plan (empty)"
	}
	return "Plan (" + strconv.Itoa(CountDone(todos)) + "/" + strconv.Itoa(len(todos)) + " done)"
}

// PlainLine returns todos on one line for logs and pipes:
// "[x] a | [>] b | [ ] c", or "(empty)".
func PlainLine(todos []Todo) string {
	if len(todos) == 0 {
		return "(empty)"
	}
	var b strings.Builder
	for i, t := range todos {
		if i > 0 {
			b.WriteString(" | ")
		}
		b.WriteString(Box(t.Status))
		b.WriteByte(' ')
		b.WriteString(oneLine(t.Content))
	}
	return b.String()
}

// appendPlan appends the lines of a top-level plan block, without line ends.
func appendPlan(lines []string, todos []Todo, width int) []string {
	lines = append(lines, clip(Header(todos), width))
	return appendItems(lines, todos, "  ", width)
}

// appendItems appends one line per item, each starting with indent.
func appendItems(lines []string, todos []Todo, indent string, width int) []string {
	for _, t := range todos {
		lines = append(lines, clip(indent+Symbol(t.Status)+" "+oneLine(t.Content), width))
	}
	return lines
}

// oneLine returns s trimmed, with every control character (line breaks,
// escape sequences) replaced by a space, so that an item is exactly one line
// and cannot move the cursor.
func oneLine(s string) string {
	s = strings.TrimSpace(s)
	clean := true
	for _, r := range s {
		if isControl(r) {
			clean = false
			break
		}
	}
	if clean {
		return s
	}
	return strings.Map(func(r rune) rune {
		if isControl(r) {
			return ' '
		}
		return r
	}, s)
}

// isControl reports whether r is a C0 or C1 control character or DEL.
func isControl(r rune) bool {
	return r < 0x20 || r == 0x7f || (r >= 0x80 && r <= 0x9f)
}

// clip cuts s to width runes, ending in "…" (after no space) when it had to
// cut. A width of zero or less means no limit.
func clip(s string, width int) string {
	if width <= 0 || utf8.RuneCountInString(s) <= width {
		return s
	}
	n := 0
	for i := range s {
		if n == width-1 {
			return strings.TrimRight(s[:i], " ") + "…"
		}
		n++
	}
	return s
}
