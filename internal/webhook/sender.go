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

	"github.com/dawn-go/dawn/internal/store"
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

// Push is a delivery whose body another wire shapes (an A2A task, for a
// push notification): it is sent as it is, signed like every delivery,
// with Headers added. The outbox keeps it as {"push": Push} in a
// delivery's payload (PushPayload).
type Push struct {
	Body    json.RawMessage   `json:"body"`
	Headers map[string]string `json:"headers,omitempty"`
}

// PushPayload is the outbox payload of a Push.
func PushPayload(p Push) (json.RawMessage, error) {
	return json.Marshal(struct {
		Push Push `json:"push"`
	}{p})
}

// Delivery is how a run's webhook went, as GET
// /threads/:id/runs/:run/webhook answers it.
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

// DeliveryOf is how the delivery w, as the store keeps it, went.
func DeliveryOf(w store.Webhook) Delivery {
	d := Delivery{RunID: w.RunID, ThreadID: w.ThreadID, URL: w.URL, Status: w.Status, Attempts: w.Attempts, Code: w.Code, Error: w.Error}
	if w.Status == store.WebhookPending {
		d.Status = Delivering
	}
	return d
}

// Config configures a Sender.
type Config struct {
	// Secret signs every body; without it Check refuses every URL and
	// the Sender sends nothing.
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
	// Poll is how often the outbox is looked at for due deliveries
	// recorded by other servers, or left by one that stopped (default
	// 1s); deliveries this server records are sent at once.
	Poll time.Duration
	// Keep is how long a delivery that ended (delivered or failed) is
	// kept in the store (default 7 days).
	Keep   time.Duration
	Logger *slog.Logger
	// Lookup resolves host names (default the system resolver).
	Lookup func(ctx context.Context, host string) ([]netip.Addr, error)
}

// Outbox is where deliveries wait to be sent: the store's webhook outbox
// (store.Webhooks's methods of those names).
type Outbox interface {
	ClaimWebhooks(ctx context.Context, limit int, hold time.Duration) ([]store.Webhook, error)
	RecordWebhookAttempt(ctx context.Context, runID string, a store.WebhookAttempt) error
	ReleaseWebhooks(ctx context.Context) (int, error)
	SweepWebhooks(ctx context.Context, before time.Time) (int, error)
	GetWebhook(ctx context.Context, runID string) (store.Webhook, error)
}

// inFlight is how many attempts a Sender makes at once.
const inFlight = 16

// sweepEvery is how often a Sender sweeps the deliveries past Keep.
const sweepEvery = time.Hour

// Sender checks webhook URLs and sends the deliveries of an Outbox: it
// claims the due ones, makes one attempt at each, and records how it went,
// so that any server on the store carries on where another stopped.
type Sender struct {
	cfg    Config
	allow  allowList
	lookup lookupFunc
	client *http.Client
	log    *slog.Logger

	wake chan struct{}
	quit chan struct{}
	// ctx is the attempts' context, cancelled when Close gives up
	// waiting for them.
	ctx    context.Context
	cancel context.CancelFunc
	loop   sync.WaitGroup // the poll loop
	sends  sync.WaitGroup // attempts under way

	mu      sync.Mutex
	box     Outbox
	sending map[string]bool // run ids with an attempt under way
	closed  bool
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
	if cfg.Poll <= 0 {
		cfg.Poll = time.Second
	}
	if cfg.Keep <= 0 {
		cfg.Keep = 7 * 24 * time.Hour
	}
	s := &Sender{cfg: cfg, allow: allow, lookup: cfg.Lookup, log: cfg.Logger, wake: make(chan struct{}, 1), quit: make(chan struct{}), sending: map[string]bool{}}
	s.ctx, s.cancel = context.WithCancel(context.Background())
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

// Attempts is how many times a delivery is tried.
func (s *Sender) Attempts() int { return s.cfg.Attempts }

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

// Start sends the deliveries of box from now until Close: the due ones
// at once, later ones when they fall due. Only the first call starts; a
// Sender without a secret sends nothing (its deliveries wait for a
// server that has one).
func (s *Sender) Start(box Outbox) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.box != nil || s.closed {
		return
	}
	s.box = box
	if len(s.cfg.Secret) == 0 {
		return
	}
	s.loop.Add(1)
	go s.poll()
}

