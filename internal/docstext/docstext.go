// Package docstext reads the user documentation, README.md and the pages
// under docs/, for the tests that check its examples against the code.
package docstext

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// order is the reading order of the manual's pages: the README's old
// section order, so examples that build on each other (a thread made in
// one, used in the next) still run in sequence. Pages not listed follow
// in name order.
var order = []string{
	"conventions.md", "planning.md", "tools.md", "harness.md", "plan-first.md",
	"approval.md", "http-api.md", "events.md", "clients.md", "models.md", "cli.md",
	"operations.md", "observability.md", "performance.md", "deploy.md",
	"architecture.md", "not-built.md", "changelog.md",
}

// Files returns README.md and every Markdown page under docs/ of the
// repository at root, in reading order.
func Files(root string) ([]string, error) {
	pages, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil {
		return nil, err
	}
	rank := func(p string) int {
		if i := slices.Index(order, filepath.Base(p)); i >= 0 {
			return i
		}
		return len(order)
	}
	slices.SortStableFunc(pages, func(a, b string) int {
		if d := rank(a) - rank(b); d != 0 {
			return d
		}
		return strings.Compare(a, b)
	})
	return append([]string{filepath.Join(root, "README.md")}, pages...), nil
}

// Read returns the text of every file Files lists, joined in order.
func Read(root string) (string, error) {
	files, err := Files(root)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			return "", err
		}
		b.Write(data)
		b.WriteString("\n")
	}
	return b.String(), nil
}

// Block is one fenced code block of the documentation.
type Block struct {
	// File and Line say where the block's opening fence is.
	File string
	Line int
	// Lang is the fence's info string ("sh", "go", ""), Text the body.
	Lang, Text string
	// Marker is the HTML comment on the line before the fence, such as
	// "readme:stream" or "not run: needs a Postgres server", or "".
	Marker string
}

// Blocks returns every fenced code block of the files Files lists, in
// reading order. Fences may be indented (inside a list item); the body is
// returned with that indent removed.
func Blocks(root string) ([]Block, error) {
	files, err := Files(root)
	if err != nil {
		return nil, err
	}
	var out []Block
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		out = append(out, blocksOf(f, string(data))...)
	}
	return out, nil
}

func blocksOf(file, text string) []Block {
	var out []Block
	var cur *Block
	var indent, prev string
	for i, line := range strings.Split(text, "\n") {
		trimmed := strings.TrimSpace(line)
		switch {
		case cur == nil && strings.HasPrefix(trimmed, "```"):
			indent = line[:len(line)-len(strings.TrimLeft(line, " "))]
			cur = &Block{File: file, Line: i + 1, Lang: strings.TrimPrefix(trimmed, "```"), Marker: marker(prev)}
		case cur != nil && trimmed == "```":
			out = append(out, *cur)
			cur = nil
		case cur != nil:
			cur.Text += strings.TrimPrefix(line, indent) + "\n"
		}
		prev = trimmed
	}
	return out
}

// marker returns the text of an HTML comment line, or "".
func marker(line string) string {
	if m, ok := strings.CutPrefix(line, "<!--"); ok {
		if m, ok := strings.CutSuffix(m, "-->"); ok {
			return strings.TrimSpace(m)
		}
	}
	return ""
}
