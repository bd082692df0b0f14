package app_test

import (
	"context"
	"errors"
	"github.com/dawn-go/dawn/markers"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/dawn-go/dawn/capabilities"
	"github.com/dawn-go/dawn/internal/app"
	"github.com/dawn-go/dawn/internal/auth"
	"github.com/dawn-go/dawn/router"
	"gopkg.in/yaml.v3"
)

// sectionMarker reads dawn.yaml keys of its own and records what it got.
type sectionMarker struct {
	keys []string
	got  map[string]string
	err  error
}

func (sectionMarker) Name() string                 { return "section" }
func (sectionMarker) Detect(string) (string, bool) { return "", false }
func (sectionMarker) Load(context.Context, *router.Route, string) (*capabilities.Contribution, error) {
	return nil, nil
}
func (m sectionMarker) ConfigKeys() []string { return m.keys }
func (m sectionMarker) Configure(values map[string]*yaml.Node) (capabilities.Marker, error) {
	if m.err != nil {
		return nil, m.err
	}
	out := sectionMarker{keys: m.keys, got: map[string]string{}}
	for k, v := range values {
		out.got[k] = v.Value
	}
	return out, nil
}

// TestConfigSections: a marker's dawn.yaml keys reach its Configure, and
// the configured marker is the one routes are prepared with.
func TestConfigSections(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, map[string]string{"dawn.yaml": "model: offline\nwidget:\n  size: 3\nlimits:\n  max_turns: 4\n  widgets: 7\ntools:\n  timeout: 1m30s\n", "a/agent.md": "A"})
	m := sectionMarker{keys: []string{"widget", "limits.widgets", "limits.gadgets"}}
	a, err := app.Load(context.Background(), dir, app.Options{ToolsKnown: true, Markers: []capabilities.Marker{m}})
	if err != nil {
		t.Fatal(err)
	}
	if a.Config.Model != "offline" || a.Config.Limits.MaxTurns != 4 || a.Config.Tools.Timeout != 90*time.Second {
		t.Errorf("config = %+v", a.Config)
	}
	if len(a.Config.Markers) != 1 {
		t.Fatalf("configured markers = %v", a.Config.Markers)
	}
	got := a.Config.Markers[0].(sectionMarker).got
	if len(got) != 2 || got["limits.widgets"] != "7" || got["widget"] != "" {
		t.Errorf("Configure got %v, want widget and limits.widgets", got)
	}
}

// TestAuthSection: auth: none and auth.jwt reach Config.Auth.
func TestAuthSection(t *testing.T) {
	for yamlText, want := range map[string]auth.Config{
		"":             {},
		"auth: none\n": {None: true},
		"auth:\n  jwt:\n    jwks_url: https://id.example.com/jwks.json\n    issuer: https://id.example.com\n    audience: dawn\n    user_claim: email\n": {JWT: &auth.JWT{JWKSURL: "https://id.example.com/jwks.json", Issuer: "https://id.example.com", Audience: "dawn", UserClaim: "email"}},
	} {
		dir := t.TempDir()
		write(t, dir, map[string]string{"dawn.yaml": yamlText, "a/agent.md": "A"})
		a, err := app.Load(context.Background(), dir, app.Options{ToolsKnown: true, Markers: markers.All()})
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(a.Config.Auth, want) {
			t.Errorf("%q: auth %+v, want %+v", yamlText, a.Config.Auth, want)
		}
	}
}

