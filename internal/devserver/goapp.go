package devserver

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/dawn-go/dawn/internal/gomod"
	"github.com/dawn-go/dawn/internal/server"
	"github.com/dawn-go/dawn/internal/watch"
)

// rebuildDebounce is how long Go sources must be quiet before a rebuild:
// longer than for Markdown, since editors format and save Go files in
// several writes.
const rebuildDebounce = 100 * time.Millisecond

// goModFiles are the files beside go.mod whose changes need a rebuild.
var goModFiles = []string{"go.mod", "go.sum", "go.work", "go.work.sum"}

// RunGo serves an app with Go code: it builds the app's main package (in
// mainDir: the app folder, or the module root a `dawn new` app keeps it in),
// runs the binary as a dev child (which hot-reloads Markdown and YAML
// itself), proxies the dev port to it behind guard, and rebuilds and restarts it when Go
// code changes.
func RunGo(ctx context.Context, dir, mainDir string, port int, guard server.HostGuard, stdout, stderr io.Writer) error {
	appDir, err := filepath.Abs(dir)
	if err != nil {
		return err
	}
	goTool, err := exec.LookPath("go")
	if err != nil {
		return fmt.Errorf("the app in %s has Go code (a main package) but %w: install Go (https://go.dev/dl) or build the app yourself and run its binary with `dev`", dir, ErrNoGo)
	}
	ln, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", fmt.Sprint(port)))
	if err != nil {
		return fmt.Errorf("cannot listen on 127.0.0.1:%d: %w (is another server using the port? pass another --port)", port, err)
	}
	modRoot, _ := gomod.Root(appDir) // "" outside a module
	if mainDir, err = filepath.Abs(mainDir); err != nil {
		return err
	}
	g := &devGoApp{
		goTool: goTool, appDir: appDir, mainDir: mainDir, modRoot: modRoot,
		binDir: filepath.Join(appDir, ".dawn", "bin"),
		stdout: stdout, stderr: stderr, proxy: newDevProxy(),
		wake: make(chan struct{}, 1),
	}
	served := make(chan error, 1)
	srv := serveDevPort(ln, guard.Wrap(g.proxy), served)
	g.run(ctx, ln.Addr())

	httpCtx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if err := srv.Shutdown(httpCtx); err != nil {
		srv.Close()
	}
	if err := <-served; err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// serveDevPort serves h, the proxy behind its host guard (the child
// checks that too, but an app built with an older dawn may not), on ln
// with the API's default limits, until the server is shut down; what
// Serve returns goes to served.
func serveDevPort(ln net.Listener, h http.Handler, served chan<- error) *http.Server {
	limits := server.HTTPLimits{}
	srv := limits.Server(h)
	go func() { served <- srv.Serve(limits.Listener(ln)) }()
	return srv
}

// devGoApp builds and runs an app's main package for dev. Only run's
// goroutine touches its fields, except the pending changes.
type devGoApp struct {
	goTool  string
	appDir  string
	mainDir string // the folder of the app's main package
	modRoot string // the folder holding the app's go.mod, or "" when none
	binDir  string
	stdout  io.Writer
	stderr  io.Writer
	proxy   *devProxy

	builds  int
	child   *devChild           // the child serving, or nil
	bin     string              // the last build that started, or ""
	modSums map[string][32]byte // goModFiles at the last build

	mu      sync.Mutex
	pending []string  // changed paths not handled yet
	first   time.Time // when the first of them changed
	wake    chan struct{}
}

// run builds and starts the app, prints the ready line, and then rebuilds
// and restarts it as its code changes, until ctx ends.
func (g *devGoApp) run(ctx context.Context, addr net.Addr) {
	_ = os.RemoveAll(g.binDir) // builds a previous dev server left behind
	if err := os.MkdirAll(g.binDir, 0o755); err != nil {
		fmt.Fprintf(g.stderr, "dawn dev: cannot create %s for the app's builds: %v\n", g.binDir, err)
	}
	defer os.RemoveAll(g.binDir)
	root := g.appDir
	if g.modRoot != "" {
		root = g.modRoot
	}
	watching := make(chan struct{})
	go func() {
		opts := watch.Options{Debounce: rebuildDebounce, Keep: g.keep(root), Ready: func() { close(watching) }}
		if err := watch.Changes(ctx, root, opts, g.note); err != nil {
			fmt.Fprintf(g.stderr, "dawn dev: cannot watch %s, so Go changes need a restart of dawn dev: %v\n", root, err)
			close(watching)
		}
	}()
	waitWatching(watching)

	g.rebuild(ctx, time.Time{}, "")
	fmt.Fprintf(g.stdout, "%shttp://%s\n", ReadyPrefix, addr)
	for {
		var exited <-chan struct{}
		if g.child != nil {
			exited = g.child.exited
		}
		select {
		case <-ctx.Done():
			g.proxy.close()
			if g.child != nil {
				g.child.stop()
			}
			return
		case <-exited:
			if ctx.Err() != nil {
				continue // shutting down: the terminal's Ctrl-C reached the child too
			}
			fmt.Fprintf(g.stderr, "dawn dev: the app exited (%s); save a file to start it again\n", g.child.exitStatus())
			g.child = nil
			g.proxy.clear()
		case <-g.wake:
			paths, first := g.take()
			switch {
			case g.goChanged(root, paths):
				g.rebuild(ctx, first, relPaths(root, paths))
			case g.child == nil && g.bin != "":
				// The app exited: an edit to its Markdown may be the fix.
				g.start(ctx, g.bin, first, relPaths(root, paths))
			}
		}
	}
}

// keep limits the watch to Go inputs, and to the app folder.
func (g *devGoApp) keep(root string) func(rel string) bool {
	appRel, _ := filepath.Rel(root, g.appDir)
	return func(rel string) bool {
		if isGoInput(rel) {
			return true
		}
		return appRel == "." || rel == appRel || strings.HasPrefix(rel, appRel+string(filepath.Separator))
	}
}

// isGoInput reports whether a change to the file at rel can change the
// build: Go sources (tests and testdata aside) and the module files, in
// folders the go tool builds (not testdata, nor one whose name starts with
// _ or ., such as a workspace folder the model writes into).
func isGoInput(rel string) bool {
	base := filepath.Base(rel)
	for _, dir := range strings.Split(filepath.ToSlash(filepath.Dir(rel)), "/") {
		if dir == "testdata" || (dir != "." && dir != ".." && (strings.HasPrefix(dir, "_") || strings.HasPrefix(dir, "."))) {
			return false
		}
	}
	if slices.Contains(goModFiles, base) {
		return true
	}
	return filepath.Ext(base) == ".go" && !strings.HasSuffix(base, "_test.go")
}

// note queues a batch of changes for run (on the watcher's goroutine).
func (g *devGoApp) note(b watch.Batch) {
	g.mu.Lock()
	if len(g.pending) == 0 {
		g.first = b.First
	}
	g.pending = append(g.pending, b.Paths...)
	g.mu.Unlock()
	select {
	case g.wake <- struct{}{}:
	default:
	}
}

// take returns the queued changes and clears them.
func (g *devGoApp) take() ([]string, time.Time) {
	g.mu.Lock()
	defer g.mu.Unlock()
	paths, first := g.pending, g.first
	g.pending = nil
	slices.Sort(paths)
	return slices.Compact(paths), first
}

// goChanged reports whether paths (under the watched root) change the
// build. go.mod and go.sum only count when their contents differ from the
// last build's, since go build itself may tidy them.
func (g *devGoApp) goChanged(root string, paths []string) bool {
	for _, p := range paths {
		if rel, err := filepath.Rel(root, p); err != nil || !isGoInput(rel) {
			continue
		}
		if !slices.Contains(goModFiles, filepath.Base(p)) {
			return true
		}
		if sum, ok := g.modSums[filepath.Base(p)]; !ok || sum != fileSum(p) {
			return true
		}
	}
	return false
}

// rebuild builds the app and, if it builds, replaces the child with one
// running the new binary. A failed build leaves the child serving.
func (g *devGoApp) rebuild(ctx context.Context, first time.Time, cause string) {
	g.builds++
	bin := filepath.Join(g.binDir, fmt.Sprintf("app-%d%s", g.builds, exeSuffix()))
	start := time.Now()
	if g.builds == 1 {
		fmt.Fprintf(g.stderr, "dawn dev: building the app's Go code in %s (a first build compiles every module and can take a minute or two)\n", g.mainDir)
	}
	out, err := g.build(ctx, bin)
	g.modSums = g.sumModFiles()
	if ctx.Err() != nil {
		return
	}
	if err != nil {
		_ = os.Remove(bin)
		headline := "the app's Go code does not build"
		if g.child != nil {
			headline += "; still serving the last good build"
		} else {
			headline += "; requests wait for a build that works"
		}
		if g.modRoot == "" {
			headline += fmt.Sprintf(" (%s is not inside a Go module: run `go mod init` there or in a folder above)", g.appDir)
		}
		fmt.Fprintf(g.stderr, "dawn dev: %s:\n%s", headline, indent(out))
		return
	}
	if g.child != nil && sameContents(bin, g.bin) {
		_ = os.Remove(bin)
		fmt.Fprintf(g.stderr, "dawn dev: rebuilt in %s; the binary did not change (%s)\n", time.Since(start).Round(time.Millisecond), cause)
		return
	}
	fmt.Fprintf(g.stderr, "dawn dev: built the app in %s\n", time.Since(start).Round(time.Millisecond))
	g.start(ctx, bin, first, cause)
}

// build runs go build for the app's main package into bin.
func (g *devGoApp) build(ctx context.Context, bin string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, g.goTool, "build", "-o", bin, ".")
	cmd.Dir = g.mainDir
	out, err := cmd.CombinedOutput()
	if err != nil && len(out) == 0 {
		out = []byte(err.Error() + "\n")
	}
	return out, err
}

