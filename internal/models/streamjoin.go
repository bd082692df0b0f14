package models

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"

	"github.com/tmc/langchaingo/llms"
)

// langchaingo's openai client (v0.1.14) joins a streamed answer with
// Content += delta, copying the whole answer on every delta: a 256 KB answer
// in 4-byte deltas allocates about 8 GB. For the openai-wire providers Dawn
// joins the text itself. streamJoin rides on the call's context;
// wireTransport hands each event of the answer's stream to it, which keeps
// the event's text and reasoning and passes the event on without them, so
// the client only joins empty strings. The client still calls the streaming
// funcs once per event, on the caller's goroutine and in order; the
// wrappers streamJoin puts in their place hand the caller the text the
// event carried. When the call returns, fill puts the joined text in the
// response.

// streamJoinKey marks a call's context with its *streamJoin.
type streamJoinKey struct{}

// streamJoin joins the text and reasoning of one streamed call.
type streamJoin struct {
	mu        sync.Mutex
	text      strings.Builder
	reasoning strings.Builder
	pending   []streamDelta // taken from events the client has not handed on yet
	current   streamDelta   // the event the client is handing on
}

// streamDelta is what one event of the stream carried in its first choice.
type streamDelta struct{ text, reasoning string }

// joinStreamedText sets up a streamJoin for a call with a streaming func
// and returns the call's context and options; join is nil for a call that
// does not stream.
func joinStreamedText(ctx context.Context, options []llms.CallOption) (context.Context, []llms.CallOption, *streamJoin) {
	var o llms.CallOptions
	for _, opt := range options {
		opt(&o)
	}
	if o.StreamingFunc == nil && o.StreamingReasoningFunc == nil {
		return ctx, options, nil
	}
	j := &streamJoin{}
	options = slices.Clip(options)
	if stream := o.StreamingFunc; stream != nil {
		options = append(options, llms.WithStreamingFunc(func(ctx context.Context, chunk []byte) error {
			d := j.next()
			if len(chunk) == 0 && d.text != "" {
				chunk = []byte(d.text)
			}
			return stream(ctx, chunk)
		}))
	}
	if stream := o.StreamingReasoningFunc; stream != nil {
		options = append(options, llms.WithStreamingReasoningFunc(func(ctx context.Context, reasoning, chunk []byte) error {
			d := j.current
			if o.StreamingFunc == nil {
				d = j.next()
			}
			if len(chunk) == 0 && d.text != "" {
				chunk = []byte(d.text)
			}
			if len(reasoning) == 0 && d.reasoning != "" {
				reasoning = []byte(d.reasoning)
			}
			return stream(ctx, reasoning, chunk)
		}))
	}
	return context.WithValue(ctx, streamJoinKey{}, j), options, j
}

// next takes the delta of the event the client hands on now.
func (j *streamJoin) next() streamDelta {
	j.mu.Lock()
	defer j.mu.Unlock()
	j.current = streamDelta{}
	if len(j.pending) > 0 {
		j.current, j.pending = j.pending[0], j.pending[1:]
	}
	return j.current
}

// take keeps what an event carried, in stream order.
func (j *streamJoin) take(d streamDelta) {
	j.mu.Lock()
	defer j.mu.Unlock()
	j.text.WriteString(d.text)
	j.reasoning.WriteString(d.reasoning)
	j.pending = append(j.pending, d)
}

// fill puts the joined text and reasoning in the first choice of resp.
func (j *streamJoin) fill(resp *llms.ContentResponse) {
	if resp == nil || len(resp.Choices) == 0 || resp.Choices[0] == nil {
		return
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	c := resp.Choices[0]
	c.Content += j.text.String()
	if j.reasoning.Len() > 0 {
		c.ReasoningContent += j.reasoning.String()
		if c.GenerationInfo != nil {
			c.GenerationInfo["ThinkingContent"] = c.ReasoningContent
		}
	}
}

// joinBody wraps a streamed answer's body: it reads the server's events a
// line at a time, gives each event's text to join and serves the line
// without it.
type joinBody struct {
	src  io.ReadCloser
	r    *bufio.Reader
	join *streamJoin
	out  []byte // the rest of the current line, to be read
	err  error
}

// joinStream wraps resp's body when the call joins its stream and the
// server answers with a stream.
func joinStream(req *http.Request, resp *http.Response) *http.Response {
	j, ok := req.Context().Value(streamJoinKey{}).(*streamJoin)
	if !ok || resp.StatusCode != http.StatusOK || resp.Body == nil {
		return resp
	}
	resp.Body = &joinBody{src: resp.Body, r: bufio.NewReader(resp.Body), join: j}
	resp.ContentLength = -1
	resp.Header.Del("Content-Length")
	return resp
}

func (b *joinBody) Read(p []byte) (int, error) {
	for len(b.out) == 0 {
		if b.err != nil {
			return 0, b.err
		}
		var line []byte
		line, b.err = b.r.ReadBytes('\n')
		b.out = b.edit(line)
	}
	n := copy(p, b.out)
	b.out = b.out[n:]
	return n, nil
}

func (b *joinBody) Close() error { return b.src.Close() }

// edit returns line with the text of its event taken out, and gives that
// text to the join. A line the client skips (not data, [DONE], not an
// event, no choices) is returned as it is.
func (b *joinBody) edit(line []byte) []byte {
	data, ok := bytes.CutPrefix(line, []byte("data:"))
	if !ok {
		return line
	}
	data = bytes.TrimSpace(data)
	// ev is in the types the openai client decodes an event into
	// (wireEvent), so that an event decodes here exactly when it decodes
	// there: the client hands an event on (and calls the streaming funcs)
	// when it decodes and has a choice, and the join must take one delta
	// for each of those.
	var ev wireEvent
	if bytes.Equal(data, []byte("[DONE]")) || decodeFirst(data, &ev) != nil || len(ev.Choices) == 0 {
		return line
	}
	delta := &ev.Choices[0].Delta
	d := streamDelta{text: delta.Content, reasoning: delta.ReasoningContent}
	if d.text == "" && d.reasoning == "" {
		b.join.take(d)
		return line
	}
	delta.Content, delta.ReasoningContent = "", ""
	edited, err := json.Marshal(&ev)
	if err != nil {
		// Not reached: what decoded encodes. The client joins the text.
		b.join.take(streamDelta{})
		return line
	}
	b.join.take(d)
	return append(append([]byte("data: "), edited...), '\n')
}
