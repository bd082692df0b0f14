package cli_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/dawn-go/dawn/internal/sandbox/sandboxtest"
)

// TestCheckSandbox: `dawn check` refuses a sandbox its host cannot run,
// naming dawn.yaml, the provider and what to install or start: local
// without bubblewrap on PATH, docker without a daemon; and passes the
// local provider where bubblewrap works.
func TestCheckSandbox(t *testing.T) {
	dawnBinary(t) // built before the checks' deadlines start
	route := map[string]string{"coder/agent.md": "---\nworkspace: thread\n---\nYou run commands.\n"}
	app := func(yaml string) string {
		dir := t.TempDir()
		writeFiles(t, dir, route)
		writeFiles(t, dir, map[string]string{"dawn.yaml": yaml})
		return dir
	}
	for _, tt := range []struct {
		name, yaml string
		env        []string
		want       string
	}{
		{"local without bwrap", "sandbox: {provider: local}\n", []string{"PATH=" + t.TempDir()}, "sandbox.provider local: sandbox unavailable: the local sandbox runs commands under bubblewrap, and bwrap is not on PATH; install it"},
		{"docker without a daemon", "sandbox: {provider: docker, image: busybox}\n", []string{"DOCKER_HOST=unix://" + filepath.Join(t.TempDir(), "none.sock")}, "sandbox.provider docker: sandbox unavailable: the Docker daemon does not answer"},
		{"a bad key", "sandbox: {provider: local, resources: {memory: 5}}\n", nil, `sandbox.resources: unknown key "memory"`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := app(tt.yaml)
			res := runDawnEnv(t, offlineEnv(tt.env...), "check", "--app", dir)
			if res.code != 1 || !strings.Contains(res.stdout+res.stderr, filepath.Join(dir, "dawn.yaml")) || !strings.Contains(res.stdout+res.stderr, tt.want) {
				t.Fatalf("check exited %d, want 1 naming dawn.yaml and %q\nstdout:\n%s\nstderr:\n%s", res.code, tt.want, res.stdout, res.stderr)
			}
		})
	}
	t.Run("local where bwrap works", func(t *testing.T) {
		sandboxtest.Bwrap(t)
		res := runDawnEnv(t, offlineEnv(), "check", "--app", app("sandbox: {provider: local}\n"))
		if res.code != 0 {
			t.Fatalf("check exited %d\nstdout:\n%s\nstderr:\n%s", res.code, res.stdout, res.stderr)
		}
	})
}
