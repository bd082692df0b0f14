package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/dawn-go/dawn/internal/gomod"
	"github.com/spf13/cobra"
)

// AppBinaryEnv marks a process the stock dawn binary started as an app's
// own binary, so that binary never hands the command on again.
const AppBinaryEnv = "DAWN_APP_BINARY"

// appMainDir returns the folder of the Go main package that registers the
// app's tools with dawn.Main: the app folder itself (examples/app) or the
// root of the module the app folder is in (a `dawn new` app, whose main.go
// sits beside app/).
func appMainDir(dir string) (string, bool) {
	if callsDawnMain(dir) {
		return dir, true
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", false
	}
	if root, ok := gomod.Root(abs); ok && root != abs && callsDawnMain(root) {
		return root, true
	}
	return "", false
}

// callsDawnMain reports whether dir holds a main package that calls
// dawn.Main, the way an app registers its Go tools.
func callsDawnMain(dir string) bool {
	files, _ := filepath.Glob(filepath.Join(dir, "*.go"))
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		data, err := os.ReadFile(f)
		if err == nil && strings.Contains(string(data), "package main") && strings.Contains(string(data), "dawn.Main(") {
			return true
		}
	}
	return false
}

// handOnToApp wraps the RunE of a command that loads the app (start, run,
// routes, check, typegen): in the stock binary, an app with its own main
// package is built and the command runs in that binary, which has the
// app's Go tools, instead of here without them.
func handOnToApp(cfg *Config, cmd *cobra.Command) {
	run := cmd.RunE
	cmd.RunE = func(c *cobra.Command, args []string) error {
		if !cfg.Stock || cfg.Env(AppBinaryEnv) == "1" || remoteRun(c) {
			return run(c, args)
		}
		dir, _ := c.Flags().GetString("app")
		mainDir, ok := appMainDir(dir)
		if !ok {
			return run(c, args)
		}
		bin, err := buildAppBinary(c.Context(), cfg, dir, mainDir)
		if err != nil {
			return appProblem(err)
		}
		return runAppBinary(c.Context(), cfg, bin)
	}
}

// remoteRun reports whether the command is `dawn run --url`, which talks to
// a server and loads no app.
func remoteRun(c *cobra.Command) bool {
	f := c.Flags().Lookup("url")
	return f != nil && f.Value.String() != ""
}

// buildAppBinary builds the main package in mainDir into the app's .dawn
// folder, saying what it does, since a first build compiles every module.
func buildAppBinary(ctx context.Context, cfg *Config, appDir, mainDir string) (string, error) {
	goTool, err := exec.LookPath("go")
	if err != nil {
		return "", fmt.Errorf("the app's Go tools are registered in %s (a main package calling dawn.Main), and this stock dawn binary cannot run them: go is not on PATH to build it. Install Go, or build that package (go build) and run its binary with the same command", mainDir)
	}
	bin, err := filepath.Abs(filepath.Join(appDir, ".dawn", "bin", "app"))
	if err != nil {
		return "", err
	}
	if err := os.MkdirAll(filepath.Dir(bin), 0o755); err != nil {
		return "", fmt.Errorf("cannot create %s for the app's binary: %w", filepath.Dir(bin), err)
	}
	fmt.Fprintf(cfg.Stderr, "dawn: the app's Go tools are in %s; building its binary (go build)\n", mainDir)
	start := time.Now()
	build := exec.CommandContext(ctx, goTool, "build", "-o", bin, ".")
	build.Dir = mainDir
	stop := slowNotice(cfg.Stderr, slowBuildAfter, "dawn: still building: a first build compiles every module and can take a minute or two\n")
	out, err := build.CombinedOutput()
	stop()
	if err != nil {
		return "", fmt.Errorf("the app's Go code in %s does not build, so its tools cannot be served; fix what go build says and run the command again:\n%s", mainDir, out)
	}
	fmt.Fprintf(cfg.Stderr, "dawn: built the app in %s; running the command in it\n", time.Since(start).Round(time.Millisecond))
	return bin, nil
}

// runAppBinary runs bin with the command line this CLI was given, passing
// signals on, and ends with its exit code. On Linux the child also stops
// when this process dies without passing a signal on (SIGKILL).
func runAppBinary(ctx context.Context, cfg *Config, bin string) error {
	child := exec.Command(bin, cfg.args...)
	child.Stdin = os.Stdin
	child.Stdout, child.Stderr = cfg.Stdout, cfg.Stderr
	child.Env = append(os.Environ(), AppBinaryEnv+"=1")
	child.SysProcAttr = appBinaryAttrs()
	if err := child.Start(); err != nil {
		return appProblem(fmt.Errorf("cannot run the app's binary %s: %w", bin, err))
	}
	signals := make(chan os.Signal, 1)
	signal.Notify(signals, syscall.SIGINT, syscall.SIGTERM)
	defer signal.Stop(signals)
	done := make(chan error, 1)
	go func() { done <- child.Wait() }()
	for {
		select {
		case sig := <-signals:
			_ = child.Process.Signal(sig)
		case <-ctx.Done():
			_ = child.Process.Signal(syscall.SIGTERM)
			ctx = context.Background()
		case err := <-done:
			var ee *exec.ExitError
			if errors.As(err, &ee) {
				return childExit{code: ee.ExitCode()}
			}
			return err
		}
	}
}

// childExit ends the CLI with the exit code of the app's binary, which
// already said why.
type childExit struct{ code int }

func (e childExit) Error() string { return fmt.Sprintf("the app's binary exited with %d", e.code) }

// slowBuildAfter is how long a build runs before slowNotice says it may
// take a while.
const slowBuildAfter = 3 * time.Second

// slowNotice writes msg to w once after has passed, unless stop is called
// first. stop returns once msg is written or will never be.
func slowNotice(w io.Writer, after time.Duration, msg string) (stop func()) {
	var mu sync.Mutex
	stopped := false
	timer := time.AfterFunc(after, func() {
		mu.Lock()
		defer mu.Unlock()
		if !stopped {
			fmt.Fprint(w, msg)
		}
	})
	return func() {
		timer.Stop()
		mu.Lock()
		stopped = true
		mu.Unlock()
	}
}
