package cli

import (
	"fmt"
	"log/slog"

	"github.com/dawn-go/dawn/internal/app"
	"github.com/dawn-go/dawn/internal/webhook"
)

// newWebhooks builds the webhook sender from dawn.yaml's webhooks:
// section, with its secret read from the variable secret_env names.
func newWebhooks(w app.Webhooks, env func(string) string, logger *slog.Logger) (*webhook.Sender, error) {
	var secret []byte
	if w.SecretEnv != "" {
		secret = []byte(env(w.SecretEnv))
	}
	s, err := webhook.New(webhook.Config{Secret: secret, SecretEnv: w.SecretEnv, Allow: w.Allow, Timeout: w.Timeout, Attempts: w.Attempts, Backoff: w.Backoff, Keep: w.Keep, Logger: logger})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", app.ConfigFile, err)
	}
	return s, nil
}
