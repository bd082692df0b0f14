package typegen

import (
	"testing"

	"github.com/dawn-go/dawn/router/routertest"
)

// BenchmarkGenerate1000 generates for an app of 1,000 routes, half of them
// dynamic, each with a plan.md.
func BenchmarkGenerate1000(b *testing.B) {
	dir := b.TempDir()
	if err := routertest.GenerateApp(dir, 1000, true); err != nil {
		b.Fatal(err)
	}
	a := loadApp(b, dir)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Generate(a, Options{}); err != nil {
			b.Fatal(err)
		}
	}
}
