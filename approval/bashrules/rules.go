// Package bashrules judges shell command strings by allow and deny rules
// of command prefixes, as the approval capability gates runBash: it
// parses each command with a real shell parser and judges every simple
// command of it on its own. It imports nothing of Dawn.
package bashrules

import (
	"fmt"
	"path"
	"slices"
	"strings"
	"unicode"

	"mvdan.cc/sh/v3/syntax"
)

// MaxCommand bounds the commands the matcher parses, in bytes: a longer
// one is unknown.
const MaxCommand = 64 << 10

// A Pattern is one entry of permissions.allow.bash or deny.bash: the
// words a command must begin with, such as "git log" or "rm -rf".
type Pattern struct {
	text  string
	words []string
}

// String returns the pattern as written, with its whitespace normalised.
func (p Pattern) String() string { return p.text }

// Words returns the pattern's words, quotes removed.
func (p Pattern) Words() []string { return slices.Clone(p.words) }

// ParsePattern reads a pattern: one simple command of plain words, quoted
// as the shell quotes them ("git commit -m 'wip'"). A pattern with
// expansions, operators or redirections is an error saying so.
func ParsePattern(s string) (Pattern, error) {
	if hidden(s) {
		return Pattern{}, fmt.Errorf("%q holds control or text-direction characters; write plain words", s)
	}
	f, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(s), "")
	if err != nil {
		return Pattern{}, fmt.Errorf("%q is not a shell command: %v", s, err)
	}
	if len(f.Stmts) != 1 {
		return Pattern{}, fmt.Errorf("%q must be one command's first words, like \"git log\", without ; & | or newlines", s)
	}
	st := f.Stmts[0]
	call, ok := st.Cmd.(*syntax.CallExpr)
	if !ok || len(call.Assigns) > 0 || len(st.Redirs) > 0 || st.Negated || st.Background || len(call.Args) == 0 {
		return Pattern{}, fmt.Errorf("%q must be a command's first words, like \"git log\", without assignments, redirections or operators", s)
	}
	words := make([]string, 0, len(call.Args))
	for _, w := range call.Args {
		v, ok := literal(w)
		if !ok {
			return Pattern{}, fmt.Errorf("%q must be plain words: %s has an expansion ($, `, globs are taken as written only when quoted)", s, source(s, w))
		}
		words = append(words, v)
	}
	return Pattern{text: joinWords(words), words: words}, nil
}

// joinWords writes words back as one command, quoting those that need it.
func joinWords(words []string) string {
	out := make([]string, len(words))
	for i, w := range words {
		q, err := syntax.Quote(w, syntax.LangBash)
		if err != nil {
			q = w
		}
		out[i] = q
	}
	return strings.Join(out, " ")
}

// Verdict is what the rules say of a command.
type Verdict int

// Verdicts.
const (
	// Unknown: no deny rule matches, and some command of it no allow rule
	// covers (or it does not parse); the mode decides.
	Unknown Verdict = iota
	// Allowed: every command of it is covered by an allow rule.
	Allowed
	// Denied: a deny rule matches one of its commands.
	Denied
)

// Judgement is the rules' verdict on one command string, with what a
// person needs to decide an unknown one.
type Judgement struct {
	Verdict Verdict
	// Command is the command string with its whitespace normalised: each
	// simple command's words joined by one space, in order.
	Command string
	// Rule is the deny pattern that matched, for Denied.
	Rule string
	// Unknown lists the simple commands no allow rule covers, and why,
	// for Unknown.
	Unknown []string
	// Patterns are the prefixes "always" allows from then on: the first
	// two plain words of each command in Unknown that has any.
	Patterns []string
}

// Rules are the allow and deny patterns of a route's runBash calls.
type Rules struct {
	Allow, Deny []Pattern
}

// simple is one command the shell would run, as the matcher sees it.
type simple struct {
	// text is the command as written, each word's source joined by one
	// space.
	text string
	// words are the plain values of its leading plain words (quotes and
	// escapes removed); it stops at the first word with an expansion.
	words []string
	// all says every word is plain.
	all bool
	// odd says why the command is never allowed by a prefix alone (an
	// assignment, a redirection to an odd place); "" when nothing is.
	odd string
	// mark says this is no command but a statement's odd redirection,
	// for the command the walk reaches next (see mergeRedirects).
	mark bool
}

