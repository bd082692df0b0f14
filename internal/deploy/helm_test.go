package deploy

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

// helmModule is the Helm release whose `helm template` renders the chart
// here, built with go run (no binary is downloaded).
const helmModule = "helm.sh/helm/v3/cmd/helm@v3.19.0"

// TestChartRendersWithHelm renders the chart dawn build writes with Helm
// itself, with its default values and with autoscaling on, and checks that
// every object Helm renders parses and equals the one the template test
// above renders, so the checks of TestChartRenders hold for Helm's output.
func TestChartRendersWithHelm(t *testing.T) {
	if testing.Short() {
		t.Skip("builds Helm from its module (a minute or two the first time)")
	}
	out := t.TempDir()
	if _, err := Write(out, options()); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(out, "deploy", "helm", "shop")
	for _, tc := range []struct {
		set  map[string]any
		args []string
	}{
		{nil, nil},
		{map[string]any{"autoscaling": map[string]any{"enabled": true}}, []string{"--set", "autoscaling.enabled=true"}},
	} {
		got := helmTemplate(t, dir, "shop", tc.args...)
		want := renderChart(t, dir, "shop", tc.set)
		if len(got) != len(want) {
			t.Errorf("helm template %v rendered kinds %v, the template test %v", tc.args, kinds(got), kinds(want))
		}
		for kind, obj := range want {
			if !reflect.DeepEqual(got[kind], obj) {
				t.Errorf("helm template %v: the %s differs from the template test's:\nhelm: %v\ntest: %v", tc.args, kind, got[kind], obj)
			}
		}
	}
}

// helmTemplate runs `helm template release dir args...` and returns the
// objects it prints, by kind.
func helmTemplate(t *testing.T, dir, release string, args ...string) map[string]map[string]any {
	t.Helper()
	cmd := exec.Command("go", append([]string{"run", helmModule, "template", release, dir}, args...)...)
	cmd.Env = append(os.Environ(), "GOFLAGS=-modcacherw", "HELM_CACHE_HOME="+t.TempDir(), "HELM_CONFIG_HOME="+t.TempDir(), "HELM_DATA_HOME="+t.TempDir())
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	text, err := cmd.Output()
	if err != nil {
		t.Fatalf("go run %s template: %v\n%s", helmModule, err, stderr.String())
	}
	objects := map[string]map[string]any{}
	for _, doc := range strings.Split(string(text), "\n---") {
		var obj map[string]any
		if err := yaml.Unmarshal([]byte(doc), &obj); err != nil {
			t.Fatalf("helm template printed YAML that does not parse: %v\n%s", err, doc)
		}
		if obj != nil {
			objects[obj["kind"].(string)] = obj
		}
	}
	return objects
}

func kinds(objs map[string]map[string]any) []string {
	var ks []string
	for k := range objs {
		ks = append(ks, k)
	}
	return ks
}
