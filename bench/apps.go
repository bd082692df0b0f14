package main

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// planMD is the workload's 4-item plan.
const planMD = "# Support checklist\n\n" +
	"- [ ] Understand the customer request\n" +
	"- [ ] Check account context\n" +
	"- [ ] Decide whether to answer or escalate\n" +
	"- [ ] Write the final response\n"

// writeFiles writes files (slash paths relative to dir) under dir.
func writeFiles(dir string, files map[string]string) error {
	for name, body := range files {
		path := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
			return err
		}
	}
	return nil
}

// writeWorkloadApp writes the app into dir: the route
// support/[tenant] with the 4-item plan.md, on model (empty: the offline
// default).
func writeWorkloadApp(dir, model string) error {
	front := "description: Answers a tenant's support questions.\n"
	if model != "" {
		front = "model: " + model + "\n" + front
	}
	return writeFiles(dir, map[string]string{
		"support/[tenant]/agent.md": "---\n" + front + "---\nYou are the support agent for the tenant in the route. Be brief.\n",
		"support/[tenant]/plan.md":  planMD,
	})
}

// writeManyRoutes writes an app of n planning routes, each a dynamic
// route r%04d/[tenant] with an agent.md and the 4-item plan.md.
func writeManyRoutes(dir string, n int) error {
	files := make(map[string]string, 2*n)
	for i := range n {
		base := fmt.Sprintf("r%04d/[tenant]/", i)
		files[base+"agent.md"] = fmt.Sprintf("---\ndescription: Route %d of the load app.\n---\nYou answer questions about area %d.\n", i, i)
		files[base+"plan.md"] = planMD
	}
	return writeFiles(dir, files)
}

// copyApp copies the app folder src to dst, leaving out hidden folders such
// as its store (.dawn).
func copyApp(src, dst string) error {
	return filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, path)
		if err != nil {
			return err
		}
		if d.IsDir() && rel != "." && strings.HasPrefix(d.Name(), ".") {
			return filepath.SkipDir
		}
		target := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		return os.WriteFile(target, data, 0o644)
	})
}
