package planning

import (
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/dawn-go/dawn/harness"
	"github.com/dawn-go/dawn/internal/yamldoc"
)

// File is a parsed plan.md: its optional front matter (the plan harness
// settings) and its seed.
type File struct {
	Settings harness.Settings
	// Seed is the checklist, without postconditions.
	Seed []Todo
	// Verify holds each seed item's verifier line ("" for none), by index,
	// with enforce: true.
	Verify []string
	// Warning is set when the file was too large to parse.
	Warning string
}

// LoadFile reads and parses the plan.md at path. Front matter problems are
// returned together, each naming its key; the file is never written.
func LoadFile(path string) (File, error) {
	f := File{Seed: []Todo{}, Settings: harness.Settings{}}
	data, warning, err := readSeedFile(path)
	if err != nil || warning != "" {
		f.Warning = warning
		return f, err
	}
	return ParseFile(path, data)
}

// ParseFile parses plan.md contents; path names the file in errors.
func ParseFile(path string, data []byte) (File, error) {
	f := File{Seed: []Todo{}}
	data = normalize(data)
	front, body, err := yamldoc.SplitFrontMatter(data)
	if err != nil {
		return f, fmt.Errorf("%s: front matter starts with --- but has no closing --- line; close it or remove the first line", path)
	}
	if front != nil {
		var errs []error
		f.Settings, errs = harness.ParseSettings(path, string(front))
		if len(errs) > 0 {
			return f, errors.Join(errs...)
		}
	}
	doc := parseDoc(body, f.Settings.Enforce)
	f.Seed, f.Verify, f.Settings.Postconditions, f.Settings.PostVerify = doc.todos, doc.todoVerify, doc.post, doc.postVerify
	if f.Settings.Enforce && len(f.Seed) > f.Settings.MaxItems {
		return f, fmt.Errorf("%s: the checklist has %d items, over max_items (%d); raise max_items or shorten the plan", path, len(f.Seed), f.Settings.MaxItems)
	}
	return f, nil
}

// readSeedFile reads plan.md unless it is over MaxSeedBytes, in which case
// it returns a warning instead.
func readSeedFile(path string) ([]byte, string, error) {
	file, err := os.Open(path)
	if err != nil {
		return nil, "", err
	}
	defer file.Close()
	info, err := file.Stat()
	if err != nil {
		return nil, "", err
	}
	if info.Size() > MaxSeedBytes {
		return nil, tooBig(path, info.Size()), nil
	}
	// The file may grow between Stat and reading: read one byte past the limit.
	data, err := io.ReadAll(io.LimitReader(file, MaxSeedBytes+1))
	if err != nil {
		return nil, "", fmt.Errorf("read %s: %w", path, err)
	}
	if len(data) > MaxSeedBytes {
		return nil, tooBig(path, int64(len(data))), nil
	}
	return data, "", nil
}
