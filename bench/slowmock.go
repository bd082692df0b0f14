package main

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"log"
	"math/big"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// slowMock is an OpenAI chat-completions server on loopback that answers
// the workload's two requests (see fixtures/aimock.json) after a fixed
// latency, streamed or not as asked. It is the model of --inflight: one Go
// process holds tens of thousands of calls waiting at once, where aimock
// (one Node process) is the bottleneck long before that.
//
// Each run's user message carries a reference (refMarker) that the mock
// reads back, so that it can tell the load tool how long each run spent in
// the model and how many bytes it sent.
type slowMock struct {
	latency time.Duration
	url     string // http://127.0.0.1:PORT/v1
	srv     *http.Server

	mu   sync.Mutex
	runs map[string]*mockUse // by reference

	tokMu  sync.Mutex
	tokens map[string]int // prompt tokens by request body with the reference cut out

	calls, inflight atomic.Int64
	peak            int64
}

// mockUse is what one run asked of the model.
type mockUse struct {
	Calls int
	Time  time.Duration // from each request's arrival to its last byte written
	Bytes int           // request bodies
	// Prompt and Completion are the token counts of the usage the mock
	// reported.
	Prompt, Completion int
}

// refMarker opens the reference in a run's user message; it ends with ")".
const refMarker = " (ref "

// mockPlanArgs are the writeTodos arguments of the first answer, as in
// fixtures/aimock.json.
const mockPlanArgs = `{"todos":[{"content":"Understand the customer request","status":"in_progress"},{"content":"Check account context","status":"pending"},{"content":"Decide whether to answer or escalate","status":"pending"},{"content":"Write the final response","status":"pending"}]}`

// mockAnswer is the second answer's text.
const mockAnswer = "Your account is in good standing."

// startSlowMock serves the mock on loopback. With caFile it serves HTTPS
// (and so HTTP/2, as real providers do: many calls share a connection)
// with a certificate for 127.0.0.1 whose PEM it writes to caFile, for the
// server's SSL_CERT_FILE; without, plain HTTP/1.1, a connection per call.
func startSlowMock(latency time.Duration, caFile string) (*slowMock, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	m := &slowMock{latency: latency, runs: map[string]*mockUse{}, tokens: map[string]int{}}
	// ErrorLog: a client that dials more connections than it keeps (Go's
	// HTTP/2 client does, when many calls start at once) makes the server
	// log each one it drops.
	m.srv = &http.Server{Handler: http.HandlerFunc(m.serve), ReadHeaderTimeout: time.Minute, ErrorLog: log.New(io.Discard, "", 0)}
	if caFile == "" {
		m.url = "http://" + ln.Addr().String() + "/v1"
		go func() { _ = m.srv.Serve(ln) }()
		return m, nil
	}
	cert, err := loopbackCert(caFile)
	if err != nil {
		ln.Close()
		return nil, err
	}
	m.srv.TLSConfig = &tls.Config{Certificates: []tls.Certificate{cert}}
	m.url = "https://" + ln.Addr().String() + "/v1"
	go func() { _ = m.srv.ServeTLS(ln, "", "") }()
	return m, nil
}

// loopbackCert makes a self-signed certificate for 127.0.0.1 and writes it
// as PEM to caFile.
func loopbackCert(caFile string) (tls.Certificate, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return tls.Certificate{}, err
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "dawn bench mock"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)}, IsCA: true, BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return tls.Certificate{}, err
	}
	if err := os.WriteFile(caFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o644); err != nil {
		return tls.Certificate{}, err
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}, nil
}

func (m *slowMock) close() { _ = m.srv.Close() }

// use returns and forgets what the run with reference ref asked of the
// model.
func (m *slowMock) use(ref string) mockUse {
	m.mu.Lock()
	defer m.mu.Unlock()
	u := m.runs[ref]
	delete(m.runs, ref)
	if u == nil {
		return mockUse{}
	}
	return *u
}

