package cli

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strings"

	"github.com/dawn-go/dawn/internal/gomod"
	"github.com/dawn-go/dawn/internal/scaffold"
	"github.com/spf13/cobra"
)

func newNewCmd(cfg *Config) *cobra.Command {
	var opts scaffold.Options
	var noTidy bool
	cmd := &cobra.Command{
		Use:   "new DIR",
		Short: "Write a new app into DIR, ready for `go run . dev` and `go test ./...`",
		Long: `new writes a ready app into DIR (which must not exist or be empty): go.mod
requiring Dawn for Go, main.go registering a Go tool through dawn.Main, the
route app/assistant with agent.md and plan.md, app/dawn.yaml, a dawntest
test in main_test.go, and a README. It then runs go mod tidy in DIR, which
fetches the modules and writes go.sum.

The go.mod requires the version of Dawn this binary was built from. A
binary built from a checkout has no released version: then new writes a
replace directive to the checkout, the one --replace names or, without it,
the one the current folder is in.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			dir := args[0]
			if opts.DawnVersion == "" && opts.Replace == "" {
				opts.DawnVersion = releasedVersion()
				if opts.DawnVersion == "" {
					opts.Replace = checkoutToReplace()
				}
			}
			undo, err := claimFolder(dir)
			if err != nil {
				return err
			}
			wrote, err := scaffold.Write(dir, opts)
			if err == nil && !noTidy {
				err = tidy(dir, cfg)
			}
			if err != nil {
				undo()
				return appProblem(fmt.Errorf("%w (nothing was left in %s)", err, dir))
			}
			out := cmd.OutOrStdout()
			for _, f := range wrote {
				fmt.Fprintf(out, "  wrote %s\n", f)
			}
			fmt.Fprintf(out, "\nYour app is in %s. Next:\n\n  cd %s\n  go run . dev     # serve it with the offline model; reloads .md and .yaml edits, rebuilds on .go edits\n  go test ./...    # run its test\n", dir, dir)
			return nil
		},
	}
	cmd.Flags().StringVar(&opts.Module, "module", "", "the app's Go module path (default: the folder's name)")
	cmd.Flags().StringVar(&opts.DawnVersion, "version", "", "the version of "+scaffold.Module+" to require (default: this binary's)")
	cmd.Flags().StringVar(&opts.Replace, "replace", "", "a Dawn for Go checkout to build against, written as a replace directive")
	cmd.Flags().BoolVar(&noTidy, "no-tidy", false, "do not run go mod tidy (fetching modules) after writing")
	return cmd
}

// releasedVersion is the version of Dawn this binary was built with, or ""
// when it has none a module proxy serves: a build from a checkout (whose
// main module carries a local pseudo-version stamped from git, which no
// proxy has), or a replaced module.
func releasedVersion() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return ""
	}
	if bi.Main.Path == scaffold.Module && builtFromCheckout(bi) {
		return ""
	}
	mods := append([]*debug.Module{&bi.Main}, bi.Deps...)
	for _, m := range mods {
		if m.Path != scaffold.Module || m.Replace != nil {
			continue
		}
		if v := m.Version; v != "" && v != "(devel)" && !strings.Contains(v, "+dirty") {
			return v
		}
	}
	return ""
}

// builtFromCheckout reports whether the go command stamped the build with
// version-control settings, which it does only for a build inside a
// checkout, never for a module downloaded from a proxy.
func builtFromCheckout(bi *debug.BuildInfo) bool {
	for _, s := range bi.Settings {
		if s.Key == "vcs" {
			return true
		}
	}
	return false
}

// checkoutToReplace is the Dawn for Go checkout a new app builds against
// when this binary has no released version: the checkout the current
// folder is in, else the one this binary was built from if it is still
// there, else "" (and scaffold.Write then says to pass --replace or
// --version).
func checkoutToReplace() string {
	if root, ok := gomod.Root("."); ok && scaffold.IsCheckout(root) {
		return root
	}
	if root := buildCheckout(); root != "" && scaffold.IsCheckout(root) {
		return root
	}
	return ""
}

// buildCheckout is the folder this file was compiled from, two levels up
// (internal/cli), or "" when the build trimmed its paths.
func buildCheckout() string {
	_, file, _, ok := runtime.Caller(0)
	if !ok || !filepath.IsAbs(file) {
		return ""
	}
	return filepath.Dir(filepath.Dir(filepath.Dir(file)))
}

// claimFolder checks that dir is missing or empty and returns what puts it
// back as it was: removed if dawn new made it, emptied if it was there.
func claimFolder(dir string) (undo func(), err error) {
	entries, err := os.ReadDir(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return func() { _ = os.RemoveAll(dir) }, nil
	case err != nil:
		return nil, err
	case len(entries) > 0:
		return nil, fmt.Errorf("%s is not empty; pass a new folder, or empty this one", dir)
	}
	return func() {
		entries, _ := os.ReadDir(dir)
		for _, e := range entries {
			_ = os.RemoveAll(filepath.Join(dir, e.Name()))
		}
	}, nil
}

// tidy runs go mod tidy in dir.
func tidy(dir string, cfg *Config) error {
	goBin, err := exec.LookPath("go")
	if err != nil {
		fmt.Fprintf(cfg.Stderr, "dawn: go is not on PATH, so go.sum is not written yet; install Go, then run `go mod tidy` in %s\n", dir)
		return nil
	}
	c := exec.Command(goBin, "mod", "tidy")
	c.Dir = dir
	c.Stdout, c.Stderr = cfg.Stderr, cfg.Stderr
	if err := c.Run(); err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return fmt.Errorf("go mod tidy in %s failed (its output is above); fix the cause and run it again there", dir)
		}
		return err
	}
	return nil
}
