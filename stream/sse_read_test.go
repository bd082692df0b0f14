package stream_test

import (
	"errors"
	"fmt"
	"io"
	"reflect"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/dawn-go/dawn/stream"
)

// readAll reads events until an error and returns them with the error.
func readAll(r *stream.Reader) ([]stream.Event, error) {
	var events []stream.Event
	for {
		e, err := r.Next()
		if err != nil {
			return events, err
		}
		events = append(events, e)
	}
}

func ev(id int64, typ, data string) stream.Event {
	return stream.Event{ID: id, Type: typ, Data: []byte(data)}
}

func TestReader(t *testing.T) {
	tests := []struct {
		name   string
		in     string
		want   []stream.Event
		lastID string
	}{
		{
			name:   "LF",
			in:     "id: 1\nevent: chunk\ndata: {}\n\nid: 2\nevent: done\ndata: {\"a\":1}\n\n",
			want:   []stream.Event{ev(1, "chunk", "{}"), ev(2, "done", `{"a":1}`)},
			lastID: "2",
		},
		{
			name:   "CRLF",
			in:     "id: 1\r\nevent: chunk\r\ndata: x\r\n\r\ndata: y\r\n\r\n",
			want:   []stream.Event{ev(1, "chunk", "x"), ev(0, "message", "y")},
			lastID: "1",
		},
		{
			name: "CR only",
			in:   "event: a\rdata: x\r\rdata: y\r\r",
			want: []stream.Event{ev(0, "a", "x"), ev(0, "message", "y")},
		},
		{
			name: "mixed line ends",
			in:   "data: a\r\ndata: b\rdata: c\n\r\n",
			want: []stream.Event{ev(0, "message", "a\nb\nc")},
		},
		{
			name: "comments are ignored",
			in:   ": ping\n\n:\ndata: x\n: inside\n\n",
			want: []stream.Event{ev(0, "message", "x")},
		},
		{
			name: "multi-line data joined with LF",
			in:   "data: one\ndata:two\ndata:  three\ndata\n\n",
			want: []stream.Event{ev(0, "message", "one\ntwo\n three\n")},
		},
		{
			name: "no trailing blank line at EOF: not dispatched",
			in:   "data: a\n\ndata: b\n",
			want: []stream.Event{ev(0, "message", "a")},
		},
		{
			name: "last line without terminator is discarded",
			in:   "data: a\n\ndata: b",
			want: []stream.Event{ev(0, "message", "a")},
		},
		{
			name: "BOM at stream start is stripped",
			in:   "\xef\xbb\xbfdata: a\n\n",
			want: []stream.Event{ev(0, "message", "a")},
		},
		{
			name: "only one BOM is stripped",
			in:   "\xef\xbb\xbf\xef\xbb\xbfdata: a\n\ndata: b\n\n",
			want: []stream.Event{ev(0, "message", "b")},
		},
		{
			name: "event without data is not dispatched and its type is dropped",
			in:   "event: a\n\ndata: x\n\n",
			want: []stream.Event{ev(0, "message", "x")},
		},
		{
			name: "empty data line dispatches an empty event",
			in:   "data:\n\n",
			want: []stream.Event{ev(0, "message", "")},
		},
		{
			name: "retry and unknown fields are ignored",
			in:   "retry: 100\nfoo: bar\ndata: x\n\n",
			want: []stream.Event{ev(0, "message", "x")},
		},
		{
			name:   "non-numeric id keeps LastID, event ID 0",
			in:     "id: abc\ndata: x\n\n",
			want:   []stream.Event{ev(0, "message", "x")},
			lastID: "abc",
		},
		{
			name:   "id with NUL is ignored",
			in:     "id: 5\ndata: x\n\nid: 6\x007\ndata: y\n\n",
			want:   []stream.Event{ev(5, "message", "x"), ev(0, "message", "y")},
			lastID: "5",
		},
		{
			name:   "id on an undispatched event still sets LastID",
			in:     "data: x\n\nid: 9\n\n",
			want:   []stream.Event{ev(0, "message", "x")},
			lastID: "9",
		},
		{
			name:   "empty id resets LastID",
			in:     "id: 3\ndata: x\n\nid\ndata: y\n\n",
			want:   []stream.Event{ev(3, "message", "x"), ev(0, "message", "y")},
			lastID: "",
		},
		{
			name: "id overflowing int64 is not numeric",
			in:   "id: 99999999999999999999\ndata: x\n\n",
			want: []stream.Event{ev(0, "message", "x")}, lastID: "99999999999999999999",
		},
		{
			name: "only one space after the colon is stripped",
			in:   "event:  spaced\ndata:x\n\n",
			want: []stream.Event{ev(0, " spaced", "x")},
		},
		{
			name: "empty stream",
			in:   "",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// Reading one byte at a time also splits CRLF across reads.
			for _, src := range []io.Reader{strings.NewReader(tt.in), iotest.OneByteReader(strings.NewReader(tt.in))} {
				r := stream.NewReader(src)
				got, err := readAll(r)
				if err != io.EOF {
					t.Fatalf("error = %v, want io.EOF", err)
				}
				if !reflect.DeepEqual(normalize(got), normalize(tt.want)) {
					t.Errorf("events:\n got %q\nwant %q", show(got), show(tt.want))
				}
				if r.LastID != tt.lastID {
					t.Errorf("LastID = %q, want %q", r.LastID, tt.lastID)
				}
				if _, err := r.Next(); err != io.EOF {
					t.Errorf("Next after EOF = %v, want io.EOF again", err)
				}
			}
		})
	}
}

