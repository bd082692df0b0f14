package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/dawn-go/dawn/internal/app"
	"github.com/dawn-go/dawn/internal/deploy"
	"github.com/dawn-go/dawn/internal/gomod"
	"github.com/dawn-go/dawn/internal/models"
	"github.com/spf13/cobra"
)

// buildFlags are the flags of dawn build.
type buildFlags struct {
	app, out, name string
	grace          time.Duration
	replicas       int
	force          bool
	// image builds the image too (--image), tagged tag.
	image bool
	tag   string
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
			return runBuild(cmd.Context(), cfg, f)
		},
	}
	appFlag(cmd, &f.app)
	cmd.Flags().StringVar(&f.out, "out", "", "the folder to write into, the Docker build context (default: the app's Go module root, or the app folder's parent)")
	cmd.Flags().StringVar(&f.name, "name", "", "the image, chart and compose project name (default: the output folder's name)")
	cmd.Flags().DurationVar(&f.grace, "grace", 30*time.Second, "how long runs in flight may take to finish on shutdown (dawn start --grace)")
	cmd.Flags().IntVar(&f.replicas, "replicas", 3, "the chart's replica count")
	cmd.Flags().BoolVar(&f.force, "force", false, "overwrite files dawn build wrote before")
	cmd.Flags().BoolVar(&f.image, "image", false, "also build the image: a static binary built here, on scratch, through the Docker Engine API (no registry needed)")
	cmd.Flags().StringVar(&f.tag, "tag", "", "the image's tag with --image (default NAME:latest)")
	return cmd
}

