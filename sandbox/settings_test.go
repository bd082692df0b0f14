package sandbox

import (
	"strings"
	"testing"
	"time"

	"github.com/dawn-go/dawn/internal/yamldoc"
)

// TestParseSettings: dawn.yaml's sandbox section with defaults, and each
// mistake named with its key and what to write.
func TestParseSettings(t *testing.T) {
	tests := []struct {
		name, yaml, want string // want "" parses
	}{
		{"defaults", "sandbox: {provider: local}", ""},
		{"everything", "sandbox: {provider: docker, image: debian:stable-slim, network: {mode: allow, denylist: []}, resources: {memory_mb: 256, cpus: 0.5, timeout: 30s, pids: 64, disk_mb: 32}, env: {LANG: C.UTF-8}, idle_timeout: 1m}", ""},
		{"no provider", "sandbox: {image: x}", "sandbox.provider is missing"},
		{"unknown provider", "sandbox: {provider: firecracker}", `sandbox.provider is "firecracker"; use local (bubblewrap) or docker`},
		{"docker without image", "sandbox: {provider: docker}", "sandbox.image is missing"},
		{"local with image", "sandbox: {provider: local, image: x}", "the local provider runs the host's own system folders"},
		{"bad mode", "sandbox: {provider: local, network: {mode: open}}", `sandbox.network.mode is "open"; use deny (no network) or allow`},
		{"denylist", "sandbox: {provider: local, network: {mode: allow, denylist: [169.254.169.254]}}", "provider can enforce a denylist"},
		{"fractional pids", "sandbox: {provider: local, resources: {pids: 1.5}}", "sandbox.resources.pids must be a whole number from 8 to 65536"},
		{"tiny memory", "sandbox: {provider: local, resources: {memory_mb: 1}}", "sandbox.resources.memory_mb must be a whole number from 16"},
		{"bad cpus", "sandbox: {provider: local, resources: {cpus: none}}", "sandbox.resources.cpus must be a positive number"},
		{"timeout in ms", "sandbox: {provider: local, resources: {timeout: 5000}}", "sandbox.resources.timeout must be a positive duration"},
		{"bad env name", "sandbox: {provider: local, env: {\"A-B\": x}}", `sandbox.env: "A-B" must be a variable name`},
		{"unknown key", "sandbox: {provider: local, security: {}}", `sandbox: unknown key "security"`},
		{"not a mapping", "sandbox: local", "sandbox must be a mapping"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root, err := yamldoc.Mapping([]byte(tt.yaml))
			if err != nil {
				t.Fatal(err)
			}
			s, err := parseSettings(root.Content[1])
			switch {
			case tt.want == "" && err != nil:
				t.Fatalf("error: %v", err)
			case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
				t.Fatalf("error %v, want one containing %q", err, tt.want)
			}
			if tt.name == "defaults" && (s.Timeout != 2*time.Minute || s.Pids != 256 || s.MemoryMB != 512 || s.Network.Allow || s.IdleTimeout != 10*time.Minute) {
				t.Errorf("defaults: %+v", s)
			}
			if tt.name == "everything" && (s.CPUs != 0.5 || s.Timeout != 30*time.Second || !s.Network.Allow || s.Env["LANG"] != "C.UTF-8" || s.Image != "debian:stable-slim") {
				t.Errorf("everything: %+v", s)
			}
		})
	}
}
