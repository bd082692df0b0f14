package store

import (
	"bytes"
	"encoding/json"
	"sync"

	"github.com/dawn-go/dawn/thread"
)

// encoder writes compact JSON without HTML escaping (so "<" stays one byte)
// into a reusable buffer.
type encoder struct {
	buf  bytes.Buffer
	enc  *json.Encoder
	ends []int
}

var encoders = sync.Pool{New: func() any {
	e := &encoder{}
	e.enc = json.NewEncoder(&e.buf)
	e.enc.SetEscapeHTML(false)
	return e
}}

func getEncoder() *encoder { return encoders.Get().(*encoder) }

func putEncoder(e *encoder) {
	if e.buf.Cap() > 1<<20 {
		return // let a huge buffer go
	}
	e.buf.Reset()
	e.ends = e.ends[:0]
	encoders.Put(e)
}

// encodeStep returns each message and the state values as compact JSON. The
// strings share one allocation.
func (e *encoder) encodeStep(messages []thread.Message, values thread.State) ([]string, string, error) {
	e.buf.Reset()
	e.ends = e.ends[:0]
	for i := range messages {
		// MarshalJSON directly: its output is compact, with HTML unescaped,
		// and the encoder would only compact it once more.
		data, err := messages[i].MarshalJSON()
		if err != nil {
			return nil, "", err
		}
		e.buf.Write(data)
		e.buf.WriteByte('\n')
		e.ends = append(e.ends, e.buf.Len())
	}
	if len(values) == 0 {
		e.buf.WriteString("{}\n")
	} else if err := e.enc.Encode(values); err != nil {
		return nil, "", err
	}
	all := e.buf.String()
	out := make([]string, len(messages))
	start := 0
	for i, end := range e.ends {
		out[i] = all[start : end-1] // drop Encode's newline
		start = end
	}
	return out, all[start : len(all)-1], nil
}
