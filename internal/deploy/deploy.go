// Package deploy writes the files that ship a Dawn for Go app for `dawn
// build`: a multi-stage Dockerfile, a Helm chart under deploy/helm/<name>/
// and a compose trial (Postgres, three replicas, HAProxy) under
// deploy/compose/. The files are the templates under template/; it loads
// no app and imports nothing of the runtime.
package deploy

import (
	"bytes"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strings"
	"text/template"
	"time"
)

// Module is Dawn for Go's module path: an app without Go code is built
// from its cmd/dawn.
const Module = "github.com/dawn-go/dawn"

//go:embed template
var files embed.FS

// Options say what to write.
type Options struct {
	// Name names the image, the chart and the compose project: lower case
	// letters, digits and dashes (see Name).
	Name string
	// AppDir is the app folder, relative to the output folder, with
	// forward slashes: the Docker build context is the output folder.
	AppDir string
	// MainPkg is the app's own main package (the one that calls
	// dawn.Main), relative to the output folder; empty for an app without
	// Go code, which is built from Dawn's cmd/dawn at DawnVersion.
	MainPkg string
	// DawnVersion is the version of Dawn an app without Go code is built
	// from; empty means "latest".
	DawnVersion string
	// GoVersion is the Go toolchain of the build stage, like "1.26".
	GoVersion string
	// Grace is how long runs in flight may take to finish on SIGTERM.
	Grace time.Duration
	// Replicas is the chart's replica count.
	Replicas int
	// Force overwrites files that exist; without it Write refuses.
	Force bool
	// Env are the environment variables the app's settings name (a JWT
	// secret, the webhook signing secret, model keys), beyond
	// DAWN_API_KEY and the store: compose passes each from the shell,
	// and the chart from its Secret.
	Env []EnvVar
	// Vendor, when set, is a vendor folder relative to the output folder
	// (go mod vendor -o) holding the modules go.mod replaces with folders
	// outside the build context: the build moves it to vendor/ and builds
	// with -mod=vendor, needing neither those folders nor the network.
	Vendor string
}

// EnvVar is one environment variable the app needs: its name, the
// setting that names it (for messages) and whether the app refuses to
// start without it.
type EnvVar struct {
	Name, From string
	Required   bool
}

var envName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// data is what the templates see.
type data struct {
	Options
	Module, Grace, StopGrace string
	// BuildPkg is MainPkg as go build takes it: "." or "./dir".
	BuildPkg     string
	GraceSeconds int
}

var dnsName = regexp.MustCompile(`^[a-z0-9]([a-z0-9-]{0,51}[a-z0-9])?$`)

// Name turns s (a folder's name) into a name an image, a chart and a
// Kubernetes object accept: lower case, runs of other characters as one
// dash, at most 53 characters.
func Name(s string) string {
	var b strings.Builder
	dash := false
	for _, r := range strings.ToLower(s) {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' {
			b.WriteRune(r)
			dash = false
		} else if !dash && b.Len() > 0 {
			b.WriteByte('-')
			dash = true
		}
	}
	n := strings.Trim(b.String(), "-")
	if len(n) > 53 {
		n = strings.Trim(n[:53], "-")
	}
	return n
}

// Write writes the Dockerfile, .dockerignore, chart and compose trial into
// out and returns the paths it wrote, relative to out.
func Write(out string, o Options) ([]string, error) {
	d, err := check(o)
	if err != nil {
		return nil, err
	}
	targets, err := plan(o.Name)
	if err != nil {
		return nil, err
	}
	if !o.Force {
		for _, t := range targets {
			if _, err := os.Stat(filepath.Join(out, filepath.FromSlash(t.rel))); err == nil {
				return nil, fmt.Errorf("%s exists; pass --force to overwrite what dawn build wrote before", filepath.Join(out, filepath.FromSlash(t.rel)))
			}
		}
	}
	wrote := make([]string, 0, len(targets))
	for _, t := range targets {
		if err := render(out, t, d); err != nil {
			return wrote, err
		}
		wrote = append(wrote, t.rel)
	}
	return wrote, nil
}

