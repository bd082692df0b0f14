package a2acall

import "time"

// text bounds the text a call keeps as its answer and the text it
// streams: each at most max bytes, the rest dropped with a mark.
type text struct {
	max      int
	answer   []byte
	cutOff   bool
	streamed int
}

func newText(max int) *text { return &text{max: max} }

const cutMark = "\n[remote answer cut: over the max_text_bytes of a2a.yaml]"

// keep adds s to the answer while it is under the bound.
func (t *text) keep(s string) {
	room := t.max - len(t.answer)
	if len(s) > room {
		s, t.cutOff = cutText(s, max(room, 0)), true
	}
	t.answer = append(t.answer, s...)
}

// kept is the answer kept so far, with a mark when some was dropped.
func (t *text) kept() string {
	if t.cutOff {
		return string(t.answer) + cutMark
	}
	return string(t.answer)
}

// cut is s within the bound.
func (t *text) cut(s string) string {
	if len(s) > t.max {
		return cutText(s, t.max) + cutMark
	}
	return s
}

// stream returns what of s may still be streamed, or "" once the bound is
// reached.
func (t *text) stream(s string) string {
	room := t.max - t.streamed
	if room <= 0 {
		return ""
	}
	s = cutText(s, room)
	t.streamed += len(s)
	return s
}

// timeAfter waits before retry attempt+1.
func timeAfter(attempt int) <-chan time.Time {
	return time.After(time.Duration(attempt+1) * 200 * time.Millisecond)
}
