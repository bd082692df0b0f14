package routertest

import (
	"fmt"
	"os"
	"path/filepath"
)

// GenerateApp writes n routes under dir: even i a static route "s{i}",
// odd i a dynamic route "t{i}/[id]". Each gets a short agent.md with a
// description in its front matter and, when withPlan is set, a plan.md with
// four checklist items.
func GenerateApp(dir string, n int, withPlan bool) error {
	for i := range n {
		folder := filepath.Join(dir, fmt.Sprintf("s%d", i))
		if i%2 == 1 {
			folder = filepath.Join(dir, fmt.Sprintf("t%d", i), "[id]")
		}
		if err := os.MkdirAll(folder, 0o755); err != nil {
			return err
		}
		agent := fmt.Sprintf("---\ndescription: Generated route %d\n---\nYou are generated agent %d. Answer briefly.\n", i, i)
		if err := os.WriteFile(filepath.Join(folder, "agent.md"), []byte(agent), 0o644); err != nil {
			return err
		}
		if !withPlan {
			continue
		}
		plan := "- [ ] Step 1\n- [ ] Step 2\n- [ ] Step 3\n- [ ] Step 4\n"
		if err := os.WriteFile(filepath.Join(folder, "plan.md"), []byte(plan), 0o644); err != nil {
			return err
		}
	}
	return nil
}