// show renders events for failure messages.
func show(events []stream.Event) []string {
	out := make([]string, len(events))
	for i, e := range events {
		out[i] = fmt.Sprintf("%d|%s|%s", e.ID, e.Type, e.Data)
	}
	return out
}

// normalize turns nil and empty Data alike for comparison.
func normalize(events []stream.Event) []stream.Event {
	out := make([]stream.Event, len(events))
	for i, e := range events {
		if len(e.Data) == 0 {
			e.Data = []byte{}
		}
		out[i] = e
	}
	return out
}

func TestReaderLongLine(t *testing.T) {
	const size = 16 << 20
	payload := strings.Repeat("x", size)
	r := stream.NewReader(strings.NewReader("event: big\ndata: \"" + payload + "\"\n\ndata: after\n\n"))
	e, err := r.Next()
	if err != nil {
		t.Fatal(err)
	}
	if e.Type != "big" || len(e.Data) != size+2 {
		t.Fatalf("got type %q with %d data bytes, want big with %d", e.Type, len(e.Data), size+2)
	}
	e, err = r.Next()
	if err != nil || string(e.Data) != "after" {
		t.Fatalf("event after the long line = %q, %v", e.Data, err)
	}
}

func TestReaderLineTooLong(t *testing.T) {
	r := stream.NewReader(io.MultiReader(strings.NewReader("data: "), infiniteX{}))
	if _, err := r.Next(); !errors.Is(err, stream.ErrLineTooLong) {
		t.Fatalf("error = %v, want ErrLineTooLong", err)
	}
}

type infiniteX struct{}

func (infiniteX) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = 'x'
	}
	return len(p), nil
}

func TestReaderSourceError(t *testing.T) {
	boom := errors.New("connection reset")
	r := stream.NewReader(io.MultiReader(strings.NewReader("data: a\n\ndata: b\n"), iotest.ErrReader(boom)))
	got, err := readAll(r)
	if err != boom {
		t.Fatalf("error = %v, want %v", err, boom)
	}
	if len(got) != 1 || string(got[0].Data) != "a" {
		t.Fatalf("events before the error = %q", show(got))
	}
}

type zeroReader struct{}

func (zeroReader) Read([]byte) (int, error) { return 0, nil }

func TestReaderNoProgress(t *testing.T) {
	if _, err := stream.NewReader(zeroReader{}).Next(); err != io.ErrNoProgress {
		t.Fatalf("error = %v, want io.ErrNoProgress", err)
	}
}
