package skills

import (
	"context"
	"errors"
	"path/filepath"
	"strings"

	"github.com/dawn-go/dawn/capabilities"
	"github.com/dawn-go/dawn/router"
	"github.com/dawn-go/dawn/thread"
)

// Name is the capability's name.
const Name = "skills"

// Tool names.
const (
	ReadSkillTool     = "readSkill"
	ReadSkillFileTool = "readSkillFile"
)

// Marker returns the skills marker. It applies to a route with a skills/
// folder beside its agent.md, or in an app with one in the app folder, and
// contributes the readSkill and readSkillFile tools and a prompt fragment
// listing each skill's name and description (not its body). A route's
// skill replaces the app's skill of the same name. Its Details are
// {"skills":[{"name","description","file"}]}, each file relative to the
// app folder.
func Marker() capabilities.Marker { return marker{} }

type marker struct{}

func (marker) Name() string { return Name }

// WorkerKeepsPrompts and WorkerKeeps give the workers that run a route's
// steps (plan-first, parallel plans) the route's skills, as its agent has
// them.
func (marker) WorkerKeepsPrompts() bool { return true }

// WorkerKeeps keeps readSkill and readSkillFile for workers.
func (marker) WorkerKeeps(tool string) bool {
	return tool == ReadSkillTool || tool == ReadSkillFileTool
}

// Detect finds skills/ in a route folder; DetectRoute, which Prepare uses,
// also finds the app's.
func (marker) Detect(dir string) (string, bool) {
	if isDir(filepath.Join(dir, Folder)) {
		return Folder, true
	}
	return "", false
}

// DetectRoute reports the route's skills/, else the app's.
func (m marker) DetectRoute(route *router.Route) (string, bool) {
	if file, ok := m.Detect(route.Dir); ok {
		return file, true
	}
	if app := filepath.Join(route.AppDir(), Folder); isDir(app) {
		return app, true
	}
	return "", false
}

func (marker) Load(_ context.Context, route *router.Route, _ string) (*capabilities.Contribution, error) {
	set, warnings, err := Load(route)
	if err != nil {
		return nil, err
	}
	c := &capabilities.Contribution{Warnings: warnings, Details: map[string]any{"skills": details(route, set)}}
	if len(set) == 0 {
		c.Warnings = append(c.Warnings, "the skills/ folder holds no skill: add skills/<name>/SKILL.md or remove the folder")
		return c, nil
	}
	prompt := RenderPrompt(set)
	c.Prompts = []capabilities.Prompt{func(thread.State) string { return prompt }}
	c.Tools = Tools(set)
	return c, nil
}

// Load reads the skills route sees: those of the app folder's skills/,
// then those of the route's, which replace app skills of their names.
func Load(route *router.Route) (Set, []string, error) {
	dirs := []string{filepath.Join(route.AppDir(), Folder)}
	if own := filepath.Join(route.Dir, Folder); own != dirs[0] {
		dirs = append(dirs, own)
	}
	var set Set
	var warnings []string
	var errs []error
	for _, dir := range dirs {
		if !isDir(dir) {
			continue
		}
		found, w, err := LoadDir(dir)
		warnings = append(warnings, w...)
		if err != nil {
			errs = append(errs, err)
		}
		set = Merge(set, found)
	}
	return set, warnings, errors.Join(errs...)
}

// RenderPrompt renders the skills section of the system prompt: how to use
// the tools, then one line per skill, "- name: description".
func RenderPrompt(set Set) string {
	var b strings.Builder
	b.WriteString("## Skills\n\nSkills hold instructions for particular tasks. When a task matches a skill's description, call readSkill with its name before you start, and follow it; readSkillFile reads the files the skill refers to.\n\n")
	for _, s := range set {
		b.WriteString("- ")
		b.WriteString(s.Name)
		b.WriteString(": ")
		b.WriteString(strings.Join(strings.Fields(s.Description), " "))
		b.WriteByte('\n')
	}
	return b.String()
}

// detail is a skill as `dawn routes --json` shows it.
type detail struct {
	Name        string `json:"name"`
	Description string `json:"description"`
	// File is SKILL.md's path from the app folder, slash-separated.
	File string `json:"file"`
}

func details(route *router.Route, set Set) []detail {
	out := make([]detail, len(set))
	for i, s := range set {
		out[i] = detail{Name: s.Name, Description: s.Description, File: appRel(route, s.File)}
	}
	return out
}

// appRel returns path relative to the route's app folder, slash-separated,
// or path itself when it is not inside it.
func appRel(route *router.Route, path string) string {
	rel, err := filepath.Rel(route.AppDir(), path)
	if err != nil || !filepath.IsLocal(rel) {
		return path
	}
	return filepath.ToSlash(rel)
}
