package app

import (
	"net/netip"
	"strings"
	"time"

	"github.com/dawn-go/dawn/internal/yamldoc"
	"gopkg.in/yaml.v3"
)

// Webhooks is dawn.yaml's webhooks: section: how the server signs and
// sends the POST a run request's webhook URL asks for when the run ends.
type Webhooks struct {
	// SecretEnv names the environment variable holding the HMAC-SHA256
	// signing secret. Without it (or with the variable empty) run
	// requests that carry a webhook are refused.
	SecretEnv string
	// Allow lists host names and IP addresses or CIDR ranges a webhook may
	// reach although they are loopback, link-local or private.
	Allow []string
	// Timeout bounds one delivery attempt; zero means 10s.
	Timeout time.Duration
	// Attempts is how many times a delivery is tried; zero means 5.
	Attempts int
	// Backoff is the wait before the second attempt, doubled before each
	// next one; zero means 1s.
	Backoff time.Duration
	// Keep is how long a delivery that ended stays on record; zero means
	// 7 days.
	Keep time.Duration
}

// webhooksSection is the dawn.yaml section of the webhook settings.
const webhooksSection = "webhooks"

// webhooks reads the webhooks: section:
// {secret_env: NAME, allow: [host or CIDR, ...], timeout: 10s, attempts: 5,
// backoff: 1s, keep: 168h}.
func (p *configParser) webhooks(section *yaml.Node) Webhooks {
	var w Webhooks
	if yamldoc.IsNull(section) {
		return w
	}
	if section.Kind != yaml.MappingNode {
		p.fail(section.Line, "%s must be a mapping, like %s: {secret_env: DAWN_WEBHOOK_SECRET}", webhooksSection, webhooksSection)
		return w
	}
	for key, val := range yamldoc.Pairs(section) {
		full := webhooksSection + "." + key.Value
		switch key.Value {
		case "secret_env":
			w.SecretEnv = p.text(key, val)
		case "allow":
			w.Allow = p.allowList(full, val)
		case "timeout":
			d, err := yamldoc.Duration(val)
			if err != nil {
				p.fail(key.Line, "%s %v", full, err)
				continue
			}
			w.Timeout = d
		case "attempts":
			n, ok := yamldoc.Int(val)
			if !ok || n < 1 || n > 20 {
				p.fail(key.Line, "%s must be a whole number from 1 to 20, not %q", full, val.Value)
				continue
			}
			w.Attempts = n
		case "backoff":
			d, err := yamldoc.Duration(val)
			if err != nil || d < time.Millisecond || d > time.Minute {
				p.fail(key.Line, "%s must be a duration from 1ms to 1m, like 1s, not %q", full, val.Value)
				continue
			}
			w.Backoff = d
		case "keep":
			d, err := yamldoc.Duration(val)
			if err != nil || d <= 0 {
				p.fail(key.Line, "%s must be a positive duration, like 168h, not %q", full, val.Value)
				continue
			}
			w.Keep = d
		default:
			p.fail(key.Line, "field %s not found; allowed keys in %s: secret_env, allow, timeout, attempts, backoff, keep", full, webhooksSection)
		}
	}
	return w
}

// allowList reads webhooks.allow: a list of host names, IP addresses and
// CIDR ranges.
func (p *configParser) allowList(full string, val *yaml.Node) []string {
	if yamldoc.IsNull(val) {
		return nil
	}
	if val.Kind != yaml.SequenceNode {
		p.fail(val.Line, "%s must be a list of host names, IP addresses or CIDR ranges, like [127.0.0.1, 10.0.0.0/8, hooks.internal]", full)
		return nil
	}
	var out []string
	for _, item := range val.Content {
		s := strings.TrimSpace(item.Value)
		if item.Kind != yaml.ScalarNode || s == "" || !validAllowEntry(s) {
			p.fail(item.Line, "%s: %q is not a host name, IP address or CIDR range", full, item.Value)
			continue
		}
		out = append(out, s)
	}
	return out
}

func validAllowEntry(s string) bool {
	if strings.Contains(s, "/") {
		_, err := netip.ParsePrefix(s)
		return err == nil
	}
	if _, err := netip.ParseAddr(s); err == nil {
		return true
	}
	return !strings.ContainsAny(s, " :/@?#")
}
