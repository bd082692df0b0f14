package app

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/dawn-go/dawn/capabilities"
	"github.com/dawn-go/dawn/internal/models"
	"github.com/dawn-go/dawn/internal/routeprompt"
	"github.com/dawn-go/dawn/router"
	"github.com/dawn-go/dawn/thread"
)

// prepareWorkers bounds the routes prepared at once.
const prepareWorkers = 8

// App is one loaded snapshot of an app folder. It is never modified after
// Load; a reload builds a new one.
type App struct {
	Dir    string
	Config Config
	Tree   *router.Tree
	// Routes holds every route that prepared cleanly, by id.
	Routes map[string]*capabilities.Prepared
	// Warnings are problems that do not stop a route.
	Warnings []string
	LoadedAt time.Time
}

// Options configure Load.
type Options struct {
	// Tools are the tools the app registers in Go (dawn.Main).
	Tools []capabilities.AppTool
	// ToolsKnown says Tools is the app's whole set; see
	// capabilities.Input.AppToolsKnown.
	ToolsKnown bool
	// Markers are the app's capability markers, in the order they run:
	// the module's registry (markers.All()) and the app's own. Load
	// refuses nil; an empty list is an app without capabilities.
	Markers []capabilities.Marker
}

// Load reads dawn.yaml, discovers the routes under dir and prepares each.
// It returns every problem it finds, joined, together with an App holding
// the routes that did prepare, so `dawn check` can print them all and a
// server can decide whether a partial app is good enough.
func Load(ctx context.Context, dir string, opts Options) (*App, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	if st, err := os.Stat(abs); err != nil || !st.IsDir() {
		return nil, fmt.Errorf("app folder %s does not exist or is not a folder; pass --app with the folder that holds your routes", dir)
	}
	ms := opts.Markers
	if ms == nil {
		return nil, errors.New("app.Load: no capability markers; pass the registry's (markers.All()) and the app's own")
	}
	if err := distinctNames(ms); err != nil {
		return nil, err
	}
	if err := distinctMessageKeys(ms); err != nil {
		return nil, err
	}
	a := &App{Dir: abs, Routes: map[string]*capabilities.Prepared{}, LoadedAt: time.Now()}
	var errs []error
	a.Config, err = loadConfig(abs, ms)
	if err != nil {
		errs = append(errs, &SettingsError{err})
	}
	tree, err := router.DiscoverWith(abs, capabilities.FrontMatterClaims(ms))
	if err != nil {
		errs = append(errs, err)
	}
	if tree == nil {
		return a, errors.Join(errs...)
	}
	a.Tree = tree
	in, toolErrs := a.prepareInput(ctx, opts)
	errs = append(errs, toolErrs...)
	for i, res := range prepareRoutes(ctx, tree.Routes, in) {
		if res.err != nil {
			errs = append(errs, res.err)
			continue
		}
		a.Routes[tree.Routes[i].ID] = res.p
		a.Warnings = append(a.Warnings, res.p.Warnings...)
	}
	if a.Config.Model != "" {
		if _, err := models.ParseSpecList(a.Config.Model); err != nil {
			errs = append(errs, fmt.Errorf("%s: model: %v", filepath.Join(abs, ConfigFile), err))
		}
	}
	return a, errors.Join(errs...)
}

// prepareInput gathers what route preparation takes: the markers, the
// app's Go tools and those its tool sources (MCP servers) bring. The
// errors name tools registered for a route that is not there and tool
// sources that failed.
func (a *App) prepareInput(ctx context.Context, opts Options) (capabilities.Input, []error) {
	var errs []error
	appTools := opts.Tools
	for _, m := range a.Config.Markers {
		if ts, ok := m.(capabilities.ToolSource); ok {
			more, err := ts.AppTools(ctx, a.Dir)
			if err != nil {
				errs = append(errs, fmt.Errorf("%s: %w", filepath.Join(a.Dir, ConfigFile), err))
			}
			appTools = append(slices.Clip(appTools), more...)
		}
	}
	for _, t := range opts.Tools {
		if id, broken := a.Tree.MatchBroken(t.Route); broken && id == t.Route {
			continue // the route is there but its agent.md cannot be read: that is reported
		}
		if t.Route != "" && a.Tree.Route(t.Route) == nil {
			errs = append(errs, fmt.Errorf("the app registers tool %q for route %s, but there is no such route under %s", t.Tool.Spec().Name, t.Route, a.Dir))
		}
	}
	return capabilities.Input{Markers: a.Config.Markers, AppTools: appTools, AppToolsKnown: opts.ToolsKnown}, errs
}

// preparedRoute is one route's preparation: the route, or why it failed.
type preparedRoute struct {
	p   *capabilities.Prepared
	err error
}

