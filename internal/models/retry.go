package models

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Environment variables that bound retries; read by New.
const (
	// EnvRetries is how many times one model call is tried again after a
	// 429 or 5xx answer (default DefaultRetries; 0 turns retries off).
	EnvRetries = "DAWN_MODEL_RETRIES"
	// EnvRetryMaxWait is the longest wait before one retry, as a Go
	// duration (default DefaultRetryMaxWait). A server asking, through
	// Retry-After, for a longer wait is not retried: the error goes to the
	// next model in the list, or to the run.
	EnvRetryMaxWait = "DAWN_MODEL_RETRY_MAX_WAIT"
)

// Defaults for RetryPolicy.
const (
	DefaultRetries      = 2
	DefaultRetryMaxWait = 30 * time.Second
	// retryBaseWait is the first backoff when the server sends no
	// Retry-After; it doubles with each retry.
	retryBaseWait = 500 * time.Millisecond
	// maxRetries bounds EnvRetries, so a typo cannot retry for hours.
	maxRetries = 10
)

// RetryPolicy bounds how a model call is tried again after a 429 or 5xx.
type RetryPolicy struct {
	Retries int           // tries after the first; 0 means none
	MaxWait time.Duration // the longest wait before one try
}

// retryPolicyFrom reads EnvRetries and EnvRetryMaxWait.
func retryPolicyFrom(spec string, env func(string) string) (RetryPolicy, error) {
	p := RetryPolicy{Retries: DefaultRetries, MaxWait: DefaultRetryMaxWait}
	if raw := strings.TrimSpace(env(EnvRetries)); raw != "" {
		n, err := strconv.Atoi(raw)
		if err != nil || n < 0 || n > maxRetries {
			return p, fmt.Errorf("model %q: %s=%q must be a whole number from 0 to %d", spec, EnvRetries, raw, maxRetries)
		}
		p.Retries = n
	}
	if raw := strings.TrimSpace(env(EnvRetryMaxWait)); raw != "" {
		d, err := time.ParseDuration(raw)
		if err != nil || d < 0 {
			return p, fmt.Errorf("model %q: %s=%q must be a duration such as 30s or 2m", spec, EnvRetryMaxWait, raw)
		}
		p.MaxWait = d
	}
	return p, nil
}

// Attempt is a failed model call that is about to be tried again: by the
// same model after Wait (a retry), or by the next model of a fallback list.
type Attempt struct {
	// Attempt counts the failed tries of one GenerateContent call, from 1.
	Attempt int
	// Model is the model that failed; Next is the one tried next (equal to
	// Model for a retry).
	Model, Next string
	// Status is the HTTP status the server answered with, or 0.
	Status int
	// Err says why the try failed.
	Err error
	// Wait is how long Dawn waits before the next try.
	Wait time.Duration
}

// RetryEvent is the data of a "model_retry" stream event.
type RetryEvent struct {
	Attempt int    `json:"attempt"`
	Model   string `json:"model"`
	Next    string `json:"next"`
	Status  int    `json:"status,omitempty"`
	WaitMs  int64  `json:"wait_ms"`
	Error   string `json:"error"`
}

// EventData is the attempt as the data of a "model_retry" stream event.
func (a Attempt) EventData() RetryEvent {
	return RetryEvent{Attempt: a.Attempt, Model: a.Model, Next: a.Next, Status: a.Status, WaitMs: a.Wait.Milliseconds(), Error: a.Err.Error()}
}

type observerKey struct{}
type callKey struct{}

// WithAttemptObserver returns a context under which every model call from
// New reports each failed try it makes again to observe, before waiting.
// Without an observer, tries are logged through slog.Default.
func WithAttemptObserver(ctx context.Context, observe func(Attempt)) context.Context {
	return context.WithValue(ctx, observerKey{}, observe)
}

// callRecord numbers the attempts of one GenerateContent call.
type callRecord struct {
	mu      sync.Mutex
	n       int
	observe func(Attempt)
}

// beginCall marks ctx as one model call, unless an outer call (a fallback
// list) already did, so that attempts are numbered across the whole list.
func beginCall(ctx context.Context) context.Context {
	if _, ok := ctx.Value(callKey{}).(*callRecord); ok {
		return ctx
	}
	observe, _ := ctx.Value(observerKey{}).(func(Attempt))
	return context.WithValue(ctx, callKey{}, &callRecord{observe: observe})
}

