package typegen

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
)

// Changes is what Sync did, as slash-separated paths relative to the output
// folder, each list sorted.
type Changes struct {
	Written   []string
	Unchanged []string
	Removed   []string
}

// Sync makes dir hold files: it writes each file whose bytes differ from
// what is on disk (through a temporary file and a rename), leaves equal
// files untouched so their modification times stay, and removes files a
// previous run generated that files no longer has (a deleted route's
// schemas). It only ever replaces or removes files that carry
// GeneratedMarker, and only at the paths typegen uses: dawngen.go,
// dawn.generated.d.ts and schemas/*.tools.json or *.state.json. A file of
// the user's own at one of those paths is an error naming it.
func Sync(dir string, files map[string][]byte) (Changes, error) {
	var ch Changes
	for _, rel := range slices.Sorted(maps.Keys(files)) {
		if !fs.ValidPath(rel) || rel == "." {
			return ch, fmt.Errorf("typegen: %q is not a relative file path", rel)
		}
		full := filepath.Join(dir, filepath.FromSlash(rel))
		data := files[rel]
		old, err := os.ReadFile(full)
		switch {
		case err == nil && bytes.Equal(old, data):
			ch.Unchanged = append(ch.Unchanged, rel)
			continue
		case err == nil && !isGenerated(old):
			return ch, fmt.Errorf("typegen: %s exists and was not written by dawn typegen; move it away or choose another --out folder", full)
		case err != nil && !errors.Is(err, fs.ErrNotExist):
			return ch, fmt.Errorf("typegen: %w", err)
		}
		if err := writeFileAtomic(full, data); err != nil {
			return ch, fmt.Errorf("typegen: %w", err)
		}
		ch.Written = append(ch.Written, rel)
	}
	owned, err := ownedFiles(dir)
	if err != nil {
		return ch, fmt.Errorf("typegen: %w", err)
	}
	for _, rel := range owned {
		if _, keep := files[rel]; keep {
			continue
		}
		if err := os.Remove(filepath.Join(dir, filepath.FromSlash(rel))); err != nil {
			return ch, fmt.Errorf("typegen: removing a stale generated file: %w", err)
		}
		ch.Removed = append(ch.Removed, rel)
	}
	if len(ch.Removed) > 0 {
		_ = os.Remove(filepath.Join(dir, SchemaDir)) // only succeeds when empty
	}
	return ch, nil
}

// isGenerated reports whether data starts with typegen's marker: in its
// first line for Go and TypeScript, in the first member ("$comment") for
// JSON.
func isGenerated(data []byte) bool {
	head := data[:min(len(data), 512)]
	return bytes.Contains(head, []byte(GeneratedMarker))
}

// ownedFiles lists the files in dir that typegen generated, by the paths
// it uses and the marker, sorted.
func ownedFiles(dir string) ([]string, error) {
	var out []string
	for _, name := range []string{GoFile, TypeScriptFile} {
		if generatedFile(filepath.Join(dir, name)) {
			out = append(out, name)
		}
	}
	entries, err := os.ReadDir(filepath.Join(dir, SchemaDir))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	for _, e := range entries {
		name := e.Name()
		if !e.Type().IsRegular() || !(strings.HasSuffix(name, ".tools.json") || strings.HasSuffix(name, ".state.json")) {
			continue
		}
		if generatedFile(filepath.Join(dir, SchemaDir, name)) {
			out = append(out, path.Join(SchemaDir, name))
		}
	}
	slices.Sort(out)
	return out, nil
}

// generatedFile reports whether the file at p exists and carries the marker.
func generatedFile(p string) bool {
	f, err := os.Open(p)
	if err != nil {
		return false
	}
	defer f.Close()
	head := make([]byte, 512)
	n, _ := f.Read(head)
	return isGenerated(head[:n])
}

// writeFileAtomic writes data to p through a temporary file in the same
// folder, so a reader never sees half a file.
func writeFileAtomic(p string, data []byte) error {
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(p), "."+filepath.Base(p)+".*.tmp")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name()) // fails harmlessly after the rename
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Chmod(0o644); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), p)
}