// Wake has the Sender look for due deliveries now, as after a run
// recorded one.
func (s *Sender) Wake() {
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// Delivery is how the webhook of run went, read from the outbox the
// Sender was started with; store.ErrNotFound when there is none.
func (s *Sender) Delivery(ctx context.Context, runID string) (Delivery, error) {
	s.mu.Lock()
	box := s.box
	s.mu.Unlock()
	if box == nil {
		return Delivery{}, fmt.Errorf("webhook of run %q: %w: the sender was not started", runID, store.ErrNotFound)
	}
	w, err := box.GetWebhook(ctx, runID)
	if err != nil {
		return Delivery{}, err
	}
	return DeliveryOf(w), nil
}

// Close stops claiming deliveries and waits, until ctx ends, for the
// attempts under way; those still under way then are cut off. Every
// delivery this server still holds goes back to the outbox, due at once
// for the next server (or this one after a restart): a stop gives up
// nothing.
func (s *Sender) Close(ctx context.Context) {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return
	}
	s.closed = true
	box := s.box
	s.mu.Unlock()
	close(s.quit)
	s.loop.Wait()
	done := make(chan struct{})
	go func() { s.sends.Wait(); close(done) }()
	select {
	case <-done:
	case <-ctx.Done():
		s.cancel()
		<-done
	}
	s.cancel()
	if box == nil {
		return
	}
	rctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if n, err := box.ReleaseWebhooks(rctx); err != nil && !errors.Is(err, store.ErrUnavailable) {
		s.log.Warn("cannot hand back the webhook deliveries under way; another server takes them over once this one's lease expires", "err", err)
	} else if n > 0 {
		s.log.Info("webhook deliveries under way at shutdown are left to the next server", "deliveries", n)
	}
}

// poll claims and sends due deliveries each time it is woken or Poll
// passes, and sweeps the ended ones past Keep every sweepEvery.
func (s *Sender) poll() {
	defer s.loop.Done()
	t := time.NewTimer(0)
	defer t.Stop()
	var swept time.Time
	for {
		select {
		case <-s.quit:
			return
		case <-s.wake:
		case <-t.C:
		}
		if time.Since(swept) >= sweepEvery {
			swept = time.Now()
			s.sweep()
		}
		if !s.claim() {
			return
		}
		t.Reset(s.cfg.Poll)
	}
}

// sweep deletes the deliveries that ended more than Keep ago.
func (s *Sender) sweep() {
	ctx, cancel := context.WithTimeout(s.ctx, time.Minute)
	defer cancel()
	if n, err := s.box.SweepWebhooks(ctx, time.Now().Add(-s.cfg.Keep)); err != nil {
		s.log.Warn("cannot sweep old webhook deliveries", "err", err)
	} else if n > 0 {
		s.log.Info("swept old webhook deliveries", "deliveries", n, "older_than", s.cfg.Keep)
	}
}

// hold is how long a claim lasts before other servers look at whether
// its claimer is still alive: longer than an attempt and its record take.
func (s *Sender) hold() time.Duration { return 2*s.cfg.Timeout + 10*time.Second }

// claim claims as many due deliveries as it has room for and starts an
// attempt at each. It reports false once the outbox's store is closed:
// there is nothing more to send from it.
func (s *Sender) claim() bool {
	s.mu.Lock()
	room := inFlight - len(s.sending)
	s.mu.Unlock()
	if room <= 0 {
		return true
	}
	ctx, cancel := context.WithTimeout(s.ctx, s.cfg.Timeout)
	ws, err := s.box.ClaimWebhooks(ctx, room, s.hold())
	cancel()
	switch {
	case errors.Is(err, store.ErrClosed):
		return false
	case err != nil:
		if s.ctx.Err() == nil {
			s.log.Warn("cannot look for due webhook deliveries; trying again", "err", err)
		}
		return true
	}
	for _, w := range ws {
		s.mu.Lock()
		busy := s.sending[w.RunID] || s.closed
		if !busy {
			s.sending[w.RunID] = true
			s.sends.Add(1)
		}
		s.mu.Unlock()
		if !busy {
			go s.send(w)
		}
	}
	return true
}