// check validates o and fills in the defaults.
func check(o Options) (data, error) {
	if !dnsName.MatchString(o.Name) {
		return data{}, fmt.Errorf("name %q: want lower case letters, digits and dashes (at most 53), such as %q; pass --name", o.Name, Name(o.Name))
	}
	for _, p := range []struct{ flag, v string }{{"--app", o.AppDir}, {"the main package", o.MainPkg}, {"the vendor folder", o.Vendor}} {
		if p.v == "" {
			continue
		}
		if path.IsAbs(p.v) || p.v == ".." || strings.HasPrefix(p.v, "../") || strings.ContainsAny(p.v, "\\\"\n") {
			return data{}, fmt.Errorf("%s %s is outside the output folder, which is the Docker build context: pass --out with a folder that holds it", p.flag, p.v)
		}
	}
	if o.AppDir == "" {
		return data{}, errors.New("no app folder given")
	}
	for _, e := range o.Env {
		if !envName.MatchString(e.Name) {
			return data{}, fmt.Errorf("%s names the environment variable %q, which compose and Kubernetes cannot carry; use letters, digits and underscores", e.From, e.Name)
		}
	}
	if o.Grace < time.Second {
		return data{}, fmt.Errorf("--grace %v: want at least 1s, such as 30s", o.Grace)
	}
	if o.Replicas < 1 {
		return data{}, fmt.Errorf("--replicas %d: want at least 1", o.Replicas)
	}
	if o.DawnVersion == "" {
		o.DawnVersion = "latest"
	}
	if o.GoVersion == "" {
		o.GoVersion = "1.26"
	}
	buildPkg := "./" + o.MainPkg
	if o.MainPkg == "." {
		buildPkg = "."
	}
	secs := int((o.Grace + time.Second - 1) / time.Second)
	return data{
		Options: o, Module: Module, BuildPkg: buildPkg,
		Grace: fmt.Sprintf("%ds", secs), GraceSeconds: secs,
		// docker stop waits this long before SIGKILL: the grace, then
		// the few seconds the server takes to close.
		StopGrace: fmt.Sprintf("%ds", secs+10),
	}, nil
}

// target is one template and where it goes.
type target struct{ tmpl, rel string }

// plan lists the templates and the paths, relative to the output folder,
// they are written to: the chart's files go under deploy/helm/<name>/.
func plan(name string) ([]target, error) {
	var ts []target
	err := fs.WalkDir(files, "template", func(p string, e fs.DirEntry, err error) error {
		if err != nil || e.IsDir() {
			return err
		}
		rel := strings.TrimSuffix(strings.TrimPrefix(p, "template/"), ".tmpl")
		switch {
		case rel == "dockerignore":
			rel = ".dockerignore"
		case strings.HasPrefix(rel, "helm/"):
			rel = path.Join("deploy/helm", name, strings.TrimPrefix(rel, "helm/"))
		case strings.HasPrefix(rel, "compose/"):
			rel = path.Join("deploy", rel)
		}
		ts = append(ts, target{p, rel})
		return nil
	})
	return ts, err
}

// render writes template t with d. The templates use [[ ]] as delimiters
// so that the chart's own {{ }} reach Helm untouched.
func render(out string, t target, d data) error {
	text, err := files.ReadFile(t.tmpl)
	if err != nil {
		return err
	}
	tmpl, err := template.New(t.rel).Delims("[[", "]]").Option("missingkey=error").Parse(string(text))
	if err != nil {
		return fmt.Errorf("deploy template %s: %w", t.tmpl, err)
	}
	var buf bytes.Buffer
	if err := tmpl.Execute(&buf, d); err != nil {
		return fmt.Errorf("deploy template %s: %w", t.tmpl, err)
	}
	target := filepath.Join(out, filepath.FromSlash(t.rel))
	if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
		return err
	}
	return os.WriteFile(target, buf.Bytes(), 0o644)
}
