package store

import (
	"bytes"
	"compress/flate"
	"encoding/json"
	"fmt"
	"io"
	"sync"

	"github.com/dawn-go/dawn/internal/store/dialect"
	"github.com/dawn-go/dawn/stream"
)

// Codecs of the history.codec column: how its data column holds an event's
// JSON. Either way Events gives back the bytes SaveStep was given.
const (
	codecPlain   = 0 // the JSON as it is, as TEXT
	codecDeflate = 1 // the JSON compressed with DEFLATE (RFC 1951), as a BLOB
)

// compressMin is the smallest event data, in bytes, that is compressed: the
// done event, which holds the thread's whole final state, and large tool
// results. Below it the compressor's fixed cost (about 10 µs) buys little.
const compressMin = 512

// packer compresses event data into a reusable buffer. Its zero value is
// ready to use; it is not safe for concurrent use.
type packer struct {
	buf bytes.Buffer
	w   *flate.Writer
}

// pack returns the codec and stored bytes for data: DEFLATE when data is
// at least compressMin bytes and that makes it at least an eighth smaller,
// else data itself. Compressed bytes are valid until the next pack.
func (p *packer) pack(data json.RawMessage) (codec int, value []byte) {
	if len(data) >= compressMin {
		if small, ok := p.compress(data); ok && len(small) <= len(data)-len(data)/8 {
			return codecDeflate, small
		}
	}
	return codecPlain, data
}

// compress returns data compressed with DEFLATE at BestSpeed, in p's buffer.
func (p *packer) compress(data []byte) ([]byte, bool) {
	p.buf.Reset()
	if p.w == nil {
		p.w, _ = flate.NewWriter(&p.buf, flate.BestSpeed) // a valid level: no error
	} else {
		p.w.Reset(&p.buf)
	}
	if _, err := p.w.Write(data); err != nil {
		return nil, false
	}
	if err := p.w.Close(); err != nil {
		return nil, false
	}
	return p.buf.Bytes(), true
}

// packers are the packers of concurrent writers.
var packers = sync.Pool{New: func() any { return new(packer) }}

// packEvents packs events as the database stores them.
func packEvents(events []stream.Event) []dialect.EventRow {
	if len(events) == 0 {
		return nil
	}
	p := packers.Get().(*packer)
	defer func() {
		if p.buf.Cap() <= 1<<20 { // let a buffer that grew huge go
			packers.Put(p)
		}
	}()
	rows := make([]dialect.EventRow, len(events))
	for i, ev := range events {
		codec, data := p.pack(ev.Data)
		if codec != codecPlain {
			data = bytes.Clone(data) // the packer reuses its buffer
		}
		rows[i] = dialect.EventRow{Seq: ev.ID, Type: ev.Type, Codec: codec, Data: data}
	}
	return rows
}

// unpacker turns stored event data back into the event's JSON. Its zero
// value is ready to use, and it reuses its decompressor.
type unpacker struct {
	src bytes.Reader
	r   io.ReadCloser
}

// unpack returns a copy of the event JSON that data holds in codec; empty
// data gives nil.
func (u *unpacker) unpack(codec int, data []byte) (json.RawMessage, error) {
	switch codec {
	case codecPlain:
		if len(data) == 0 {
			return nil, nil
		}
		return bytes.Clone(data), nil
	case codecDeflate:
		u.src.Reset(data)
		if u.r == nil {
			u.r = flate.NewReader(&u.src)
		} else if err := u.r.(flate.Resetter).Reset(&u.src, nil); err != nil {
			return nil, err
		}
		out, err := io.ReadAll(u.r)
		if err != nil {
			return nil, fmt.Errorf("decompressing the stored data: %w", err)
		}
		return out, nil
	default:
		return nil, fmt.Errorf("unknown codec %d: the store was written by a newer dawn", codec)
	}
}
