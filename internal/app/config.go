package app

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/dawn-go/dawn/capabilities"
	"github.com/dawn-go/dawn/internal/auth"
	"github.com/dawn-go/dawn/internal/yamldoc"
	"gopkg.in/yaml.v3"
)

// ConfigFile is the optional app settings file in the app folder.
const ConfigFile = "dawn.yaml"

// Config is dawn.yaml. Every key is optional; the zero value is a working
// app that uses the offline model and stores threads in .dawn/dawn.db.
//
// The app reads model, store, temperature and the runtime's limits. Every other key
// belongs to a capability marker that implements
// capabilities.ConfigSection and parses it itself: planning reads
// limits.todos and limits.todo_bytes, plan-first its plan_first section.
type Config struct {
	// Model is the default model for routes whose agent.md names none.
	Model string
	// Store is the SQLite file, relative to the app folder, or ":memory:",
	// or a postgres:// URL of a database several servers can share.
	// DAWN_STORE overrides it.
	Store string
	// StoreIndex embeds the Store's items for search by meaning
	// (store.index in dawn.yaml); nil: the Store matches words only.
	StoreIndex *StoreIndex
	// Temperature is the sampling temperature for routes whose agent.md
	// sets none; nil sends none, so the provider's default applies.
	Temperature *float64
	Limits      Limits
	// Tools holds the settings of every tool call (tools: in dawn.yaml).
	Tools Tools
	// Eval configures dawn eval.
	Eval Eval
	// Webhooks configures the POSTs run requests ask for (webhooks: in
	// dawn.yaml).
	Webhooks Webhooks
	// Auth is how the server authenticates requests (auth: in dawn.yaml).
	Auth auth.Config
	// Runs holds the settings of runs (runs: in dawn.yaml).
	Runs Runs
	// Server holds the HTTP server's settings (server: in dawn.yaml).
	Server Server
	// Markers are the capability markers, each ConfigSection configured
	// from its dawn.yaml keys. Routes are prepared with them, and the
	// runtime finds capabilities' optional interfaces on them.
	Markers []capabilities.Marker
}

// Tools is dawn.yaml's tools: section.
type Tools struct {
	// Timeout bounds one tool call of any route (Go and MCP tools; an MCP
	// server's own timeout: wins for its tools); zero leaves the agent
	// loop's default (two minutes).
	Timeout time.Duration
}

// toolsSection is the dawn.yaml section of the tool-call settings.
const toolsSection = "tools"

// Eval is dawn.yaml's eval section: how dawn eval scores eval cases.
// It is an app setting, not a capability's, because it changes no route:
// only the eval command reads it.
type Eval struct {
	// JudgeModel names the model ("openai:gpt-4o-mini") that scores the
	// judge criteria of eval cases.
	JudgeModel string
}

// evalSection is the dawn.yaml section dawn eval reads.
const evalSection = "eval"

// Limits bound what a client or a model can make the server do. Zero means
// the default.
type Limits struct {
	// BodyBytes caps an HTTP request body (default 1 MiB).
	BodyBytes int64
	// MaxTurns caps model turns per run when agent.md sets none (default 25).
	MaxTurns int
	// SubagentDepth caps subagent nesting (default 3).
	SubagentDepth int
	// ToolOutputBytes caps the tool output shown to the model (default 64 KiB).
	ToolOutputBytes int
	// MessageBytes caps one input message's content (default 256 KiB).
	MessageBytes int
	// PerUser bounds what one user may hold (limits.per_user).
	PerUser PerUser
}

// PerUser is limits.per_user: what one authenticated user may hold at
// once, so that no user can take what the others need. Zero means the
// default. The service credential and a server without authentication
// are not bounded by it.
type PerUser struct {
	// Threads bounds the threads a user has (default 10000).
	Threads int
	// Crons bounds the crons a user has (default 100).
	Crons int
	// StoreItems bounds the live Store items of a user (default 10000).
	StoreItems int
	// QueuedRuns bounds the runs queued on a user's threads, all threads
	// together (default 1000; a thread's own queue holds at most 100).
	QueuedRuns int
	// Connections bounds a user's requests in flight, streams included
	// (default 256, of the server's 4096 connections).
	Connections int
}

// Defaults for PerUser.
const (
	DefaultUserThreads     = 10000
	DefaultUserCrons       = 100
	DefaultUserStoreItems  = 10000
	DefaultUserQueuedRuns  = 1000
	DefaultUserConnections = 256
)

// perUserSection is the key of PerUser in limits.
const perUserSection = "per_user"

