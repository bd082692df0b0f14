package workspace

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/dawn-go/dawn/capabilities"
	"github.com/dawn-go/dawn/thread"
)

// session calls the tools of one workspace as a run would: each call sees
// the state the previous one left.
type session struct {
	sp    *space
	state thread.State
}

func newSession(t *testing.T, folder bool) *session {
	sp := &space{route: "/w", now: func() time.Time { return time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC) }}
	if folder {
		sp.dir = filepath.Join(t.TempDir(), "ws")
	}
	return &session{sp: sp, state: thread.State{}}
}

func (s *session) call(name, input string) (string, error) {
	for _, tool := range s.sp.tools() {
		if tool.Spec().Name != name {
			continue
		}
		res, err := tool.Call(context.Background(), capabilities.Invocation{Input: json.RawMessage(input), State: s.state})
		if err != nil {
			return "", err
		}
		for k, v := range res.Update {
			s.state[k] = v
		}
		return string(res.Output), nil
	}
	panic("no tool " + name)
}

// TestTools: each tool's answers and errors, the same on the thread's
// virtual tree and on a real folder.
func TestTools(t *testing.T) {
	type step struct {
		tool, input string
		want        string // the output, or a part of the error
		err         bool
	}
	tests := []struct {
		name  string
		steps []step
	}{
		{"write then read", []step{
			{WriteFile, `{"path":"notes/todo.md","content":"a\nb\nc\n"}`, `"wrote 6 bytes to notes/todo.md"`, false},
			{ReadFile, `{"path":"notes/todo.md"}`, `"a\nb\nc\n"`, false},
			{ReadFile, `{"path":"./notes//todo.md"}`, `"a\nb\nc\n"`, false},
			{ReadFile, `{"path":"x/../notes/todo.md"}`, `"a\nb\nc\n"`, false},
			{ReadFile, `{"path":"notes/todo.md","offset":1,"limit":1}`, `"b\n"`, false},
			{ReadFile, `{"path":"notes/todo.md","offset":9}`, `offset 9 is past the end of "notes/todo.md"`, true},
		}},
		{"overwrite replaces the whole file", []step{
			{WriteFile, `{"path":"a.txt","content":"one"}`, `"wrote 3 bytes to a.txt"`, false},
			{WriteFile, `{"path":"a.txt","content":"two"}`, `"wrote 3 bytes to a.txt"`, false},
			{ReadFile, `{"path":"a.txt"}`, `"two"`, false},
			{WriteFile, `{"path":"empty.txt","content":""}`, `"wrote 0 bytes to empty.txt"`, false},
			{ReadFile, `{"path":"empty.txt"}`, `""`, false},
		}},
		{"edit", []step{
			{WriteFile, `{"path":"main.go","content":"x := 1\ny := 1\n"}`, `"wrote 14 bytes to main.go"`, false},
			{EditFile, `{"path":"main.go","oldString":"x := 1","newString":"x := 2"}`, `"replaced 1 occurrence(s) in main.go"`, false},
			{ReadFile, `{"path":"main.go"}`, `"x := 2\ny := 1\n"`, false},
			{EditFile, `{"path":"main.go","oldString":" := ","newString":"="}`, `oldString occurs 2 times in main.go; add the lines around it`, true},
			{EditFile, `{"path":"main.go","oldString":"z := 3","newString":"z"}`, `oldString was not found in main.go`, true},
			{EditFile, `{"path":"main.go","oldString":"","newString":"z"}`, `oldString is empty`, true},
			{EditFile, `{"path":"nope.go","oldString":"a","newString":"b"}`, `"nope.go" does not exist`, true},
			{EditFile, `{"path":"main.go","oldString":" := ","newString":"=","replaceAll":true}`, `"replaced 2 occurrence(s) in main.go"`, false},
			{ReadFile, `{"path":"main.go"}`, `"x=2\ny=1\n"`, false},
		}},
		{"list and glob", []step{
			{ListDir, `{}`, `[]`, false},
			{WriteFile, `{"path":"README.md","content":"hi"}`, `"wrote 2 bytes to README.md"`, false},
			{WriteFile, `{"path":"docs/a.md","content":"aaa"}`, `"wrote 3 bytes to docs/a.md"`, false},
			{WriteFile, `{"path":"docs/deep/b.go","content":"b"}`, `"wrote 1 bytes to docs/deep/b.go"`, false},
			{ListDir, `{}`, `[{"name":"README.md","type":"file","size":2},{"name":"docs","type":"dir"}]`, false},
			{ListDir, `{"path":"docs"}`, `[{"name":"a.md","type":"file","size":3},{"name":"deep","type":"dir"}]`, false},
			{ListDir, `{"path":"docs/a.md"}`, `"docs/a.md" is a file, not a folder`, true},
			{ListDir, `{"path":"missing"}`, `"missing" does not exist`, true},
			{Glob, `{"pattern":"*.md"}`, `["README.md","docs/a.md"]`, false},
			{Glob, `{"pattern":"docs/**"}`, `["docs/a.md","docs/deep/b.go"]`, false},
			{Glob, `{"pattern":"docs/*"}`, `["docs/a.md"]`, false},
			{Glob, `{"pattern":"**/*.go"}`, `["docs/deep/b.go"]`, false},
			{Glob, `{"pattern":"*.txt"}`, `[]`, false},
			{Glob, `{"pattern":"[a-"}`, `pattern "[a-" is malformed`, true},
		}},
		{"files and folders do not mix", []step{
			{WriteFile, `{"path":"a/b.txt","content":"x"}`, `"wrote 1 bytes to a/b.txt"`, false},
			{WriteFile, `{"path":"a","content":"x"}`, `"a" is a folder`, true},
			{ReadFile, `{"path":"a"}`, `"a" is a folder`, true},
			{WriteFile, `{"path":"a/b.txt/c","content":"x"}`, `a/b.txt`, true},
		}},
		{"bad paths and input", []step{
			{ReadFile, `{"path":"../etc/passwd"}`, `leads out of the workspace`, true},
			{ReadFile, `{"path":"/etc/passwd"}`, `is absolute; paths are relative to the workspace root, e.g. "etc/passwd"`, true},
			{WriteFile, `{"path":".","content":"x"}`, `names the workspace root`, true},
			{WriteFile, `{"path":"a\u0000b","content":"x"}`, `control character`, true},
			{WriteFile, `{"path":"a\\b","content":"x"}`, `backslash`, true},
			{WriteFile, `{"path":"a.txt"}`, `content is missing`, true},
			{WriteFile, `{"path":"a.txt","content":"x","mode":"0777"}`, `unknown field "mode"`, true},
			{ReadFile, `{"path":"missing.txt"}`, `"missing.txt" does not exist; listDir or glob show the workspace's files`, true},
			{ListDir, `{"path":"../"}`, `leads out of the workspace`, true},
		}},
		{"size limit", []step{
			{WriteFile, `{"path":"big.txt","content":"` + strings.Repeat("x", MaxFileSize+1) + `"}`, `file "big.txt" is 262145 bytes, over the 256 KiB limit`, true},
			{WriteFile, `{"path":"max.txt","content":"` + strings.Repeat("x", MaxFileSize) + `"}`, `"wrote 262144 bytes to max.txt"`, false},
		}},
	}
	for _, backend := range []string{"thread", "folder"} {
		for _, tt := range tests {
			t.Run(backend+"/"+tt.name, func(t *testing.T) {
				s := newSession(t, backend == "folder")
				for i, st := range tt.steps {
					got, err := s.call(st.tool, st.input)
					switch {
					case st.err && err == nil:
						t.Fatalf("step %d %s %s = %s, want an error with %q", i, st.tool, st.input, got, st.want)
					case st.err && !strings.Contains(err.Error(), st.want):
						t.Fatalf("step %d %s %s: error %q, want %q in it", i, st.tool, st.input, err, st.want)
					case !st.err && err != nil:
						t.Fatalf("step %d %s %s: %v", i, st.tool, st.input, err)
					case !st.err && got != st.want:
						t.Fatalf("step %d %s %s = %s, want %s", i, st.tool, st.input, got, st.want)
					}
				}
			})
		}
	}
}