// report numbers a, logs it and hands it to the observer of ctx.
func report(ctx context.Context, a Attempt) {
	rec, _ := ctx.Value(callKey{}).(*callRecord)
	if rec != nil {
		rec.mu.Lock()
		rec.n++
		a.Attempt = rec.n
		rec.mu.Unlock()
	}
	if rec != nil && rec.observe != nil {
		rec.observe(a)
		return
	}
	// Nobody is watching this call: the log still shows the attempt.
	slog.Default().Warn("model call failed; trying again", "model", a.Model, "next", a.Next, "attempt", a.Attempt, "status", a.Status, "wait", a.Wait, "error", a.Err)
}

// retryTransport tries a request again, within its policy, when the server
// answers 429 or a 5xx that may pass (not 501 or 505). It honours
// Retry-After and otherwise backs off exponentially. Retrying here, below
// the provider client, means a streamed answer is never retried half-way:
// those statuses come before any of its body.
type retryTransport struct {
	base   http.RoundTripper
	spec   string
	policy RetryPolicy
}

func (t *retryTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	// The first try is made from a small frame, which a held run waits
	// under (see checkedModel.generate); the tries again from retry's.
	resp, err := t.base.RoundTrip(req)
	if err != nil || !retryable(resp.StatusCode) || t.policy.Retries <= 0 {
		return resp, err
	}
	return t.retry(req, resp)
}

// retry tries req again after its answer resp, within the policy.
func (t *retryTransport) retry(req *http.Request, resp *http.Response) (*http.Response, error) {
	for try := 0; ; try++ {
		if try > 0 {
			var err error
			resp, err = t.base.RoundTrip(req)
			if err != nil || !retryable(resp.StatusCode) {
				return resp, err
			}
		}
		if try >= t.policy.Retries {
			return resp, nil
		}
		wait, ok := t.wait(resp.Header.Get("Retry-After"), try)
		if !ok || (req.Body != nil && req.GetBody == nil) {
			return resp, nil
		}
		next, err := rewind(req)
		if err != nil {
			return resp, nil
		}
		cause := statusError(resp)
		report(req.Context(), Attempt{Model: t.spec, Next: t.spec, Status: resp.StatusCode, Err: cause, Wait: wait})
		timer := time.NewTimer(wait)
		select {
		case <-req.Context().Done():
			timer.Stop()
			return nil, req.Context().Err()
		case <-timer.C:
		}
		req = next
	}
}

// retryable reports whether a status may pass if asked again.
func retryable(status int) bool {
	return status == http.StatusTooManyRequests ||
		(status >= 500 && status != http.StatusNotImplemented && status != http.StatusHTTPVersionNotSupported)
}

// wait is how long to wait before try number try+1: the server's
// Retry-After (seconds or an HTTP date) when it sent one, else an
// exponential backoff. ok is false when the server asks for longer than
// the policy allows.
func (t *retryTransport) wait(retryAfter string, try int) (time.Duration, bool) {
	if d, ok := parseRetryAfter(retryAfter, time.Now()); ok {
		return d, d <= t.policy.MaxWait
	}
	d := retryBaseWait << try
	return min(d, t.policy.MaxWait), true
}

// parseRetryAfter reads a Retry-After header: whole seconds or an HTTP
// date. A date in the past means no wait.
func parseRetryAfter(v string, now time.Time) (time.Duration, bool) {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0, false
	}
	if secs, err := strconv.Atoi(v); err == nil {
		if secs < 0 {
			return 0, false
		}
		return time.Duration(secs) * time.Second, true
	}
	if at, err := http.ParseTime(v); err == nil {
		return max(at.Sub(now), 0), true
	}
	return 0, false
}

// rewind returns a copy of req with a fresh body, for the next try.
func rewind(req *http.Request) (*http.Request, error) {
	next := req.Clone(req.Context())
	if req.Body == nil || req.GetBody == nil {
		return next, nil
	}
	body, err := req.GetBody()
	if err != nil {
		return nil, err
	}
	next.Body = body
	return next, nil
}

// statusError reads a little of a failed answer, for the attempt's error,
// and closes it so the connection can be reused.
func statusError(resp *http.Response) error {
	defer resp.Body.Close()
	snippet, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	text := strings.Join(strings.Fields(string(snippet)), " ")
	if text == "" {
		return errors.New(resp.Status)
	}
	return fmt.Errorf("%s: %s", resp.Status, text)
}
