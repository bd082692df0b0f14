package webhook

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"sync"
	"time"
)

// SignatureHeader carries the body's signature: "sha256=" and the hex
// HMAC-SHA256 of the body under the secret.
const SignatureHeader = "X-Dawn-Signature"

// AttemptHeader carries the attempt number, from 1.
const AttemptHeader = "X-Dawn-Webhook-Attempt"

// Payload is the body of a webhook POST. Its names follow LangGraph's
// webhook body (the run, with its final values) where it has one.
type Payload struct {
	RunID    string `json:"run_id"`
	ThreadID string `json:"thread_id"`
	// AssistantID is the route id, as the LangGraph dialect names routes.
	AssistantID string `json:"assistant_id"`
	// Status is success, error, cancelled or interrupted (parked for a
	// person).
	Status string `json:"status"`
	// Values are the final state values of a run that succeeded.
	Values json.RawMessage `json:"values,omitempty"`
	// Output is the run's done output: the final values, the parked
	// output, {"error": ...} or {"cancelled": true}.
	Output json.RawMessage `json:"output"`
	// Interrupts are what a parked run waits on.
	Interrupts json.RawMessage `json:"interrupts,omitempty"`
	Error      string          `json:"error,omitempty"`
	// WebhookSentAt is when this attempt was sent.
	WebhookSentAt time.Time `json:"webhook_sent_at"`
}

// Delivery is how a run's webhook went.
type Delivery struct {
	RunID    string `json:"run_id"`
	ThreadID string `json:"thread_id"`
	URL      string `json:"url"`
	// Status is delivering, delivered or failed (after every attempt).
	Status   string `json:"status"`
	Attempts int    `json:"attempts"`
	// Code is the receiver's last HTTP status, 0 when none came.
	Code  int    `json:"code,omitempty"`
	Error string `json:"error,omitempty"`
}

// Delivery statuses.
const (
	Delivering = "delivering"
	Delivered  = "delivered"
	Failed     = "failed"
)

// Config configures a Sender.
type Config struct {
	// Secret signs every body; without it Check refuses every URL.
	Secret []byte
	// SecretEnv names where the secret came from, for error messages.
	SecretEnv string
	// Allow are host names, addresses and CIDR ranges that may be
	// reached although they are not public.
	Allow []string
	// Timeout bounds one attempt (default 10s).
	Timeout time.Duration
	// Attempts is how many times a delivery is tried (default 5).
	Attempts int
	// Backoff is the wait before the second attempt, doubled before each
	// next one up to a minute (default 1s).
	Backoff time.Duration
	Logger  *slog.Logger
	// Lookup resolves host names (default the system resolver).
	Lookup func(ctx context.Context, host string) ([]netip.Addr, error)
}

// keep is how many deliveries a Sender remembers.
const keep = 1000

// Sender checks webhook URLs and delivers payloads to them in the
// background.
type Sender struct {
	cfg    Config
	allow  allowList
	lookup lookupFunc
	client *http.Client
	log    *slog.Logger
	wg     sync.WaitGroup
	quit   chan struct{}

	mu         sync.Mutex
	deliveries map[string]*Delivery
	order      []string
}