// keys are the keys of limits.per_user, in the order errors list them.
func (u *PerUser) keys() []limitKey {
	return []limitKey{
		{"threads", nil, &u.Threads},
		{"crons", nil, &u.Crons},
		{"store_items", nil, &u.StoreItems},
		{"queued_runs", nil, &u.QueuedRuns},
		{"connections", nil, &u.Connections},
	}
}

// WithDefaults returns u with every zero limit set to its default.
func (u PerUser) WithDefaults() PerUser {
	for _, d := range []struct {
		v   *int
		def int
	}{{&u.Threads, DefaultUserThreads}, {&u.Crons, DefaultUserCrons}, {&u.StoreItems, DefaultUserStoreItems},
		{&u.QueuedRuns, DefaultUserQueuedRuns}, {&u.Connections, DefaultUserConnections}} {
		if *d.v <= 0 {
			*d.v = d.def
		}
	}
	return u
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
	l.PerUser = l.PerUser.WithDefaults()
	return l
}

// limitsSection is the dawn.yaml section of the runtime's limits, which
// capabilities may add keys to ("limits.todos").
const limitsSection = "limits"

// limitKeys are the keys of limits the app reads, in the order errors list
// them, with where each goes.
func (l *Limits) keys() []limitKey {
	return []limitKey{
		{"body_bytes", &l.BodyBytes, nil},
		{"message_bytes", nil, &l.MessageBytes},
		{"max_turns", nil, &l.MaxTurns},
		{"subagent_depth", nil, &l.SubagentDepth},
		{"tool_output_bytes", nil, &l.ToolOutputBytes},
	}
}

type limitKey struct {
	name  string
	big   *int64
	small *int
}

// LoadConfig reads dir/dawn.yaml with the capability markers ms; a
// missing file gives the zero Config with those markers. Unknown keys are
// errors naming the key and the file.
func LoadConfig(dir string, ms []capabilities.Marker) (Config, error) { return loadConfig(dir, ms) }

// loadConfig reads dir/dawn.yaml and configures ms. Config.Markers always
// holds one marker per marker of ms: the configured one, or ms's own when
// its keys are wrong, so that routes still prepare and every problem is
// reported.
func loadConfig(dir string, ms []capabilities.Marker) (Config, error) {
	c := Config{Markers: slices.Clone(ms)}
	path := filepath.Join(dir, ConfigFile)
	data, err := os.ReadFile(path)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return c, err
	}
	p := configParser{path: path, owner: map[string]int{}}
	for i, m := range ms {
		cs, ok := m.(capabilities.ConfigSection)
		if !ok {
			continue
		}
		for _, key := range cs.ConfigKeys() {
			if p.hostKey(key) || p.owner[key] != 0 {
				p.errs = append(p.errs, fmt.Errorf("%s: capability %q claims dawn.yaml key %q, which the app or another capability already reads; rename the key", path, m.Name(), key))
				continue
			}
			p.owner[key] = i + 1
			p.claimed = append(p.claimed, key)
		}
	}
	values := p.parse(data, &c) // values[i] are the keys of ms[i]
	for i, m := range ms {
		cs, ok := m.(capabilities.ConfigSection)
		if !ok {
			continue
		}
		configured, err := cs.Configure(values[i+1])
		var envErr *capabilities.EnvError
		switch {
		case errors.As(err, &envErr):
			p.errs = append(p.errs, err)
			continue
		case err != nil:
			p.errs = append(p.errs, fmt.Errorf("%s: %v", path, err))
			continue
		}
		c.Markers[i] = configured
	}
	return c, errors.Join(p.errs...)
}

// configParser walks dawn.yaml: the app's own keys go into a Config, the
// keys capabilities claim to their owners.
type configParser struct {
	path string
	// owner maps a claimed key to 1 + the index of its marker.
	owner   map[string]int
	claimed []string
	errs    []error
}

var hostKeys = []string{"model", "store", "temperature", limitsSection, toolsSection, evalSection, webhooksSection, authSection, runsSection, serverSection}

func (p *configParser) hostKey(key string) bool {
	if slices.Contains(hostKeys, key) {
		return true
	}
	name, ok := strings.CutPrefix(key, limitsSection+".")
	var l Limits
	return ok && slices.ContainsFunc(l.keys(), func(k limitKey) bool { return k.name == name })
}

func (p *configParser) fail(line int, format string, args ...any) {
	p.errs = append(p.errs, fmt.Errorf("%s:%d: %s", p.path, line, fmt.Sprintf(format, args...)))
}

