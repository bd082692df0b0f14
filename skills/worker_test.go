package skills_test

import (
	"strings"
	"testing"

	"github.com/dawn-go/dawn/thread"
)

// TestWorkersKeepSkills: the workers that run a route's steps get its
// skills: the prompt section and both tools.
func TestWorkersKeepSkills(t *testing.T) {
	dir := writeApp(t, map[string]string{"a/agent.md": "You help.", "a/skills/tone/SKILL.md": skillMD("tone", "The house tone.", "Be kind.")})
	p, err := prepare(t, dir, "/a")
	if err != nil {
		t.Fatal(err)
	}
	w := p.Worker()
	if len(w.Prompts) != 1 || !strings.Contains(w.Prompts[0](thread.State{}), "- tone: The house tone.") {
		t.Fatalf("a worker's prompts: %d", len(w.Prompts))
	}
	if w.Tool("readSkill") == nil || w.Tool("readSkillFile") == nil {
		t.Errorf("a worker lacks readSkill or readSkillFile")
	}
}
