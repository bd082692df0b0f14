package planview

import (
	"io"
	"strconv"
	"strings"

	"github.com/dawn-go/dawn/stream"
)

// ANSI sequences the TTY renderer writes.
const (
	clearLine = "\x1b[2K" // erase the whole line the cursor is on
)

// cursorUp returns the sequence that moves the cursor up n lines.
func cursorUp(n int) string { return "\x1b[" + strconv.Itoa(n) + "A" }

// TTY is the Renderer for terminals. It prints the plan block, then streams
// the answer text below it. While the plan block is the last thing printed,
// a new plan update redraws it in place (cursor up, then each line cleared
// and rewritten); once text or a tool line follows it, the next update moves
// on and prints a fresh block below.
type TTY struct {
	w     io.Writer
	width int
	view  View
	buf   []byte
	// planLines is the height of the plan block when it is the last thing
	// printed, with the cursor at the start of the line below it; else 0.
	planLines int
	midLine   bool // the last text written did not end its line
	wrote     bool // anything has been written
}

// NewTTY returns a TTY renderer writing to w, a terminal width columns wide
// (0 for no limit). Plan lines are cut to width so that they never wrap,
// which would break the in-place redraw.
func NewTTY(w io.Writer, width int) *TTY { return &TTY{w: w, width: width} }

// View returns the plans seen so far.
func (t *TTY) View() *View { return &t.view }

// Event shows e.
func (t *TTY) Event(e stream.Event) error {
	t.buf = t.buf[:0]
	switch e.Type {
	case PlanUpdate, SubagentPlanUpdate:
		if t.view.Apply(e) {
			t.drawPlan()
		}
	case stream.TypeToolCall:
		if line, ok := ToolLine(e.Data); ok {
			t.line(clip(line, t.width))
		}
	case stream.TypeChunk:
		t.text(terminalText(stream.ChunkText(e.Data)))
	case stream.TypeAnswerRejected:
		t.line(clip(RejectedLine, t.width))
	}
	return t.flush()
}

// Close ends the last line.
func (t *TTY) Close() error {
	t.buf = t.buf[:0]
	t.endLine()
	return t.flush()
}

// drawPlan prints the plan block, over the previous one when that is the
// last thing on the screen.
func (t *TTY) drawPlan() {
	lines := t.view.Lines(t.width)
	if t.planLines > 0 {
		t.buf = append(t.buf, cursorUp(t.planLines)...)
		for _, l := range lines {
			t.buf = append(t.buf, clearLine...)
			t.buf = append(t.buf, l...)
			t.buf = append(t.buf, '\n')
		}
		if extra := t.planLines - len(lines); extra > 0 {
			for range extra {
				t.buf = append(t.buf, clearLine+"\n"...)
			}
			t.buf = append(t.buf, cursorUp(extra)...)
		}
	} else {
		t.endLine()
		if t.wrote {
			t.buf = append(t.buf, '\n')
		}
		for _, l := range lines {
			t.buf = append(t.buf, l...)
			t.buf = append(t.buf, '\n')
		}
	}
	t.planLines = len(lines)
	t.wrote = t.wrote || len(lines) > 0
}

// text streams answer text below whatever came before.
func (t *TTY) text(s string) {
	if s == "" {
		return
	}
	if t.planLines > 0 {
		t.buf = append(t.buf, '\n')
		t.planLines = 0
	}
	t.buf = append(t.buf, s...)
	t.midLine = !strings.HasSuffix(s, "\n")
	t.wrote = true
}

// line prints s on a line of its own.
func (t *TTY) line(s string) {
	t.endLine()
	t.buf = append(t.buf, s...)
	t.buf = append(t.buf, '\n')
	t.planLines = 0
	t.wrote = true
}

// endLine breaks the line if text left it open.
func (t *TTY) endLine() {
	if t.midLine {
		t.buf = append(t.buf, '\n')
		t.midLine = false
	}
}

func (t *TTY) flush() error {
	if len(t.buf) == 0 {
		return nil
	}
	_, err := t.w.Write(t.buf)
	return err
}

// terminalText drops control characters other than line breaks and tabs
// from model text, so that it cannot move the cursor or restyle the
// terminal under the plan block.
func terminalText(s string) string {
	for _, r := range s {
		if isControl(r) && r != '\n' && r != '\t' {
			return strings.Map(func(r rune) rune {
				if isControl(r) && r != '\n' && r != '\t' {
					return -1
				}
				return r
			}, s)
		}
	}
	return s
}