// parse fills c with the app's keys and returns the claimed keys' values
// by owner.
func (p *configParser) parse(data []byte, c *Config) map[int]map[string]*yaml.Node {
	values := map[int]map[string]*yaml.Node{}
	claim := func(key string, val *yaml.Node) {
		i := p.owner[key]
		if values[i] == nil {
			values[i] = map[string]*yaml.Node{}
		}
		values[i][key] = val
	}
	root, err := yamldoc.Mapping(data)
	var notMapping *yamldoc.NotMappingError
	switch {
	case errors.As(err, &notMapping):
		p.fail(notMapping.Line, "expected a mapping of keys; allowed keys: %s", p.allowed())
		return values
	case err != nil:
		p.errs = append(p.errs, fmt.Errorf("%s: not valid YAML: %v", p.path, err))
		return values
	}
	seen := map[string]bool{}
	for key, val := range yamldoc.Pairs(root) {
		k := key.Value
		if seen[k] {
			p.fail(key.Line, "key %q appears twice; keep one", k)
			continue
		}
		seen[k] = true
		switch {
		case k == "model":
			c.Model = p.modelList(key, val)
		case k == "store":
			p.storeSection(key, val, c)
		case k == "temperature":
			t, ok := yamldoc.Temperature(val)
			if !ok {
				p.fail(key.Line, "temperature must be a number from 0 to 2, e.g. temperature: 0.2, got %q", val.Value)
			}
			c.Temperature = t
		case k == limitsSection:
			p.limits(val, &c.Limits, claim)
		case k == toolsSection:
			c.Tools = p.tools(val)
		case k == evalSection:
			p.eval(val, &c.Eval)
		case k == webhooksSection:
			c.Webhooks = p.webhooks(val)
		case k == authSection:
			c.Auth = p.auth(val)
		case k == runsSection:
			c.Runs = p.runs(val)
		case k == serverSection:
			c.Server = p.server(val)
		case p.owner[k] != 0:
			claim(k, val)
		default:
			p.fail(key.Line, "field %s not found; allowed keys: %s", k, p.allowed())
		}
	}
	return values
}

func (p *configParser) text(key, val *yaml.Node) string {
	if yamldoc.IsNull(val) {
		return ""
	}
	if val.Kind != yaml.ScalarNode {
		p.fail(key.Line, "%s must be text", key.Value)
		return ""
	}
	return val.Value
}

// modelList reads model: as one name or a list of names tried in order,
// joined by commas as models.New reads them.
func (p *configParser) modelList(key, val *yaml.Node) string {
	if val.Kind != yaml.SequenceNode {
		return p.text(key, val)
	}
	names := make([]string, 0, len(val.Content))
	for _, item := range val.Content {
		if item.Kind != yaml.ScalarNode || strings.TrimSpace(item.Value) == "" {
			p.fail(item.Line, "%s must be a model name or a list of model names", key.Value)
			return ""
		}
		names = append(names, strings.TrimSpace(item.Value))
	}
	return strings.Join(names, ",")
}

func (p *configParser) limits(section *yaml.Node, l *Limits, claim func(string, *yaml.Node)) {
	if yamldoc.IsNull(section) {
		return
	}
	if section.Kind != yaml.MappingNode {
		p.fail(section.Line, "%s must be a mapping of limit names to numbers", limitsSection)
		return
	}
	seen := map[string]bool{}
	for key, val := range yamldoc.Pairs(section) {
		full := limitsSection + "." + key.Value
		if seen[key.Value] {
			p.fail(key.Line, "key %q appears twice; keep one", full)
			continue
		}
		seen[key.Value] = true
		i := slices.IndexFunc(l.keys(), func(k limitKey) bool { return k.name == key.Value })
		switch {
		case i >= 0:
			p.limit(key, val, full, l.keys()[i])
		case key.Value == perUserSection:
			p.perUser(val, &l.PerUser)
		case p.owner[full] != 0:
			claim(full, val)
		default:
			p.fail(key.Line, "field %s not found; allowed keys in %s: %s", full, limitsSection, strings.Join(p.limitNames(), ", "))
		}
	}
}

