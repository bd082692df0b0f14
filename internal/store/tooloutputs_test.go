package store

import (
	"bytes"
	"context"
	"errors"
	"math"
	"testing"
)

// TestToolOutputs: a tool output is kept with its thread byte for byte,
// read a page at a time by byte offsets, refused under an id the thread
// already uses or for a thread that does not exist, copied with the
// thread, and deleted with it, on every kind of store.
func TestToolOutputs(t *testing.T) {
	eachKind(t, func(t *testing.T, s Store) {
		ctx := context.Background()
		_, err := s.CreateThread(ctx, "th", nil)
		must(t, err)
		_, err = s.CreateThread(ctx, "other", nil)
		must(t, err)
		data := bytes.Repeat([]byte("héllo wörld\n"), 90000) // over 1 MB, multi-byte characters
		must(t, s.PutToolOutput(ctx, "th", "out_1", "fetchPage", data))

		page, err := s.ReadToolOutput(ctx, "th", "out_1", 5, 10)
		must(t, err)
		if page.Tool != "fetchPage" || page.Total != int64(len(data)) || !bytes.Equal(page.Data, data[5:15]) {
			t.Fatalf("page 5+10: tool %q total %d data %q", page.Tool, page.Total, page.Data)
		}
		whole, err := s.ReadToolOutput(ctx, "th", "out_1", 0, int64(len(data))+100)
		must(t, err)
		if !bytes.Equal(whole.Data, data) {
			t.Fatalf("the whole output read back is %d bytes, want %d", len(whole.Data), len(data))
		}
		end, err := s.ReadToolOutput(ctx, "th", "out_1", int64(len(data)), 10)
		must(t, err)
		if len(end.Data) != 0 {
			t.Fatalf("a page past the end holds %q", end.Data)
		}
		if _, err := s.ReadToolOutput(ctx, "other", "out_1", 0, 10); !errors.Is(err, ErrNotFound) {
			t.Fatalf("another thread's output: %v", err)
		}
		if err := s.PutToolOutput(ctx, "th", "out_1", "fetchPage", []byte("x")); !errors.Is(err, ErrExists) {
			t.Fatalf("an id used twice: %v", err)
		}
		if err := s.PutToolOutput(ctx, "nope", "out_2", "fetchPage", []byte("x")); !errors.Is(err, ErrNotFound) {
			t.Fatalf("a missing thread: %v", err)
		}
		// A copy of the thread reads the outputs its messages name.
		_, err = s.CopyThread(ctx, "th", "th-copy")
		must(t, err)
		copied, err := s.ReadToolOutput(ctx, "th-copy", "out_1", 5, 10)
		must(t, err)
		if page.Tool != copied.Tool || page.Total != copied.Total || !bytes.Equal(copied.Data, page.Data) {
			t.Fatalf("the copy's page 5+10: tool %q total %d data %q", copied.Tool, copied.Total, copied.Data)
		}
		must(t, s.DeleteThread(ctx, "th-copy"))
		must(t, s.DeleteThread(ctx, "th"))
		if _, err := s.ReadToolOutput(ctx, "th", "out_1", 0, 10); !errors.Is(err, ErrNotFound) {
			t.Fatalf("after the thread was deleted: %v", err)
		}
		if n := queryString(t, s, "SELECT count(*) FROM tool_outputs"); n != "0" {
			t.Fatalf("%s tool outputs left after the thread was deleted", n)
		}
	})
}

// TestToolOutputFarOffsets: an offset or limit past anything a store can
// hold reads as any page past the end does, the same on every kind of
// store; Postgres's substring takes 32-bit positions, and an offset of
// 2^31-1 was an "integer out of range" error there.
func TestToolOutputFarOffsets(t *testing.T) {
	eachKind(t, func(t *testing.T, s Store) {
		ctx := context.Background()
		_, err := s.CreateThread(ctx, "th", nil)
		must(t, err)
		data := []byte("héllo wörld\n")
		must(t, s.PutToolOutput(ctx, "th", "out_1", "fetchPage", data))
		for _, r := range [][2]int64{
			{math.MaxInt32 - 1, 10}, {math.MaxInt32, 10}, {math.MaxInt32 + 1, 10}, {math.MaxInt64 - 1, 10}, {math.MaxInt64, math.MaxInt64},
		} {
			page, err := s.ReadToolOutput(ctx, "th", "out_1", r[0], r[1])
			if err != nil || len(page.Data) != 0 || page.Total != int64(len(data)) || page.Tool != "fetchPage" {
				t.Fatalf("offset %d limit %d: %q of %d, %v; want an empty page of %d", r[0], r[1], page.Data, page.Total, err, len(data))
			}
		}
		for _, r := range [][2]int64{{0, math.MaxInt64}, {3, math.MaxInt32 + 1}, {3, math.MaxInt32}} {
			page, err := s.ReadToolOutput(ctx, "th", "out_1", r[0], r[1])
			if err != nil || !bytes.Equal(page.Data, data[r[0]:]) {
				t.Fatalf("offset %d limit %d: %q, %v; want the rest of the output", r[0], r[1], page.Data, err)
			}
		}
	})
}
