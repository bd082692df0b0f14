package planview

import (
	"encoding/json"
	"io"
	"strings"

	"github.com/dawn-go/dawn/stream"
)

// Plain is the Renderer for logs and pipes: it only appends, one line per
// plan update ("plan: [x] a | [>] b | [ ] c", or "plan (researcher): ..." for
// a subagent) and per tool call, with the answer text as it streams.
type Plain struct {
	w       io.Writer
	buf     []byte
	midLine bool // the last text written did not end its line
}

// NewPlain returns a Plain renderer writing to w.
func NewPlain(w io.Writer) *Plain { return &Plain{w: w} }

// Event shows e.
func (p *Plain) Event(e stream.Event) error {
	p.buf = p.buf[:0]
	switch e.Type {
	case PlanUpdate, SubagentPlanUpdate:
		var d struct {
			Todos []Todo `json:"todos"`
		}
		if json.Unmarshal(e.Data, &d) != nil {
			return nil
		}
		label := "plan: "
		if e.Type == SubagentPlanUpdate {
			label = "plan (" + oneLine(subagentName(e.Data)) + "): "
		}
		p.line(label + PlainLine(d.Todos))
	case stream.TypeToolCall:
		if line, ok := ToolLine(e.Data); ok {
			p.line(line)
		}
	case stream.TypeChunk:
		if text := stream.ChunkText(e.Data); text != "" {
			p.buf = append(p.buf, text...)
			p.midLine = !strings.HasSuffix(text, "\n")
		}
	case stream.TypeAnswerRejected:
		p.line(RejectedLine)
	}
	return p.flush()
}

// Close ends the last line.
func (p *Plain) Close() error {
	p.buf = p.buf[:0]
	if p.midLine {
		p.buf = append(p.buf, '\n')
		p.midLine = false
	}
	return p.flush()
}

// line writes s on a line of its own.
func (p *Plain) line(s string) {
	if p.midLine {
		p.buf = append(p.buf, '\n')
	}
	p.buf = append(p.buf, s...)
	p.buf = append(p.buf, '\n')
	p.midLine = false
}

func (p *Plain) flush() error {
	if len(p.buf) == 0 {
		return nil
	}
	_, err := p.w.Write(p.buf)
	return err
}
