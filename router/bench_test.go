package router

import (
	"testing"

	"github.com/dawn-go/dawn/router/routertest"
)

// benchApp writes a 1,000-route app with plan.md files: half static "s{i}",
// half dynamic "t{i}/[id]".
func benchApp(b *testing.B) string {
	b.Helper()
	dir := b.TempDir()
	if err := routertest.GenerateApp(dir, 1000, true); err != nil {
		b.Fatal(err)
	}
	return dir
}

func BenchmarkDiscover1000(b *testing.B) {
	dir := benchApp(b)
	b.ReportAllocs()
	for b.Loop() {
		tree, err := Discover(dir)
		if err != nil || len(tree.Routes) != 1000 {
			b.Fatalf("Discover() = %d routes, %v", len(tree.Routes), err)
		}
	}
}

func BenchmarkMatch1000(b *testing.B) {
	tree, err := Discover(benchApp(b))
	if err != nil {
		b.Fatal(err)
	}
	paths := []struct{ name, path, want string }{
		{"static", "/s500", "/s500"},
		{"dynamic", "/t501/acme", "/t501/[id]"},
		{"id", "/t501/[id]#agent", "/t501/[id]"},
		{"notfound", "/t501/acme/more", ""},
	}
	for _, p := range paths {
		b.Run(p.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				r, _, err := tree.Match(p.path)
				if (r == nil) != (p.want == "") || (r != nil && r.ID != p.want) {
					b.Fatalf("Match(%q) = %v, %v", p.path, r, err)
				}
			}
		})
	}
}