func (m *slowMock) serve(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	if !strings.HasSuffix(r.URL.Path, "/chat/completions") {
		http.Error(w, `{"error":{"message":"the load tool's mock serves /v1/chat/completions only"}}`, http.StatusNotFound)
		return
	}
	body, err := io.ReadAll(r.Body)
	if err != nil {
		return
	}
	var req struct {
		Stream   bool `json:"stream"`
		Messages []struct {
			Role    string `json:"role"`
			Content any    `json:"content"`
		} `json:"messages"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		http.Error(w, `{"error":{"message":"not a chat completion request"}}`, http.StatusBadRequest)
		return
	}
	ref, answer := "", false
	for _, msg := range req.Messages {
		if msg.Role == "tool" {
			answer = true
		}
		if text, ok := msg.Content.(string); ok && msg.Role == "user" {
			if _, after, ok := strings.Cut(text, refMarker); ok {
				ref, _, _ = strings.Cut(after, ")")
			}
		}
	}
	raise(&m.peak, m.inflight.Add(1))
	defer m.inflight.Add(-1)
	m.calls.Add(1)
	prompt := m.promptTokens(body, ref)

	t := time.NewTimer(m.latency)
	select {
	case <-t.C:
	case <-r.Context().Done():
		t.Stop()
		return
	}
	completion := mockPlanTokens()
	if answer {
		completion = mockAnswerTokens()
	}
	if req.Stream {
		writeMockStream(w, answer, prompt, completion)
	} else {
		writeMockJSON(w, answer, prompt, completion)
	}
	if ref != "" {
		m.mu.Lock()
		u := m.runs[ref]
		if u == nil {
			u = &mockUse{}
			m.runs[ref] = u
		}
		u.Calls++
		u.Time += time.Since(start)
		u.Bytes += len(body)
		u.Prompt += prompt
		u.Completion += completion
		m.mu.Unlock()
	}
}

// promptTokens counts the request's prompt tokens (o200k, see
// promptTokens), once per request shape: runs differ only in their
// reference, which is cut out of the key.
func (m *slowMock) promptTokens(body []byte, ref string) int {
	key := string(body)
	if ref != "" {
		key = strings.ReplaceAll(key, ref, "")
	}
	m.tokMu.Lock()
	n, ok := m.tokens[key]
	m.tokMu.Unlock()
	if ok {
		return n
	}
	n = promptTokens(body)
	m.tokMu.Lock()
	if len(m.tokens) < 1024 {
		m.tokens[key] = n
	}
	m.tokMu.Unlock()
	return n
}

// Completion tokens of the two answers, as OpenAI would count them
// (o200k), for the usage the mock reports.
var mockPlanTokens, mockAnswerTokens = sync.OnceValue(func() int { return promptTokens(toolCallBody("writeTodos", mockPlanArgs)) }), sync.OnceValue(func() int { return promptTokens(textBody(mockAnswer)) })

func toolCallBody(name, args string) []byte {
	b, _ := json.Marshal(map[string]any{"messages": []any{map[string]any{"role": "assistant", "tool_calls": []any{map[string]any{"function": map[string]string{"name": name, "arguments": args}}}}}})
	return b
}

func textBody(text string) []byte {
	b, _ := json.Marshal(map[string]any{"messages": []any{map[string]string{"role": "assistant", "content": text}}})
	return b
}

func mockUsage(prompt, completion int) string {
	return fmt.Sprintf(`{"prompt_tokens":%d,"completion_tokens":%d,"total_tokens":%d}`, prompt, completion, prompt+completion)
}

func writeMockJSON(w http.ResponseWriter, answer bool, prompt, completion int) {
	var msg, finish string
	if answer {
		msg, finish = `{"role":"assistant","content":`+strconv.Quote(mockAnswer)+`}`, "stop"
	} else {
		msg, finish = `{"role":"assistant","content":null,"tool_calls":[{"id":"call_plan","type":"function","function":{"name":"writeTodos","arguments":`+strconv.Quote(mockPlanArgs)+`}}]}`, "tool_calls"
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = io.WriteString(w, `{"id":"chatcmpl-mock","object":"chat.completion","created":1,"model":"gpt-4o-mini","choices":[{"index":0,"message":`+
		msg+`,"finish_reason":"`+finish+`"}],"usage":`+mockUsage(prompt, completion)+`}`)
}

// writeMockStream writes the answer as server-sent chunks: the delta, the
// finish reason, the usage (as with stream_options.include_usage), [DONE].
func writeMockStream(w http.ResponseWriter, answer bool, prompt, completion int) {
	const head = `data: {"id":"chatcmpl-mock","object":"chat.completion.chunk","created":1,"model":"gpt-4o-mini","choices":[`
	var delta, finish string
	if answer {
		delta, finish = `{"role":"assistant","content":`+strconv.Quote(mockAnswer)+`}`, "stop"
	} else {
		delta, finish = `{"role":"assistant","tool_calls":[{"index":0,"id":"call_plan","type":"function","function":{"name":"writeTodos","arguments":`+strconv.Quote(mockPlanArgs)+`}}]}`, "tool_calls"
	}
	w.Header().Set("Content-Type", "text/event-stream")
	_, _ = io.WriteString(w, head+`{"index":0,"delta":`+delta+`,"finish_reason":null}]}`+"\n\n"+
		head+`{"index":0,"delta":{},"finish_reason":"`+finish+`"}]}`+"\n\n"+
		head+`],"usage":`+mockUsage(prompt, completion)+`}`+"\n\n"+
		"data: [DONE]\n\n")
}
