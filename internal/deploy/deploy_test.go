package deploy

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"text/template"
	"time"

	"github.com/dawn-go/dawn/internal/docstext"
	"gopkg.in/yaml.v3"
)

func TestName(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"myapp", "myapp"},
		{"My App_2", "my-app-2"},
		{"--x--", "x"},
		{"ünïcode", "n-code"},
		{strings.Repeat("a", 60), strings.Repeat("a", 53)},
		{"...", ""},
	} {
		if got := Name(c.in); got != c.want {
			t.Errorf("Name(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

// options are a valid Options for an app with its own main package.
func options() Options {
	return Options{Name: "shop", AppDir: "app", MainPkg: ".", GoVersion: "1.26", Grace: 45 * time.Second, Replicas: 3}
}

func TestWriteRefusesBadOptions(t *testing.T) {
	for _, c := range []struct {
		name string
		edit func(*Options)
		want string
	}{
		{"name", func(o *Options) { o.Name = "My App" }, `name "My App"`},
		{"app outside", func(o *Options) { o.AppDir = "../app" }, "--app ../app is outside the output folder"},
		{"main outside", func(o *Options) { o.MainPkg = "/abs" }, "the main package /abs is outside"},
		{"grace", func(o *Options) { o.Grace = time.Millisecond }, "--grace 1ms"},
		{"replicas", func(o *Options) { o.Replicas = 0 }, "--replicas 0"},
	} {
		o := options()
		c.edit(&o)
		if _, err := Write(t.TempDir(), o); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: Write = %v, want an error with %q", c.name, err, c.want)
		}
	}
}

func TestWriteKeepsExistingFiles(t *testing.T) {
	out := t.TempDir()
	if _, err := Write(out, options()); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(out, "Dockerfile"), []byte("mine"), 0o644)
	if _, err := Write(out, options()); err == nil || !strings.Contains(err.Error(), "--force") {
		t.Fatalf("second Write = %v, want a refusal naming --force", err)
	}
	if data, _ := os.ReadFile(filepath.Join(out, "Dockerfile")); string(data) != "mine" {
		t.Fatal("a refused Write changed the Dockerfile")
	}
	o := options()
	o.Force = true
	if _, err := Write(out, o); err != nil {
		t.Fatalf("Write with Force: %v", err)
	}
}

// instruction is one Dockerfile instruction, continuations joined.
type instruction struct{ cmd, args string }

// parseDockerfile splits a Dockerfile into instructions, as the builder
// reads it: comments dropped, lines ending in a backslash joined.
func parseDockerfile(t *testing.T, path string) []instruction {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []instruction
	var cur strings.Builder
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if cur.Len() == 0 && (line == "" || strings.HasPrefix(line, "#")) {
			continue
		}
		if more, ok := strings.CutSuffix(line, "\\"); ok {
			cur.WriteString(more + " ")
			continue
		}
		cur.WriteString(line)
		cmd, args, _ := strings.Cut(cur.String(), " ")
		out = append(out, instruction{strings.ToUpper(cmd), strings.TrimSpace(args)})
		cur.Reset()
	}
	if cur.Len() > 0 {
		t.Fatalf("%s ends inside a continued line", path)
	}
	return out
}

