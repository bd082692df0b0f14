package cli_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestStartLogsWhatItServesWith: the ready line names the store (a
// Postgres URL without its password), whether telemetry exports, and the
// limits, so an operator reads the setup from the log.
func TestStartLogsWhatItServesWith(t *testing.T) {
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "hi"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "hi", "agent.md"), []byte("You answer."), 0o644); err != nil {
		t.Fatal(err)
	}
	db := filepath.Join(t.TempDir(), "dawn.db")
	s := startDawn(t, append(offlineEnv(), "DAWN_STORE="+db), time.Minute, "start", "--app", dir, "--host", "127.0.0.1", "--port", "0", "--max-runs", "77")
	var ready struct {
		Store     string `json:"store"`
		Telemetry *bool  `json:"telemetry"`
		MaxRuns   int    `json:"max_runs"`
		MaxConns  int    `json:"max_conns"`
	}
	for line := range strings.Lines(s.out.String()) {
		if strings.Contains(line, `"dawn server ready"`) {
			if err := json.Unmarshal([]byte(line), &ready); err != nil {
				t.Fatal(err)
			}
		}
	}
	if ready.Store != db || ready.Telemetry == nil || *ready.Telemetry || ready.MaxRuns != 77 || ready.MaxConns == 0 {
		t.Errorf("ready line = %+v, want store %s, telemetry false, max_runs 77 and max_conns; output:\n%s", ready, db, s.out.String())
	}
}

// TestStartWarnsOfModelsItCannotMake: a route whose model's provider is
// not configured (no OPENAI_API_KEY) is named at start with what to set,
// before its first run fails, and the server still starts.
func TestStartWarnsOfModelsItCannotMake(t *testing.T) {
	dir := t.TempDir()
	for _, r := range []string{"hi", "bye"} {
		if err := os.MkdirAll(filepath.Join(dir, r), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "hi", "agent.md"), []byte("---\nmodel: openai:gpt-4o-mini\n---\nYou answer."), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "bye", "agent.md"), []byte("You answer."), 0o644); err != nil {
		t.Fatal(err)
	}
	db := filepath.Join(t.TempDir(), "dawn.db")
	s := startDawn(t, append(offlineEnv(), "DAWN_STORE="+db), time.Minute, "start", "--app", dir, "--host", "127.0.0.1", "--port", "0")
	var warned struct {
		Level  string   `json:"level"`
		Model  string   `json:"model"`
		Routes []string `json:"routes"`
		Err    string   `json:"err"`
	}
	for line := range strings.Lines(s.out.String()) {
		if strings.Contains(line, "cannot run") {
			_ = json.Unmarshal([]byte(line), &warned)
		}
	}
	if warned.Level != "WARN" || warned.Model != "openai:gpt-4o-mini" || len(warned.Routes) != 1 || warned.Routes[0] != "/hi" || !strings.Contains(warned.Err, "OPENAI_API_KEY") {
		t.Errorf("start's warning = %+v, want one naming /hi, its model and OPENAI_API_KEY; output:\n%s", warned, s.out.String())
	}
}

// TestStartWarnsOfBypass: permissions mode bypass (here from the
// environment) is logged as a warning at start, naming the routes it
// holds for.
func TestStartWarnsOfBypass(t *testing.T) {
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "ops"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "ops", "agent.md"), []byte("---\nworkspace: thread\n---\nYou operate."), 0o644); err != nil {
		t.Fatal(err)
	}
	db := filepath.Join(t.TempDir(), "dawn.db")
	s := startDawn(t, append(offlineEnv(), "DAWN_STORE="+db, "DAWN_PERMISSIONS_MODE=bypass"), time.Minute, "start", "--app", dir, "--host", "127.0.0.1", "--port", "0")
	var warned struct {
		Level  string   `json:"level"`
		Msg    string   `json:"msg"`
		Routes []string `json:"routes"`
	}
	for line := range strings.Lines(s.out.String()) {
		if strings.Contains(line, "bypass") {
			_ = json.Unmarshal([]byte(line), &warned)
		}
	}
	if warned.Level != "WARN" || !strings.Contains(warned.Msg, "permissions mode is bypass") || len(warned.Routes) != 1 || warned.Routes[0] != "/ops" {
		t.Errorf("start's warning = %+v, want one naming bypass and /ops; output:\n%s", warned, s.out.String())
	}
}
