package stream

import (
	"bytes"
	"encoding/json"
	"io"
	"strconv"
)

// AppendSSE appends e to dst in the text/event-stream format and returns the
// extended slice:
//
//	id: 7
//	event: plan_update
//	data: {"todos":[...]}
//	<blank line>
//
// The id line is left out when e.ID is 0. The output is one well-formed
// event whatever e holds:
//   - carriage returns and line feeds are removed from the type;
//   - Data is written as compact JSON on one line (pretty JSON is compacted);
//   - Data that is not valid JSON is written as a JSON string of its bytes;
//   - empty Data is written as {}, since event data is a JSON object.
//
// Reusing dst across calls makes encoding allocation-free.
func AppendSSE(dst []byte, e Event) []byte {
	if e.ID != 0 {
		dst = append(dst, "id: "...)
		dst = strconv.AppendInt(dst, e.ID, 10)
		dst = append(dst, '\n')
	}
	dst = append(dst, "event: "...)
	dst = appendEventType(dst, e.Type)
	dst = append(dst, "\ndata: "...)
	dst = appendEventData(dst, e.Data)
	return append(dst, "\n\n"...)
}

// appendEventType appends typ without the bytes that would end its line.
func appendEventType(dst []byte, typ string) []byte {
	for i := 0; i < len(typ); i++ {
		if b := typ[i]; b != '\n' && b != '\r' {
			dst = append(dst, b)
		}
	}
	return dst
}

// appendEventData appends data as single-line JSON.
func appendEventData(dst, data []byte) []byte {
	if len(data) == 0 {
		return append(dst, "{}"...)
	}
	n := len(dst)
	buf := bytes.NewBuffer(dst)
	if err := json.Compact(buf, data); err != nil {
		return appendJSONString(dst[:n], data) // not JSON: send it as a JSON string
	}
	return buf.Bytes()
}

// WriteComment writes text to w as an SSE comment, which clients ignore; a
// server sends one as a keep-alive: WriteComment(w, "ping") writes
// ": ping\n\n". Each line of a multi-line text becomes its own comment line.
func WriteComment(w io.Writer, text string) error {
	buf := make([]byte, 0, len(text)+8)
	buf = append(buf, ':')
	if text != "" {
		buf = append(buf, ' ')
	}
	for i := 0; i < len(text); i++ {
		switch b := text[i]; b {
		case '\r':
			if i+1 < len(text) && text[i+1] == '\n' {
				i++
			}
			buf = append(buf, "\n: "...)
		case '\n':
			buf = append(buf, "\n: "...)
		default:
			buf = append(buf, b)
		}
	}
	buf = append(buf, "\n\n"...)
	_, err := w.Write(buf)
	return err
}