// TestStoreSection: store: is a path, or a mapping of path and index.
func TestStoreSection(t *testing.T) {
	half := 0.5
	for yamlText, want := range map[string]app.Config{
		"store: x.db\n":          {Store: "x.db"},
		"store:\n  path: x.db\n": {Store: "x.db"},
		"store:\n  path: x.db\n  index:\n    embed: openai:text-embedding-3-small\n    dims: 1536\n    fields: [text, \"items[*].name\"]\n    min_similarity: 0.5\n": {Store: "x.db",
			StoreIndex: &app.StoreIndex{Embed: "openai:text-embedding-3-small", Dims: 1536, Fields: []string{"text", "items[*].name"}, MinSimilarity: &half}},
		"store: {index: {embed: ollama:nomic-embed-text, dims: 768}}\n": {StoreIndex: &app.StoreIndex{Embed: "ollama:nomic-embed-text", Dims: 768}},
	} {
		dir := t.TempDir()
		write(t, dir, map[string]string{"dawn.yaml": yamlText, "a/agent.md": "A"})
		a, err := app.Load(context.Background(), dir, app.Options{ToolsKnown: true, Markers: markers.All()})
		if err != nil {
			t.Fatal(err)
		}
		if a.Config.Store != want.Store || !reflect.DeepEqual(a.Config.StoreIndex, want.StoreIndex) {
			t.Errorf("%q: store %q index %+v, want %q %+v", yamlText, a.Config.Store, a.Config.StoreIndex, want.Store, want.StoreIndex)
		}
	}
}

func TestConfigSectionErrors(t *testing.T) {
	m := sectionMarker{keys: []string{"widget"}}
	cases := []struct {
		yaml string
		m    sectionMarker
		want string
	}{
		{"gadget: 1\n", m, `dawn.yaml:1: field gadget not found; allowed keys: model, store (path, index), limits (body_bytes, message_bytes, max_turns, subagent_depth, tool_output_bytes, per_user), tools (timeout), eval (judge_model), webhooks (secret_env, allow, timeout, attempts), auth (jwt, or none), runs (continue_orphans), server (allowed_hosts), widget`},
		{"limits:\n  gadgets: 1\n", m, `dawn.yaml:2: field limits.gadgets not found; allowed keys in limits: body_bytes, message_bytes, max_turns, subagent_depth, tool_output_bytes`},
		{"model: a\nmodel: b\n", m, `dawn.yaml:2: key "model" appears twice; keep one`},
		{"widget: 1\n", sectionMarker{keys: []string{"widget"}, err: errors.New("widget must be a mapping")}, `dawn.yaml: widget must be a mapping`},
		{"- a\n", m, `dawn.yaml:1: expected a mapping of keys`},
		{"model: [\n", m, `dawn.yaml: not valid YAML: yaml: line 1: did not find expected node content`},
		{"limits: 3\n", m, `dawn.yaml:1: limits must be a mapping of limit names to numbers`},
		{"model: {a: b}\n", m, `dawn.yaml:1: model must be text`},
		{"model: [offline, {a: b}]\n", m, `dawn.yaml:1: model must be a model name or a list of model names`},
		{"limits:\n  max_turns: x\n", m, `dawn.yaml:2: limits.max_turns must be a whole number, not "x"`},
		{"limits:\n  max_turns: 1.5\n", m, `dawn.yaml:2: limits.max_turns must be a whole number, not "1.5"`},
		{"tools:\n  timeout: soon\n", m, `dawn.yaml:2: tools.timeout must be a positive duration such as 30s or 2m, not "soon"`},
		{"tools:\n  timeout: -5s\n", m, `dawn.yaml:2: tools.timeout must be a positive duration such as 30s or 2m, not "-5s"`},
		{"tools:\n  retries: 2\n", m, `dawn.yaml:2: field tools.retries not found; allowed keys in tools: timeout`},
		{"tools: 30s\n", m, `dawn.yaml:1: tools must be a mapping, like tools: {timeout: 30s}`},
		{"eval: 3\n", m, `dawn.yaml:1: eval must be a mapping, such as eval: {judge_model: openai:gpt-4o-mini}`},
		{"eval:\n  judge: x\n", m, `dawn.yaml:2: field eval.judge not found; allowed keys in eval: judge_model`},
		{"eval:\n  judge_model: [a]\n", m, `dawn.yaml:2: judge_model must be text`},
		{"auth: open\n", m, `dawn.yaml:1: auth must be none or a mapping, like auth: {jwt: {secret_env: DAWN_JWT_SECRET}}`},
		{"auth:\n  oidc: {}\n", m, `dawn.yaml:2: field auth.oidc not found; allowed keys in auth: jwt (or auth: none)`},
		{"auth:\n  jwt:\n    secret: x\n", m, `dawn.yaml:3: field auth.jwt.secret not found; allowed keys in auth.jwt: secret_env, public_key_file, jwks_url, issuer, audience, user_claim`},
		{"auth:\n  jwt:\n    secret_env: S\n    jwks_url: http://x\n", m, `dawn.yaml:3: auth.jwt needs exactly one of secret_env (HS256), public_key_file (RS256 or ES256) or jwks_url`},
		{"runs: true\n", m, `dawn.yaml:1: runs must be a mapping, like runs: {continue_orphans: true}`},
		{"runs:\n  continue_orphans: maybe\n", m, `dawn.yaml:2: runs.continue_orphans must be true or false, not "maybe"`},
		{"runs:\n  continue: true\n", m, `dawn.yaml:2: field runs.continue not found; allowed keys in runs: continue_orphans`},
		{"store:\n  file: x.db\n", m, `dawn.yaml:2: field store.file not found; allowed keys in store: path (a file or postgres:// URL), index (embed, dims, fields, min_similarity)`},
		{"store:\n  index: {embed: openai:text-embedding-3-small}\n", m, `dawn.yaml:2: store.index.dims is required: the length of the model's vectors (1536 for openai:text-embedding-3-small)`},
		{"store:\n  index: {dims: 4}\n", m, `dawn.yaml:2: store.index.embed is required`},
		{"store:\n  index:\n    embed: openai:e\n    dims: 1.5\n", m, `dawn.yaml:4: store.index.dims must be the model's vector length, a whole number from 1 to 16000 such as 1536, not "1.5"`},
		{"store:\n  index: {embed: openai:e, dims: 4, fields: text}\n", m, `dawn.yaml:2: store.index.fields must be a list of JSON paths`},
		{"store:\n  index: {embed: openai:e, dims: 4, min_similarity: 2}\n", m, `dawn.yaml:2: store.index.min_similarity must be a cosine similarity from -1 to 1, such as 0.3, not "2"`},
		{"store:\n  index: {embed: openai:e, dims: 4, size: 2}\n", m, `dawn.yaml:2: field store.index.size not found; allowed keys in store.index: embed, dims, fields, min_similarity`},
		{"", sectionMarker{keys: []string{"model"}}, `capability "section" claims dawn.yaml key "model", which the app or another capability already reads`},
	}
	for _, tc := range cases {
		dir := t.TempDir()
		write(t, dir, map[string]string{"dawn.yaml": tc.yaml, "a/agent.md": "A"})
		_, err := app.Load(context.Background(), dir, app.Options{ToolsKnown: true, Markers: []capabilities.Marker{tc.m}})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: err = %v\nwant it to contain %s", tc.yaml, err, tc.want)
		}
	}
}