// limit reads the whole number val of limit k, whose dawn.yaml key is
// full.
func (p *configParser) limit(key, val *yaml.Node, full string, k limitKey) {
	var n int64
	// A float such as 1.5 decodes into an int64 truncated: only an
	// integer is taken.
	if val.Kind != yaml.ScalarNode || val.ShortTag() != "!!int" || val.Decode(&n) != nil {
		p.fail(key.Line, "%s must be a whole number, not %q", full, val.Value)
		return
	}
	if n < 0 {
		p.errs = append(p.errs, fmt.Errorf("%s: %s is %d; a limit must be positive, or left out for the default", p.path, full, n))
		return
	}
	if k.big != nil {
		*k.big = n
	} else {
		*k.small = int(n)
	}
}

// perUser reads limits.per_user: {threads: 1000, crons: 10, ...}.
func (p *configParser) perUser(section *yaml.Node, u *PerUser) {
	prefix := limitsSection + "." + perUserSection
	if yamldoc.IsNull(section) {
		return
	}
	if section.Kind != yaml.MappingNode {
		p.fail(section.Line, "%s must be a mapping of limit names to numbers, like %s: {threads: 1000}", prefix, perUserSection)
		return
	}
	var names []string
	for _, k := range u.keys() {
		names = append(names, k.name)
	}
	seen := map[string]bool{}
	for key, val := range yamldoc.Pairs(section) {
		full := prefix + "." + key.Value
		i := slices.IndexFunc(u.keys(), func(k limitKey) bool { return k.name == key.Value })
		switch {
		case seen[key.Value]:
			p.fail(key.Line, "key %q appears twice; keep one", full)
		case i < 0:
			p.fail(key.Line, "field %s not found; allowed keys in %s: %s", full, prefix, strings.Join(names, ", "))
		default:
			p.limit(key, val, full, u.keys()[i])
		}
		seen[key.Value] = true
	}
}

// tools reads the tools: section: {timeout: 30s}.
func (p *configParser) tools(section *yaml.Node) Tools {
	var t Tools
	if yamldoc.IsNull(section) {
		return t
	}
	if section.Kind != yaml.MappingNode {
		p.fail(section.Line, "%s must be a mapping, like %s: {timeout: 30s}", toolsSection, toolsSection)
		return t
	}
	for key, val := range yamldoc.Pairs(section) {
		if key.Value != "timeout" {
			p.fail(key.Line, "field %s.%s not found; allowed keys in %s: timeout", toolsSection, key.Value, toolsSection)
			continue
		}
		d, err := yamldoc.Duration(val)
		if err != nil {
			p.fail(key.Line, "%s.timeout %v", toolsSection, err)
			continue
		}
		t.Timeout = d
	}
	return t
}

// eval reads the eval: section: {judge_model: provider:model}.
func (p *configParser) eval(section *yaml.Node, e *Eval) {
	if yamldoc.IsNull(section) {
		return
	}
	if section.Kind != yaml.MappingNode {
		p.fail(section.Line, "%s must be a mapping, such as eval: {judge_model: openai:gpt-4o-mini}", evalSection)
		return
	}
	for key, val := range yamldoc.Pairs(section) {
		if key.Value != "judge_model" {
			p.fail(key.Line, "field %s.%s not found; allowed keys in %s: judge_model", evalSection, key.Value, evalSection)
			continue
		}
		e.JudgeModel = p.text(key, val)
	}
}

// allowed lists the top-level keys for an error message.
func (p *configParser) allowed() string {
	keys := []string{"model", "store (path, index)", fmt.Sprintf("%s (%s)", limitsSection, strings.Join(p.limitNames(), ", ")), toolsSection + " (timeout)", evalSection + " (judge_model)", webhooksSection + " (secret_env, allow, timeout, attempts)", authSection + " (jwt, or none)", runsSection + " (continue_orphans)", serverSection + " (allowed_hosts)"}
	for _, k := range p.claimed {
		if !strings.HasPrefix(k, limitsSection+".") {
			keys = append(keys, k)
		}
	}
	return strings.Join(keys, ", ")
}

// limitNames lists the keys of limits: the app's, then the capabilities'.
func (p *configParser) limitNames() []string {
	var l Limits
	var names []string
	for _, k := range l.keys() {
		names = append(names, k.name)
	}
	names = append(names, perUserSection)
	for _, k := range p.claimed {
		if name, ok := strings.CutPrefix(k, limitsSection+"."); ok {
			names = append(names, name)
		}
	}
	return names
}

// SettingsError is a problem with the app's settings, in dawn.yaml or the
// environment, which every route shares: commands that run routes refuse
// to start with it, where a problem of one route spares the others.
type SettingsError struct{ Err error }

func (e *SettingsError) Error() string { return e.Err.Error() }
func (e *SettingsError) Unwrap() error { return e.Err }
