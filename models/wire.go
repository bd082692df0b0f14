package models

import (
	"bytes"
	"encoding/json"
	"io"
	"math"
	"net/http"

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

// wireTransport edits request bodies as the context of their call says.
type wireTransport struct{ next http.RoundTripper }

func (t wireTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Body == nil || req.Context().Value(omitTemperatureKey{}) == nil {
		return t.next.RoundTrip(req)
	}
	body, err := io.ReadAll(req.Body)
	_ = req.Body.Close()
	if err != nil {
		return nil, err
	}
	if edited, ok := withoutKey(body, "temperature"); ok {
		body = edited
	}
	out := req.Clone(req.Context())
	out.Body = io.NopCloser(bytes.NewReader(body))
	out.ContentLength = int64(len(body))
	out.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(body)), nil }
	return t.next.RoundTrip(out)
}

// withoutKey returns the JSON object body without its top-level key, the
// other members in their order, or false when body is not an object holding
// key.
func withoutKey(body []byte, key string) ([]byte, bool) {
	if !bytes.Contains(body, []byte(`"`+key+`"`)) {
		return nil, false
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil, false
	}
	out := make([]byte, 0, len(body))
	out = append(out, '{')
	found := false
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, false
		}
		name, _ := tok.(string)
		var value json.RawMessage
		if err := dec.Decode(&value); err != nil {
			return nil, false
		}
		if name == key {
			found = true
			continue
		}
		if len(out) > 1 {
			out = append(out, ',')
		}
		quoted, _ := json.Marshal(name)
		out = append(out, quoted...)
		out = append(out, ':')
		out = append(out, value...)
	}
	if !found {
		return nil, false
	}
	return append(out, '}'), true
}
