package app_test

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/dawn-go/dawn/internal/app"
	"github.com/dawn-go/dawn/markers"
)

// TestWebhooksSection: webhooks: in dawn.yaml gives the secret's variable,
// the allow-list, the timeout, the attempts, the first retry's wait and
// how long ended deliveries are kept; a wrong key or value is an
// error naming dawn.yaml and the key.
func TestWebhooksSection(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, map[string]string{"dawn.yaml": "webhooks:\n  secret_env: DAWN_WEBHOOK_SECRET\n  allow: [127.0.0.1, 10.0.0.0/8, hooks.internal]\n  timeout: 3s\n  attempts: 2\n  backoff: 5s\n  keep: 48h\n"})
	c, err := app.LoadConfig(dir, markers.All())
	if err != nil {
		t.Fatal(err)
	}
	w := c.Webhooks
	if w.SecretEnv != "DAWN_WEBHOOK_SECRET" || !slices.Equal(w.Allow, []string{"127.0.0.1", "10.0.0.0/8", "hooks.internal"}) || w.Timeout != 3*time.Second || w.Attempts != 2 ||
		w.Backoff != 5*time.Second || w.Keep != 48*time.Hour {
		t.Fatalf("webhooks: %+v", w)
	}
	for yamlText, want := range map[string]string{
		"webhooks: on\n":                        "webhooks must be a mapping",
		"webhooks:\n  secret: x\n":              "field webhooks.secret not found; allowed keys in webhooks: secret_env, allow, timeout, attempts, backoff, keep",
		"webhooks:\n  allow: 10.0.0.0/8\n":      "webhooks.allow must be a list",
		"webhooks:\n  allow: [10.0.0.0/99]\n":   `webhooks.allow: "10.0.0.0/99" is not a host name, IP address or CIDR range`,
		"webhooks:\n  allow: [\"http://x/\"]\n": `webhooks.allow: "http://x/" is not a host name`,
		"webhooks:\n  attempts: 0\n":            "webhooks.attempts must be a whole number from 1 to 20",
		"webhooks:\n  attempts: 2.5\n":          "webhooks.attempts must be a whole number from 1 to 20",
		"webhooks:\n  timeout: soon\n":          "webhooks.timeout",
		"webhooks:\n  backoff: 2m\n":            "webhooks.backoff must be a duration from 1ms to 1m",
		"webhooks:\n  keep: 0s\n":               "webhooks.keep must be a positive duration",
	} {
		write(t, dir, map[string]string{"dawn.yaml": yamlText})
		_, err := app.LoadConfig(dir, markers.All())
		if err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "dawn.yaml") {
			t.Errorf("%q: err = %v, want %q naming dawn.yaml", yamlText, err, want)
		}
	}
}
