package bashrules

import (
	"bytes"
	"slices"
	"strings"
	"testing"

	"mvdan.cc/sh/v3/syntax"
)

func mustPatterns(t testing.TB, texts ...string) []Pattern {
	t.Helper()
	var out []Pattern
	for _, s := range texts {
		p, err := ParsePattern(s)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, p)
	}
	return out
}

// testRules allow a few read-only commands and deny destructive ones.
func testRules(t testing.TB) Rules {
	return Rules{
		Allow: mustPatterns(t, "ls", "cat", "echo", "git status", "git log", "grep", "wc"),
		Deny:  mustPatterns(t, "rm -rf", "sudo", "git push"),
	}
}

// TestJudge: deny first, then allow, word by word; every command of a
// chain, pipeline, substitution, subshell, loop or function body is judged
// on its own, so a chain passes only when each of its commands does.
func TestJudge(t *testing.T) {
	r := testRules(t)
	cases := []struct {
		command string
		want    Verdict
	}{
		{"ls", Allowed},
		{"ls -la src", Allowed},
		{"  ls \t -la\n", Allowed},
		{"'ls' \"-la\"", Allowed},
		{`l\s`, Allowed},
		{"git log --oneline", Allowed},
		{"git  status", Allowed},
		{"ls | grep x | wc -l", Allowed},
		{"ls && echo ok || echo no", Allowed},
		{"echo $(ls)", Allowed},
		{"ls 2>/dev/null", Allowed},
		{"ls > out.txt", Allowed},
		{"ls 2>&1 | grep x", Allowed},
		{"cat < notes.txt", Allowed},
		{"ls /tmp > /tmp/list", Allowed},
		{"for f in a b; do cat $f; done", Allowed},
		{"if ls; then echo y; fi", Allowed},

		{"lsblk", Unknown},
		{"git logout", Unknown},
		{"git", Unknown},
		{"ls; touch x", Unknown},
		{"ls\ntouch x", Unknown},
		{"ls && touch x", Unknown},
		{"ls || touch x", Unknown},
		{"ls | tee x", Unknown},
		{"echo $(touch x)", Unknown},
		{"echo `touch x`", Unknown},
		{"(touch x)", Unknown},
		{"{ touch x; }", Unknown},
		{"cat <(touch x)", Unknown},
		{"ls & touch x", Unknown},
		{"f() { touch x; }; ls", Unknown},
		{"echo \"$(touch x)\"", Unknown},
		{"cat <<EOF\n$(touch x)\nEOF", Unknown},
		{"$CMD -la", Unknown},
		{"$(echo ls)", Unknown},
		{"PATH=/tmp/bin ls", Unknown},
		{"PATH=/tmp/bin; ls", Unknown},
		{"export PATH=/tmp", Unknown},
		{"alias ls=touch", Unknown},
		{"ls > /etc/passwd", Unknown},
		{"echo x >> ../outside", Unknown},
		{"echo x > $FILE", Unknown},
		{"echo x &> ~/.bashrc", Unknown},
		{"{ ls; } > /etc/x", Unknown},
		{"l? -la", Unknown},
		{"{ls,-la}", Unknown},
		{"ls '", Unknown},
		{"ls )", Unknown},
		{"touch x\rls", Unknown},
		{"rm -rf x\rls", Denied},
		{"ls \u202e", Unknown},
		{"ls\v", Unknown},
		{"", Allowed},

		{"rm -rf x", Denied},
		{"rm  -rf   x", Denied},
		{"ls; rm -rf x", Denied},
		{"ls && rm -rf /", Denied},
		{"ls | sudo tee x", Denied},
		{"echo $(rm -rf x)", Denied},
		{"echo `rm -rf x`", Denied},
		{"(cd /; rm -rf x)", Denied},
		{"/bin/rm -rf x", Denied},
		{"'rm' -rf x", Denied},
		{`r\m -rf x`, Denied},
		{"X=1 rm -rf x", Denied},
		{"git push origin main", Denied},
		{"f() { rm -rf x; }", Denied},
		{"while true; do sudo ls; done", Denied},
		{"cat <(rm -rf x)", Denied},
	}
	for _, c := range cases {
		j := r.Judge(c.command, nil)
		if j.Verdict != c.want {
			t.Errorf("Judge(%q) = %v (unknown %q, rule %q), want %v", c.command, j.Verdict, j.Unknown, j.Rule, c.want)
		}
	}
}

