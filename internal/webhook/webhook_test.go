package webhook_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/dawn-go/dawn/internal/store"
	"github.com/dawn-go/dawn/internal/webhook"
	"github.com/dawn-go/dawn/internal/webhook/webhooktest"
)

// TestCheck: only http and https URLs pass, and a host that is (or
// resolves to) a loopback, link-local or private address passes only when
// the allow-list names its address, range or name.
func TestCheck(t *testing.T) {
	ctx := context.Background()
	s := webhooktest.Sender(t, func(c *webhook.Config) { c.Allow = []string{"10.0.0.0/8", "hooks.internal", "127.0.0.1"} })
	for url, want := range map[string]string{
		"http://127.0.0.1:9/hook":        "",
		"https://10.20.30.40/hook":       "",
		"http://hooks.internal/hook":     "",
		"http://93.184.215.14/hook":      "",
		"http://127.0.0.2/hook":          "refused",
		"http://[::1]:8080/hook":         "refused",
		"http://[fe80::1]/hook":          "refused",
		"http://169.254.169.254/meta":    "refused",
		"http://172.16.0.1/hook":         "refused",
		"http://[::ffff:192.168.0.1]/x":  "refused",
		"http://0.0.0.0/hook":            "refused",
		"http://100.64.0.1/hook":         "refused",
		"ftp://example.com/hook":         "http or https",
		"hooks.internal/hook":            "http or https",
		"http://user:pw@hooks.internal/": "user name",
		"http:///hook":                   "no host",
	} {
		err := s.Check(ctx, url)
		switch {
		case want == "" && err != nil:
			t.Errorf("%s refused: %v", url, err)
		case want != "" && (err == nil || !strings.Contains(err.Error(), want) || !strings.HasPrefix(err.Error(), "webhook")):
			t.Errorf("%s: %v, want an error saying %q", url, err, want)
		case want == "refused" && !errors.Is(err, webhook.ErrRefused):
			t.Errorf("%s: %v is not ErrRefused", url, err)
		}
	}
}

// TestCheckNeedsSecret: without a signing secret every webhook is refused,
// and the error names the setting.
func TestCheckNeedsSecret(t *testing.T) {
	s := webhooktest.Sender(t, func(c *webhook.Config) { c.Secret, c.SecretEnv = nil, "DAWN_WEBHOOK_SECRET" })
	err := s.Check(context.Background(), "http://127.0.0.1/hook")
	if err == nil || !strings.Contains(err.Error(), "DAWN_WEBHOOK_SECRET") || !strings.Contains(err.Error(), "webhooks.secret_env in dawn.yaml") {
		t.Fatalf("err: %v", err)
	}
}

// TestRetries: 5xx and 429 are tried again up to Attempts; any other 4xx
// fails at once.
func TestRetries(t *testing.T) {
	cases := []struct {
		codes    []int
		posts    int
		status   string
		attempts int
	}{
		{[]int{502, 429}, 3, webhook.Delivered, 3},
		{[]int{500, 500, 500}, 3, webhook.Failed, 3},
		{[]int{400}, 1, webhook.Failed, 1},
		{[]int{410}, 1, webhook.Failed, 1},
	}
	for _, c := range cases {
		rcv := webhooktest.NewReceiver(t, c.codes...)
		s := webhooktest.Sender(t, nil)
		webhooktest.Deliver(t, s, rcv.URL, webhook.Payload{RunID: "r1", ThreadID: "t1", Status: "success"})
		d := webhooktest.WaitDelivery(t, s, "r1")
		posts := rcv.Wait(t, c.posts)
		if len(posts) != c.posts || d.Status != c.status || d.Attempts != c.attempts {
			t.Errorf("codes %v: %d posts, delivery %+v", c.codes, len(posts), d)
		}
		for _, p := range posts {
			if !p.Signed {
				t.Errorf("codes %v: an unsigned POST", c.codes)
			}
		}
	}
}

// TestSignature is the receiver's check, as the docs show it.
func TestSignature(t *testing.T) {
	body := []byte(`{"run_id":"r1"}`)
	sig := webhook.Sign([]byte("s3cret"), body)
	if !strings.HasPrefix(sig, "sha256=") || !webhook.Verify([]byte("s3cret"), body, sig) {
		t.Fatalf("signature %s does not verify", sig)
	}
	if webhook.Verify([]byte("other"), body, sig) || webhook.Verify([]byte("s3cret"), append(body, ' '), sig) {
		t.Fatal("a wrong secret or body verified")
	}
}

// TestCloseLeavesDeliveryPending: a server that stops while an attempt
// is under way cuts it off once its grace ends and leaves the delivery
// pending in the store, not failed; the next server on the store (here
// after a restart) sends it.
func TestCloseLeavesDeliveryPending(t *testing.T) {
	arrived, release := make(chan struct{}, 4), make(chan struct{})
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		arrived <- struct{}{}
		if calls.Add(1) == 1 {
			select { // the first attempt hangs until the server gives up on it
			case <-release:
			case <-r.Context().Done():
			}
		}
	}))
	defer srv.Close()
	defer close(release)
	path := filepath.Join(t.TempDir(), "dawn.db")
	st, err := store.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	first := webhooktest.Sender(t, nil)
	webhooktest.Record(t, st, first, srv.URL, webhook.Payload{RunID: "r1", ThreadID: "t1", Status: "success"})
	first.Start(st)
	<-arrived
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	first.Close(ctx)
	cancel()
	w, err := st.GetWebhook(context.Background(), "r1")
	if err != nil || w.Status != store.WebhookPending || w.Attempts != 0 {
		t.Fatalf("after the shutdown the delivery is %+v (%v), want pending with no attempt counted", w, err)
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}

	st2, err := store.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer st2.Close()
	second := webhooktest.Sender(t, nil)
	second.Start(st2)
	if d := webhooktest.WaitDelivery(t, second, "r1"); d.Status != webhook.Delivered || d.Attempts != 1 || calls.Load() != 2 {
		t.Fatalf("after the restart: %+v, %d POSTs", d, calls.Load())
	}
}
