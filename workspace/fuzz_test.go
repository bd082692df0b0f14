package workspace

import (
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// secret is the content of a file outside the workspace folder.
const secret = "SECRET-OUTSIDE"

// escapeFixture is a workspace folder beside a folder it must not reach,
// with symbolic links inside the workspace that lead out of it and one
// that stays in.
func escapeFixture(t *testing.T) (ws, outside string) {
	t.Helper()
	base := t.TempDir()
	ws, outside = filepath.Join(base, "ws"), filepath.Join(base, "outside")
	for _, d := range []string{filepath.Join(ws, "sub"), outside} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(outside, "secret.txt"), []byte(secret), 0o644); err != nil {
		t.Fatal(err)
	}
	links := map[string]string{
		"out":      outside,                              // a folder outside
		"outfile":  filepath.Join(outside, "secret.txt"), // a file outside
		"up":       "..",                                 // relative, out
		"sub/back": "../../outside",                      // relative, out through a folder
		"in":       "sub",                                // stays inside
	}
	for name, target := range links {
		if err := os.Symlink(target, filepath.Join(ws, filepath.FromSlash(name))); err != nil {
			t.Skipf("symbolic links: %v", err)
		}
	}
	return ws, outside
}

// snapshot lists every file under dir with its content.
func snapshot(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			data, _ := os.ReadFile(p)
			out[p] = string(data)
		}
		return nil
	})
	return out
}

// FuzzPathEscape: no path reaches outside a folder workspace, whether it
// climbs with "..", is absolute, goes through a symbolic link, holds a NUL
// or is too long; and the virtual tree takes a path exactly when Clean
// does, under the name Clean gives, as the folder does.
func FuzzPathEscape(f *testing.F) {
	// The seed corpus is in testdata/fuzz/FuzzPathEscape: each way out
	// ("..", absolute, each symbolic link, NUL, long names) and a few
	// paths that stay in.
	f.Fuzz(func(t *testing.T, p string) {
		checkClean(t, p)
		// The tools get the path as JSON carries it (invalid UTF-8 turned
		// into U+FFFD).
		input, _ := json.Marshal(map[string]string{"path": p, "content": "written"})
		pathOnly, _ := json.Marshal(map[string]string{"path": p})
		var sent struct{ Path string }
		_ = json.Unmarshal(pathOnly, &sent)
		clean, cerr := Clean(sent.Path)
		checkFolder(t, p, string(input), string(pathOnly), clean, cerr)
		checkTree(t, p, string(input), clean, cerr)
	})
}

// checkClean: what Clean accepts is a path inside the root.
func checkClean(t *testing.T, p string) {
	clean, err := Clean(p)
	if err != nil {
		return
	}
	if clean != "." && (!fs.ValidPath(clean) || strings.HasPrefix(clean, "..")) || len(clean) > MaxPathLen || strings.ContainsRune(clean, 0) {
		t.Fatalf("Clean(%q) = %q, not a path inside the root", p, clean)
	}
}

// checkFolder: on a folder workspace, reading or listing p shows nothing
// from outside, writing it changes nothing outside, and a write that
// succeeds lands at the path Clean gives.
func checkFolder(t *testing.T, p, input, pathOnly, clean string, cerr error) {
	ws, outside := escapeFixture(t)
	before := snapshot(t, outside)
	folder := &session{sp: &space{dir: ws, now: newSession(t, false).sp.now}, state: map[string]json.RawMessage{}}
	for _, tool := range []string{ReadFile, ListDir} {
		out, _ := folder.call(tool, pathOnly)
		if strings.Contains(out, secret) || strings.Contains(out, "secret.txt") {
			t.Fatalf("%s %q reached outside the workspace: %s", tool, p, out)
		}
	}
	_, werr := folder.call(WriteFile, input)
	if after := snapshot(t, outside); len(after) != len(before) || after[filepath.Join(outside, "secret.txt")] != secret {
		t.Fatalf("writeFile %q changed the folder outside: %v", p, after)
	}
	if werr != nil {
		return
	}
	if cerr != nil {
		t.Fatalf("writeFile %q succeeded on the folder, but Clean refuses it: %v", p, cerr)
	}
	data, err := os.ReadFile(filepath.Join(ws, filepath.FromSlash(clean)))
	if err != nil || string(data) != "written" {
		t.Fatalf("writeFile %q: %s does not hold the content (%q, %v)", p, clean, data, err)
	}
}

// checkTree: the virtual tree takes p exactly when Clean does, under the
// name Clean gives.
func checkTree(t *testing.T, p, input, clean string, cerr error) {
	tree := newSession(t, false)
	_, terr := tree.call(WriteFile, input)
	if (terr == nil) != (cerr == nil && clean != ".") {
		t.Fatalf("the virtual tree took %q: %v; Clean: %q, %v", p, terr, clean, cerr)
	}
	if terr == nil {
		got, _ := decodeTree(tree.state[Field])
		if _, ok := got[clean]; !ok || len(got) != 1 {
			t.Fatalf("the virtual tree keeps %q as %v, want %q", p, got, clean)
		}
	}
}
