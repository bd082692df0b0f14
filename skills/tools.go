package skills

import (
	"context"

	"github.com/dawn-go/dawn/capabilities"
)

type readSkillIn struct {
	Name string `json:"name" jsonschema:"the skill's name, as the Skills section lists it"`
}

type readSkillFileIn struct {
	Name string `json:"name" jsonschema:"the skill's name"`
	Path string `json:"path" jsonschema:"a file's path inside the skill's folder, such as references/guide.md"`
}

// Tools returns readSkill and readSkillFile over set.
func Tools(set Set) []capabilities.Tool {
	return []capabilities.Tool{
		capabilities.Func(ReadSkillTool, "Read a skill's instructions.", func(_ context.Context, in readSkillIn) (string, error) {
			return set.Read(in.Name)
		}),
		capabilities.Func(ReadSkillFileTool, "Read a file of a skill's folder, such as one its instructions refer to.", func(_ context.Context, in readSkillFileIn) (string, error) {
			return set.ReadFile(in.Name, in.Path)
		}),
	}
}
