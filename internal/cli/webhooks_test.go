package cli

import (
	"context"
	"strings"
	"testing"

	"github.com/dawn-go/dawn/internal/app"
)

// TestNewWebhooks: the server's webhook sender signs with the secret in
// the variable webhooks.secret_env names, and without it refuses every
// webhook with an error naming the variable.
func TestNewWebhooks(t *testing.T) {
	w := app.Webhooks{SecretEnv: "DAWN_WEBHOOK_SECRET", Allow: []string{"127.0.0.1"}}
	env := map[string]string{"DAWN_WEBHOOK_SECRET": "s3cret"}
	s, err := newWebhooks(w, func(k string) string { return env[k] }, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Check(context.Background(), "http://127.0.0.1:9/hook"); err != nil {
		t.Fatalf("an allowed webhook was refused: %v", err)
	}
	s, err = newWebhooks(w, func(string) string { return "" }, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Check(context.Background(), "http://127.0.0.1:9/hook"); err == nil || !strings.Contains(err.Error(), "DAWN_WEBHOOK_SECRET") {
		t.Fatalf("without the secret: %v", err)
	}
}
