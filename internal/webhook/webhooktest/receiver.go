// Package webhooktest is a webhook receiver for tests: an HTTP server on
// loopback that records every POST, checks its signature, and answers
// with the status codes a test asks for.
package webhooktest

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"sync"
	"testing"
	"time"

	"github.com/dawn-go/dawn/internal/store"
	"github.com/dawn-go/dawn/internal/webhook"
)

// Secret is the signing secret of the Senders this package builds.
const Secret = "test-webhook-secret"

// Post is one POST the receiver got.
type Post struct {
	Payload   webhook.Payload
	Body      []byte
	Signature string
	Attempt   string
	// Signed says the signature matches the body under Secret.
	Signed bool
}

// Receiver records the webhook POSTs it gets.
type Receiver struct {
	URL string

	mu    sync.Mutex
	codes []int
	posts []Post
	got   chan struct{}
}

// NewReceiver starts a receiver that answers its first POSTs with codes,
// in order, and every later one with 200.
func NewReceiver(t testing.TB, codes ...int) *Receiver {
	t.Helper()
	r := &Receiver{codes: codes, got: make(chan struct{}, 100)}
	srv := httptest.NewServer(http.HandlerFunc(r.serve))
	t.Cleanup(srv.Close)
	r.URL = srv.URL + "/hook"
	return r
}

func (r *Receiver) serve(w http.ResponseWriter, req *http.Request) {
	body, _ := io.ReadAll(req.Body)
	p := Post{Body: body, Signature: req.Header.Get(webhook.SignatureHeader), Attempt: req.Header.Get(webhook.AttemptHeader)}
	p.Signed = req.Method == http.MethodPost && webhook.Verify([]byte(Secret), body, p.Signature)
	_ = json.Unmarshal(body, &p.Payload)
	r.mu.Lock()
	r.posts = append(r.posts, p)
	code := http.StatusOK
	if len(r.codes) > 0 {
		code, r.codes = r.codes[0], r.codes[1:]
	}
	r.mu.Unlock()
	w.WriteHeader(code)
	r.got <- struct{}{}
}

// Posts are the POSTs so far.
func (r *Receiver) Posts() []Post {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Post(nil), r.posts...)
}

// Wait waits up to 10 seconds for n POSTs in all, then a moment more so
// that one too many would show, and returns them all.
func (r *Receiver) Wait(t testing.TB, n int) []Post {
	t.Helper()
	deadline := time.After(10 * time.Second)
	for len(r.Posts()) < n {
		select {
		case <-r.got:
		case <-deadline:
			t.Fatalf("the receiver got %d webhook POSTs within 10s, want %d", len(r.Posts()), n)
		}
	}
	time.Sleep(200 * time.Millisecond)
	return r.Posts()
}

// Sender returns a Sender signing with Secret that may reach 127.0.0.1,
// retrying fast; change cfg's other fields with edit.
func Sender(t testing.TB, edit func(*webhook.Config)) *webhook.Sender {
	t.Helper()
	cfg := webhook.Config{Secret: []byte(Secret), Allow: []string{"127.0.0.1"}, Attempts: 3, Backoff: 20 * time.Millisecond, Timeout: 5 * time.Second}
	if edit != nil {
		edit(&cfg)
	}
	s, err := webhook.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close(context.Background()) })
	return s
}

// Rebinding is a Lookup whose first answer for any host is a public
// address and every later one loopback: a DNS answer that changes between
// the request's check and the dial.
func Rebinding() func(context.Context, string) ([]netip.Addr, error) {
	var mu sync.Mutex
	calls := 0
	return func(context.Context, string) ([]netip.Addr, error) {
		mu.Lock()
		defer mu.Unlock()
		calls++
		if calls == 1 {
			return []netip.Addr{netip.MustParseAddr("203.0.113.10")}, nil
		}
		return []netip.Addr{netip.MustParseAddr("127.0.0.1")}, nil
	}
}

// WaitDelivery waits up to 10 seconds for the webhook of run to be
// delivered or to fail, as the outbox s sends from records it, and
// returns how it went.
func WaitDelivery(t testing.TB, s *webhook.Sender, runID string) webhook.Delivery {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	var d webhook.Delivery
	var err error
	for time.Now().Before(deadline) {
		if d, err = s.Delivery(context.Background(), runID); err == nil && d.Status != webhook.Delivering {
			return d
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("the webhook of run %s is still %q after 10s (%v)", runID, d.Status, err)
	return d
}

// Deliver has s send p to url as a server sends the webhook of a run
// that ended: it records the delivery in a store of its own (see Record)
// and starts s on that store.
func Deliver(t testing.TB, s *webhook.Sender, url string, p webhook.Payload) {
	t.Helper()
	st, err := store.Open(":memory:")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	Record(t, st, s, url, p)
	s.Start(st)
	s.Wake()
}

// Record records p as the delivery to url of the run p names, in the
// transaction that ends that run on st (starting it first), with the
// attempts s allows.
func Record(t testing.TB, st store.Runs, s *webhook.Sender, url string, p webhook.Payload) {
	t.Helper()
	ctx := context.Background()
	if _, err := st.BeginRunChecked(ctx, store.Run{ID: p.RunID, ThreadID: p.ThreadID, Route: "/hook"}, nil); err != nil {
		t.Fatal(err)
	}
	body, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	hook := &store.Webhook{URL: url, Payload: body, MaxAttempts: s.Attempts()}
	if err := st.EndRun(ctx, p.RunID, store.Finish{Status: store.RunSuccess, Webhook: hook}, nil); err != nil {
		t.Fatal(err)
	}
}
