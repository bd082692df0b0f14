package app

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/dawn-go/dawn/planfirst"
	"gopkg.in/yaml.v3"
)

// ConfigFile is the optional app settings file in the app folder.
const ConfigFile = "dawn.yaml"

// Config is dawn.yaml. Every key is optional; the zero value is a working
// app that uses the offline model and stores threads in .dawn/dawn.db.
type Config struct {
	// Model is the default model for routes whose agent.md names none.
	Model string `yaml:"model"`
	// Store is the SQLite file, relative to the app folder, or ":memory:",
	// or a postgres:// URL of a database several servers can share.
	// DAWN_STORE overrides it.
	Store  string `yaml:"store"`
	Limits Limits `yaml:"limits"`
	// PlanFirst is the default plan-first mode for routes whose plan the
	// harness owns; a route's plan.md front matter overrides it.
	PlanFirst PlanFirst `yaml:"plan_first"`
}

// PlanFirst is dawn.yaml's plan_first block.
type PlanFirst struct {
	// Mode is off (the default), auto or always.
	Mode string `yaml:"mode"`
	// Threshold is the complexity score at which auto plans first (default
	// 6, from 0 to 10).
	Threshold int `yaml:"threshold"`
}

// Limits bound what a client or a model can make the server do. Zero means
// the default.
type Limits struct {
	// BodyBytes caps an HTTP request body (default 1 MiB).
	BodyBytes int64 `yaml:"body_bytes"`
	// MaxTurns caps model turns per run when agent.md sets none (default 25).
	MaxTurns int `yaml:"max_turns"`
	// SubagentDepth caps subagent nesting (default 3).
	SubagentDepth int `yaml:"subagent_depth"`
	// ToolOutputBytes caps the tool output shown to the model (default 64 KiB).
	ToolOutputBytes int `yaml:"tool_output_bytes"`
	// MessageBytes caps one input message's content (default 256 KiB).
	MessageBytes int `yaml:"message_bytes"`
	// Todos caps the items of one writeTodos call (default 200).
	Todos int `yaml:"todos"`
	// TodoBytes caps the text of one plan item and its evidence (default
	// 2,000 bytes).
	TodoBytes int `yaml:"todo_bytes"`
}

// Defaults for Limits.
const (
	DefaultBodyBytes    = 1 << 20
	DefaultMessageBytes = 256 << 10
)

// WithDefaults returns l with every zero limit set to its default.
func (l Limits) WithDefaults() Limits {
	if l.BodyBytes <= 0 {
		l.BodyBytes = DefaultBodyBytes
	}
	if l.MaxTurns <= 0 {
		l.MaxTurns = 25
	}
	if l.SubagentDepth <= 0 {
		l.SubagentDepth = 3
	}
	if l.ToolOutputBytes <= 0 {
		l.ToolOutputBytes = 64 << 10
	}
	if l.MessageBytes <= 0 {
		l.MessageBytes = DefaultMessageBytes
	}
	return l
}

// LoadConfig reads dir/dawn.yaml; a missing file gives the zero Config.
// Unknown keys are errors naming the key and the file.
func LoadConfig(dir string) (Config, error) {
	var c Config
	path := filepath.Join(dir, ConfigFile)
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return c, nil
	}
	if err != nil {
		return c, err
	}
	defer f.Close()
	dec := yaml.NewDecoder(f)
	dec.KnownFields(true)
	if err := dec.Decode(&c); err != nil && !errors.Is(err, io.EOF) {
		return c, fmt.Errorf("%s: %v (allowed keys: model, store, plan_first with mode and threshold, limits with body_bytes, message_bytes, max_turns, subagent_depth, tool_output_bytes, todos, todo_bytes)", path, err)
	}
	if _, err := planfirst.ParseMode(c.PlanFirst.Mode); err != nil {
		return c, fmt.Errorf("%s: plan_first.mode: %v", path, err)
	}
	if t := c.PlanFirst.Threshold; t < 0 || t > 10 {
		return c, fmt.Errorf("%s: plan_first.threshold is %d; it must be from 0 to 10", path, t)
	}
	l := c.Limits
	for name, v := range map[string]int64{"body_bytes": l.BodyBytes, "max_turns": int64(l.MaxTurns), "subagent_depth": int64(l.SubagentDepth), "tool_output_bytes": int64(l.ToolOutputBytes), "message_bytes": int64(l.MessageBytes), "todos": int64(l.Todos), "todo_bytes": int64(l.TodoBytes)} {
		if v < 0 {
			return c, fmt.Errorf("%s: limits.%s is %d; a limit must be positive, or left out for the default", path, name, v)
		}
	}
	return c, nil
}
