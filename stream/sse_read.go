package stream

import (
	"bytes"
	"errors"
	"io"
	"strconv"
)

// MaxLineSize is the longest line, in bytes, that a Reader accepts. A longer
// line ends the stream with ErrLineTooLong.
const MaxLineSize = 64 << 20

// ErrLineTooLong is returned by Reader.Next when a line of the stream is
// MaxLineSize bytes or longer.
var ErrLineTooLong = errors.New("stream: SSE line is longer than 64 MiB; the server must send shorter events")

// Reader decodes a text/event-stream following the WHATWG rules for
// interpreting an event stream:
//   - lines end in "\n", "\r\n" or "\r"; one leading byte order mark is skipped;
//   - lines starting with ":" are comments;
//   - "field: value" with one space after the colon stripped, or a bare
//     "field" with an empty value;
//   - "event" sets the type (default "message"), "data" lines are joined with
//     "\n", "id" sets the last event ID unless it contains NUL, and "retry"
//     and unknown fields are ignored;
//   - a blank line dispatches the event, unless no data line was seen;
//   - an event cut off by the end of the stream is discarded.
//
// Bytes are passed through as they are, without UTF-8 replacement.
type Reader struct {
	// LastID is the stream's last event ID as the WHATWG rules keep it: the
	// value of the latest id field, kept across events until another id
	// field changes it. A client that reconnects sends it as Last-Event-ID.
	LastID string

	src    io.Reader
	buf    []byte // buf[start:end] is read but not yet parsed
	start  int
	end    int
	err    error // sticky error from src, or ErrLineTooLong
	begun  bool  // the byte order mark check has run
	skipLF bool  // the last line ended in "\r": a "\n" right after belongs to it

	data     []byte // data lines, each followed by "\n"
	typ      []byte
	id       int64  // this event's own id field, when numeric
	lastType string // reused when the next event has the same type
}

// NewReader returns a Reader that decodes events from r.
func NewReader(r io.Reader) *Reader {
	return &Reader{src: r, buf: make([]byte, 4096)}
}

// Next returns the next event of the stream. The event's ID is its own id
// field parsed as a decimal int64, or 0 when it has none or it is not a
// number (LastID keeps the raw value). Data holds the data lines as sent,
// which is JSON for Dawn's streams. At the end of the stream Next returns
// io.EOF, and after any error it keeps returning that error.
func (r *Reader) Next() (Event, error) {
	for {
		line, err := r.readLine()
		if err != nil {
			r.data, r.typ, r.id = r.data[:0], r.typ[:0], 0
			return Event{}, err
		}
		if len(line) == 0 {
			if e, ok := r.dispatch(); ok {
				return e, nil
			}
			continue
		}
		r.field(line)
	}
}

// field processes one non-blank line.
func (r *Reader) field(line []byte) {
	if line[0] == ':' {
		return
	}
	name, value := line, []byte(nil)
	if i := bytes.IndexByte(line, ':'); i >= 0 {
		name, value = line[:i], line[i+1:]
		if len(value) > 0 && value[0] == ' ' {
			value = value[1:]
		}
	}
	switch string(name) {
	case "event":
		r.typ = append(r.typ[:0], value...)
	case "data":
		r.data = append(r.data, value...)
		r.data = append(r.data, '\n')
	case "id":
		if bytes.IndexByte(value, 0) >= 0 {
			return
		}
		if string(value) != r.LastID {
			r.LastID = string(value)
		}
		r.id = parseEventID(r.LastID)
	}
}

// parseEventID returns id as an int64, or 0 when it is not a decimal number.
func parseEventID(id string) int64 {
	if id == "" || len(id) > 20 {
		return 0
	}
	for i := 0; i < len(id); i++ {
		if !isDigit(id[i]) && (i > 0 || id[i] != '-') {
			return 0
		}
	}
	n, err := strconv.ParseInt(id, 10, 64)
	if err != nil {
		return 0
	}
	return n
}