// TestJudgeDetail: an unknown command names each command no rule covers
// and suggests, for each, the prefix "always" would allow: its first two
// plain words; a denied one names the rule; the command is normalised.
func TestJudgeDetail(t *testing.T) {
	r := testRules(t)
	j := r.Judge("ls;  make   test  -j4 && npm run build | cat", nil)
	if j.Verdict != Unknown || !slices.Equal(j.Unknown, []string{"make test -j4", "npm run build"}) || !slices.Equal(j.Patterns, []string{"make test", "npm run"}) {
		t.Fatalf("judgement %+v", j)
	}
	if j.Command != "ls; make test -j4; npm run build; cat" {
		t.Fatalf("normalised command %q", j.Command)
	}
	j = r.Judge("echo x > /etc/hosts", nil)
	if j.Verdict != Unknown || len(j.Unknown) != 1 || !strings.Contains(j.Unknown[0], "writes to /etc/hosts") || !slices.Equal(j.Patterns, []string{"echo x"}) {
		t.Fatalf("redirection: %+v", j)
	}
	j = r.Judge("$(echo make)", nil)
	if j.Verdict != Unknown || len(j.Patterns) != 0 || !slices.Equal(j.Unknown, []string{"$(echo make)"}) {
		t.Fatalf("expanded name: %+v", j)
	}
	j = r.Judge("ls && sudo reboot", nil)
	if j.Verdict != Denied || j.Rule != "sudo" {
		t.Fatalf("denied: %+v", j)
	}
	if j := r.Judge("make test", mustPatterns(t, "make test")); j.Verdict != Allowed {
		t.Fatalf("a remembered prefix did not allow: %+v", j)
	}
	if j := r.Judge("rm -rf x", mustPatterns(t, "rm")); j.Verdict != Denied {
		t.Fatalf("a remembered prefix beat a deny rule: %+v", j)
	}
	if j := r.Judge(strings.Repeat("ls;", MaxCommand), nil); j.Verdict != Unknown {
		t.Fatalf("an over-long command was judged: %v", j.Verdict)
	}
}

// TestParsePattern: patterns are plain words, quoted as the shell quotes.
func TestParsePattern(t *testing.T) {
	for in, want := range map[string]string{"git   log": "git log", "'ls'": "ls", `git commit -m "wip now"`: "git commit -m 'wip now'"} {
		p, err := ParsePattern(in)
		if err != nil || p.String() != want {
			t.Errorf("ParsePattern(%q) = %q, %v; want %q", in, p, err, want)
		}
	}
	for _, bad := range []string{"", "ls; rm", "ls | cat", "ls $X", "X=1 ls", "ls > x", "(ls)", "ls *", "ls &"} {
		if _, err := ParsePattern(bad); err == nil {
			t.Errorf("ParsePattern(%q) accepted", bad)
		}
	}
}

// FuzzJudge: on any input the matcher does not panic; a command is not
// allowed unless its canonical form (printed back by the shell printer,
// whitespace normalised) is, nor escapes a deny rule its canonical form
// meets; and a chain that starts with a denied command is denied
// whatever follows, or does not parse.
func FuzzJudge(f *testing.F) {
	r := testRules(f)
	f.Fuzz(func(t *testing.T, command string) {
		j := r.Judge(command, nil)
		if j.Verdict == Allowed && len(j.Unknown) > 0 {
			t.Fatalf("allowed with unknown commands: %+v", j)
		}
		if file, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(command), ""); err == nil && len(command) <= MaxCommand && !hidden(command) {
			var buf bytes.Buffer
			if syntax.NewPrinter().Print(&buf, file) == nil {
				// The printer drops what it takes for blanks (a form
				// feed; such commands are unknown anyway, see hidden),
				// and only the safe direction is checked:
				// nothing is allowed whose canonical form is not, or
				// escapes a deny its canonical form meets.
				k := r.Judge(buf.String(), nil)
				if (j.Verdict == Allowed && k.Verdict != Allowed) || (k.Verdict == Denied && j.Verdict != Denied) {
					t.Fatalf("%q is %v, its canonical form %q is %v", command, j.Verdict, buf.String(), k.Verdict)
				}
			}
		}
		chained := r.Judge("rm -rf x; "+command, nil)
		if chained.Verdict == Allowed || (chained.Verdict == Unknown && !strings.Contains(strings.Join(chained.Unknown, " "), "parse") && !strings.Contains(strings.Join(chained.Unknown, " "), "longer")) {
			t.Fatalf("%q after a denied command is %v: %+v", command, chained.Verdict, chained)
		}
	})
}
