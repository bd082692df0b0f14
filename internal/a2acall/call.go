package a2acall

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/a2aproject/a2a-go/a2a"
	"github.com/a2aproject/a2a-go/a2aclient"
	"github.com/dawn-go/dawn/capabilities"
)

// maxCardBytes bounds an agent card.
const maxCardBytes = 1 << 20

// cancelTimeout bounds the tasks/cancel sent when a call stops early.
const cancelTimeout = 5 * time.Second

// remote is one remote subagent.
type remote struct {
	cfg  Config
	http *http.Client
}

// Address is the card's URL.
func (r *remote) Address() string { return r.cfg.Card }

// session is what a parked call keeps to go on with the same remote task.
type session struct {
	TaskID    a2a.TaskID `json:"task_id"`
	ContextID string     `json:"context_id"`
}

// Run sends task to the remote agent over message/stream and follows the
// task to its end, within the a2a.yaml's timeout.
func (r *remote) Run(ctx context.Context, task capabilities.RemoteTask) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, r.cfg.Timeout)
	defer cancel()
	client, err := r.connect(ctx)
	if err != nil {
		return "", err
	}
	defer client.Destroy()
	c := &call{remote: r, client: client, task: task, text: newText(r.cfg.MaxTextBytes), known: make(chan struct{})}
	msg, err := c.message()
	if err != nil {
		return "", err
	}
	// The stream outlives ctx by as long as it takes to learn the task's
	// id, so that a call cancelled (or out of time) right after sending
	// still cancels the remote task.
	streamCtx, stop := context.WithCancel(context.WithoutCancel(ctx))
	defer stop()
	watched := make(chan struct{})
	go func() {
		defer close(watched)
		select {
		case <-ctx.Done():
			c.cancelOnceKnown(ctx)
			stop()
		case <-streamCtx.Done():
		}
	}()
	answer, err := c.follow(streamCtx, msg)
	stop()
	<-watched
	switch {
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		return "", fmt.Errorf("remote agent %s did not finish within %s (timeout in %s); the task it started, if any, was cancelled", r.cfg.Card, r.cfg.Timeout, r.cfg.File)
	case ctx.Err() != nil:
		return "", ctx.Err()
	}
	return answer, err
}

// connect fetches the agent card and opens a JSON-RPC client to the agent
// it describes, trying again (Config.Retries) while the agent cannot be
// reached at all.
func (r *remote) connect(ctx context.Context) (*a2aclient.Client, error) {
	token, err := r.credential()
	if err != nil {
		return nil, err
	}
	var card *a2a.AgentCard
	err = r.retry(ctx, func() error {
		card, err = r.fetchCard(ctx, token)
		return err
	})
	if err != nil {
		return nil, err
	}
	opts := []a2aclient.FactoryOption{a2aclient.WithDefaultsDisabled(), a2aclient.WithJSONRPCTransport(r.http)}
	if token != "" {
		opts = append(opts, a2aclient.WithInterceptors(bearer(token)))
	}
	client, err := a2aclient.NewFromCard(ctx, card, opts...)
	if err != nil {
		return nil, fmt.Errorf("the card at %s offers no JSON-RPC interface this client speaks: %w", r.cfg.Card, err)
	}
	return client, nil
}

// credential is the bearer token of credential_env, or "".
func (r *remote) credential() (string, error) {
	if r.cfg.CredentialEnv == "" {
		return "", nil
	}
	token := os.Getenv(r.cfg.CredentialEnv)
	if token == "" {
		return "", fmt.Errorf("%s: credential_env names %s, which is not set in the server's environment; set it to the remote agent's token", r.cfg.File, r.cfg.CredentialEnv)
	}
	return token, nil
}

// fetchCard reads the agent card at the card URL.
func (r *remote) fetchCard(ctx context.Context, token string) (*a2a.AgentCard, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, r.cfg.Card, nil)
	if err != nil {
		return nil, err
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := r.http.Do(req)
	if err != nil {
		return nil, fmt.Errorf("remote agent card %s cannot be fetched: %w", r.cfg.Card, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("remote agent card %s answered %s; check card in %s", r.cfg.Card, resp.Status, r.cfg.File)
	}
	raw, err := io.ReadAll(io.LimitReader(resp.Body, maxCardBytes+1))
	if err != nil {
		return nil, fmt.Errorf("remote agent card %s cannot be read: %w", r.cfg.Card, err)
	}
	if len(raw) > maxCardBytes {
		return nil, fmt.Errorf("remote agent card %s is over %d bytes", r.cfg.Card, maxCardBytes)
	}
	var card a2a.AgentCard
	if err := json.Unmarshal(raw, &card); err != nil {
		return nil, fmt.Errorf("remote agent card %s is not an agent card: %v", r.cfg.Card, err)
	}
	if card.URL == "" {
		return nil, fmt.Errorf("remote agent card %s names no url to send tasks to", r.cfg.Card)
	}
	return &card, nil
}

// retry runs try until it succeeds, fails with an error other than an
// unreachable agent, or has been tried Config.Retries more times.
func (r *remote) retry(ctx context.Context, try func() error) error {
	for attempt := 0; ; attempt++ {
		err := try()
		if err == nil || attempt >= r.cfg.Retries || !unreachable(err) || ctx.Err() != nil {
			if err != nil && attempt > 0 {
				err = fmt.Errorf("%w (after %d attempts)", err, attempt+1)
			}
			return err
		}
		select {
		case <-ctx.Done():
			return err
		case <-timeAfter(attempt):
		}
	}
}

// unreachable says err is a failure to reach the agent at all (a refused
// or broken connection), which is worth trying again.
func unreachable(err error) bool {
	var ue *url.Error
	var ne net.Error
	return errors.As(err, &ue) || errors.As(err, &ne) || errors.Is(err, io.ErrUnexpectedEOF)
}

// bearer is a client interceptor that sends token as a bearer token.
type bearer string

func (b bearer) Before(ctx context.Context, req *a2aclient.Request) (context.Context, error) {
	if req.Meta == nil {
		req.Meta = a2aclient.CallMeta{}
	}
	req.Meta["Authorization"] = []string{"Bearer " + string(b)}
	return ctx, nil
}

func (bearer) After(context.Context, *a2aclient.Response) error { return nil }

// cutText returns s cut to at most n bytes on a rune boundary.
func cutText(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && n < len(s) && (s[n]&0xC0) == 0x80 {
		n--
	}
	return s[:n]
}

// join is the text of parts' text parts, joined by newlines.
func join(parts a2a.ContentParts) string {
	var texts []string
	for _, p := range parts {
		if t, ok := p.(a2a.TextPart); ok && t.Text != "" {
			texts = append(texts, t.Text)
		}
	}
	return strings.Join(texts, "\n")
}
