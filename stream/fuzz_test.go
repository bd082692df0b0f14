package stream_test

import (
	"bytes"
	"encoding/json"
	"io"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/dawn-go/dawn/stream"
)

func FuzzReader(f *testing.F) {
	for _, s := range []string{
		"id: 1\nevent: chunk\ndata: {}\n\n",
		"data: a\r\ndata: b\r\rdata:c\n\n: ping\n\n",
		"\xef\xbb\xbfevent: x\nid: 7\x00\ndata\n\nretry: 5\n",
		"event: a\r\r\r\n\n\ndata:  x",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		whole, errWhole := readAll(stream.NewReader(bytes.NewReader(in)))
		bytewise, errBytewise := readAll(stream.NewReader(iotest.OneByteReader(bytes.NewReader(in))))
		if errWhole != io.EOF || errBytewise != io.EOF {
			t.Fatalf("errors %v and %v, want io.EOF", errWhole, errBytewise)
		}
		if len(whole) != len(bytewise) {
			t.Fatalf("reading at once gave %d events, byte by byte %d", len(whole), len(bytewise))
		}
		for i, e := range whole {
			b := bytewise[i]
			if e.ID != b.ID || e.Type != b.Type || !bytes.Equal(e.Data, b.Data) {
				t.Fatalf("event %d differs by chunking: %q vs %q", i, show(whole[i:i+1]), show(bytewise[i:i+1]))
			}
			if e.Type == "" || strings.ContainsAny(e.Type, "\r\n") || bytes.ContainsAny(e.Data, "\r") {
				t.Fatalf("event %d has a line break in type or data: %q", i, show(whole[i:i+1]))
			}
		}
	})
}

func FuzzSSERoundTrip(f *testing.F) {
	f.Add(int64(1), "plan_update", []byte(`{"todos":[{"content":"a","status":"pending"}]}`))
	f.Add(int64(0), "a\r\nb", []byte("{\n \"x\": \"\\n\"\n}"))
	f.Add(int64(-5), "", []byte("not json\n\nevent: x\ndata: y"))
	f.Add(int64(9), ":x", []byte("\xff\x00\r"))
	f.Fuzz(func(t *testing.T, id int64, typ string, data []byte) {
		var wire bytes.Buffer
		wire.Write(stream.AppendSSE(nil, stream.Event{ID: id, Type: typ, Data: data}))
		r := stream.NewReader(&wire)
		got, err := r.Next()
		if err != nil {
			t.Fatalf("reading back %q: %v", wire.String(), err)
		}
		if _, err := r.Next(); err != io.EOF {
			t.Fatalf("more than one event in %q", wire.String())
		}
		if got.ID != id {
			t.Errorf("ID = %d, want %d", got.ID, id)
		}
		if got.Type != sanitizedType(typ) || strings.ContainsAny(got.Type, "\r\n") {
			t.Errorf("Type = %q, want %q", got.Type, sanitizedType(typ))
		}
		if !json.Valid(got.Data) {
			t.Fatalf("Data %q is not valid JSON", got.Data)
		}
		if json.Valid(data) && !bytes.Equal(got.Data, compactJSON(t, data)) {
			t.Errorf("valid Data %q came back as %q", data, got.Data)
		}
	})
}
