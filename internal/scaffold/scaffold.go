// Package scaffold writes a new Dawn for Go app for `dawn new`: a go.mod
// requiring Dawn, a main package registering a Go tool through dawn.Main, a
// route with agent.md and plan.md, dawn.yaml, a dawntest test and a README.
// The files are the templates under template/, so what a new app looks like
// is read and edited as files, not as Go strings.
package scaffold

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
)

// Module is Dawn for Go's module path, which a new app requires.
const Module = "github.com/dawn-go/dawn"

// PlaceholderVersion is the version a new app requires when Dawn is built
// from a checkout rather than installed at a released version: no module
// has it, so such a go.mod builds only with a replace to a checkout, which
// Write then adds.
const PlaceholderVersion = "v0.0.0-00010101000000-000000000000"

// GoVersion is the go line of a new app's go.mod: Dawn's own.
const GoVersion = "1.26.0"

//go:embed template
var files embed.FS

// Options configure Write.
type Options struct {
	// Module is the new app's module path; empty uses the folder's name.
	Module string
	// DawnVersion is the version of Dawn the go.mod requires; empty means
	// PlaceholderVersion, which needs Replace.
	DawnVersion string
	// Replace, when set, is a folder holding a checkout of Dawn for Go,
	// written as a replace directive (made absolute), for developing Dawn
	// and the app together.
	Replace string
}

// data is what the templates see.
type data struct {
	Name, Module, GoVersion, DawnVersion, Replace string
}

var modulePath = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._~/-]*$`)

// Write writes a new app into dir, which must not exist or be empty, and
// returns the paths it wrote, relative to dir.
func Write(dir string, opts Options) ([]string, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	if entries, err := os.ReadDir(abs); err == nil && len(entries) > 0 {
		return nil, fmt.Errorf("%s is not empty; pass a new folder, or empty this one", dir)
	} else if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	d, err := templateData(abs, opts)
	if err != nil {
		return nil, err
	}
	var wrote []string
	err = fs.WalkDir(files, "template", func(p string, e fs.DirEntry, err error) error {
		if err != nil || e.IsDir() {
			return err
		}
		rel, err := writeTemplate(abs, p, d)
		if err != nil {
			return err
		}
		wrote = append(wrote, rel)
		return nil
	})
	return wrote, err
}

// templateData is what the templates of an app in folder abs see: its
// name, its module path (opts.Module, else the folder's name), and the
// version of Dawn or the checkout it requires.
func templateData(abs string, opts Options) (data, error) {
	d := data{Name: filepath.Base(abs), Module: opts.Module, GoVersion: GoVersion, DawnVersion: opts.DawnVersion}
	if d.Module == "" {
		d.Module = strings.ToLower(d.Name)
	}
	if !modulePath.MatchString(d.Module) || strings.Contains(d.Module, "..") {
		return d, fmt.Errorf("%q is not a usable Go module path; pass --module with one, such as example.com/myapp", d.Module)
	}
	if opts.Replace != "" {
		r, err := filepath.Abs(opts.Replace)
		if err != nil {
			return d, err
		}
		if !IsCheckout(r) {
			return d, fmt.Errorf("--replace %s: no go.mod for module %s there; pass the folder of a Dawn for Go checkout", opts.Replace, Module)
		}
		d.Replace = r
	}
	if d.DawnVersion == "" {
		d.DawnVersion = PlaceholderVersion
	}
	if d.DawnVersion == PlaceholderVersion && d.Replace == "" {
		return d, fmt.Errorf("this dawn binary was built from a checkout, not a released version, so there is no version of %s to require: pass --replace with the checkout's folder (or run dawn new from inside it), or --version with a released version", Module)
	}
	return d, nil
}

// writeTemplate renders the template file p with d and writes it under
// abs, at p's path below template/ without .tmpl (gitignore becomes
// .gitignore). It returns that path.
func writeTemplate(abs, p string, d data) (string, error) {
	rel := strings.TrimSuffix(strings.TrimPrefix(p, "template/"), ".tmpl")
	if path.Base(rel) == "gitignore" {
		rel = path.Join(path.Dir(rel), ".gitignore")
	}
	text, err := files.ReadFile(p)
	if err != nil {
		return "", err
	}
	tmpl, err := template.New(rel).Option("missingkey=error").Parse(string(text))
	if err != nil {
		return "", fmt.Errorf("scaffold template %s: %w", p, err)
	}
	var out bytes.Buffer
	if err := tmpl.Execute(&out, d); err != nil {
		return "", fmt.Errorf("scaffold template %s: %w", p, err)
	}
	target := filepath.Join(abs, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
		return "", err
	}
	if err := os.WriteFile(target, out.Bytes(), 0o644); err != nil {
		return "", err
	}
	return rel, nil
}

// IsCheckout reports whether dir holds the go.mod of Dawn for Go.
func IsCheckout(dir string) bool {
	data, err := os.ReadFile(filepath.Join(dir, "go.mod"))
	if err != nil {
		return false
	}
	for line := range strings.Lines(string(data)) {
		if f := strings.Fields(line); len(f) == 2 && f[0] == "module" && strings.Trim(f[1], `"`) == Module {
			return true
		}
	}
	return false
}
