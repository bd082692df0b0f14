package webhook_test

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dawn-go/dawn/internal/webhook"
	"github.com/dawn-go/dawn/internal/webhook/webhooktest"
)

// verifyDawnWebhook reads a webhook POST and reports whether its
// X-Dawn-Signature header is the HMAC-SHA256 of the body under secret.
func verifyDawnWebhook(r *http.Request, secret []byte) ([]byte, bool) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		return nil, false
	}
	mac := hmac.New(sha256.New, secret)
	mac.Write(body)
	want := "sha256=" + hex.EncodeToString(mac.Sum(nil))
	return body, hmac.Equal([]byte(r.Header.Get("X-Dawn-Signature")), []byte(want))
}

// TestReceiverVerifies: a receiver written with only the standard library,
// as the docs show it, verifies the POSTs a Sender signs, and refuses them
// under another secret.
func TestReceiverVerifies(t *testing.T) {
	results := make(chan bool, 2)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, ok := verifyDawnWebhook(r, []byte(webhooktest.Secret))
		_, other := verifyDawnWebhook(r, []byte("another secret"))
		results <- ok && !other
	}))
	defer srv.Close()
	s := webhooktest.Sender(t, nil)
	webhooktest.Deliver(t, s, srv.URL, webhook.Payload{RunID: "r1", ThreadID: "t1", Status: "success"})
	if !<-results {
		t.Fatal("the docs' receiver does not verify a signed POST, or verifies it under another secret")
	}
}

// TestDocsVerifierIsThisOne: the Go block of docs/webhooks.md is
// verifyDawnWebhook as this file has it, so the docs show code that runs.
func TestDocsVerifierIsThisOne(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join("..", "..", "docs", "webhooks.md"))
	if err != nil {
		t.Fatal(err)
	}
	src, err := os.ReadFile("verify_test.go")
	if err != nil {
		t.Fatal(err)
	}
	parts := strings.Split(string(doc), "```go internal/webhook/verify_test.go\n")
	if len(parts) != 2 {
		t.Fatalf("docs/webhooks.md has %d Go blocks, want 1", len(parts)-1)
	}
	block, _, _ := strings.Cut(parts[1], "```")
	if !strings.Contains(string(src), block) {
		t.Fatalf("the Go block of docs/webhooks.md is not in verify_test.go:\n%s", block)
	}
}
