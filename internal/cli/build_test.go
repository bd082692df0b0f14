package cli

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// buildApp runs dawn build with args and returns its exit code, stdout and
// stderr.
func buildApp(args ...string) (int, string, string) {
	var stdout, stderr bytes.Buffer
	code := Run(append([]string{"build"}, args...), Config{Stdout: &stdout, Stderr: &stderr})
	return code, stdout.String(), stderr.String()
}

// TestBuildFindsWhatToBuild: for an app without Go code the Dockerfile
// builds Dawn's cmd/dawn and the build context is the folder holding the
// app; for an app with its own main package (dawn new's layout) it builds
// that package from the module root, and says when go.mod replaces a
// module with a folder the build context does not hold.
func TestBuildFindsWhatToBuild(t *testing.T) {
	route := map[string]string{"app/hello/agent.md": "---\ndescription: Says hello.\n---\nSay hello.\n"}

	plain := filepath.Join(t.TempDir(), "Plain Site")
	writeTree(t, plain, route)
	code, stdout, stderr := buildApp("--app", filepath.Join(plain, "app"))
	if code != ExitOK {
		t.Fatalf("dawn build exited %d: %s", code, stderr)
	}
	if !strings.Contains(stdout, filepath.Join(plain, "deploy", "helm", "plain-site", "values.yaml")) {
		t.Errorf("dawn build did not write the chart as deploy/helm/plain-site: %s", stdout)
	}
	docker := readFile(t, filepath.Join(plain, "Dockerfile"))
	for _, want := range []string{"github.com/dawn-go/dawn/cmd/dawn@${DAWN_VERSION}", "COPY app /srv/app"} {
		if !strings.Contains(docker, want) {
			t.Errorf("the Dockerfile of an app without Go code has no %q:\n%s", want, docker)
		}
	}
	if code, _, stderr := buildApp("--app", filepath.Join(plain, "app")); code != ExitProblem || !strings.Contains(stderr, "--force") {
		t.Errorf("a second dawn build exited %d (%s), want %d naming --force", code, stderr, ExitProblem)
	}

	mod := t.TempDir()
	writeTree(t, mod, route)
	writeTree(t, mod, map[string]string{
		"go.mod":  "module example.com/shop\n\ngo 1.26.0\n\nrequire github.com/dawn-go/dawn v0.1.0\n\nreplace github.com/dawn-go/dawn => ../dawn\n",
		"main.go": "package main\n\nimport \"github.com/dawn-go/dawn\"\n\nfunc main() { dawn.Main() }\n",
	})
	code, _, stderr = buildApp("--app", filepath.Join(mod, "app"), "--name", "shop", "--grace", "1m")
	if code != ExitOK {
		t.Fatalf("dawn build of a Go app exited %d: %s", code, stderr)
	}
	docker = readFile(t, filepath.Join(mod, "Dockerfile"))
	for _, want := range []string{"FROM golang:1.26-alpine AS build", "-o /out/dawn-app .\n", "COPY app /srv/app", `CMD ["--grace", "60s"]`} {
		if !strings.Contains(docker, want) {
			t.Errorf("the Dockerfile of an app with a main package has no %q:\n%s", want, docker)
		}
	}
	if !strings.Contains(stderr, "replaces a module with ../dawn, outside the build context") {
		t.Errorf("dawn build did not warn about the replace outside the build context: %q", stderr)
	}
	if code, _, stderr := buildApp("--app", filepath.Join(mod, "app"), "--out", filepath.Join(mod, "app"), "--force"); code != ExitUsage || !strings.Contains(stderr, "needs that go.mod at the build context's root") {
		t.Errorf("dawn build --out below the module root exited %d (%s), want %d naming the module root", code, stderr, ExitUsage)
	}
}

// TestBuildExampleApp writes the files for examples/app, whose main package
// sits in the app folder inside this module, into a copy of the layout and
// checks go build takes the package the Dockerfile names.
func TestBuildExampleApp(t *testing.T) {
	code, stdout, stderr := buildApp("--app", "../../examples/app", "--out", t.TempDir())
	if code != ExitUsage || !strings.Contains(stderr, "pass --out") {
		t.Fatalf("dawn build --app examples/app --out elsewhere exited %d (%s %s), want a usage error naming the module root", code, stdout, stderr)
	}
	out, err := exec.Command("go", "list", "-f", "{{.Name}}", "../../examples/app").Output()
	if err != nil || strings.TrimSpace(string(out)) != "main" {
		t.Fatalf("go list examples/app = %q, %v", out, err)
	}
	o, ok := appMainDir("../../examples/app")
	if !ok {
		t.Fatal("examples/app has no main package calling dawn.Main")
	}
	rel, err := relSlash(filepath.Join("..", ".."), o)
	if err != nil || rel != "examples/app" {
		t.Errorf("the main package relative to the module root = %q, %v; want examples/app", rel, err)
	}
}

func writeTree(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, text := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}
