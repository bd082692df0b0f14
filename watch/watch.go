// Package watch reports changes under a folder tree, recursively and with
// bursts debounced, using fsnotify. New folders are watched as they appear;
// editor temporary files and the .dawn folder are ignored.
//
// It imports only fsnotify and the standard library.
package watch

import (
	"context"
	"io/fs"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/fsnotify/fsnotify"
)

// Ignored reports whether a path's changes should not count: editor swap and
// backup files, and anything inside .dawn, .git or node_modules.
func Ignored(path string) bool {
	base := filepath.Base(path)
	switch {
	case strings.HasSuffix(base, "~"),
		strings.HasSuffix(base, ".swp"), strings.HasSuffix(base, ".swx"), strings.HasSuffix(base, ".swo"),
		strings.HasPrefix(base, ".#"), strings.HasPrefix(base, "#") && strings.HasSuffix(base, "#"),
		base == "4913", strings.HasSuffix(base, ".tmp"), base == ".DS_Store":
		return true
	}
	for _, part := range strings.Split(filepath.ToSlash(path), "/") {
		if part == ".dawn" || part == ".git" || part == "node_modules" {
			return true
		}
	}
	return false
}

// Watch calls onChange with the changed paths (sorted, deduplicated) after
// each burst of changes under dir has been quiet for debounce. It returns
// when ctx ends, or an error if dir cannot be watched.
func Watch(ctx context.Context, dir string, debounce time.Duration, onChange func(paths []string)) error {
	w, err := fsnotify.NewWatcher()
	if err != nil {
		return err
	}
	defer w.Close()
	if err := addTree(w, dir); err != nil {
		return err
	}
	var pending []string
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case ev, ok := <-w.Events:
			if !ok {
				return nil
			}
			if Ignored(ev.Name) {
				continue
			}
			if ev.Has(fsnotify.Create) {
				_ = addTree(w, ev.Name) // a new folder: watch it and what is in it
			}
			pending = append(pending, ev.Name)
			timer.Reset(debounce)
		case <-w.Errors:
			// An overflow or a removed folder: keep watching what is left.
		case <-timer.C:
			slices.Sort(pending)
			onChange(slices.Compact(pending))
			pending = nil
		}
	}
}

// addTree watches root and every folder below it that is not ignored.
func addTree(w *fsnotify.Watcher, root string) error {
	return filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			if path == root {
				return err
			}
			return nil
		}
		if !d.IsDir() {
			return nil
		}
		if path != root && Ignored(path) {
			return filepath.SkipDir
		}
		return w.Add(path)
	})
}