// Judge says what r makes of command, deny first, then allow. remembered
// are the patterns a person chose "always" for, which allow as allow
// rules do. A command is split as the shell parses it: every simple
// command of a list, pipeline, subshell, command substitution, function
// body or loop is judged on its own, so "ls; rm -rf x" is never allowed
// by "ls". A command that does not parse is unknown.
func (r Rules) Judge(command string, remembered []Pattern) Judgement {
	j := Judgement{Command: strings.Join(strings.Fields(command), " ")}
	if len(command) > MaxCommand {
		j.Unknown = []string{fmt.Sprintf("the command is longer than %d KiB and is not read", MaxCommand>>10)}
		return j
	}
	cmds, err := split(command)
	if err != nil {
		j.Unknown = []string{"the command does not parse as a shell command: " + err.Error()}
		return j
	}
	texts := make([]string, len(cmds))
	for i, c := range cmds {
		texts[i] = c.text
	}
	j.Command = strings.Join(texts, "; ")
	for _, c := range cmds {
		if p, ok := firstMatch(r.Deny, c, true); ok {
			j.Verdict, j.Rule = Denied, p.text
			return j
		}
	}
	if hidden(command) {
		j.Unknown = []string{"the command holds control or text-direction characters, which can hide what it does from the person reading it"}
		return j
	}
	allow := slices.Concat(r.Allow, remembered)
	for _, c := range cmds {
		switch _, ok := firstMatch(allow, c, false); {
		case c.odd != "":
			j.Unknown = append(j.Unknown, c.text+" ("+c.odd+")")
		case !ok:
			j.Unknown = append(j.Unknown, c.text)
		default:
			continue
		}
		if p := suggest(c); p != "" && !slices.Contains(j.Patterns, p) {
			j.Patterns = append(j.Patterns, p)
		}
	}
	if len(j.Unknown) == 0 {
		j.Verdict = Allowed
	}
	return j
}

// hidden reports whether s holds a character that can make what a
// terminal or a browser shows differ from what runs: a control character
// other than tab and newline (a carriage return rewrites the line), or a
// bidirectional override.
func hidden(s string) bool {
	return strings.ContainsFunc(s, func(r rune) bool {
		return (unicode.IsControl(r) && r != '\t' && r != '\n') || (r >= 0x202A && r <= 0x202E) || (r >= 0x2066 && r <= 0x2069)
	})
}

// suggest is the prefix "always" allows for c: its first two plain words
// (or one when there is one).
func suggest(c simple) string {
	n := min(len(c.words), 2)
	if n == 0 {
		return ""
	}
	return joinWords(c.words[:n])
}

// firstMatch returns the first pattern whose words begin c's words. For a
// deny rule the command's name also matches by its base name, so
// "/bin/rm -rf x" is denied by "rm -rf".
func firstMatch(ps []Pattern, c simple, deny bool) (Pattern, bool) {
	for _, p := range ps {
		if len(p.words) > len(c.words) {
			continue
		}
		head := c.words[:len(p.words)]
		if slices.Equal(p.words, head) {
			return p, true
		}
		if deny && !strings.Contains(p.words[0], "/") && path.Base(head[0]) == p.words[0] && slices.Equal(p.words[1:], head[1:]) {
			return p, true
		}
	}
	return Pattern{}, false
}

// split parses command and returns every simple command in it, in source
// order.
func split(command string) ([]simple, error) {
	f, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(command), "")
	if err != nil {
		return nil, err
	}
	var cmds []simple
	syntax.Walk(f, func(n syntax.Node) bool {
		switch n := n.(type) {
		case *syntax.Stmt:
			if odd := oddRedirect(n.Redirs); odd != "" {
				// The redirection belongs to the statement's command,
				// which the walk reaches next; mark it there.
				cmds = append(cmds, simple{mark: true, odd: odd})
			}
		case *syntax.CallExpr:
			cmds = append(cmds, callCommand(command, n))
		case *syntax.DeclClause:
			cmds = append(cmds, declCommand(command, n))
		case *syntax.FuncDecl:
			// Defining a function runs nothing, but calling it runs the
			// body, which the walk judges; a call by its name is judged
			// as any other command.
		}
		return true
	})
	return mergeRedirects(cmds), nil
}

// mergeRedirects folds each redirection marker into the command that
// follows it (the statement's own command).
func mergeRedirects(cmds []simple) []simple {
	out := cmds[:0]
	pending := ""
	for _, c := range cmds {
		if c.mark {
			if pending == "" {
				pending = c.odd
			}
			continue
		}
		if pending != "" && c.odd == "" {
			c.odd = pending
		}
		pending = ""
		out = append(out, c)
	}
	if pending != "" {
		// A redirection on a compound command ({ …; } > /etc/x) with no
		// simple command of its own after it.
		out = append(out, simple{text: "(redirection)", odd: pending})
	}
	return out
}

