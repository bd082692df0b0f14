package watch

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// watchDir starts Changes on dir and returns the channel of its batches.
// The watcher stops when the test ends.
func watchDir(t *testing.T, dir string, opts Options) <-chan Batch {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	batches := make(chan Batch, 100)
	done := make(chan error, 1)
	go func() { done <- Changes(ctx, dir, opts, func(b Batch) { batches <- b }) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Changes: %v", err)
		}
	})
	// Changes has no ready signal: poke a file until its batch arrives, then
	// drain what the poke left behind.
	poke := filepath.Join(dir, "poke.md")
	quiet := 3*opts.withDefaults().Debounce + 100*time.Millisecond
	deadline := time.Now().Add(10 * time.Second)
	for {
		write(t, poke, time.Now().String())
		select {
		case <-batches:
			os.Remove(poke)
			drain(batches, quiet)
			return batches
		case <-time.After(quiet):
		}
		if time.Now().After(deadline) {
			t.Fatal("the watcher reported nothing for 10s")
		}
	}
}

func drain(batches <-chan Batch, quiet time.Duration) {
	for {
		select {
		case <-batches:
		case <-time.After(quiet):
			return
		}
	}
}

func write(t *testing.T, path, text string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

// next returns the next batch, failing after 10s.
func next(t *testing.T, batches <-chan Batch) Batch {
	t.Helper()
	select {
	case b := <-batches:
		return b
	case <-time.After(10 * time.Second):
		t.Fatal("no batch within 10s")
		return Batch{}
	}
}

// nextWith returns the first batch that holds path.
func nextWith(t *testing.T, batches <-chan Batch, path string) Batch {
	t.Helper()
	for {
		b := next(t, batches)
		if slices.Contains(b.Paths, path) {
			return b
		}
		t.Logf("batch without %s: %v", path, b.Paths)
	}
}

func TestChangesCollapsesABurst(t *testing.T) {
	dir := t.TempDir()
	batches := watchDir(t, dir, Options{Debounce: 300 * time.Millisecond, MaxDelay: time.Minute})
	start := time.Now()
	var want []string
	for i := range 20 {
		p := filepath.Join(dir, "route", "agent"+string(rune('a'+i))+".md")
		write(t, p, "x")
		write(t, p, "y") // the same file twice counts once
		want = append(want, p)
	}
	b := next(t, batches)
	for _, p := range want {
		if !slices.Contains(b.Paths, p) {
			t.Errorf("batch lacks %s: %v", p, b.Paths)
		}
	}
	if !slices.IsSorted(b.Paths) || len(slices.Compact(slices.Clone(b.Paths))) != len(b.Paths) {
		t.Errorf("paths are not sorted and unique: %v", b.Paths)
	}
	if b.First.Before(start) || b.First.After(time.Now()) {
		t.Errorf("First = %v, want between the first write and now", b.First)
	}
	select {
	case extra := <-batches:
		t.Errorf("a burst gave a second batch: %v", extra.Paths)
	case <-time.After(time.Second):
	}
}

func TestChangesWatchesNewFolders(t *testing.T) {
	dir := t.TempDir()
	batches := watchDir(t, dir, Options{Debounce: 20 * time.Millisecond})

	// A folder created with a file already in it reports the file.
	if err := os.MkdirAll(filepath.Join(dir, "tmp-new", "deep"), 0o755); err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(dir, "tmp-new", "deep", "agent.md"), "x")
	if err := os.Rename(filepath.Join(dir, "tmp-new"), filepath.Join(dir, "new")); err != nil {
		t.Fatal(err)
	}
	nextWith(t, batches, filepath.Join(dir, "new", "deep", "agent.md"))

	// Later edits inside the new folder are seen too.
	drain(batches, 200*time.Millisecond)
	plan := filepath.Join(dir, "new", "deep", "plan.md")
	write(t, plan, "- [ ] one\n")
	nextWith(t, batches, plan)
}

func TestChangesIgnoresDawnFolderAndEditorFiles(t *testing.T) {
	dir := t.TempDir()
	write(t, filepath.Join(dir, ".dawn", "dawn.db"), "")
	batches := watchDir(t, dir, Options{Debounce: 20 * time.Millisecond})
	for i := range 5 {
		write(t, filepath.Join(dir, ".dawn", "dawn.db-wal"), strings.Repeat("w", i))
		write(t, filepath.Join(dir, ".dawn", "bin", "app-1"), "binary")
		write(t, filepath.Join(dir, "support", ".agent.md.swp"), "swap")
		write(t, filepath.Join(dir, "support", "agent.md~"), "backup")
	}
	if err := os.Chmod(filepath.Join(dir, ".dawn", "dawn.db"), 0o600); err != nil {
		t.Fatal(err)
	}
	agent := filepath.Join(dir, "support", "agent.md")
	write(t, agent, "---\n---\n")
	for seen := false; !seen; {
		b := next(t, batches)
		for _, p := range b.Paths {
			rel, _ := filepath.Rel(dir, p)
			if Ignored(rel) {
				t.Errorf("reported an ignored path: %s", rel)
			}
		}
		seen = slices.Contains(b.Paths, agent)
	}
}

func TestChangesKeep(t *testing.T) {
	dir := t.TempDir()
	keep := func(rel string) bool { return filepath.Ext(rel) == ".go" || rel == "poke.md" }
	batches := watchDir(t, dir, Options{Debounce: 20 * time.Millisecond, Keep: keep})
	write(t, filepath.Join(dir, "notes.md"), "x")
	goFile := filepath.Join(dir, "tools", "tools.go") // in a new folder
	write(t, goFile, "package tools\n")
	b := nextWith(t, batches, goFile)
	for _, p := range b.Paths {
		if filepath.Ext(p) != ".go" {
			t.Errorf("Keep let %s through", p)
		}
	}
}

func TestChangesMaxDelay(t *testing.T) {
	dir := t.TempDir()
	batches := watchDir(t, dir, Options{Debounce: 200 * time.Millisecond, MaxDelay: 300 * time.Millisecond})
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			case <-time.After(20 * time.Millisecond):
				os.WriteFile(filepath.Join(dir, "busy.md"), []byte{byte(i)}, 0o644)
			}
		}
	}()
	defer func() { close(stop); <-done }()
	// Changes never stop, yet batches still come.
	next(t, batches)
	next(t, batches)
}

func TestChangesReady(t *testing.T) {
	dir := t.TempDir()
	ready := make(chan struct{})
	batches := make(chan Batch, 10)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		Changes(ctx, dir, Options{Debounce: 10 * time.Millisecond, Ready: func() { close(ready) }}, func(b Batch) { batches <- b })
	}()
	defer func() { cancel(); <-done }()
	select {
	case <-ready:
	case <-time.After(10 * time.Second):
		t.Fatal("Ready was not called")
	}
	plan := filepath.Join(dir, "plan.md")
	write(t, plan, "- [ ] one\n") // the first write after Ready is seen
	nextWith(t, batches, plan)
}

func TestChangesMissingFolder(t *testing.T) {
	err := Changes(context.Background(), filepath.Join(t.TempDir(), "missing"), Options{}, func(Batch) {})
	if err == nil {
		t.Fatal("Changes on a missing folder returned nil")
	}
}

func TestChangesStopsWithContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- Changes(ctx, t.TempDir(), Options{Debounce: 10 * time.Millisecond}, func(Batch) {}) }()
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Changes did not return after its context ended")
	}
}
