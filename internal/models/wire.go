package models

import (
	"bytes"
	"context"
	"io"
	"math"
	"net/http"
	"slices"
	"time"

	"github.com/tmc/langchaingo/llms"
)

// langchaingo (v0.1.14) writes "temperature" into every OpenAI and
// Anthropic request, 0 when the caller set none, which overrides the
// provider's default (1.0) that nobody chose. Dawn sends a temperature only
// when agent.md or dawn.yaml sets one: checkedModel marks the context of a
// call without one, and wireTransport removes the key from that call's body.

// omitTemperatureKey marks a call's context: its request has no temperature.
type omitTemperatureKey struct{}

// unsetTemperature is a value no caller passes; see temperatureSet.
var unsetTemperature = math.Inf(-1)

// temperatureSet reports whether options set a temperature, 0 included: the
// options are applied over a value none of them would write.
func temperatureSet(options []llms.CallOption) bool {
	o := llms.CallOptions{Temperature: unsetTemperature}
	for _, opt := range options {
		opt(&o)
	}
	return o.Temperature != unsetTemperature
}

// wireTransport edits request bodies as the context of their call says,
// and joins streamed answers for calls that ask (see streamJoin).
type wireTransport struct{ next http.RoundTripper }

// deadlineTransport gives each request timeout to finish, its body read
// included: the deadline ends when the body is closed.
type deadlineTransport struct {
	next    http.RoundTripper
	timeout time.Duration
}

func (t deadlineTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	ctx, cancel := context.WithTimeout(req.Context(), t.timeout)
	resp, err := t.next.RoundTrip(req.WithContext(ctx))
	if err != nil {
		cancel()
		return nil, err
	}
	resp.Body = &cancelBody{ReadCloser: resp.Body, cancel: cancel}
	return resp, nil
}

// cancelBody ends its request's deadline when closed.
type cancelBody struct {
	io.ReadCloser
	cancel context.CancelFunc
}

func (b *cancelBody) Close() error {
	err := b.ReadCloser.Close()
	b.cancel()
	return err
}

func (t wireTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	out, err := editBody(req)
	if err != nil {
		return nil, err
	}
	resp, err := t.next.RoundTrip(out)
	if err != nil {
		return nil, err
	}
	return joinStream(req, resp), nil
}

// editBody returns req with its body edited as the context of its call
// says: without "temperature" (see omitTemperatureKey), with the
// provider's cache fields (see cacheEdit); req itself when no edit
// applies. However many edits apply, the body is read once and the
// request copied once: it runs on every model request, and what it
// allocates is held while the call waits for the model.
func editBody(req *http.Request) (*http.Request, error) {
	omit := req.Context().Value(omitTemperatureKey{}) != nil
	edit, cache := req.Context().Value(cacheEditKey{}).(cacheEdit)
	cache = cache && req.Method == http.MethodPost
	if req.Body == nil || !omit && !cache {
		return req, nil
	}
	body, err := readBody(req)
	if err != nil {
		return nil, err
	}
	if omit {
		if edited, ok := withoutKey(body, "temperature"); ok {
			body = edited
		}
	}
	if cache {
		body = edit.apply(body)
	}
	out := req.Clone(req.Context())
	out.Body = io.NopCloser(bytes.NewReader(body))
	out.ContentLength = int64(len(body))
	out.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(body)), nil }
	return out, nil
}

// readBody reads and closes req's body, into a buffer of its length when
// the request gives it.
func readBody(req *http.Request) ([]byte, error) {
	defer func() { _ = req.Body.Close() }()
	if n := req.ContentLength; n > 0 {
		body := make([]byte, n)
		if _, err := io.ReadFull(req.Body, body); err != nil {
			return nil, err
		}
		return body, nil
	}
	return io.ReadAll(req.Body)
}

// withoutKey returns the JSON object body without its top-level member
// key, the rest byte for byte, or false when body is not an object holding
// key at its top level. It is one pass over the bytes, without decoding:
// it runs on every model request.
func withoutKey(body []byte, key string) ([]byte, bool) {
	name := []byte(`"` + key + `"`)
	if !bytes.Contains(body, name) {
		return nil, false
	}
	var (
		cur       jsonCursor
		expectKey bool
		sep       = -1 // the ',' before the current top-level member, or -1
		start     = -1 // where the member to cut starts (its key's quote)
	)
	for i := 0; i < len(body); i++ {
		c := body[i]
		if cur.inString(c) {
			continue
		}
		switch c {
		case '"':
			if cur.depth == 1 && expectKey && start < 0 && isKeyAt(body, i, name) {
				start = i
			}
			expectKey = false
			cur.openString()
		case '{', '[':
			cur.depth++
			if cur.depth == 1 && c == '{' {
				expectKey = true
			}
		case '}', ']', ',':
			if cur.depth == 1 && start >= 0 {
				return cutMember(body, sep, start, i), true
			}
			if c != ',' {
				cur.depth--
			} else if cur.depth == 1 {
				sep, expectKey = i, true
			}
		}
	}
	return nil, false
}

// jsonCursor is where a scan over JSON bytes is: its nesting depth, and
// whether it is inside a string.
type jsonCursor struct {
	depth    int
	str, esc bool
}

// inString takes c when the scan is inside a string, reporting whether it
// did; the closing quote ends the string.
func (j *jsonCursor) inString(c byte) bool {
	if !j.str {
		return false
	}
	switch {
	case j.esc:
		j.esc = false
	case c == '\\':
		j.esc = true
	case c == '"':
		j.str = false
	}
	return true
}

func (j *jsonCursor) openString() { j.str = true }

// isKeyAt reports whether body holds the quoted name at i followed by a
// colon: a member's key.
func isKeyAt(body []byte, i int, name []byte) bool {
	if !bytes.HasPrefix(body[i:], name) {
		return false
	}
	j := i + len(name)
	for j < len(body) && isSpace(body[j]) {
		j++
	}
	return j < len(body) && body[j] == ':'
}

// cutMember removes the top-level member that starts at start and ends
// before end (its ',' or the object's '}'): with the ',' before it (sep)
// when it is not the first, else with the ',' after it and the spaces that
// follow.
func cutMember(body []byte, sep, start, end int) []byte {
	if sep >= 0 {
		return append(slices.Clip(body[:sep]), body[end:]...)
	}
	if body[end] == ',' {
		end++
	}
	for end < len(body) && isSpace(body[end]) {
		end++
	}
	return append(slices.Clip(body[:start]), body[end:]...)
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }
