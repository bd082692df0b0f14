package contextwindow

import (
	"context"
	"errors"
	"fmt"
	"unicode/utf8"

	"github.com/dawn-go/dawn/capabilities"
	"github.com/google/uuid"
)

// ReadToolName is the tool that pages through a stored tool output.
const ReadToolName = "readToolOutput"

// Preview bounds: the head and the tail of a stored output the model sees.
const (
	maxHead = 4096
	maxTail = 2048
)

// offload stores tool outputs over max bytes with the thread.
type offload struct{ max int }

// toolOutput stores an output over the limit and shows the model a preview
// with its id (capabilities.Hooks.ToolOutput). An output it cannot store
// is left to the runtime, which cuts it.
func (o offload) toolOutput(ctx context.Context, ev capabilities.ToolEvent, text string) (string, bool) {
	if len(text) <= o.max || ev.Name == ReadToolName {
		return "", false
	}
	inv, ok := capabilities.InvocationFrom(ctx)
	if !ok || inv.Outputs == nil {
		return "", false
	}
	id := "out_" + uuid.NewString()
	if err := inv.Outputs.Put(ctx, id, ev.Name, []byte(text)); err != nil {
		return "", false
	}
	return o.preview(id, ev.Name, text), true
}

// preview is what the model sees of output text stored under id: its size,
// how to read it, its head and its tail.
func (o offload) preview(id, tool, text string) string {
	head := cutUTF8(text, min(o.max/2, maxHead))
	tail := tailUTF8(text, min(o.max/4, maxTail))
	return fmt.Sprintf("[The output of %s is %d bytes, more than the %d shown whole; it is stored as %q. Here are its first %d and last %d bytes. Read the rest with %s {\"id\": %q, \"offset\": %d, \"limit\": %d}.]\n%s\n[… %d bytes not shown …]\n%s",
		tool, len(text), o.max, id, len(head), len(tail), ReadToolName, id, len(head), o.max, head, len(text)-len(head)-len(tail), tail)
}

type readIn struct {
	ID     string `json:"id" jsonschema:"the id of the stored output, as its preview gives it"`
	Offset int64  `json:"offset,omitempty" jsonschema:"the byte to start from, 0 for the beginning"`
	Limit  int64  `json:"limit,omitempty" jsonschema:"how many bytes to read at most"`
}

// readTool pages through a stored output, at most max bytes a call.
func (o offload) readTool() capabilities.Tool {
	desc := fmt.Sprintf("Read part of a large tool output that was stored instead of shown whole: the bytes from offset on, at most limit (up to %d) a call, cut to whole characters (at least one). Its preview gives the id and the total size.", o.max)
	return capabilities.Func(ReadToolName, desc, func(ctx context.Context, in readIn) (string, error) {
		inv, ok := capabilities.InvocationFrom(ctx)
		if !ok || inv.Outputs == nil {
			return "", errors.New("stored tool outputs need the app's store, which only a run lends its tools")
		}
		limit := in.Limit
		if limit <= 0 || limit > int64(o.max) {
			limit = int64(o.max)
		}
		// A page holds whole characters: a limit shorter than the one at
		// offset would give an empty page and send the reader back to
		// the same offset for ever.
		limit = max(limit, utf8.UTFMax)
		if in.Offset < 0 {
			return "", fmt.Errorf("offset must be 0 or more, not %d", in.Offset)
		}
		page, found, err := inv.Outputs.Read(ctx, in.ID, in.Offset, limit)
		switch {
		case err != nil:
			return "", err
		case !found:
			return "", fmt.Errorf("this thread has no stored output %q; use the id a preview gave", in.ID)
		case in.Offset >= page.Total && page.Total > 0:
			return "", fmt.Errorf("offset %d is past the end of output %q, which is %d bytes", in.Offset, in.ID, page.Total)
		}
		return pageText(in.ID, page, in.Offset), nil
	})
}

// pageText is a page of stored output id read from offset, cut to whole
// characters, with a line that says where it is.
func pageText(id string, page capabilities.ToolOutputPage, offset int64) string {
	data := page.Data
	skip := 0
	for skip < len(data) && skip < 3 && !utf8.RuneStart(data[skip]) {
		skip++
	}
	data = data[skip:]
	end := len(data)
	if offset+int64(skip)+int64(end) < page.Total {
		for end > 0 && !utf8.FullRune(data[lastStart(data[:end]):end]) {
			end = lastStart(data[:end])
		}
	}
	from := offset + int64(skip)
	to := from + int64(end)
	where := "the end"
	if to < page.Total {
		where = fmt.Sprintf("next offset %d", to)
	}
	return fmt.Sprintf("[bytes %d to %d of %d of %q; %s]\n%s", from, to, page.Total, id, where, data[:end])
}

// lastStart is the index of the last character start of b, or 0.
func lastStart(b []byte) int {
	for i := len(b) - 1; i > 0; i-- {
		if utf8.RuneStart(b[i]) {
			return i
		}
	}
	return 0
}

// cutUTF8 is s cut to at most n bytes, on a character boundary.
func cutUTF8(s string, n int) string {
	if n <= 0 {
		return ""
	}
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// tailUTF8 is the last at most n bytes of s, starting on a character.
func tailUTF8(s string, n int) string {
	if n <= 0 {
		return ""
	}
	if len(s) <= n {
		return s
	}
	i := len(s) - n
	for i < len(s) && !utf8.RuneStart(s[i]) {
		i++
	}
	return s[i:]
}