// prepareRoutes prepares routes with in, in route order. Preparing a route
// is mostly file reads (plan.md, state.yaml), so routes prepare in
// parallel; results keep the routes' order, so errors and warnings come
// out the same every time.
func prepareRoutes(ctx context.Context, routes []*router.Route, in capabilities.Input) []preparedRoute {
	results := make([]preparedRoute, len(routes))
	var wg sync.WaitGroup
	sem := make(chan struct{}, prepareWorkers)
	for i, r := range routes {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			results[i] = prepareRoute(ctx, r, in)
		}()
	}
	wg.Wait()
	return results
}

// prepareRoute checks the route's model name, prepares it and checks its
// prompt template.
func prepareRoute(ctx context.Context, r *router.Route, in capabilities.Input) preparedRoute {
	if r.Agent.Model != "" {
		if _, err := models.ParseSpecList(r.Agent.Model); err != nil {
			return preparedRoute{err: fmt.Errorf("%s: model: %v", r.Agent.File, err)}
		}
	}
	p, err := capabilities.Prepare(ctx, r, in)
	if err == nil {
		err = checkPrompt(p)
	}
	return preparedRoute{p: p, err: err}
}

// Resolve finds the prepared route for a request path or route id.
func (a *App) Resolve(path string) (*capabilities.Prepared, map[string]string, error) {
	r, params, err := a.Tree.Match(path)
	var nf *router.NotFoundError
	if errors.As(err, &nf) {
		if id, ok := a.Tree.MatchBroken(path); ok {
			return nil, nil, &BrokenRouteError{Route: id}
		}
	}
	if err != nil {
		return nil, nil, err
	}
	p, ok := a.Routes[r.ID]
	if !ok {
		return nil, nil, &BrokenRouteError{Route: r.ID}
	}
	return p, params, nil
}

// BrokenRouteError is a request for a route that exists but failed to
// prepare (a conflict, a bad plan.md): it cannot run until it is fixed.
type BrokenRouteError struct{ Route string }

func (e *BrokenRouteError) Error() string {
	return fmt.Sprintf("route %s is broken and cannot run; run `dawn check` to see why", e.Route)
}

// ModelFor names the model a route runs on: its agent.md model, else
// dawn.yaml's, else env DAWN_MODEL, else "offline".
func (a *App) ModelFor(r *router.Route, env func(string) string) string {
	switch {
	case r.Agent.Model != "":
		return r.Agent.Model
	case a.Config.Model != "":
		return a.Config.Model
	case env("DAWN_MODEL") != "":
		return env("DAWN_MODEL")
	}
	return models.Offline
}

// StorePath is the store for the app: dawn.yaml's store, resolved against
// the app folder when it is a file, or .dawn/dawn.db; a postgres:// URL is
// returned as it is.
func (a *App) StorePath() string {
	switch s := a.Config.Store; {
	case s == ":memory:", strings.HasPrefix(s, "postgres://"), strings.HasPrefix(s, "postgresql://"):
		return s
	case s == "":
		return filepath.Join(a.Dir, ".dawn", "dawn.db")
	case filepath.IsAbs(s):
		return s
	default:
		return filepath.Join(a.Dir, s)
	}
}

// checkPrompt reports the template errors and unknown names of a route's
// prompt, each with the file and line.
func checkPrompt(p *capabilities.Prepared) error {
	fields := make([]string, len(p.Fields))
	for i, f := range p.Fields {
		fields[i] = f.Name
	}
	return errors.Join(routeprompt.Check(p.Route, fields)...)
}

// distinctMessageKeys reports a capability whose message metadata key is
// one a message's own fields take, or one another capability stores.
func distinctMessageKeys(ms []capabilities.Marker) error {
	owner := map[string]string{}
	for _, k := range thread.MessageKeys {
		owner[k] = ""
	}
	for _, m := range ms {
		mm, ok := m.(capabilities.MessageMetadata)
		if !ok {
			continue
		}
		for _, k := range mm.MessageKeys() {
			other, taken := owner[k]
			switch {
			case taken && other == "":
				return fmt.Errorf("capability %q stores message metadata under %q, a key messages already use (%s); choose another key", m.Name(), k, strings.Join(thread.MessageKeys, ", "))
			case taken:
				return fmt.Errorf("capabilities %q and %q both store message metadata under %q; each capability needs keys of its own", other, m.Name(), k)
			}
			owner[k] = m.Name()
		}
	}
	return nil
}

// distinctNames reports a capability registered twice: each marker's name
// names its capability in GET /routes, errors and conflicts.
func distinctNames(ms []capabilities.Marker) error {
	seen := map[string]bool{}
	for _, m := range ms {
		if seen[m.Name()] {
			return fmt.Errorf("capability %q is registered twice (built in, or by dawn.WithCapability); register each capability once", m.Name())
		}
		seen[m.Name()] = true
	}
	return nil
}
