package skills

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// Folder is the folder of skills, beside a route's agent.md or in the app
// folder.
const Folder = "skills"

// MaxReadSize is the largest file readSkillFile returns: 256 KiB.
const MaxReadSize = 256 << 10

// LoadDir reads the skills of the skills folder dir: one per subfolder
// holding SKILL.md, sorted by name. Subfolders starting with "_" or "."
// are skipped, and so is a route folder (one holding agent.md). It returns
// every problem: a subfolder with no SKILL.md, a SKILL.md that does not
// parse, a name that is not its folder's. warnings name the skills' files
// too large for readSkillFile.
func LoadDir(dir string) (skills []Skill, warnings []string, err error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, nil, fmt.Errorf("%s cannot be read: %w; make it readable or remove it", dir, unwrapPath(err))
	}
	var errs []error
	for _, e := range entries {
		name := e.Name()
		sub := filepath.Join(dir, name)
		if strings.HasPrefix(name, "_") || strings.HasPrefix(name, ".") || !isDir(sub) {
			continue
		}
		s, err := loadSkill(sub)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if s == nil {
			continue
		}
		skills = append(skills, *s)
		warnings = append(warnings, oversize(sub)...)
	}
	return skills, warnings, errors.Join(errs...)
}

// loadSkill reads the skill in folder dir; nil, nil for a route folder.
func loadSkill(dir string) (*Skill, error) {
	file := filepath.Join(dir, SkillFile)
	data, err := os.ReadFile(file)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		if isFile(filepath.Join(dir, "agent.md")) {
			return nil, nil
		}
		return nil, fmt.Errorf("%s has no %s: add one with the skill's name and description, or move the folder out of %s/", dir, SkillFile, Folder)
	case err != nil:
		return nil, fmt.Errorf("%s cannot be read: %w; make it readable", file, unwrapPath(err))
	}
	s, err := Parse(file, data)
	if err != nil {
		return nil, err
	}
	if folder := filepath.Base(dir); s.Name != folder {
		return nil, fmt.Errorf("%s: name %q is not the skill's folder name %q: a skill's name must be its folder's; rename one", file, s.Name, folder)
	}
	return &s, nil
}

// oversize names the files of skill folder dir that readSkillFile would
// refuse as too large.
func oversize(dir string) []string {
	var out []string
	_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || d.Name() == SkillFile {
			return nil
		}
		if info, err := d.Info(); err == nil && info.Mode().IsRegular() && info.Size() > MaxReadSize {
			out = append(out, fmt.Sprintf("%s is %d KiB, over the %d KiB readSkillFile returns, so the model cannot read it: split it into smaller files", p, (info.Size()+1023)>>10, MaxReadSize>>10))
		}
		return nil
	})
	return out
}

// Set is the skills a route sees, sorted by name.
type Set []Skill

// Merge returns the skills of base with those of over added, a skill of
// over replacing the one of base with its name.
func Merge(base, over []Skill) Set {
	out := slices.Clone(base)
	for _, s := range over {
		if i := slices.IndexFunc(out, func(b Skill) bool { return b.Name == s.Name }); i >= 0 {
			out[i] = s
			continue
		}
		out = append(out, s)
	}
	slices.SortFunc(out, func(a, b Skill) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// Skill returns the skill named name.
func (s Set) Skill(name string) (Skill, bool) {
	i := slices.IndexFunc(s, func(k Skill) bool { return k.Name == name })
	if i < 0 {
		return Skill{}, false
	}
	return s[i], true
}

// Names lists the skills' names.
func (s Set) Names() []string {
	out := make([]string, len(s))
	for i, k := range s {
		out[i] = k.Name
	}
	return out
}

func isDir(path string) bool {
	info, err := os.Stat(path)
	return err == nil && info.IsDir()
}

func isFile(path string) bool {
	info, err := os.Stat(path)
	return err == nil && info.Mode().IsRegular()
}

// unwrapPath drops the path an *fs.PathError repeats.
func unwrapPath(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}
