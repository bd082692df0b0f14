package store

import (
	"bytes"
	"context"
	"errors"
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