// send makes the next attempt at w and records how it went.
func (s *Sender) send(w store.Webhook) {
	defer s.sends.Done()
	defer func() {
		s.mu.Lock()
		delete(s.sending, w.RunID)
		s.mu.Unlock()
	}()
	n := w.Attempts + 1
	code, err := s.attemptStored(w, n)
	if s.ctx.Err() != nil {
		return // cut off by Close: the delivery goes back to the outbox
	}
	a, wait := s.outcome(w, n, code, err)
	ctx, cancel := context.WithTimeout(context.Background(), s.cfg.Timeout)
	defer cancel()
	switch err := s.box.RecordWebhookAttempt(ctx, w.RunID, a); {
	case errors.Is(err, store.ErrNotFound):
		s.log.Info("webhook attempt made for a delivery deleted meanwhile (with its thread)", "run", w.RunID, "attempt", n)
		return
	case err != nil:
		s.log.Warn("cannot record a webhook attempt; the delivery is tried again", "run", w.RunID, "attempt", n, "err", err)
		return
	}
	s.report(w, a, wait)
	if a.Status == store.WebhookPending {
		time.AfterFunc(wait, s.Wake)
	}
}

// outcome is how attempt n at w went, given the receiver's code or err,
// and the wait before the next one.
func (s *Sender) outcome(w store.Webhook, n, code int, err error) (store.WebhookAttempt, time.Duration) {
	retry := err != nil || code >= 500 || code == http.StatusTooManyRequests
	a := store.WebhookAttempt{Attempt: n, Code: code, Status: store.WebhookFailed}
	switch {
	case !retry && code < 300:
		a.Status = store.WebhookDelivered
		return a, 0
	case err != nil:
		a.Error = err.Error()
	default:
		a.Error = "the receiver answered " + strconv.Itoa(code)
	}
	if !retry || n >= w.MaxAttempts {
		return a, 0
	}
	wait := s.cfg.Backoff
	for i := 1; i < n && wait < time.Minute; i++ {
		wait *= 2
	}
	wait = min(wait, time.Minute)
	a.Status, a.Next = store.WebhookPending, time.Now().Add(wait)
	return a, wait
}

// report logs how an attempt went.
func (s *Sender) report(w store.Webhook, a store.WebhookAttempt, wait time.Duration) {
	switch a.Status {
	case store.WebhookDelivered:
		s.log.Info("webhook delivered", "run", w.RunID, "thread", w.ThreadID, "url", w.URL, "attempts", a.Attempt, "code", a.Code)
	case store.WebhookFailed:
		s.log.Error("webhook failed", "run", w.RunID, "thread", w.ThreadID, "url", w.URL, "attempts", a.Attempt, "code", a.Code, "err", a.Error)
	default:
		s.log.Warn("webhook attempt failed; retrying", "run", w.RunID, "url", w.URL, "attempt", a.Attempt, "code", a.Code, "err", a.Error, "wait", wait)
	}
}

// attemptStored makes attempt n at w: a push's body as it is, with its
// headers, or a run's Payload with the time it is sent at.
func (s *Sender) attemptStored(w store.Webhook, n int) (int, error) {
	var env struct {
		Push *Push `json:"push"`
	}
	if err := json.Unmarshal(w.Payload, &env); err != nil {
		return 0, err
	}
	if env.Push != nil {
		return s.attempt(s.ctx, w.URL, env.Push.Body, env.Push.Headers, n)
	}
	var p Payload
	if err := json.Unmarshal(w.Payload, &p); err != nil {
		return 0, err
	}
	p.WebhookSentAt = time.Now().UTC()
	body, err := json.Marshal(p)
	if err != nil {
		return 0, err
	}
	return s.attempt(s.ctx, w.URL, body, nil, n)
}

// attempt POSTs body once, signed, with headers, and returns the
// receiver's status code.
func (s *Sender) attempt(ctx context.Context, url string, body []byte, headers map[string]string, n int) (int, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return 0, err
	}
	for k, v := range headers {
		req.Header.Set(k, v)
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