// TestPlanFirstSection: dawn.yaml's plan_first reaches the plan-first
// marker (through ConfigSection), and the configured marker in
// Config.Markers is the run strategy the runner asks: with mode always, a
// run on a route whose plan the harness owns plans first.
func TestPlanFirstSection(t *testing.T) {
	for yamlText, want := range map[string]bool{"": false, "plan_first:\n  mode: always\n": true} {
		dir := t.TempDir()
		write(t, dir, map[string]string{"dawn.yaml": yamlText, "a/agent.md": "A", "a/plan.md": "---\nenforce: true\n---\n- [ ] Step 1\n"})
		a, err := app.Load(context.Background(), dir, app.Options{ToolsKnown: true, Markers: markers.All()})
		if err != nil {
			t.Fatal(err)
		}
		chosen := false
		for _, m := range a.Config.Markers {
			if rs, ok := m.(capabilities.RunStrategy); ok {
				run, err := rs.Choose(a.Routes["/a"], "", nil)
				if err != nil {
					t.Fatal(err)
				}
				chosen = chosen || run != nil
			}
		}
		if chosen != want {
			t.Errorf("dawn.yaml %q: a run strategy took the run = %v, want %v", yamlText, chosen, want)
		}
	}
	dir := t.TempDir()
	for yamlText, want := range map[string]string{
		"plan_first:\n  mode: sometimes\n": `plan_first.mode: plan-first mode "sometimes" is not valid; use off, auto or always`,
		"plan_first:\n  threshold: 11\n":   "plan_first.threshold is 11; it must be from 0 to 10",
		"plan_first:\n  speed: 1\n":        `plan_first: unknown key "speed"; allowed keys are mode, threshold`,
	} {
		write(t, dir, map[string]string{"dawn.yaml": yamlText})
		_, err := app.LoadConfig(dir, markers.All())
		if err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "dawn.yaml") {
			t.Errorf("%q: err = %v, want %q naming dawn.yaml", yamlText, err, want)
		}
	}
}