// New returns a Sender; an allow entry that is not a host, address or
// range is an error.
func New(cfg Config) (*Sender, error) {
	allow, err := parseAllow(cfg.Allow)
	if err != nil {
		return nil, err
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = 10 * time.Second
	}
	if cfg.Attempts <= 0 {
		cfg.Attempts = 5
	}
	if cfg.Backoff <= 0 {
		cfg.Backoff = time.Second
	}
	s := &Sender{cfg: cfg, allow: allow, lookup: cfg.Lookup, log: cfg.Logger, quit: make(chan struct{}), deliveries: map[string]*Delivery{}}
	if s.lookup == nil {
		s.lookup = systemLookup
	}
	if s.log == nil {
		s.log = slog.Default()
	}
	d := &dialer{allow: allow, lookup: s.lookup, net: net.Dialer{Timeout: cfg.Timeout}}
	s.client = &http.Client{
		Timeout:   cfg.Timeout,
		Transport: &http.Transport{DialContext: d.DialContext, Proxy: nil, ForceAttemptHTTP2: true, TLSHandshakeTimeout: cfg.Timeout, MaxIdleConnsPerHost: 4},
		// A redirect could lead anywhere: the receiver answers itself.
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
	return s, nil
}

// Check checks a webhook URL when a run request brings it.
func (s *Sender) Check(ctx context.Context, raw string) error {
	if len(s.cfg.Secret) == 0 {
		name := s.cfg.SecretEnv
		if name == "" {
			return errors.New("webhook needs a signing secret: set webhooks.secret_env in dawn.yaml to the name of an environment variable holding it")
		}
		return fmt.Errorf("webhook needs a signing secret: the environment variable %s (webhooks.secret_env in dawn.yaml) is empty", name)
	}
	return s.allow.checkURL(ctx, raw, s.lookup)
}

// Sign returns the SignatureHeader value of body under secret.
func Sign(secret, body []byte) string {
	mac := hmac.New(sha256.New, secret)
	mac.Write(body)
	return "sha256=" + hex.EncodeToString(mac.Sum(nil))
}

// Verify reports whether header is body's signature under secret.
func Verify(secret, body []byte, header string) bool {
	return hmac.Equal([]byte(header), []byte(Sign(secret, body)))
}

// Deliver sends p to url in the background; it never blocks.
func (s *Sender) Deliver(url string, p Payload) {
	d := &Delivery{RunID: p.RunID, ThreadID: p.ThreadID, URL: url, Status: Delivering}
	s.mu.Lock()
	s.deliveries[p.RunID] = d
	s.order = append(s.order, p.RunID)
	if len(s.order) > keep {
		delete(s.deliveries, s.order[0])
		s.order = s.order[1:]
	}
	s.mu.Unlock()
	select {
	case <-s.quit:
		s.mu.Lock()
		d.Status, d.Error = Failed, "the server was stopping"
		s.mu.Unlock()
		s.log.Error("webhook failed: the server was stopping", "run", p.RunID, "url", url)
		return
	default:
	}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		s.deliver(url, p, d)
	}()
}

// Delivery returns how the webhook of run went, if the Sender still
// remembers it.
func (s *Sender) Delivery(runID string) (Delivery, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	d, ok := s.deliveries[runID]
	if !ok {
		return Delivery{}, false
	}
	return *d, true
}

// Close stops retrying and waits, until ctx ends, for the attempts under
// way.
func (s *Sender) Close(ctx context.Context) {
	close(s.quit)
	done := make(chan struct{})
	go func() { s.wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-ctx.Done():
	}
}

func (s *Sender) deliver(url string, p Payload, d *Delivery) {
	wait := s.cfg.Backoff
	for attempt := 1; ; attempt++ {
		code, err := s.attempt(url, p, attempt)
		retry := err != nil || code >= 500 || code == http.StatusTooManyRequests
		s.mu.Lock()
		d.Attempts, d.Code = attempt, code
		d.Error = ""
		switch {
		case !retry && code < 300:
			d.Status = Delivered
		case err != nil:
			d.Error = err.Error()
		default:
			d.Error = "the receiver answered " + strconv.Itoa(code)
		}
		if d.Status != Delivered && (!retry || attempt >= s.cfg.Attempts) {
			d.Status = Failed
		}
		final := *d
		s.mu.Unlock()
		switch final.Status {
		case Delivered:
			s.log.Info("webhook delivered", "run", p.RunID, "thread", p.ThreadID, "url", url, "attempts", attempt, "code", code)
			return
		case Failed:
			s.log.Error("webhook failed", "run", p.RunID, "thread", p.ThreadID, "url", url, "attempts", attempt, "code", code, "err", final.Error)
			return
		}
		s.log.Warn("webhook attempt failed; retrying", "run", p.RunID, "url", url, "attempt", attempt, "code", code, "err", final.Error, "wait", wait)
		select {
		case <-time.After(wait):
		case <-s.quit:
			s.mu.Lock()
			d.Status = Failed
			s.mu.Unlock()
			s.log.Error("webhook failed: the server stopped before it was delivered", "run", p.RunID, "url", url, "attempts", attempt)
			return
		}
		wait = min(2*wait, time.Minute)
	}
}

// attempt POSTs p once and returns the receiver's status code.
func (s *Sender) attempt(url string, p Payload, n int) (int, error) {
	p.WebhookSentAt = time.Now().UTC()
	body, err := json.Marshal(p)
	if err != nil {
		return 0, err
	}
	req, err := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return 0, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "dawn-webhook")
	req.Header.Set(SignatureHeader, Sign(s.cfg.Secret, body))
	req.Header.Set(AttemptHeader, strconv.Itoa(n))
	resp, err := s.client.Do(req)
	if err != nil {
		return 0, err
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	resp.Body.Close()
	return resp.StatusCode, nil
}
