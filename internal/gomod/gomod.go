// Package gomod finds the Go module a folder belongs to: the one place Dawn
// walks up the tree to a go.mod (dawn dev for the app it rebuilds, the load
// tool and the process tests for the repository they build).
package gomod

import (
	"os"
	"path/filepath"
)

// Root returns the folder of the go.mod that dir belongs to: dir itself or
// the nearest folder above it holding a go.mod file. ok is false when there
// is none up to the file system's root. dir is made absolute first.
func Root(dir string) (root string, ok bool) {
	dir, err := filepath.Abs(dir)
	if err != nil {
		return "", false
	}
	for {
		if st, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil && !st.IsDir() {
			return dir, true
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", false
		}
		dir = parent
	}
}