// start stops the child serving, if any, and starts bin in its place. If
// bin does not start, the previous build starts again.
func (g *devGoApp) start(ctx context.Context, bin string, first time.Time, cause string) {
	prev := g.bin
	if g.child != nil {
		g.proxy.clear()
		g.child.stop()
		g.child = nil
	}
	c, err := startChild(ctx, bin, g.appDir, g.stdout, g.stderr)
	if err != nil {
		if ctx.Err() != nil {
			return
		}
		fmt.Fprintf(g.stderr, "dawn dev: %v\n", err)
		if prev == "" || prev == bin {
			return
		}
		_ = os.Remove(bin)
		if c, err = startChild(ctx, prev, g.appDir, g.stdout, g.stderr); err != nil {
			fmt.Fprintf(g.stderr, "dawn dev: the previous build did not start either: %v\n", err)
			return
		}
		fmt.Fprintln(g.stderr, "dawn dev: went back to the previous build")
		bin = prev
	}
	g.child, g.bin = c, bin
	g.proxy.set(c.url)
	if prev != "" && prev != bin {
		_ = os.Remove(prev)
	}
	if !first.IsZero() {
		fmt.Fprintf(g.stderr, "dawn dev: restarted the app %s after the edit (%s)\n", time.Since(first).Round(time.Millisecond), cause)
	}
}