// dispatch turns the buffered fields into an event, and reports false when
// there is none to dispatch because no data line was seen.
func (r *Reader) dispatch() (Event, bool) {
	e := Event{ID: r.id}
	ok := len(r.data) > 0
	if ok {
		e.Data = bytes.Clone(r.data[:len(r.data)-1])
		switch {
		case len(r.typ) == 0:
			e.Type = "message"
		case string(r.typ) == r.lastType:
			e.Type = r.lastType
		default:
			r.lastType = string(r.typ)
			e.Type = r.lastType
		}
	}
	r.data, r.typ, r.id = r.data[:0], r.typ[:0], 0
	return e, ok
}

// byteOrderMark is the UTF-8 encoding of U+FEFF.
const byteOrderMark = "\xef\xbb\xbf"

// readLine returns the next line without its terminator. The line is only
// valid until the next call. A line cut off by the end of the stream is
// discarded, as the rules say.
func (r *Reader) readLine() ([]byte, error) {
	r.skipByteOrderMark()
	r.skipPendingLF()
	scanned := 0 // bytes after start known to hold no line end
	for {
		rest := r.buf[r.start+scanned : r.end]
		if i := indexLineEnd(rest); i >= 0 {
			return r.takeLine(r.start + scanned + i), nil
		}
		scanned = r.end - r.start
		if r.err != nil {
			r.start = r.end
			return nil, r.err
		}
		r.fill()
	}
}

// skipByteOrderMark drops a byte order mark at the start of the stream,
// once.
func (r *Reader) skipByteOrderMark() {
	if r.begun {
		return
	}
	for r.end-r.start < len(byteOrderMark) && r.err == nil {
		r.fill()
	}
	if bytes.HasPrefix(r.buf[r.start:r.end], []byte(byteOrderMark)) {
		r.start += len(byteOrderMark)
	}
	r.begun = true
}

// skipPendingLF drops the "\n" of a "\r\n" whose "\r" ended the last
// line at the end of the buffer.
func (r *Reader) skipPendingLF() {
	if !r.skipLF {
		return
	}
	if r.start == r.end && r.err == nil {
		r.fill()
	}
	if r.start < r.end && r.buf[r.start] == '\n' {
		r.start++
	}
	r.skipLF = false
}

// takeLine returns the line from start to lineEnd, the index of its "\r"
// or "\n", and moves past its terminator: a "\r\n" is one terminator, and
// a "\r" at the end of the buffer leaves skipLF for the next line.
func (r *Reader) takeLine(lineEnd int) []byte {
	line := r.buf[r.start:lineEnd]
	r.start = lineEnd + 1
	if r.buf[lineEnd] != '\r' {
		return line
	}
	switch {
	case r.start == r.end:
		r.skipLF = true
	case r.buf[r.start] == '\n':
		r.start++
	}
	return line
}

// indexLineEnd returns the index of the first "\r" or "\n" in b, or -1.
func indexLineEnd(b []byte) int {
	i := bytes.IndexByte(b, '\n')
	if i < 0 {
		return bytes.IndexByte(b, '\r')
	}
	if j := bytes.IndexByte(b[:i], '\r'); j >= 0 {
		return j
	}
	return i
}

// fill moves the unread bytes to the front of the buffer, grows it when it
// is full, and reads once from the source.
func (r *Reader) fill() {
	if r.start > 0 {
		r.end = copy(r.buf, r.buf[r.start:r.end])
		r.start = 0
	}
	if r.end == len(r.buf) {
		if len(r.buf) >= MaxLineSize {
			r.err = ErrLineTooLong
			return
		}
		grown := make([]byte, 2*len(r.buf))
		copy(grown, r.buf[:r.end])
		r.buf = grown
	}
	for range 100 {
		n, err := r.src.Read(r.buf[r.end:])
		if n < 0 || n > len(r.buf)-r.end {
			r.err = errors.New("stream: SSE source returned an invalid byte count from Read")
			return
		}
		r.end += n
		if err != nil {
			r.err = err
			return
		}
		if n > 0 {
			return
		}
	}
	r.err = io.ErrNoProgress
}