// checkDockerfile checks the instructions an app's image needs: two
// stages, a static build, a non-root user, the app folder copied, a
// HEALTHCHECK on /healthz and dawn start as the entry point. It returns
// the build stage's RUN lines.
func checkDockerfile(t *testing.T, path, appDir string) []string {
	t.Helper()
	valid := map[string]bool{"FROM": true, "RUN": true, "COPY": true, "WORKDIR": true, "ARG": true, "USER": true, "ENV": true, "VOLUME": true, "EXPOSE": true, "HEALTHCHECK": true, "ENTRYPOINT": true, "CMD": true}
	var froms, runs []string
	var user, health string
	var entry []string
	copied := false
	for _, in := range parseDockerfile(t, path) {
		if !valid[in.cmd] {
			t.Errorf("%s: unknown instruction %s %s", path, in.cmd, in.args)
		}
		switch in.cmd {
		case "FROM":
			froms = append(froms, in.args)
		case "RUN":
			if len(froms) == 1 {
				runs = append(runs, in.args)
			}
		case "USER":
			user = in.args
		case "HEALTHCHECK":
			health = in.args
		case "COPY":
			copied = copied || strings.HasPrefix(in.args, appDir+" ")
		case "ENTRYPOINT":
			if err := json.Unmarshal([]byte(in.args), &entry); err != nil {
				t.Errorf("%s: ENTRYPOINT %s is not the exec (JSON) form: %v", path, in.args, err)
			}
		}
	}
	if len(froms) != 2 || !strings.HasSuffix(froms[0], " AS build") {
		t.Errorf("%s: stages %q, want a build stage and a final one", path, froms)
	}
	if !strings.Contains(strings.Join(runs, "\n"), "CGO_ENABLED=0") {
		t.Errorf("%s: the build stage does not build a static binary (CGO_ENABLED=0): %q", path, runs)
	}
	if u, _, _ := strings.Cut(user, ":"); u == "" || u == "root" || u == "0" {
		t.Errorf("%s: USER %q, want a non-root user", path, user)
	}
	if !strings.Contains(health, "CMD ") || !strings.Contains(health, "/healthz") {
		t.Errorf("%s: HEALTHCHECK %q, want a command on /healthz", path, health)
	}
	if !copied {
		t.Errorf("%s: no COPY of the app folder %s", path, appDir)
	}
	if len(entry) < 4 || entry[1] != "start" || entry[2] != "--app" {
		t.Errorf("%s: ENTRYPOINT %q, want the binary with start --app", path, entry)
	}
	return runs
}

// helmFuncs are the few Helm functions the chart uses, with Helm's
// meaning: quote, add, toYaml and nindent.
var helmFuncs = template.FuncMap{
	"quote": func(v any) string { return fmt.Sprintf("%q", fmt.Sprint(v)) },
	"add": func(vs ...any) int {
		n := 0
		for _, v := range vs {
			n += v.(int)
		}
		return n
	},
	"toYaml": func(v any) string {
		data, _ := yaml.Marshal(v)
		return strings.TrimSuffix(string(data), "\n")
	},
	"nindent": func(n int, s string) string {
		pad := strings.Repeat(" ", n)
		return "\n" + pad + strings.ReplaceAll(s, "\n", "\n"+pad)
	},
}

