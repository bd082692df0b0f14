package skills

import (
	"bytes"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/dawn-go/dawn/internal/yamldoc"
	"gopkg.in/yaml.v3"
)

// SkillFile is the file that makes a folder under skills/ a skill.
const SkillFile = "SKILL.md"

// Limits of a skill, from agentskills.io where it sets one.
const (
	// MaxSkillFileSize is the largest SKILL.md read: 256 KiB.
	MaxSkillFileSize = 256 << 10
	// MaxNameLen is the longest skill name.
	MaxNameLen = 64
	// MaxDescriptionLen is the longest description, in characters.
	MaxDescriptionLen = 1024
)

// frontMatterKeys are the keys SKILL.md front matter may hold
// (agentskills.io's); Dawn reads name and description.
var frontMatterKeys = []string{"name", "description", "license", "compatibility", "metadata", "allowed-tools"}

// namePattern is agentskills.io's skill name: lowercase letters, digits
// and single hyphens, neither first nor last.
var namePattern = regexp.MustCompile(`^[a-z0-9]+(-[a-z0-9]+)*$`)

// Skill is one parsed SKILL.md.
type Skill struct {
	Name        string
	Description string
	// File is the path of SKILL.md; its folder is the skill's, to which
	// readSkillFile is jailed.
	File string
	// Body is the Markdown after the front matter, trimmed: what readSkill
	// returns.
	Body string
}

// Parse parses a SKILL.md: YAML front matter between "---" lines with the
// required keys name and description, then the instructions. path is
// used in errors and kept as Skill.File. A UTF-8 byte order mark and CRLF
// line endings are accepted. Every error names the file and what to write.
func Parse(path string, data []byte) (Skill, error) {
	s := Skill{File: path}
	fail := func(format string, args ...any) (Skill, error) {
		return s, fmt.Errorf("%s: %s", path, fmt.Sprintf(format, args...))
	}
	if len(data) > MaxSkillFileSize {
		return fail("the file is %d KiB, over the %d KiB limit for SKILL.md: move details into files beside it (references/...) that readSkillFile reads", (len(data)+1023)>>10, MaxSkillFileSize>>10)
	}
	data = bytes.TrimPrefix(data, []byte{0xEF, 0xBB, 0xBF})
	if !utf8.Valid(data) {
		return fail("the file is not UTF-8 text: save it as UTF-8")
	}
	data = bytes.ReplaceAll(data, []byte("\r\n"), []byte("\n"))
	front, body, err := yamldoc.SplitFrontMatter(data)
	if err != nil {
		return fail("%v", err)
	}
	if front == nil {
		return fail(`no front matter: start the file with a "---" line, then name: <the folder's name> and description: <what the skill does and when to use it>, then a closing "---" line`)
	}
	if err := decode(front, &s); err != nil {
		return fail("%v", err)
	}
	switch {
	case s.Name == "":
		return fail(`front matter has no "name": add name: <the folder's name>`)
	case s.Description == "":
		return fail(`front matter has no "description": add description: <what the skill does and when to use it>`)
	case len(s.Name) > MaxNameLen || !namePattern.MatchString(s.Name):
		return fail("name %q must be at most %d lowercase letters, digits and single hyphens, not starting or ending with one (e.g. pdf-forms)", s.Name, MaxNameLen)
	case utf8.RuneCountInString(s.Description) > MaxDescriptionLen:
		return fail("description is %d characters, over the %d limit: shorten it", utf8.RuneCountInString(s.Description), MaxDescriptionLen)
	}
	s.Body = strings.TrimSpace(string(body))
	return s, nil
}

// decode reads the front matter's keys into s. YAML line n is file line
// n+1.
func decode(front []byte, s *Skill) error {
	root, err := yamldoc.Mapping(front)
	var syntax *yamldoc.SyntaxError
	switch {
	case errors.As(err, &syntax):
		return fmt.Errorf("front matter is not valid YAML (line %d): %s", syntax.Line+1, syntax.Msg)
	case err != nil:
		return fmt.Errorf(`front matter must be "key: value" lines with name and description`)
	}
	for key, value := range yamldoc.Pairs(root) {
		line := key.Line + 1
		switch key.Value {
		case "name", "description":
			if value.Kind != yaml.ScalarNode || yamldoc.IsNull(value) {
				return fmt.Errorf("line %d: %q must be text", line, key.Value)
			}
			text := strings.TrimSpace(value.Value)
			if key.Value == "name" {
				s.Name = text
			} else {
				s.Description = text
			}
		default:
			if !slices.Contains(frontMatterKeys, key.Value) {
				return fmt.Errorf("line %d: unknown front matter key %q; allowed keys: %s", line, key.Value, strings.Join(frontMatterKeys, ", "))
			}
		}
	}
	return nil
}
