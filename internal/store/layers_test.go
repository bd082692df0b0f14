package store

import (
	"go/parser"
	"go/token"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// TestDialectsHoldOnlyTheirDatabase: the seam (dialect) imports nothing of
// this module, and each dialect only the seam, so the logic stays here,
// once, and a dialect cannot reach back into it.
func TestDialectsHoldOnlyTheirDatabase(t *testing.T) {
	const module = "github.com/dawn-go/dawn/"
	allowed := map[string][]string{
		"dialect":  nil,
		"sqlite":   {"internal/store/dialect"},
		"postgres": {"internal/store/dialect"},
	}
	for dir, allow := range allowed {
		files, err := filepath.Glob(filepath.Join(dir, "*.go"))
		if err != nil || len(files) == 0 {
			t.Fatalf("no Go files in %s: %v", dir, err)
		}
		for _, file := range files {
			if strings.HasSuffix(file, "_test.go") {
				continue
			}
			f, err := parser.ParseFile(token.NewFileSet(), file, nil, parser.ImportsOnly)
			if err != nil {
				t.Fatal(err)
			}
			for _, imp := range f.Imports {
				path, _ := strconv.Unquote(imp.Path.Value)
				if rest, ok := strings.CutPrefix(path, module); ok && !slices.Contains(allow, rest) {
					t.Errorf("%s imports %s; a dialect holds only its database's SQL, types, locking and notification, and imports only the seam", file, rest)
				}
			}
		}
	}
}
