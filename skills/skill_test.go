package skills

import (
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	const path = "app/skills/refunds/SKILL.md"
	tests := []struct {
		name string
		data string
		want Skill  // when err is ""
		err  string // a part of the error
	}{
		{
			name: "name, description, body",
			data: "---\nname: refunds\ndescription: How to handle a refund request.\n---\n\n# Refunds\n\nCheck the order first.\n",
			want: Skill{Name: "refunds", Description: "How to handle a refund request.", File: path, Body: "# Refunds\n\nCheck the order first."},
		},
		{
			name: "BOM, CRLF, the optional keys of agentskills.io",
			data: "\xEF\xBB\xBF---\r\nname: pdf-forms\r\ndescription: >\r\n  Fill PDF forms.\r\nlicense: MIT\r\nmetadata:\r\n  author: ops\r\nallowed-tools: Read\r\ncompatibility: any\r\n---\r\nSteps.\r\n",
			want: Skill{Name: "pdf-forms", Description: "Fill PDF forms.", File: path, Body: "Steps."},
		},
		{name: "no front matter", data: "# Refunds\n", err: path + `: no front matter: start the file with a "---" line, then name: <the folder's name> and description: <what the skill does and when to use it>, then a closing "---" line`},
		{name: "unclosed front matter", data: "---\nname: refunds\n", err: `has no closing "---" line`},
		{name: "no name", data: "---\ndescription: d\n---\nx", err: path + `: front matter has no "name": add name: <the folder's name>`},
		{name: "no description", data: "---\nname: refunds\n---\nx", err: path + `: front matter has no "description"`},
		{name: "empty description", data: "---\nname: refunds\ndescription: \"\"\n---\nx", err: `front matter has no "description"`},
		{name: "name is a list", data: "---\nname: [a]\ndescription: d\n---\n", err: path + `: line 2: "name" must be text`},
		{name: "upper case name", data: "---\nname: Refunds\ndescription: d\n---\n", err: `name "Refunds" must be at most 64 lowercase letters, digits and single hyphens`},
		{name: "leading hyphen", data: "---\nname: -refunds\ndescription: d\n---\n", err: `name "-refunds" must be`},
		{name: "double hyphen", data: "---\nname: re--funds\ndescription: d\n---\n", err: `name "re--funds" must be`},
		{name: "name too long", data: "---\nname: " + strings.Repeat("a", 65) + "\ndescription: d\n---\n", err: "must be at most 64"},
		{name: "description too long", data: "---\nname: a\ndescription: " + strings.Repeat("é", 1025) + "\n---\n", err: "description is 1025 characters, over the 1024 limit: shorten it"},
		{name: "unknown key", data: "---\nname: a\ndescription: d\ntools: [x]\n---\n", err: path + `: line 4: unknown front matter key "tools"; allowed keys: name, description, license, compatibility, metadata, allowed-tools`},
		{name: "not YAML", data: "---\nname: [a\ndescription: d\n---\n", err: path + ": front matter is not valid YAML"},
		{name: "not a mapping", data: "---\n- a\n---\n", err: `front matter must be "key: value" lines`},
		{name: "not UTF-8", data: "---\nname: a\ndescription: caf\xe9\n---\n", err: path + ": the file is not UTF-8 text: save it as UTF-8"},
		{name: "oversize", data: "---\nname: a\ndescription: d\n---\n" + strings.Repeat("x", MaxSkillFileSize), err: path + ": the file is 257 KiB, over the 256 KiB limit for SKILL.md"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Parse(path, []byte(tt.data))
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("error %v, want one with %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Errorf("got %+v\nwant %+v", got, tt.want)
			}
		})
	}
}

func TestRenderPrompt(t *testing.T) {
	set := Set{
		{Name: "pdf-forms", Description: "Fill PDF forms.\nUse for any PDF.", Body: "secret steps"},
		{Name: "refunds", Description: "How to handle a refund request."},
	}
	want := "## Skills\n\nSkills hold instructions for particular tasks. When a task matches a skill's description, call readSkill with its name before you start, and follow it; readSkillFile reads the files the skill refers to.\n\n" +
		"- pdf-forms: Fill PDF forms. Use for any PDF.\n" +
		"- refunds: How to handle a refund request.\n"
	if got := RenderPrompt(set); got != want {
		t.Errorf("prompt:\n%q\nwant\n%q", got, want)
	}
}