// sumModFiles hashes the module files next to go.mod.
func (g *devGoApp) sumModFiles() map[string][32]byte {
	sums := map[string][32]byte{}
	if g.modRoot == "" {
		return sums
	}
	for _, name := range goModFiles {
		sums[name] = fileSum(filepath.Join(g.modRoot, name))
	}
	return sums
}

// fileSum hashes a file's contents; a missing file hashes as empty.
func fileSum(path string) [32]byte {
	data, _ := os.ReadFile(path)
	return sha256.Sum256(data)
}

// sameContents reports whether two files hold the same bytes.
func sameContents(a, b string) bool {
	fa, err := os.Open(a)
	if err != nil {
		return false
	}
	defer fa.Close()
	fb, err := os.Open(b)
	if err != nil {
		return false
	}
	defer fb.Close()
	sa, errA := fa.Stat()
	sb, errB := fb.Stat()
	if errA != nil || errB != nil || sa.Size() != sb.Size() {
		return false
	}
	bufA, bufB := make([]byte, 256<<10), make([]byte, 256<<10)
	for {
		na, errA := io.ReadFull(fa, bufA)
		nb, errB := io.ReadFull(fb, bufB)
		if na != nb || !bytes.Equal(bufA[:na], bufB[:nb]) {
			return false
		}
		if errA != nil || errB != nil {
			return errors.Is(errA, io.ErrUnexpectedEOF) || errors.Is(errA, io.EOF)
		}
	}
}

func exeSuffix() string {
	if runtime.GOOS == "windows" {
		return ".exe"
	}
	return ""
}

// indent prefixes every line of out with two spaces.
func indent(out []byte) string {
	var b strings.Builder
	for line := range strings.Lines(string(out)) {
		b.WriteString("  ")
		b.WriteString(line)
	}
	if b.Len() > 0 && !strings.HasSuffix(b.String(), "\n") {
		b.WriteString("\n")
	}
	return b.String()
}
