package devserver

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/dawn-go/dawn/internal/app"
	"github.com/dawn-go/dawn/internal/store"
	"github.com/dawn-go/dawn/internal/watch"
)

// Apps is what a Reloader swaps snapshots in: the run manager.
type Apps interface {
	// App returns the snapshot serving.
	App() *app.App
	// SetApp makes a the snapshot new runs start on.
	SetApp(a *app.App)
}

// Reloader applies edits to a running app: it loads the folder again and
// swaps the new snapshot in, unless the edit broke something that worked.
type Reloader struct {
	load func(ctx context.Context) (*app.App, error)
	runs Apps
	out  io.Writer

	mu sync.Mutex
	// configOK says dawn.yaml loaded cleanly in the snapshot serving.
	configOK bool
}

// NewReloader returns a Reloader that loads the app again with load, swaps
// the snapshots of runs, and reports to out.
func NewReloader(load func(ctx context.Context) (*app.App, error), runs Apps, out io.Writer) *Reloader {
	return &Reloader{load: load, runs: runs, out: out, configOK: configLoads(runs.App())}
}

// Watch watches the app folder and reloads on every batch of edits until
// ctx ends. It returns once the watcher is ready (or after a few seconds on
// a huge tree), so an edit made right after is seen.
func (r *Reloader) Watch(ctx context.Context, logger *slog.Logger) {
	dir := r.runs.App().Dir
	watching := make(chan struct{})
	go func() {
		opts := watch.Options{Debounce: reloadDebounce, Ready: func() { close(watching) }}
		if err := watch.Changes(ctx, dir, opts, func(b watch.Batch) { r.Reload(ctx, b) }); err != nil {
			logger.Error("cannot watch the app folder; edits need a restart", "dir", dir, "err", err)
			close(watching)
		}
	}()
	waitWatching(watching)
}

// reloadDebounce is how long the app folder must be quiet before a reload.
const reloadDebounce = 15 * time.Millisecond

// waitWatching waits for a watcher to be ready, so an edit made right after
// the ready line is seen, but not for long on a huge tree.
func waitWatching(watching <-chan struct{}) {
	select {
	case <-watching:
	case <-time.After(5 * time.Second):
	}
}

// Reload handles one batch of changes.
func (r *Reloader) Reload(ctx context.Context, b watch.Batch) {
	if !needsReload(b.Paths) {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	start := time.Now()
	cur := r.runs.App()
	next, err := r.load(ctx)
	if next == nil || next.Tree == nil {
		PrintProblems(r.out, "reload failed; still serving the last good version", err)
		return
	}
	configOK := configLoads(next)
	if broken := brokenRoutes(cur, next); len(broken) > 0 || (r.configOK && !configOK) {
		what := "dawn.yaml"
		if len(broken) > 0 {
			what = "route " + strings.Join(broken, ", ")
		}
		PrintProblems(r.out, fmt.Sprintf("%s broke %s; still serving the last good version until you fix it", relPaths(next.Dir, b.Paths), what), err)
		return
	}
	r.runs.SetApp(next)
	r.configOK = configOK
	after := ""
	if !b.First.IsZero() {
		after = fmt.Sprintf(", %s after the edit", time.Since(b.First).Round(time.Microsecond))
	}
	fmt.Fprintf(r.out, "dawn dev: reloaded %d route(s) in %s%s (%s)\n",
		len(next.Routes), time.Since(start).Round(time.Microsecond), after, relPaths(next.Dir, b.Paths))
	if err != nil {
		PrintProblems(r.out, "these routes still have problems and do not run", err)
	}
	if cur.StorePath() != next.StorePath() {
		fmt.Fprintf(r.out, "dawn dev: dawn.yaml now names the store %s; restart dawn dev to use it (threads stay in %s until then)\n", store.Redact(next.StorePath()), store.Redact(cur.StorePath()))
	}
}

// brokenRoutes lists, sorted, the routes that run in cur but not in next
// although their agent.md is still there: an edit broke them (bad front
// matter, a conflict, a clash of ids). Routes whose folder is gone were
// removed on purpose and are not listed.
func brokenRoutes(cur, next *app.App) []string {
	var out []string
	for id, p := range cur.Routes {
		if _, ok := next.Routes[id]; ok {
			continue
		}
		if _, err := os.Stat(filepath.Join(p.Route.Dir, "agent.md")); err != nil {
			continue
		}
		out = append(out, id)
	}
	slices.Sort(out)
	return out
}

// configLoads reports whether a's dawn.yaml is absent or loads cleanly
// with a's capability markers.
func configLoads(a *app.App) bool {
	_, err := app.LoadConfig(a.Dir, a.Config.Markers)
	return err == nil
}

// needsReload reports whether a change touches what the app snapshot is
// built from: Markdown, YAML, or folders (routes added or removed). Paths
// that no longer exist count, since a removed folder looks like that.
func needsReload(paths []string) bool {
	for _, p := range paths {
		switch strings.ToLower(filepath.Ext(p)) {
		case ".md", ".yaml", ".yml":
			return true
		}
		info, err := os.Stat(p)
		if errors.Is(err, fs.ErrNotExist) || (err == nil && info.IsDir()) {
			return true
		}
	}
	return false
}

// relPaths lists paths relative to root, at most three of them.
func relPaths(root string, paths []string) string {
	out := make([]string, 0, len(paths))
	for _, p := range paths {
		if r, err := filepath.Rel(root, p); err == nil {
			p = r
		}
		out = append(out, filepath.ToSlash(p))
	}
	if len(out) > 3 {
		return strings.Join(out[:3], ", ") + fmt.Sprintf(" and %d more", len(out)-3)
	}
	return strings.Join(out, ", ")
}
