package e2e

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestAimockSkillsAndMemory runs the stock dawn binary on a route with
// skills, a memory.md and the app's AGENTS.md, on openai:gpt-4o-mini
// pointed at aimock. The model reads the skill, then its reference, and
// answers from it; aimock's journal shows what went over the OpenAI wire:
// the first request's system prompt holds the standing instructions and
// each skill's name and description, and no skill's body.
func TestAimockSkillsAndMemory(t *testing.T) {
	bin := buildDawn(t)
	mock := startAimock(t, "testdata/skills.json")
	app := t.TempDir()
	for name, body := range map[string]string{
		"AGENTS.md":            "Answer in British English.\n",
		"skills/tone/SKILL.md": "---\nname: tone\ndescription: The house tone of voice.\n---\nTONE BODY: be kind and brief.\n",
		"support/agent.md":     "---\nmodel: openai:gpt-4o-mini\n---\nYou help customers.\n",
		"support/memory.md":    "Refunds over 100 EUR need a manager.\n",
		"support/skills/refunds/SKILL.md": "---\nname: refunds\ndescription: How to handle a refund request.\n---\n" +
			"Check the order, then read references/policy.md.\n",
		"support/skills/refunds/references/policy.md": "Refunds within 30 days of delivery.\n",
	} {
		writeFile(t, filepath.Join(app, filepath.FromSlash(name)), body)
	}
	url := startDawn(t, bin, app, aimockEnv(mock)...)

	events := readEvents(t, postJSON(t, url+"/threads/skills-1/runs/stream", userRun("/support", "Can I get a refund?")))
	if got := strings.Join(eventTypes(events), ","); !strings.Contains(got, "tool_call,tool_result") {
		t.Fatalf("events: %s", got)
	}
	if got := lastAnswer(t, events); got != "Yes: refunds are open for 30 days after delivery." {
		t.Fatalf("answer %q: the model did not get the skill's reference", got)
	}
	reqs := chatRequests(t, mock)
	if len(reqs) != 3 {
		t.Fatalf("aimock got %d chat requests, want 3 (readSkill, readSkillFile, answer)", len(reqs))
	}
	first := reqs[0].Messages
	if len(first) == 0 || first[0].Role != "system" {
		t.Fatalf("the first request does not start with a system message: %+v", first)
	}
	system := first[0].text()
	for _, want := range []string{
		"You help customers.",
		"Answer in British English.",
		"Refunds over 100 EUR need a manager.",
		"- refunds: How to handle a refund request.",
		"- tone: The house tone of voice.",
	} {
		if !strings.Contains(system, want) {
			t.Errorf("the first system prompt lacks %q:\n%s", want, system)
		}
	}
	for _, body := range []string{"Check the order", "TONE BODY", "30 days"} {
		if strings.Contains(system, body) {
			t.Errorf("the first system prompt holds a skill's body or file (%q):\n%s", body, system)
		}
	}
	// The system prompt is the same on every call of the run.
	for i, r := range reqs[1:] {
		if got := r.Messages[0].text(); got != system {
			t.Errorf("request %d has another system prompt:\n%s", i+2, got)
		}
	}
}

// TestDawnCheckSkills: `dawn check` on the stock binary fails on broken
// skills, naming each file and what to do, and passes once they are fixed.
func TestDawnCheckSkills(t *testing.T) {
	bin := buildDawn(t)
	app := t.TempDir()
	for name, body := range map[string]string{
		"support/agent.md":                "You help.\n",
		"support/skills/refunds/SKILL.md": "---\nname: refund\ndescription: Refunds.\n---\nSteps.\n",
		"skills/tone/SKILL.md":            "# Tone\n",
		"skills/draft/notes.md":           "no SKILL.md here\n",
	} {
		writeFile(t, filepath.Join(app, filepath.FromSlash(name)), body)
	}
	check := func() (int, string) {
		out, err := exec.Command(bin, "check", "--app", app).CombinedOutput()
		code := 0
		if exit, ok := err.(*exec.ExitError); ok {
			code = exit.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		return code, string(out)
	}
	code, out := check()
	for _, want := range []string{
		"route /support: [skills#load]",
		filepath.Join("skills", "tone", "SKILL.md") + ": no front matter",
		filepath.Join("skills", "draft") + " has no SKILL.md: add one",
		filepath.Join("support", "skills", "refunds", "SKILL.md") + `: name "refund" is not the skill's folder name "refunds"`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("dawn check output lacks %q:\n%s", want, out)
		}
	}
	if code == 0 {
		t.Fatalf("dawn check passed broken skills:\n%s", out)
	}
	writeFile(t, filepath.Join(app, "support", "skills", "refunds", "SKILL.md"), "---\nname: refunds\ndescription: Refunds.\n---\nSteps.\n")
	writeFile(t, filepath.Join(app, "skills", "tone", "SKILL.md"), "---\nname: tone\ndescription: Tone.\n---\nBe kind.\n")
	writeFile(t, filepath.Join(app, "skills", "draft", "SKILL.md"), "---\nname: draft\ndescription: Draft.\n---\nLater.\n")
	if code, out := check(); code != 0 {
		t.Fatalf("dawn check of fixed skills: exit %d\n%s", code, out)
	}
}
