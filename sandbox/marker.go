package sandbox

import (
	"context"
	"fmt"
	"time"

	"github.com/dawn-go/dawn/capabilities"
	"github.com/dawn-go/dawn/internal/yamldoc"
	"github.com/dawn-go/dawn/router"
	"github.com/dawn-go/dawn/workspace"
	"gopkg.in/yaml.v3"

	sbx "github.com/dawn-go/dawn/internal/sandbox"
	"github.com/dawn-go/dawn/internal/sandbox/bwrap"
	"github.com/dawn-go/dawn/internal/sandbox/docker"
)

// Name is the capability's name.
const Name = "sandbox"

// RunBash is the tool the capability contributes.
const RunBash = "runBash"

// Marker returns the sandbox capability, off until dawn.yaml configures
// it.
func Marker() capabilities.Marker { return marker{} }

type marker struct{ box *boxes }

// boxes is a configured sandbox: its settings and its warm boxes.
type boxes struct {
	s    sbx.Settings
	pool *sbx.Pool
}

func (marker) Name() string { return Name }

// ConfigKeys names the capability's dawn.yaml section.
func (marker) ConfigKeys() []string { return []string{ConfigKey} }

// preflightTimeout bounds the check that the provider works on this host.
const preflightTimeout = 30 * time.Second

// Configure reads dawn.yaml's sandbox section and checks that the
// provider can run here: `dawn check` and `dawn start` refuse an app
// whose sandbox cannot start.
func (marker) Configure(values map[string]*yaml.Node) (capabilities.Marker, error) {
	n := values[ConfigKey]
	if n == nil || yamldoc.IsNull(n) {
		return marker{}, nil
	}
	s, err := parseSettings(n)
	if err != nil {
		return nil, err
	}
	prov, err := newProvider(s)
	if err != nil {
		return nil, fmt.Errorf("%s.provider %s: %w", ConfigKey, s.Provider, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), preflightTimeout)
	defer cancel()
	if err := prov.Preflight(ctx); err != nil {
		return nil, fmt.Errorf("%s.provider %s: %w", ConfigKey, s.Provider, err)
	}
	return marker{box: &boxes{s: s, pool: sbx.NewPool(prov, s.IdleTimeout)}}, nil
}

// ThreadDeleted destroys the thread's boxes (capabilities.ThreadCleaner).
func (m marker) ThreadDeleted(ctx context.Context, threadID string) error {
	if m.box == nil {
		return nil
	}
	return m.box.pool.Destroy(ctx, poolKey(threadID, ""))
}

// poolKey is the pool's key of a thread's box for route; with route ""
// it is the prefix of all the thread's boxes.
func poolKey(threadID, route string) string { return threadID + "\x00" + route }

// newProvider returns the provider s names.
func newProvider(s sbx.Settings) (sbx.Provider, error) {
	switch s.Provider {
	case Local:
		return bwrap.New(s)
	case Docker:
		return docker.New(s)
	}
	return nil, fmt.Errorf("unknown provider %q; use local or docker", s.Provider)
}

// Detect finds routes with a workspace, once a sandbox is configured.
func (m marker) Detect(dir string) (string, bool) {
	if m.box == nil {
		return "", false
	}
	return capabilities.FrontMatterOn(dir, workspace.Key)
}

// Load gives a route with workspace: thread the runBash tool. A folder
// workspace gets none: its files are not synced into boxes.
func (m marker) Load(_ context.Context, route *router.Route, _ string) (*capabilities.Contribution, error) {
	n := route.Agent.Sections[workspace.Key]
	if m.box == nil || n == nil {
		return nil, nil
	}
	ws, err := workspace.ParseSettings(n)
	if err != nil {
		return nil, nil // the workspace capability reports it
	}
	if ws.Dir != "" {
		return &capabilities.Contribution{Warnings: []string{fmt.Sprintf(
			"%s: workspace: %s is a folder, and runBash is given only to routes with workspace: thread, whose files the sandbox keeps in the store; use workspace: thread to run commands", route.Agent.File, ws.Dir)}}, nil
	}
	network := "deny"
	if m.box.s.Network.Allow {
		network = "allow"
	}
	return &capabilities.Contribution{
		Tools:   []capabilities.Tool{&runBash{box: m.box}},
		Details: map[string]any{"provider": m.box.s.Provider, "network": network, "tool": RunBash},
	}, nil
}
