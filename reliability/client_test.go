package reliability

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/dawn-go/dawn/stream"
)

// client talks to one server over loopback.
type client struct {
	base string
	key  string // sent as a bearer token when set
	http *http.Client
}

func newClient(base string) *client {
	tr := &http.Transport{MaxIdleConnsPerHost: 64, DisableCompression: true}
	return &client{base: strings.TrimRight(base, "/"), http: &http.Client{Transport: tr, Timeout: time.Minute}}
}

// close drops the client's idle connections.
func (c *client) close() { c.http.CloseIdleConnections() }

// reply is a finished HTTP exchange.
type reply struct {
	status int
	header http.Header
	body   []byte
}

// do sends a request; body may be nil. Transport errors are returned.
func (c *client) do(method, path string, body []byte, header ...string) (reply, error) {
	var r io.Reader
	if body != nil {
		r = bytes.NewReader(body)
	}
	req, err := http.NewRequest(method, c.base+path, r)
	if err != nil {
		return reply{}, err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if c.key != "" {
		req.Header.Set("Authorization", "Bearer "+c.key)
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return reply{}, err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	return reply{status: resp.StatusCode, header: resp.Header, body: data}, err
}

// must is do that fails the test on a transport error.
func (c *client) must(t testing.TB, method, path string, body []byte, header ...string) reply {
	t.Helper()
	r, err := c.do(method, path, body, header...)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	return r
}

// getJSON GETs path, fails unless it is 200, and decodes the body into v.
func (c *client) getJSON(t testing.TB, path string, v any) {
	t.Helper()
	r := c.must(t, http.MethodGet, path, nil)
	if r.status != http.StatusOK {
		t.Fatalf("GET %s: %d %s", path, r.status, r.body)
	}
	if err := json.Unmarshal(r.body, v); err != nil {
		t.Fatalf("GET %s: %v in %s", path, err, r.body)
	}
}

// apiError is the API's error body.
type apiError struct {
	Error struct {
		Kind    string `json:"kind"`
		Message string `json:"message"`
	} `json:"error"`
}

// errorOf decodes an error reply, failing the test if it is not one.
func errorOf(t testing.TB, r reply) apiError {
	t.Helper()
	var e apiError
	if err := json.Unmarshal(r.body, &e); err != nil || e.Error.Kind == "" || e.Error.Message == "" {
		t.Fatalf("status %d body is not a JSON error: %s", r.status, r.body)
	}
	return e
}

// runBody is a run request for route with one user message.
func runBody(route, text string) []byte {
	data, _ := json.Marshal(map[string]any{
		"route": route,
		"input": map[string]any{"messages": []map[string]string{{"role": "user", "content": text}}},
	})
	return data
}

// readEvents parses an SSE body until it ends. A transport error ends it
// too, and is returned with the events read so far.
func readEvents(r io.Reader) ([]stream.Event, error) {
	sr := stream.NewReader(r)
	var events []stream.Event
	for {
		e, err := sr.Next()
		if errors.Is(err, io.EOF) {
			return events, nil
		}
		if err != nil {
			return events, err
		}
		events = append(events, e)
	}
}

// todo is one plan item.
type todo struct {
	Content string `json:"content"`
	Status  string `json:"status"`
}

// message is a thread message as the state endpoint shows it.
type message struct {
	Role       string     `json:"role"`
	Content    string     `json:"content"`
	ToolCalls  []toolCall `json:"tool_calls"`
	ToolCallID string     `json:"tool_call_id"`
	Name       string     `json:"name"`
	IsError    bool       `json:"is_error"`
}

type toolCall struct {
	ID    string          `json:"id"`
	Name  string          `json:"name"`
	Input json.RawMessage `json:"input"`
}

// threadState is GET /threads/:id/state.
type threadState struct {
	Values struct {
		Messages []message       `json:"messages"`
		Todos    json.RawMessage `json:"todos"`
	} `json:"values"`
	Checkpoint struct {
		Step  int    `json:"step"`
		RunID string `json:"run_id"`
	} `json:"checkpoint"`
	Status string `json:"status"`
}

// runRecord is one entry of GET /threads/:id/runs.
type runRecord struct {
	RunID  string `json:"run_id"`
	Status string `json:"status"`
	Error  string `json:"error"`
}

// sameTodos reports whether two todos lists hold the same items.
func sameTodos(a, b json.RawMessage) bool {
	var x, y []todo
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	return slices.Equal(x, y)
}