// TestEvalSection: eval.judge_model in dawn.yaml is the app's judge model.
func TestEvalSection(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, map[string]string{"dawn.yaml": "eval:\n  judge_model: openai:gpt-4o-mini\n", "a/agent.md": "A"})
	a, err := app.Load(context.Background(), dir, app.Options{ToolsKnown: true, Markers: markers.All()})
	if err != nil {
		t.Fatal(err)
	}
	if a.Config.Eval.JudgeModel != "openai:gpt-4o-mini" {
		t.Errorf("Eval.JudgeModel = %q, want openai:gpt-4o-mini", a.Config.Eval.JudgeModel)
	}
}

// TestRunsSection: runs.continue_orphans reaches Config.Runs; without the
// section it is off.
func TestRunsSection(t *testing.T) {
	for yaml, want := range map[string]bool{"runs:\n  continue_orphans: true\n": true, "runs: {continue_orphans: false}\n": false, "model: offline\n": false} {
		dir := t.TempDir()
		write(t, dir, map[string]string{"dawn.yaml": yaml, "a/agent.md": "A"})
		a, err := app.Load(context.Background(), dir, app.Options{ToolsKnown: true, Markers: markers.All()})
		if err != nil {
			t.Fatal(err)
		}
		if a.Config.Runs.ContinueOrphans != want {
			t.Errorf("%q: Runs.ContinueOrphans = %v, want %v", yaml, a.Config.Runs.ContinueOrphans, want)
		}
	}
}

// TestPerUserLimits: limits.per_user sets what one user may hold, the
// rest keep their defaults, and a wrong key or value names the key.
func TestPerUserLimits(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, map[string]string{"dawn.yaml": "limits:\n  per_user:\n    threads: 5\n    connections: 8\n"})
	c, err := app.LoadConfig(dir, markers.All())
	if err != nil {
		t.Fatal(err)
	}
	got := c.Limits.WithDefaults().PerUser
	want := app.PerUser{Threads: 5, Crons: app.DefaultUserCrons, StoreItems: app.DefaultUserStoreItems, QueuedRuns: app.DefaultUserQueuedRuns, Connections: 8}
	if got != want {
		t.Errorf("per_user = %+v, want %+v", got, want)
	}
	for yamlText, msg := range map[string]string{
		"limits:\n  per_user:\n    sessions: 3\n": "field limits.per_user.sessions not found; allowed keys in limits.per_user: threads, crons, store_items, queued_runs, connections",
		"limits:\n  per_user:\n    crons: 1.5\n":  `limits.per_user.crons must be a whole number, not "1.5"`,
		"limits:\n  per_user:\n    crons: -1\n":   "limits.per_user.crons is -1; a limit must be positive",
		"limits:\n  per_user: 3\n":                "limits.per_user must be a mapping",
	} {
		write(t, dir, map[string]string{"dawn.yaml": yamlText})
		_, err := app.LoadConfig(dir, markers.All())
		if err == nil || !strings.Contains(err.Error(), msg) || !strings.Contains(err.Error(), "dawn.yaml") {
			t.Errorf("%q: err = %v, want %q naming dawn.yaml", yamlText, err, msg)
		}
	}
}
