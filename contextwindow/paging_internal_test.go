package contextwindow

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/dawn-go/dawn/capabilities"
)

// memOutputs keeps tool outputs in memory (capabilities.ToolOutputStore).
type memOutputs map[string][]byte

func (m memOutputs) Put(_ context.Context, id, _ string, text []byte) error {
	m[id] = text
	return nil
}

func (m memOutputs) Read(_ context.Context, id string, offset, limit int64) (capabilities.ToolOutputPage, bool, error) {
	data, ok := m[id]
	if !ok {
		return capabilities.ToolOutputPage{}, false, nil
	}
	from := min(offset, int64(len(data)))
	to := min(from+limit, int64(len(data)))
	return capabilities.ToolOutputPage{Tool: "t", Data: data[from:to], Total: int64(len(data))}, true, nil
}

var pageHead = regexp.MustCompile(`^\[bytes (\d+) to (\d+) of (\d+) of "[^"]+"; (?:next offset (\d+)|the end)\]\n`)

// readPage calls readToolOutput and returns the page's text and the
// offset it gives for the next page, -1 at the end.
func readPage(t *testing.T, tool capabilities.Tool, outs memOutputs, id string, offset, limit int64) (string, int64) {
	t.Helper()
	inv := capabilities.Invocation{Outputs: outs, Input: json.RawMessage(fmt.Sprintf(`{"id":%q,"offset":%d,"limit":%d}`, id, offset, limit))}
	res, err := tool.Call(capabilities.WithInvocation(context.Background(), inv), inv)
	if err != nil {
		t.Fatalf("offset %d limit %d: %v", offset, limit, err)
	}
	var text string
	if err := json.Unmarshal(res.Output, &text); err != nil {
		t.Fatal(err)
	}
	m := pageHead.FindStringSubmatch(text)
	if m == nil {
		t.Fatalf("offset %d limit %d: no page line in %q", offset, limit, text)
	}
	if m[4] == "" {
		return text[len(m[0]):], -1
	}
	next, _ := strconv.ParseInt(m[4], 10, 64)
	return text[len(m[0]):], next
}

// TestReadToolOutputAlwaysMoves: following readToolOutput's next offset
// from any offset, with any limit, reaches the end of the output, and the
// pages read from a character's start put the output back together. A
// limit shorter than the character at the offset gave an empty page whose
// next offset was the same offset.
func TestReadToolOutputAlwaysMoves(t *testing.T) {
	text := "aé€😀b\xffc€"
	outs := memOutputs{"out_1": []byte(text)}
	tool := offload{max: 1 << 10}.readTool()
	for limit := int64(1); limit <= 6; limit++ {
		for start := int64(0); start < int64(len(text)); start++ {
			var got strings.Builder
			offset := start
			for calls := 0; offset >= 0; calls++ {
				if calls > len(text) {
					t.Fatalf("limit %d from %d: no end after %d calls; stuck at offset %d", limit, start, calls, offset)
				}
				page, next := readPage(t, tool, outs, "out_1", offset, limit)
				if next >= 0 && next <= offset {
					t.Fatalf("limit %d at offset %d: page %q gives next offset %d, no progress", limit, offset, page, next)
				}
				got.WriteString(page)
				offset = next
			}
			// The tool's answer is JSON text, which carries the invalid
			// byte as U+FFFD.
			if utf8.RuneStart(text[start]) && got.String() != strings.ToValidUTF8(text[start:], "\uFFFD") {
				t.Fatalf("limit %d from %d: read back %q, want %q", limit, start, got.String(), text[start:])
			}
		}
	}
}