// renderChart renders the chart in dir as `helm template RELEASE dir`
// would, with its values.yaml and the values in set merged over them at
// the top level's sections, and returns the Kubernetes objects by kind.
func renderChart(t *testing.T, dir, release string, set map[string]any) map[string]map[string]any {
	t.Helper()
	var values map[string]any
	data, err := os.ReadFile(filepath.Join(dir, "values.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(data, &values); err != nil {
		t.Fatalf("values.yaml: %v", err)
	}
	for k, v := range set {
		if m, ok := v.(map[string]any); ok {
			for k2, v2 := range m {
				values[k].(map[string]any)[k2] = v2
			}
			continue
		}
		values[k] = v
	}
	var chart map[string]any
	data, _ = os.ReadFile(filepath.Join(dir, "Chart.yaml"))
	if err := yaml.Unmarshal(data, &chart); err != nil {
		t.Fatalf("Chart.yaml: %v", err)
	}
	top := map[string]any{"Values": values, "Release": map[string]any{"Name": release, "Namespace": "default"}, "Chart": chart}
	objects := map[string]map[string]any{}
	files, _ := filepath.Glob(filepath.Join(dir, "templates", "*.yaml"))
	for _, f := range files {
		text, _ := os.ReadFile(f)
		tmpl, err := template.New(filepath.Base(f)).Funcs(helmFuncs).Option("missingkey=error").Parse(string(text))
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		var out bytes.Buffer
		if err := tmpl.Execute(&out, top); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		if strings.TrimSpace(out.String()) == "" {
			continue
		}
		var obj map[string]any
		if err := yaml.Unmarshal(out.Bytes(), &obj); err != nil {
			t.Fatalf("%s renders YAML that does not parse: %v\n%s", f, err, out.String())
		}
		objects[obj["kind"].(string)] = obj
	}
	return objects
}

// dig follows keys (strings for maps, ints for lists) into v.
func dig(v any, keys ...any) any {
	for _, k := range keys {
		switch k := k.(type) {
		case string:
			m, _ := v.(map[string]any)
			v = m[k]
		case int:
			l, _ := v.([]any)
			if k >= len(l) {
				return nil
			}
			v = l[k]
		}
	}
	return v
}

// TestChartRenders renders the chart with its default values and with
// autoscaling on, and checks the objects a cluster needs.
func TestChartRenders(t *testing.T) {
	out := t.TempDir()
	if _, err := Write(out, options()); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(out, "deploy", "helm", "shop")
	objs := renderChart(t, dir, "shop", map[string]any{"env": []any{map[string]any{"name": "OPENAI_BASE_URL", "value": "http://models:8080/v1"}}, "envFromSecret": "shop-keys", "resources": map[string]any{"limits": map[string]any{"memory": "512Mi"}}})
	for _, kind := range []string{"Deployment", "Service", "PodDisruptionBudget"} {
		if objs[kind] == nil {
			t.Errorf("no %s rendered", kind)
		}
	}
	if objs["HorizontalPodAutoscaler"] != nil {
		t.Error("a HorizontalPodAutoscaler rendered with autoscaling off")
	}
	dep := objs["Deployment"]
	pod := dig(dep, "spec", "template", "spec")
	c := dig(pod, "containers", 0)
	checks := []struct {
		what      string
		got, want any
	}{
		{"replicas", dig(dep, "spec", "replicas"), 3},
		{"terminationGracePeriodSeconds (grace 45 + preStop 5 + 10)", dig(pod, "terminationGracePeriodSeconds"), 60},
		{"--grace", dig(c, "args", 1), "45s"},
		{"runAsNonRoot", dig(pod, "securityContext", "runAsNonRoot"), true},
		{"liveness path", dig(c, "livenessProbe", "httpGet", "path"), "/healthz"},
		{"readiness path", dig(c, "readinessProbe", "httpGet", "path"), "/readyz"},
		{"store env", dig(c, "env", 0, "name"), "DAWN_STORE"},
		{"store secret", dig(c, "env", 0, "valueFrom", "secretKeyRef", "name"), "shop-store"},
		{"store secret key", dig(c, "env", 0, "valueFrom", "secretKeyRef", "key"), "url"},
		{"lease", dig(c, "env", 1, "value"), "30s"},
		{"api key env", dig(c, "env", 2, "name"), "DAWN_API_KEY"},
		{"api key secret", dig(c, "env", 2, "valueFrom", "secretKeyRef", "name"), "shop-api-key"},
		{"api key secret key", dig(c, "env", 2, "valueFrom", "secretKeyRef", "key"), "key"},
		{"extra env", dig(c, "env", 3, "value"), "http://models:8080/v1"},
		{"envFrom", dig(c, "envFrom", 0, "secretRef", "name"), "shop-keys"},
		{"resources", dig(c, "resources", "limits", "memory"), "512Mi"},
		{"service selector", dig(objs["Service"], "spec", "selector", "app.kubernetes.io/instance"), "shop"},
		{"service port", dig(objs["Service"], "spec", "ports", 0, "targetPort"), "http"},
		{"pdb minAvailable", dig(objs["PodDisruptionBudget"], "spec", "minAvailable"), 1},
	}
	for _, ch := range checks {
		if fmt.Sprint(ch.got) != fmt.Sprint(ch.want) {
			t.Errorf("Deployment %s = %v, want %v", ch.what, ch.got, ch.want)
		}
	}

	objs = renderChart(t, dir, "shop", map[string]any{"autoscaling": map[string]any{"enabled": true}, "podDisruptionBudget": map[string]any{"enabled": false}})
	if hpa := objs["HorizontalPodAutoscaler"]; dig(hpa, "spec", "maxReplicas") != 10 || dig(hpa, "spec", "scaleTargetRef", "name") != "shop" {
		t.Errorf("HorizontalPodAutoscaler with autoscaling on = %v", hpa)
	}
	if objs["PodDisruptionBudget"] != nil {
		t.Error("a PodDisruptionBudget rendered with it off")
	}
	if r := dig(objs["Deployment"], "spec", "replicas"); r != nil {
		t.Errorf("the Deployment sets replicas %v beside an autoscaler", r)
	}
}

// TestValuesAreDocumented: every top-level value has a comment above it.
func TestValuesAreDocumented(t *testing.T) {
	out := t.TempDir()
	if _, err := Write(out, options()); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(filepath.Join(out, "deploy", "helm", "shop", "values.yaml"))
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	m := doc.Content[0]
	for i := 0; i < len(m.Content); i += 2 {
		if k := m.Content[i]; strings.TrimSpace(k.HeadComment) == "" {
			t.Errorf("values.yaml: %s has no comment saying what it does", k.Value)
		}
	}
}

func TestDockerfile(t *testing.T) {
	for _, c := range []struct {
		name, mainPkg, want string
	}{
		{"own main package", "cmd/shop", "go build -trimpath -ldflags=\"-s -w\" -o /out/dawn-app ./cmd/shop"},
		{"no Go code", "", Module + "/cmd/dawn@${DAWN_VERSION}"},
	} {
		t.Run(c.name, func(t *testing.T) {
			out := t.TempDir()
			o := options()
			o.MainPkg = c.mainPkg
			if _, err := Write(out, o); err != nil {
				t.Fatal(err)
			}
			runs := checkDockerfile(t, filepath.Join(out, "Dockerfile"), "app")
			if !strings.Contains(strings.Join(runs, "\n"), c.want) {
				t.Errorf("the build stage's RUN lines %q do not have %q", runs, c.want)
			}
		})
	}
}

// TestCompose parses the compose trial and checks its services, and has
// HAProxy check its configuration when it is installed.
func TestCompose(t *testing.T) {
	out := t.TempDir()
	if _, err := Write(out, options()); err != nil {
		t.Fatal(err)
	}
	var compose struct {
		Name     string
		Services map[string]struct {
			Image     string
			Build     struct{ Context, Dockerfile string }
			Deploy    struct{ Replicas int }
			Env       map[string]string `yaml:"environment"`
			DependsOn any               `yaml:"depends_on"`
			Ports     []string
			Volumes   []string
		}
		Volumes map[string]any
	}
	data, _ := os.ReadFile(filepath.Join(out, "deploy", "compose", "compose.yaml"))
	if err := yaml.Unmarshal(data, &compose); err != nil {
		t.Fatalf("compose.yaml does not parse: %v", err)
	}
	pg, app, lb := compose.Services["postgres"], compose.Services["app"], compose.Services["lb"]
	if !strings.HasPrefix(pg.Image, "postgres:") || pg.Env["POSTGRES_PASSWORD"] == "" {
		t.Errorf("postgres service = %+v", pg)
	}
	if !strings.HasPrefix(app.Env["DAWN_API_KEY"], "${DAWN_API_KEY:?") {
		t.Errorf("app DAWN_API_KEY = %q, want it required from the shell: the replicas listen beyond loopback", app.Env["DAWN_API_KEY"])
	}
	if app.Deploy.Replicas != 3 || !strings.HasPrefix(app.Env["DAWN_STORE"], "postgres://dawn:dawn@postgres:5432/") {
		t.Errorf("app service = %+v, want 3 replicas on the postgres service", app)
	}
	if ctx := filepath.Join(out, "deploy", "compose", app.Build.Context); filepath.Clean(ctx) != filepath.Clean(out) || app.Build.Dockerfile != "Dockerfile" {
		t.Errorf("app build = %+v, want the output folder and its Dockerfile", app.Build)
	}
	if !strings.HasPrefix(lb.Image, "haproxy:") || len(lb.Ports) != 1 || len(lb.Volumes) != 1 {
		t.Errorf("lb service = %+v", lb)
	}
	cfg := filepath.Join(out, "deploy", "compose", "haproxy.cfg")
	text, _ := os.ReadFile(cfg)
	for _, want := range []string{"balance roundrobin", "option httpchk GET /readyz", "server-template app 3 app:8000"} {
		if !strings.Contains(string(text), want) {
			t.Errorf("haproxy.cfg has no %q", want)
		}
	}
	if _, err := exec.LookPath("haproxy"); err != nil {
		if os.Getenv("DAWN_REQUIRE_HAPROXY") == "1" {
			t.Fatal("haproxy is not installed and DAWN_REQUIRE_HAPROXY=1")
		}
		t.Log("haproxy is not installed: its configuration was not checked by haproxy -c")
		return
	}
	if msg, err := exec.Command("haproxy", "-c", "-f", cfg).CombinedOutput(); err != nil {
		t.Errorf("haproxy -c -f haproxy.cfg: %v\n%s", err, msg)
	}
}

// TestDocsShowWhatBuildWrites: every line of a docs block marked
// <!-- dawn-build --> is a line of the file its fence names, as dawn build
// writes it for an app named shop with the default grace and replicas.
func TestDocsShowWhatBuildWrites(t *testing.T) {
	out := t.TempDir()
	o := options()
	o.Grace = 30 * time.Second
	if _, err := Write(out, o); err != nil {
		t.Fatal(err)
	}
	blocks, err := docstext.Blocks(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	checked := 0
	for _, b := range blocks {
		if b.Marker != "dawn-build" {
			continue
		}
		checked++
		fields := strings.Fields(b.Lang)
		if len(fields) != 2 {
			t.Errorf("%s:%d: the fence %q does not name the file the block is from", b.File, b.Line, b.Lang)
			continue
		}
		data, err := os.ReadFile(filepath.Join(out, filepath.FromSlash(fields[1])))
		if err != nil {
			t.Errorf("%s:%d: %v", b.File, b.Line, err)
			continue
		}
		lines := map[string]bool{}
		for l := range strings.Lines(string(data)) {
			lines[strings.TrimSpace(l)] = true
		}
		for l := range strings.Lines(b.Text) {
			if l := strings.TrimSpace(l); l != "" && !lines[l] {
				t.Errorf("%s:%d: %q is not a line of the %s dawn build writes", b.File, b.Line, l, fields[1])
			}
		}
	}
	if checked < 3 {
		t.Errorf("checked %d dawn-build blocks, want the Dockerfile's, the values' and HAProxy's", checked)
	}
}

// TestChartCarriesAppEnv: each variable of Options.Env reaches the pods
// from the chart's app Secret, required unless optional.
func TestChartCarriesAppEnv(t *testing.T) {
	out := t.TempDir()
	o := options()
	o.Env = []EnvVar{{Name: "SHOP_JWT_SECRET", From: "auth.jwt.secret_env in dawn.yaml", Required: true}, {Name: "OPENAI_API_KEY", From: "model openai:gpt-4o-mini of route /hello", Required: true}}
	if _, err := Write(out, o); err != nil {
		t.Fatal(err)
	}
	objs := renderChart(t, filepath.Join(out, "deploy", "helm", "shop"), "shop", nil)
	data, _ := json.Marshal(objs)
	for _, want := range []string{
		`{"name":"SHOP_JWT_SECRET","valueFrom":{"secretKeyRef":{"key":"SHOP_JWT_SECRET","name":"shop-env","optional":false}}}`,
		`{"name":"OPENAI_API_KEY","valueFrom":{"secretKeyRef":{"key":"OPENAI_API_KEY","name":"shop-env","optional":false}}}`,
	} {
		if !strings.Contains(string(data), want) {
			t.Errorf("the chart's objects lack %s:\n%s", want, data)
		}
	}
	o.Env = []EnvVar{{Name: "BAD-NAME", From: "webhooks.secret_env in dawn.yaml"}}
	if _, err := Write(t.TempDir(), o); err == nil || !strings.Contains(err.Error(), "webhooks.secret_env in dawn.yaml names the environment variable \"BAD-NAME\"") {
		t.Errorf("Write with a bad name = %v", err)
	}
}
