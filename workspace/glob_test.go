package workspace

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/dawn-go/dawn/capabilities"
)

// callCtx is session.call with a context of the test's choosing.
func (s *session) callCtx(ctx context.Context, name, input string) (string, error) {
	for _, tool := range s.sp.tools() {
		if tool.Spec().Name == name {
			res, err := tool.Call(ctx, capabilities.Invocation{Input: json.RawMessage(input), State: s.state})
			return string(res.Output), err
		}
	}
	panic("no tool " + name)
}

// TestGlobManyDoubleStars: a pattern of many "**" segments over a deep
// path answers at once. Matching by trying every split of the path for
// every "**" took 200^8 steps here and never returned.
func TestGlobManyDoubleStars(t *testing.T) {
	s := newSession(t, true)
	deep := strings.Repeat("d/", 200) + "x.txt"
	if err := os.MkdirAll(filepath.Join(s.sp.dir, filepath.Dir(filepath.FromSlash(deep))), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(s.sp.dir, filepath.FromSlash(deep)), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	stars := strings.Repeat("**/", 8)
	tests := []struct{ pattern, want string }{
		{stars + "y.txt", `[]`},
		{stars + "d/*.txt", `["` + deep + `"]`},
		{stars + "e/" + stars + "x.txt", `[]`},
	}
	for _, tt := range tests {
		done := make(chan string, 1)
		go func() {
			out, err := s.call(Glob, `{"pattern":"`+tt.pattern+`"}`)
			if err != nil {
				out = err.Error()
			}
			done <- out
		}()
		select {
		case out := <-done:
			if out != tt.want {
				t.Errorf("glob %q = %s, want %s", tt.pattern, out, tt.want)
			}
		case <-time.After(30 * time.Second):
			t.Fatalf("glob %q did not return", tt.pattern)
		}
	}
}

// endingCtx is a context whose Err turns to DeadlineExceeded after it has
// been asked n times: a deadline that passes partway through a call.
type endingCtx struct {
	context.Context
	asked atomic.Int64
	n     int64
}

func (c *endingCtx) Err() error {
	if c.asked.Add(1) > c.n {
		return context.DeadlineExceeded
	}
	return nil
}

// TestGlobStopsAtDeadline: when the call's deadline passes during the
// walk of a folder, glob stops walking and answers with the deadline,
// rather than working on for nobody.
func TestGlobStopsAtDeadline(t *testing.T) {
	s := newSession(t, true)
	for i := range 300 {
		dir := filepath.Join(s.sp.dir, "d", strings.Repeat("x", i%7+1), string(rune('a'+i%26))+strings.Repeat("y", i/26))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(s.sp.dir, "d", "f.txt"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx := &endingCtx{Context: context.Background(), n: 20}
	_, err := s.callCtx(ctx, Glob, `{"pattern":"**/*.txt"}`)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("glob past its deadline: %v, want it stopped with the deadline", err)
	}
	if asked := ctx.asked.Load(); asked > 25 {
		t.Fatalf("glob asked its context %d times after the deadline passed at 20; it went on walking", asked)
	}
	// With time to spare, the same call finds the file.
	if out, err := s.callCtx(context.Background(), Glob, `{"pattern":"**/*.txt"}`); err != nil || out != `["d/f.txt"]` {
		t.Fatalf("glob: %s, %v", out, err)
	}
}

// matchBacktrack is the plain definition of Match on segments: "**"
// takes none or more segments, any other segment matches one as
// path.Match does. It is exponential in the number of "**", so it serves
// only as the reference for short patterns.
func matchBacktrack(pat, segs []string) bool {
	if len(pat) == 0 {
		return len(segs) == 0
	}
	if pat[0] == "**" {
		for i := 0; i <= len(segs); i++ {
			if matchBacktrack(pat[1:], segs[i:]) {
				return true
			}
		}
		return false
	}
	if len(segs) == 0 {
		return false
	}
	ok, _ := path.Match(pat[0], segs[0])
	return ok && matchBacktrack(pat[1:], segs[1:])
}

// FuzzMatch: Match agrees with the plain backtracking definition.
func FuzzMatch(f *testing.F) {
	for _, seed := range [][2]string{
		{"**/*.go", "cmd/app/main.go"}, {"**", "a"}, {"a/**", "a"}, {"a/**/b", "a/b"},
		{"a/**/b", "a/x/y/b"}, {"**/**/c", "a/b/c"}, {"**/b/**/d", "a/b/c/d"},
		{"a/*/c", "a/b/c"}, {"a/?/c", "a/bb/c"}, {"[a-c]/**", "d/e"}, {"a//b", "a/b"},
		{"*.md", "docs/x.md"}, {"docs/**/x", "docs"},
	} {
		f.Add(seed[0], seed[1])
	}
	f.Fuzz(func(t *testing.T, pattern, name string) {
		if strings.Count(pattern, "**") > 4 || len(pattern) > 64 || len(name) > 64 || !strings.Contains(pattern, "/") {
			return
		}
		want := matchBacktrack(strings.Split(pattern, "/"), strings.Split(name, "/"))
		if got := Match(pattern, name); got != want {
			t.Fatalf("Match(%q, %q) = %v, want %v", pattern, name, got, want)
		}
	})
}