// runBuild finds the app's main package and the build context, and writes
// the files.
func runBuild(ctx context.Context, cfg *Config, f buildFlags) error {
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
	if o.Env, err = appEnv(ctx, cfg, f.app); err != nil {
		return err
	}
	if o.MainPkg != "" {
		if o.Vendor, err = vendorOutside(cfg, out); err != nil {
			return appProblem(err)
		}
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
	showEnv(cfg, o)
	if o.MainPkg == "" && o.DawnVersion == "" {
		fmt.Fprintln(cfg.Stderr, "dawn build: this dawn is not a released version, so the Dockerfile builds the latest dawn; pin one with docker build --build-arg DAWN_VERSION=vX.Y.Z, or build the image from this checkout with dawn build --image")
	}
	if f.image {
		return buildImage(ctx, cfg, f, out, appAbs, o)
	}
	return nil
}

// appEnv lists the environment variables the app's settings name, which
// its deployment must carry: the JWT and webhook secrets of dawn.yaml and
// the keys of the models its routes name (agent.md, dawn.yaml).
func appEnv(ctx context.Context, cfg *Config, dir string) ([]deploy.EnvVar, error) {
	a, err := app.Load(ctx, dir, app.Options{Tools: cfg.Tools, ToolsKnown: cfg.ToolsKnown, Markers: cfg.Markers})
	if a == nil || errors.As(err, new(*app.SettingsError)) {
		return nil, appProblem(fmt.Errorf("reading the app's settings: %w", err))
	}
	var out []deploy.EnvVar
	add := func(name, from string) {
		if name != "" && !slices.ContainsFunc(out, func(e deploy.EnvVar) bool { return e.Name == name }) {
			out = append(out, deploy.EnvVar{Name: name, From: from, Required: true})
		}
	}
	if j := a.Config.Auth.JWT; j != nil {
		add(j.SecretEnv, "auth.jwt.secret_env in dawn.yaml")
	}
	add(a.Config.Webhooks.SecretEnv, "webhooks.secret_env in dawn.yaml")
	for _, r := range a.Describe(func(string) string { return "" }) {
		for _, name := range models.KeyEnv(r.Model) {
			add(name, fmt.Sprintf("model %s of route %s", r.Model, r.ID))
		}
	}
	return out, nil
}

// showEnv lists the variables of o.Env and where the deployment takes
// them from.
func showEnv(cfg *Config, o deploy.Options) {
	if len(o.Env) == 0 {
		return
	}
	fmt.Fprintf(cfg.Stderr, "dawn build: the app needs these environment variables besides DAWN_API_KEY; compose takes them from your shell, the chart from the Secret %s-env:\n", o.Name)
	for _, e := range o.Env {
		fmt.Fprintf(cfg.Stderr, "  %s (%s)\n", e.Name, e.From)
	}
}

// goBuildTimeout bounds the host build of the image's binary.
const goBuildTimeout = 15 * time.Minute

// caCerts is where Debian, Ubuntu and Alpine keep the CA bundle an image
// on scratch needs to reach model providers over TLS.
const caCerts = "/etc/ssl/certs/ca-certificates.crt"

// buildImage builds a static binary of the app here (its main package, or
// dawn from this checkout for an app without Go code) and the image from
// it on scratch.
func buildImage(ctx context.Context, cfg *Config, f buildFlags, out, appAbs string, o deploy.Options) error {
	dir, pkg := out, "./"+o.MainPkg
	if o.MainPkg == "" {
		if dir = checkoutToReplace(); dir == "" {
			return appProblem(fmt.Errorf("--image: the app has no main package, and this dawn was not built from a checkout of Dawn for Go to build dawn from; add a main package calling dawn.Main (dawn new writes one)"))
		}
		pkg = "./cmd/dawn"
	}
	tmp, err := os.MkdirTemp("", "dawn-image-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	bin := filepath.Join(tmp, "dawn-app")
	fmt.Fprintf(cfg.Stderr, "dawn build: building a static binary of %s in %s (go build; the first one can take a few minutes)\n", pkg, dir)
	bctx, cancel := context.WithTimeout(ctx, goBuildTimeout)
	defer cancel()
	cmd := exec.CommandContext(bctx, "go", "build", "-trimpath", "-ldflags=-s -w", "-o", bin, pkg)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if msg, err := cmd.CombinedOutput(); err != nil {
		return appProblem(fmt.Errorf("--image: go build %s in %s failed (%v):\n%s", pkg, dir, err, strings.TrimSpace(string(msg))))
	}
	tag := f.tag
	if tag == "" {
		tag = deploy.ImageTag(o.Name)
	}
	certs := ""
	if _, err := os.Stat(caCerts); err == nil {
		certs = caCerts
	}
	id, err := deploy.BuildImage(ctx, deploy.ImageOptions{Tag: tag, Binary: bin, AppDir: appAbs, CACerts: certs, Grace: f.grace})
	if err != nil {
		return appProblem(fmt.Errorf("--image: %w", err))
	}
	fmt.Fprintf(cfg.Stdout, "image %s (%s)\n", tag, id)
	fmt.Fprintf(cfg.Stderr, "dawn build: run it with docker run -p 127.0.0.1:8000:8000 -e DAWN_API_KEY=... %s\n", tag)
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

var localReplace = regexp.MustCompile(`(?m)^\s*(?:replace\s+)?(\S+)(?:\s+\S+)?\s+=>\s+(\.{0,2}/\S*)\s*$`)

// vendorDir is where dawn build vendors the app's modules, relative to the
// build context, when go.mod replaces one with a folder outside it; the
// Dockerfile moves it to vendor/ and builds with -mod=vendor. It sits
// under deploy/ so that the app's own tree is left as it was.
const vendorDir = "deploy/vendor"

// vendorTimeout bounds go mod vendor.
const vendorTimeout = 5 * time.Minute

// vendorOutside brings what the go.mod in out replaces with folders
// outside out (the Docker build context, which docker build cannot see
// past) into the context: it runs go mod vendor into vendorDir and
// returns vendorDir, or "" when every replace is inside. A replace that
// cannot be vendored is an error naming it and the cause: what dawn build
// would write could not build.
func vendorOutside(cfg *Config, out string) (string, error) {
	gomodPath := filepath.Join(out, "go.mod")
	data, err := os.ReadFile(gomodPath)
	if err != nil {
		return "", nil
	}
	var outside []string
	for _, m := range localReplace.FindAllStringSubmatch(string(data), -1) {
		dir := m[2]
		if !filepath.IsAbs(dir) {
			dir = filepath.Join(out, dir)
		}
		if _, err := relSlash(out, dir); err != nil {
			outside = append(outside, m[1]+" => "+m[2])
		}
	}
	if len(outside) == 0 {
		return "", nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), vendorTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "go", "mod", "vendor", "-o", filepath.FromSlash(vendorDir))
	cmd.Dir = out
	cmd.Env = append(os.Environ(), "GOFLAGS=-mod=mod")
	if msg, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("%s replaces %s, outside the Docker build context, and go mod vendor could not bring it in (%v): %s; make the replaced folder hold the module, or require a released version (go get %s@VERSION) and drop the replace",
			gomodPath, strings.Join(outside, ", "), err, strings.TrimSpace(string(msg)), deploy.Module)
	}
	fmt.Fprintf(cfg.Stderr, "dawn build: %s replaces %s, outside the Docker build context: vendored the app's modules into %s, which the Dockerfile builds from\n",
		gomodPath, strings.Join(outside, ", "), filepath.Join(out, filepath.FromSlash(vendorDir)))
	return vendorDir, nil
}