// TestTreeLimits: the virtual tree refuses a write past its total size
// or its number of files, and keeps what it had.
func TestTreeLimits(t *testing.T) {
	s := newSession(t, false)
	chunk := strings.Repeat("x", MaxFileSize)
	for i := range MaxTreeSize / MaxFileSize {
		if _, err := s.call(WriteFile, `{"path":"f`+string(rune('a'+i))+`","content":"`+chunk+`"}`); err != nil {
			t.Fatal(err)
		}
	}
	before := string(s.state[Field])
	if _, err := s.call(WriteFile, `{"path":"one-more","content":"x"}`); err == nil || !strings.Contains(err.Error(), "over its 1024 KiB limit") {
		t.Fatalf("write past the total: %v", err)
	}
	// Overwriting a file with less is still fine.
	if _, err := s.call(WriteFile, `{"path":"fa","content":"small"}`); err != nil {
		t.Fatal(err)
	}
	if string(s.state[Field]) == before {
		t.Fatal("the overwrite did not change the tree")
	}

	s = newSession(t, false)
	tree := Tree{}
	for i := range MaxTreeFiles {
		tree[strings.Repeat("d/", i%3)+"f"+strings.Repeat("x", i/26)+string(rune('a'+i%26))] = File{Content: "1"}
	}
	s.state[Field], _ = json.Marshal(tree)
	if len(tree) != MaxTreeFiles {
		t.Fatalf("%d files, want %d", len(tree), MaxTreeFiles)
	}
	if _, err := s.call(WriteFile, `{"path":"new.txt","content":"x"}`); err == nil || !strings.Contains(err.Error(), "holds 500 files, its limit") {
		t.Fatalf("write past the file count: %v", err)
	}
	if _, err := s.call(WriteFile, `{"path":"fa","content":"2"}`); err != nil {
		t.Fatalf("overwrite at the file count: %v", err)
	}
}

