package skills_test

import (
	"fmt"

	"github.com/dawn-go/dawn/skills"
)

func ExampleParse() {
	s, err := skills.Parse("skills/refunds/SKILL.md", []byte("---\nname: refunds\ndescription: How to decide a refund request.\n---\nRead references/policy.md first.\n"))
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("%s: %s\n%s\n", s.Name, s.Description, s.Body)
	_, err = skills.Parse("skills/refunds/SKILL.md", []byte("---\nname: refunds\n---\n"))
	fmt.Println(err)
	// Output:
	// refunds: How to decide a refund request.
	// Read references/policy.md first.
	// skills/refunds/SKILL.md: front matter has no "description": add description: <what the skill does and when to use it>
}