// oddRedirect says why one of redirs writes somewhere a prefix rule does
// not cover: a file outside the working folder, or one whose name is
// computed. Reading, /dev/null and descriptor copies are fine.
func oddRedirect(redirs []*syntax.Redirect) string {
	for _, r := range redirs {
		switch r.Op {
		case syntax.RdrIn, syntax.Hdoc, syntax.DashHdoc, syntax.WordHdoc, syntax.DplIn, syntax.DplOut:
			continue
		}
		target, ok := literal(r.Word)
		if !ok {
			return "writes to a computed file name by redirection"
		}
		if !safeTarget(target) {
			return "writes to " + target + " by redirection"
		}
	}
	return ""
}

// safeTarget reports whether a redirection may write to target without
// asking: /dev/null, the standard streams, /tmp, or a relative path that
// stays below the working folder.
func safeTarget(target string) bool {
	switch target {
	case "/dev/null", "/dev/stdout", "/dev/stderr":
		return true
	}
	if strings.HasPrefix(target, "/tmp/") {
		return !slices.Contains(strings.Split(target, "/"), "..")
	}
	if target == "" || strings.HasPrefix(target, "/") || strings.HasPrefix(target, "~") {
		return false
	}
	return !slices.Contains(strings.Split(target, "/"), "..")
}

// callCommand is a simple command: assignments first, then words. An
// assignment before the command ("PATH=x ls") or on its own ("PATH=x")
// changes what later commands run, so such a command is never allowed by
// a prefix; a deny rule still sees its words.
func callCommand(src string, c *syntax.CallExpr) simple {
	var parts []string
	s := simple{all: true}
	for _, a := range c.Assigns {
		parts = append(parts, source(src, a))
		s.odd = "sets a variable"
	}
	for _, w := range c.Args {
		parts = append(parts, source(src, w))
		v, ok := literal(w)
		if !ok {
			s.all = false
		}
		if s.all {
			s.words = append(s.words, v)
		}
	}
	s.text = strings.Join(parts, " ")
	return s
}

// declCommand is declare, local, export, readonly, typeset or nameref,
// judged as a command whose words are the variant and its assignments as
// written.
func declCommand(src string, d *syntax.DeclClause) simple {
	s := simple{all: true, words: []string{d.Variant.Value}}
	parts := []string{d.Variant.Value}
	for _, a := range d.Args {
		text := source(src, a)
		parts = append(parts, text)
		if a.Array != nil || a.Index != nil || (a.Value != nil && !isLiteral(a.Value)) {
			s.all = false
		}
		if s.all {
			s.words = append(s.words, text)
		}
	}
	s.text = strings.Join(parts, " ")
	return s
}

// source returns n's text in src.
func source(src string, n syntax.Node) string {
	start, end := int(n.Pos().Offset()), int(n.End().Offset())
	if start < 0 || end > len(src) || start > end {
		return ""
	}
	return src[start:end]
}

func isLiteral(w *syntax.Word) bool {
	_, ok := literal(w)
	return ok
}

// literal returns the value of a word with no expansion in it (plain
// text, single quotes, double quotes around plain text), with quotes and
// escapes removed; ok is false for a word with a parameter, command,
// arithmetic or process expansion, an unquoted glob or brace, or a tilde.
func literal(w *syntax.Word) (string, bool) {
	if w == nil {
		return "", false
	}
	var b strings.Builder
	for _, part := range w.Parts {
		switch p := part.(type) {
		case *syntax.Lit:
			if strings.ContainsAny(p.Value, "*?[]{}~") {
				return "", false
			}
			b.WriteString(unescape(p.Value, ""))
		case *syntax.SglQuoted:
			if p.Dollar {
				return "", false
			}
			b.WriteString(p.Value)
		case *syntax.DblQuoted:
			if p.Dollar {
				return "", false
			}
			for _, q := range p.Parts {
				lit, ok := q.(*syntax.Lit)
				if !ok {
					return "", false
				}
				b.WriteString(unescape(lit.Value, "$`\"\\\n"))
			}
		default:
			return "", false
		}
	}
	return b.String(), true
}

// unescape removes the backslashes the shell removes: before any
// character outside quotes (only is ""), or before one of only inside
// double quotes. A backslash before a newline joins the lines.
func unescape(s, only string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '\\' || i+1 == len(s) {
			b.WriteByte(s[i])
			continue
		}
		next := s[i+1]
		switch {
		case next == '\n':
			i++
		case only == "" || strings.IndexByte(only, next) >= 0:
			b.WriteByte(next)
			i++
		default:
			b.WriteByte(s[i])
		}
	}
	return b.String()
}