// TestFolderFilesOnDisk: a real folder's files are plain files, and one
// too big for the tools is refused by readFile, not truncated.
func TestFolderFilesOnDisk(t *testing.T) {
	s := newSession(t, true)
	if _, err := s.call(WriteFile, `{"path":"src/app.go","content":"package app"}`); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(s.sp.dir, "src", "app.go"))
	if err != nil || string(data) != "package app" {
		t.Fatalf("on disk: %q, %v", data, err)
	}
	if len(s.state) != 0 {
		t.Fatalf("a folder workspace changed the state: %v", s.state)
	}
	if err := os.WriteFile(filepath.Join(s.sp.dir, "big.bin"), make([]byte, MaxFileSize+1), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := s.call(ReadFile, `{"path":"big.bin"}`); err == nil || !strings.Contains(err.Error(), "over the 256 KiB limit") {
		t.Fatalf("reading a big file: %v", err)
	}
}

// TestFolderNamedPipe: a named pipe in a folder workspace is refused by
// readFile and writeFile at once; opening it would block the call.
func TestFolderNamedPipe(t *testing.T) {
	s := newSession(t, true)
	if err := os.MkdirAll(s.sp.dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := mkfifo(filepath.Join(s.sp.dir, "pipe")); err != nil {
		t.Skipf("named pipes: %v", err)
	}
	done := make(chan [2]error, 1)
	go func() {
		_, rerr := s.call(ReadFile, `{"path":"pipe"}`)
		_, werr := s.call(WriteFile, `{"path":"pipe","content":"x"}`)
		done <- [2]error{rerr, werr}
	}()
	select {
	case errs := <-done:
		for _, err := range errs {
			if err == nil || !strings.Contains(err.Error(), `"pipe" is not a regular file`) {
				t.Fatalf("errors %v, want both to say it is not a regular file", errs)
			}
		}
	case <-time.After(5 * time.Second):
		t.Fatal("a call on a named pipe blocked")
	}
}

// TestEditFileReplaceAllBound: a replaceAll whose result would pass the
// file limit is refused before the result is built. A 250 KB file of one
// repeated character and a 1 KiB newString would make a 250 MB string.
func TestEditFileReplaceAllBound(t *testing.T) {
	for _, folder := range []bool{false, true} {
		s := newSession(t, folder)
		if folder {
			if err := os.MkdirAll(s.sp.dir, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(s.sp.dir, "big.txt"), []byte(strings.Repeat("a", 250_000)), 0o644); err != nil {
				t.Fatal(err)
			}
		} else if _, err := s.call(WriteFile, `{"path":"big.txt","content":"`+strings.Repeat("a", 250_000)+`"}`); err != nil {
			t.Fatal(err)
		}
		input := `{"path":"big.txt","oldString":"a","newString":"` + strings.Repeat("b", 1024) + `","replaceAll":true}`
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		_, err := s.call(EditFile, input)
		runtime.ReadMemStats(&after)
		if err == nil || !strings.Contains(err.Error(), `editing "big.txt" would make it 256000000 bytes, over the 256 KiB limit`) {
			t.Fatalf("folder=%v: error %v, want the result's size refused", folder, err)
		}
		// Reading the file and its copies cost a few times 250 KB; the
		// result would have cost 256 MB.
		grew := after.TotalAlloc - before.TotalAlloc
		if grew > 8<<20 {
			t.Fatalf("folder=%v: the refused edit allocated %d bytes", folder, grew)
		}
		t.Logf("folder=%v: the refused edit allocated %d bytes", folder, grew)
		if out, err := s.call(ReadFile, `{"path":"big.txt","offset":0,"limit":1}`); err != nil || len(out) != 250_002 {
			t.Fatalf("folder=%v: the file changed: %d bytes, %v", folder, len(out), err)
		}
	}
}
