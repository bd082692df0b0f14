package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"time"

	"github.com/dawn-go/dawn/internal/deploy"
	"github.com/dawn-go/dawn/internal/gomod"
	"github.com/spf13/cobra"
)

// buildFlags are the flags of dawn build.
type buildFlags struct {
	app, out, name string
	grace          time.Duration
	replicas       int
	force          bool
}

func newBuildCmd(cfg *Config) *cobra.Command {
	var f buildFlags
	cmd := &cobra.Command{
		Use:   "build",
		Short: "Write a Dockerfile, a Helm chart and a compose trial for the app",
		Long: `Build writes what ships the app: a multi-stage Dockerfile (a static binary
of the app's own main package, or of dawn for an app without Go code, a
non-root user, the app folder, a HEALTHCHECK), a Helm chart in
deploy/helm/<name>/ (replicas on one Postgres database, /healthz and /readyz
probes, a Service, an optional HorizontalPodAutoscaler and a
PodDisruptionBudget) and deploy/compose/ (Postgres, three replicas and
HAProxy on one machine). The output folder is the Docker build context: by
default the app's Go module root, or the folder holding the app folder.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runBuild(cfg, f)
		},
	}
	appFlag(cmd, &f.app)
	cmd.Flags().StringVar(&f.out, "out", "", "the folder to write into, the Docker build context (default: the app's Go module root, or the app folder's parent)")
	cmd.Flags().StringVar(&f.name, "name", "", "the image, chart and compose project name (default: the output folder's name)")
	cmd.Flags().DurationVar(&f.grace, "grace", 30*time.Second, "how long runs in flight may take to finish on shutdown (dawn start --grace)")
	cmd.Flags().IntVar(&f.replicas, "replicas", 3, "the chart's replica count")
	cmd.Flags().BoolVar(&f.force, "force", false, "overwrite files dawn build wrote before")
	return cmd
}

// runBuild finds the app's main package and the build context, and writes
// the files.
func runBuild(cfg *Config, f buildFlags) error {
	appAbs, err := filepath.Abs(f.app)
	if err != nil {
		return err
	}
	if st, err := os.Stat(appAbs); err != nil || !st.IsDir() {
		return fmt.Errorf("--app %s: no such folder; pass the folder that holds your routes", f.app)
	}
	o := deploy.Options{Grace: f.grace, Replicas: f.replicas, Force: f.force, DawnVersion: releasedVersion(), GoVersion: goVersion("")}
	out, err := buildContext(appAbs, f.out, &o)
	if err != nil {
		return err
	}
	if o.AppDir, err = relSlash(out, appAbs); err != nil {
		return err
	}
	o.Name = f.name
	if o.Name == "" {
		if o.Name = deploy.Name(filepath.Base(out)); o.Name == "" {
			o.Name = "dawn-app"
		}
	}
	wrote, err := deploy.Write(out, o)
	if err != nil {
		return appProblem(err)
	}
	for _, w := range wrote {
		fmt.Fprintln(cfg.Stdout, filepath.Join(out, filepath.FromSlash(w)))
	}
	if o.MainPkg == "" && o.DawnVersion == "" {
		fmt.Fprintln(cfg.Stderr, "dawn build: this dawn is not a released version, so the Dockerfile builds the latest dawn; pin one with docker build --build-arg DAWN_VERSION=vX.Y.Z")
	}
	warnLocalReplaces(cfg, out, o.MainPkg)
	return nil
}

// buildContext returns the output folder (the Docker build context) and
// sets o.MainPkg and o.GoVersion for an app with its own main package,
// whose go.mod must be at the context's root.
func buildContext(appAbs, out string, o *deploy.Options) (string, error) {
	mainDir, hasGo := appMainDir(appAbs)
	if !hasGo {
		if out == "" {
			return filepath.Dir(appAbs), nil
		}
		return filepath.Abs(out)
	}
	root, _ := gomod.Root(mainDir)
	if out != "" {
		abs, err := filepath.Abs(out)
		if err != nil {
			return "", err
		}
		if abs != root {
			return "", fmt.Errorf("--out %s: the app's main package %s belongs to the Go module in %s, and the Docker build needs that go.mod at the build context's root; pass --out %s or leave --out out", out, mainDir, root, root)
		}
	}
	rel, err := relSlash(root, mainDir)
	if err != nil {
		return "", err
	}
	o.MainPkg, o.GoVersion = rel, goVersion(root)
	return root, nil
}

// relSlash is target relative to base with forward slashes, or an error
// when target is outside base (the Docker build context).
func relSlash(base, target string) (string, error) {
	rel, err := filepath.Rel(base, target)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return "", fmt.Errorf("%s is outside %s, the Docker build context: pass --out with a folder that holds it", target, base)
	}
	return filepath.ToSlash(rel), nil
}

var goLine = regexp.MustCompile(`(?m)^go (\d+\.\d+)`)

// goVersion is the Go version (major.minor) of the build stage: the go line
// of the go.mod in root, else this binary's.
func goVersion(root string) string {
	if data, err := os.ReadFile(filepath.Join(root, "go.mod")); root != "" && err == nil {
		if m := goLine.FindSubmatch(data); m != nil {
			return string(m[1])
		}
	}
	if m := regexp.MustCompile(`^go(\d+\.\d+)`).FindStringSubmatch(runtime.Version()); m != nil {
		return m[1]
	}
	return "1.26"
}

var localReplace = regexp.MustCompile(`(?m)^\s*(?:replace\s+)?\S+(?:\s+\S+)?\s+=>\s+(\.{0,2}/\S*)\s*$`)

// warnLocalReplaces says when the app's go.mod replaces a module with a
// folder outside the build context, which docker build cannot see.
func warnLocalReplaces(cfg *Config, out, mainPkg string) {
	if mainPkg == "" {
		return
	}
	data, err := os.ReadFile(filepath.Join(out, "go.mod"))
	if err != nil {
		return
	}
	for _, m := range localReplace.FindAllStringSubmatch(string(data), -1) {
		dir := m[1]
		if !filepath.IsAbs(dir) {
			dir = filepath.Join(out, dir)
		}
		if _, err := relSlash(out, dir); err != nil {
			fmt.Fprintf(cfg.Stderr, "dawn build: %s replaces a module with %s, outside the build context, so docker build will fail: require a released version instead (go get %s@vX.Y.Z and drop the replace)\n", filepath.Join(out, "go.mod"), m[1], deploy.Module)
		}
	}
}
