package routertest_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/dawn-go/dawn/router"
	"github.com/dawn-go/dawn/router/routertest"
)

func TestGenerateApp(t *testing.T) {
	tests := []struct {
		n        int
		withPlan bool
	}{{0, false}, {4, false}, {5, true}}
	for _, tt := range tests {
		dir := t.TempDir()
		if err := routertest.GenerateApp(dir, tt.n, tt.withPlan); err != nil {
			t.Fatal(err)
		}
		tree, err := router.Discover(dir)
		if err != nil || len(tree.Routes) != tt.n {
			t.Fatalf("n=%d: Discover() = %d routes, %v", tt.n, len(tree.Routes), err)
		}
		for i, id := range []string{"/s0", "/t1/[id]"}[:min(2, tt.n)] {
			r := tree.Route(id)
			if r == nil || r.Agent.Description == "" {
				t.Fatalf("n=%d: route %d %s = %+v", tt.n, i, id, r)
			}
			plan, err := os.ReadFile(filepath.Join(r.Dir, "plan.md"))
			if tt.withPlan && (err != nil || string(plan) != "- [ ] Step 1\n- [ ] Step 2\n- [ ] Step 3\n- [ ] Step 4\n") {
				t.Errorf("plan.md = %q, %v", plan, err)
			}
			if !tt.withPlan && err == nil {
				t.Errorf("plan.md written without withPlan")
			}
		}
	}
}
