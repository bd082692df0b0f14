package skills

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"unicode/utf8"
)

// MaxPathLen is the longest path readSkillFile takes, in bytes.
const MaxPathLen = 1024

// Read returns the body of the skill named name: its SKILL.md after the
// front matter. An unknown name is an error listing the skills.
func (s Set) Read(name string) (string, error) {
	k, err := s.lookup(name)
	if err != nil {
		return "", err
	}
	return k.Body, nil
}

// ReadFile returns the text of the file at path in the folder of the skill
// named name, such as "references/policy.md". The file is opened through
// an os.Root on the skill's folder, so no path leaves it: an absolute
// path, "..", or a symlink that leads out is refused, and so are paths
// with NUL bytes or over MaxPathLen bytes, folders (the error lists what
// they hold), files over MaxReadSize and files that are not UTF-8 text.
// Every error says what to pass instead.
func (s Set) ReadFile(name, path string) (string, error) {
	k, err := s.lookup(name)
	if err != nil {
		return "", err
	}
	if err := checkPath(path); err != nil {
		return "", err
	}
	root, err := os.OpenRoot(filepath.Dir(k.File))
	if err != nil {
		return "", fmt.Errorf("the folder of skill %q cannot be opened: %v", name, unwrapPath(err))
	}
	defer root.Close()
	f, err := root.Open(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return "", fmt.Errorf("skill %q has no file %q; pass a path inside its folder (its files: %s)", name, path, listing(root, "."))
		}
		return "", fmt.Errorf("skill %q: %q cannot be read: %v; pass a path inside the skill's folder, such as references/guide.md", name, path, unwrapPath(err))
	}
	defer f.Close()
	info, err := f.Stat()
	switch {
	case err != nil:
		return "", fmt.Errorf("skill %q: %q cannot be read: %v", name, path, unwrapPath(err))
	case info.IsDir():
		return "", fmt.Errorf("skill %q: %q is a folder; pass one of its files (%s)", name, path, listing(root, path))
	case !info.Mode().IsRegular():
		return "", fmt.Errorf("skill %q: %q is not a regular file", name, path)
	}
	data, err := io.ReadAll(io.LimitReader(f, MaxReadSize+1))
	switch {
	case err != nil:
		return "", fmt.Errorf("skill %q: reading %q: %v", name, path, unwrapPath(err))
	case len(data) > MaxReadSize:
		return "", fmt.Errorf("skill %q: %q is over the %d KiB readSkillFile returns", name, path, MaxReadSize>>10)
	case !utf8.Valid(data):
		return "", fmt.Errorf("skill %q: %q is not UTF-8 text, and readSkillFile reads only text", name, path)
	}
	return string(data), nil
}

// checkPath refuses paths that are not local to a folder, before the file
// system sees them.
func checkPath(path string) error {
	const want = "pass a path inside the skill's folder, such as references/guide.md"
	switch {
	case path == "":
		return errors.New("path is empty; " + want)
	case len(path) > MaxPathLen:
		return fmt.Errorf("path is %d bytes, over the %d limit; %s", len(path), MaxPathLen, want)
	case strings.ContainsRune(path, 0):
		return errors.New("path holds a NUL byte; " + want)
	case !filepath.IsLocal(path):
		return fmt.Errorf("path %q leads outside the skill's folder (it is absolute, or goes up with ..); %s", path, want)
	}
	return nil
}

// listing names up to 50 entries of the folder at path in root, folders
// with a trailing slash.
func listing(root *os.Root, path string) string {
	entries, err := fs.ReadDir(root.FS(), filepath.ToSlash(filepath.Clean(path)))
	if err != nil || len(entries) == 0 {
		return "none"
	}
	var names []string
	for i, e := range entries {
		if i == 50 {
			names = append(names, "...")
			break
		}
		n := e.Name()
		if e.IsDir() {
			n += "/"
		}
		names = append(names, n)
	}
	return strings.Join(names, ", ")
}

func (s Set) lookup(name string) (Skill, error) {
	k, ok := s.Skill(name)
	if !ok {
		names := strings.Join(s.Names(), ", ")
		if names == "" {
			names = "none"
		}
		return Skill{}, fmt.Errorf("no skill is named %q; the skills are: %s", name, names)
	}
	return k, nil
}
