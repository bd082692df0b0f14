package cli

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
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
	// The replaced folder does not exist: what dawn build would write
	// cannot build, and it says why instead of writing it.
	code, _, stderr = buildApp("--app", filepath.Join(mod, "app"), "--name", "shop", "--grace", "1m")
	if code != ExitProblem || !strings.Contains(stderr, "replaces github.com/dawn-go/dawn => ../dawn, outside the Docker build context, and go mod vendor could not bring it in") {
		t.Errorf("dawn build with a replace it cannot vendor exited %d (%s), want 1 naming the replace", code, stderr)
	}
	if _, err := os.Stat(filepath.Join(mod, "Dockerfile")); err == nil {
		t.Error("dawn build wrote a Dockerfile that cannot build")
	}
	writeTree(t, mod, map[string]string{"go.mod": "module example.com/shop\n\ngo 1.26.0\n"})
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

// TestBuildCarriesTheAppsEnvironment: every variable the app's settings
// name (the JWT and webhook secrets, a route's model key) reaches compose
// from the shell and the chart from its Secret, and dawn build lists them.
func TestBuildCarriesTheAppsEnvironment(t *testing.T) {
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{
		"app/dawn.yaml":        "auth: {jwt: {secret_env: SHOP_JWT_SECRET}}\nwebhooks: {secret_env: SHOP_HOOK_SECRET}\n",
		"app/hello/agent.md":   "---\ndescription: Says hello.\nmodel: openai:gpt-4o-mini\n---\nSay hello.\n",
		"app/offline/agent.md": "---\ndescription: Offline.\n---\nSay hi.\n",
	})
	code, _, stderr := buildApp("--app", filepath.Join(dir, "app"), "--name", "shop")
	if code != ExitOK {
		t.Fatalf("dawn build exited %d: %s", code, stderr)
	}
	want := map[string]string{
		"SHOP_JWT_SECRET":  "auth.jwt.secret_env in dawn.yaml",
		"SHOP_HOOK_SECRET": "webhooks.secret_env in dawn.yaml",
		"OPENAI_API_KEY":   "model openai:gpt-4o-mini of route /hello",
	}
	var compose struct {
		Services map[string]struct {
			Environment map[string]string `yaml:"environment"`
		} `yaml:"services"`
	}
	if err := yaml.Unmarshal([]byte(readFile(t, filepath.Join(dir, "deploy", "compose", "compose.yaml"))), &compose); err != nil {
		t.Fatal(err)
	}
	var values struct {
		AppSecret struct {
			SecretName string `yaml:"secretName"`
			Keys       []struct {
				Name     string `yaml:"name"`
				Optional bool   `yaml:"optional"`
			} `yaml:"keys"`
		} `yaml:"appSecret"`
	}
	if err := yaml.Unmarshal([]byte(readFile(t, filepath.Join(dir, "deploy", "helm", "shop", "values.yaml"))), &values); err != nil {
		t.Fatal(err)
	}
	env := compose.Services["app"].Environment
	for name, from := range want {
		if got := env[name]; !strings.HasPrefix(got, "${"+name+":?") {
			t.Errorf("compose passes %s as %q, want it required from the shell", name, got)
		}
		if !strings.Contains(stderr, name+" ("+from+")") {
			t.Errorf("dawn build did not list %s (%s):\n%s", name, from, stderr)
		}
		if !slices.ContainsFunc(values.AppSecret.Keys, func(k struct {
			Name     string `yaml:"name"`
			Optional bool   `yaml:"optional"`
		}) bool {
			return k.Name == name && !k.Optional
		}) {
			t.Errorf("values.yaml appSecret.keys %+v lacks %s", values.AppSecret.Keys, name)
		}
	}
	if values.AppSecret.SecretName != "shop-env" || len(values.AppSecret.Keys) != len(want) {
		t.Errorf("values.yaml appSecret = %+v", values.AppSecret)
	}
}
