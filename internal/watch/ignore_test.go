package watch

import (
	"path/filepath"
	"testing"
)

func TestIgnored(t *testing.T) {
	tests := []struct {
		path string
		want bool
	}{
		{"support/[tenant]/plan.md", false},
		{"support/[tenant]/agent.md", false},
		{"dawn.yaml", false},
		{"main.go", false},
		{"research", false},
		{"notes#1.md", false},
		{"#", false},
		{".dawn", true},
		{".dawn/dawn.db", true},
		{".dawn/dawn.db-wal", true},
		{".dawn/bin/app-3", true},
		{"support/.dawn/x", true},
		{".git/index", true},
		{"web/node_modules/a/agent.md", true},
		{"data/threads.db-wal", true},
		{"data/threads.db-shm", true},
		{"data/threads.db-journal", true},
		{"support/[tenant]/.plan.md.swp", true},
		{"support/[tenant]/.plan.md.swx", true},
		{"support/[tenant]/plan.md~", true},
		{"support/[tenant]/4913", true},
		{"support/[tenant]/.#plan.md", true},
		{"support/[tenant]/#plan.md#", true},
		{"support/[tenant]/plan.md.tmp", true},
		{"support/[tenant]/agent.md___jb_tmp___", true},
		{"support/[tenant]/.goutputstream-ABC123", true},
		{".DS_Store", true},
	}
	for _, tt := range tests {
		if got := Ignored(filepath.FromSlash(tt.path)); got != tt.want {
			t.Errorf("Ignored(%q) = %v, want %v", tt.path, got, tt.want)
		}
	}
}

func BenchmarkIgnored(b *testing.B) {
	paths := []string{"support/[tenant]/plan.md", ".dawn/dawn.db-wal", "web/node_modules/a/b/c.js", "support/[tenant]/.plan.md.swp"}
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		Ignored(paths[i%len(paths)])
	}
}
