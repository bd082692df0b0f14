package store

import (
	"bytes"
	"compress/flate"
	"context"
	"encoding/json"
	"fmt"
	"io"

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

// packers keeps packers for the writers to reuse: a free list the
// garbage collector leaves alone (a sync.Pool would drop a packer's large
// DEFLATE state at every collection).
type packers chan *packer

// get returns a free packer, or a new one.
func (ps packers) get() *packer {
	select {
	case p := <-ps:
		return p
	default:
		return new(packer)
	}
}

// put gives p back, unless its buffer grew huge or the list is full.
func (ps packers) put(p *packer) {
	if p.buf.Cap() > 1<<20 {
		return
	}
	select {
	case ps <- p:
	default:
	}
}

// insertEvents packs events as the database stores them and appends them
// to a run's log.
func (s *DB) insertEvents(ctx context.Context, tx dialect.RunTx, threadPK, runPK int64, events []stream.Event) error {
	if len(events) == 0 {
		return nil
	}
	p := s.packers.get()
	defer s.packers.put(p)
	for _, ev := range events {
		codec, data := p.pack(ev.Data)
		if err := tx.InsertEvent(ctx, threadPK, runPK, dialect.EventRow{Seq: ev.ID, Type: ev.Type, Codec: codec, Data: data}); err != nil {
			return fmt.Errorf("event %d: %w", ev.ID, err)
		}
	}
	return nil
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
