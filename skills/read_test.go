package skills_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dawn-go/dawn/router"
	"github.com/dawn-go/dawn/skills"
)

// secret is the text of the files outside the skill's folder: no path may
// read it.
const secret = "SECRET OUTSIDE THE SKILL"

// jail writes an app whose route /a has the skill "guide" with a
// reference, a symlink inside the folder and symlinks out of it, and
// files outside the folder holding secret. It returns the route's skills.
func jail(t testing.TB) (skills.Set, string) {
	t.Helper()
	dir := writeApp(t, map[string]string{
		"a/agent.md":                          "You help.",
		"a/skills/guide/SKILL.md":             skillMD("guide", "A guide.", "Read references/intro.md."),
		"a/skills/guide/references/intro.md":  "Welcome.",
		"a/skills/guide/references/bin.dat":   "\xff\xfe\x00",
		"a/skills/guide/references/big.txt":   strings.Repeat("x", skills.MaxReadSize+1),
		"a/skills/guide/references/deep/x.md": "Deep.",
		"a/skills/other/SKILL.md":             skillMD("other", "Another.", "Other."),
		"a/skills/other/notes.md":             "Other notes.",
		"a/skills/secret.txt":                 secret,
		"a/secret.txt":                        secret,
	})
	outside := filepath.Join(t.TempDir(), "secret.txt")
	if err := os.WriteFile(outside, []byte(secret), 0o644); err != nil {
		t.Fatal(err)
	}
	guide := filepath.Join(dir, "a", "skills", "guide")
	for name, target := range map[string]string{
		"out-abs":          outside,
		"out-rel":          "../../secret.txt",
		"references/up":    "../../other",
		"references/alias": "intro.md",
	} {
		if err := os.Symlink(target, filepath.Join(guide, filepath.FromSlash(name))); err != nil {
			t.Skipf("symlinks: %v", err)
		}
	}
	tree, err := router.Discover(dir)
	if err != nil {
		t.Fatal(err)
	}
	set, _, err := skills.Load(tree.Route("/a"))
	if err != nil {
		t.Fatal(err)
	}
	return set, outside
}

func TestReadFile(t *testing.T) {
	set, outside := jail(t)
	tests := []struct {
		name, skill, path string
		want              string // the text read, when err is ""
		err               string // a part of the error
	}{
		{name: "a reference", skill: "guide", path: "references/intro.md", want: "Welcome."},
		{name: "SKILL.md itself", skill: "guide", path: "SKILL.md", want: skillMD("guide", "A guide.", "Read references/intro.md.")},
		{name: "a nested file", skill: "guide", path: "references/deep/x.md", want: "Deep."},
		{name: "up and back in", skill: "guide", path: "references/../references/intro.md", want: "Welcome."},
		{name: "a symlink inside", skill: "guide", path: "references/alias", want: "Welcome."},
		{name: "another skill's file", skill: "other", path: "notes.md", want: "Other notes."},
		{name: "dot dot", skill: "guide", path: "../secret.txt", err: `path "../secret.txt" leads outside the skill's folder (it is absolute, or goes up with ..); pass a path inside the skill's folder, such as references/guide.md`},
		{name: "dot dot twice", skill: "guide", path: "references/../../../secret.txt", err: "leads outside the skill's folder"},
		{name: "absolute", skill: "guide", path: outside, err: "leads outside the skill's folder"},
		{name: "symlink out, absolute", skill: "guide", path: "out-abs", err: `skill "guide": "out-abs" cannot be read`},
		{name: "symlink out, relative", skill: "guide", path: "out-rel", err: `"out-rel" cannot be read`},
		{name: "through a symlinked folder out", skill: "guide", path: "references/up/notes.md", err: "cannot be read"},
		{name: "NUL", skill: "guide", path: "references/intro.md\x00.txt", err: "path holds a NUL byte"},
		{name: "overlong", skill: "guide", path: strings.Repeat("a/", 600), err: "path is 1200 bytes, over the 1024 limit"},
		{name: "empty", skill: "guide", path: "", err: "path is empty"},
		{name: "a folder lists its files", skill: "guide", path: "references", err: `skill "guide": "references" is a folder; pass one of its files (alias, big.txt, bin.dat, deep/, intro.md, up)`},
		{name: "a missing file lists the folder", skill: "guide", path: "nope.md", err: `skill "guide" has no file "nope.md"; pass a path inside its folder (its files: SKILL.md, out-abs, out-rel, references/)`},
		{name: "not text", skill: "guide", path: "references/bin.dat", err: `"references/bin.dat" is not UTF-8 text`},
		{name: "too large", skill: "guide", path: "references/big.txt", err: `"references/big.txt" is over the 256 KiB readSkillFile returns`},
		{name: "unknown skill", skill: "nope", path: "SKILL.md", err: `no skill is named "nope"; the skills are: guide, other`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := set.ReadFile(tt.skill, tt.path)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("ReadFile = %q, %v; want an error with %q", got, err, tt.err)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("ReadFile = %q, %v; want %q", got, err, tt.want)
			}
		})
	}
}

// FuzzReadSkillFile: no path, however made, reads a file outside the
// skill's folder: whatever ReadFile returns is the text of a file inside
// it, and never the secret kept beside it, above it, or elsewhere.
func FuzzReadSkillFile(f *testing.F) {
	for _, seed := range []string{"references/intro.md", "../secret.txt", "/etc/passwd", "out-abs", "references/up/notes.md"} {
		f.Add(seed)
	}
	set, _ := jail(f)
	guide, _ := set.Skill("guide")
	root := filepath.Dir(guide.File)
	f.Fuzz(func(t *testing.T, path string) {
		got, err := set.ReadFile("guide", path)
		if err != nil {
			return
		}
		if strings.Contains(got, secret) {
			t.Fatalf("ReadFile(%q) read the secret outside the skill's folder", path)
		}
		if !filepath.IsLocal(path) {
			t.Fatalf("ReadFile(%q) read a path that is not local: %q", path, got)
		}
		// The text is the file's at that path inside the folder, lexically.
		want, rerr := os.ReadFile(filepath.Join(root, path))
		if rerr != nil || string(want) != got {
			t.Fatalf("ReadFile(%q) = %q, but the file inside the folder holds %q (%v)", path, got, want, rerr)
		}
	})
}
