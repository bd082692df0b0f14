package planfirst

import (
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
)

// MaxCount is the largest N accepted in #id.head=N and #id.last=N.
const MaxCount = 100000

// form is the shape of a placeholder.
type form int

const (
	formFull    form = iota // #E1
	formSummary             // #E1.summary
	formHead                // #E1.head=N
	formLast                // #E1.last=N
)

// ref is one placeholder found in a task.
type ref struct {
	start, end int // byte span in the task, suffix included
	id         string
	form       form
	n          int
	// problem is set when the text looks like a placeholder but is
	// malformed; such a ref is reported by Validate and left alone by
	// Resolve.
	problem string
}

// stepShaped reports whether id looks like a conventional step id: letters
// then digits, like E7 or step12. Such a "#id" is treated as a placeholder
// even when no step declares it, so that a reference to a missing step is an
// error rather than silent text.
func stepShaped(id string) bool {
	i := 0
	for i < len(id) && isLetter(id[i]) {
		i++
	}
	if i == 0 || i == len(id) {
		return false
	}
	for ; i < len(id); i++ {
		if !isDigit(id[i]) {
			return false
		}
	}
	return true
}

// scanRefs returns the placeholders in task, in order. known reports whether
// an id names a step; "#word" is a placeholder when word is known or
// step-shaped, and literal text otherwise.
func scanRefs(task string, known func(string) bool) []ref {
	var refs []ref
	for i := 0; i < len(task); i++ {
		if task[i] != '#' || i+1 >= len(task) || !isLetter(task[i+1]) {
			continue
		}
		if i > 0 && isWordChar(task[i-1]) {
			continue
		}
		j := i + 1
		for j < len(task) && isIDChar(task[j]) {
			j++
		}
		run := task[i+1 : j]
		// A trailing '-' or '_' is punctuation, not part of the id.
		id := strings.TrimRight(run, "-_")
		j = i + 1 + len(id)
		if len(id) > MaxIDLen || !(known(id) || stepShaped(id)) {
			if r, ok := nearMiss(task, i, run, known); ok {
				refs = append(refs, r)
				i = r.end - 1
			}
			continue
		}
		r := parseSuffix(task, i, j, id)
		refs = append(refs, r)
		i = r.end - 1
	}
	return refs
}

// nearMiss catches "#E1-based": a run of id characters that is not an id but
// starts with a known id followed by '-' or '_'. It is almost always a
// placeholder the planner forgot to end.
func nearMiss(task string, start int, run string, known func(string) bool) (ref, bool) {
	for k := len(run) - 1; k > 0; k-- {
		if run[k] != '-' && run[k] != '_' {
			continue
		}
		if id := run[:k]; known(id) {
			return ref{start: start, end: start + 1 + len(run), id: id,
				problem: fmt.Sprintf("%q, which is not a step id; end the placeholder #%s with a space or punctuation", "#"+run, id)}, true
		}
	}
	return ref{}, false
}

// parseSuffix reads the optional suffix after "#id", which ends at byte j.
// A suffix starts with '.' followed by a lowercase letter; any other '.' is
// punctuation ("see #E1." is #E1 then a full stop).
func parseSuffix(task string, start, j int, id string) ref {
	r := ref{start: start, end: j, id: id, form: formFull}
	if j+1 >= len(task) || task[j] != '.' || task[j+1] < 'a' || task[j+1] > 'z' {
		return r
	}
	k := j + 1
	for k < len(task) && isWordChar(task[k]) {
		k++
	}
	name := task[j+1 : k]
	r.end = k
	base := "#" + id
	switch name {
	case "summary":
		r.form = formSummary
		return r
	case "head", "last":
		r.form = formHead
		if name == "last" {
			r.form = formLast
		}
	default:
		r.problem = fmt.Sprintf("%s.%s, which is not a placeholder form; use %s, %s.summary, %s.head=N or %s.last=N",
			base, name, base, base, base, base)
		return r
	}
	if k >= len(task) || task[k] != '=' || k+1 >= len(task) || !isDigit(task[k+1]) {
		r.problem = fmt.Sprintf("%s.%s without a count; write it like %s.%s=200", base, name, base, name)
		return r
	}
	d := k + 1
	for d < len(task) && isDigit(task[d]) {
		d++
	}
	r.end = d
	n, err := strconv.Atoi(task[k+1 : d])
	if err != nil || n < 1 || n > MaxCount || d-(k+1) > 6 {
		r.problem = fmt.Sprintf("%s, whose count must be between 1 and %d", task[start:d], MaxCount)
		return r
	}
	r.n = n
	return r
}

// Output is what a step produced: its text, or the error it failed with.
type Output struct {
	Text string
	Err  string
	// Skipped says a person skipped the step; Err is why.
	Skipped bool
}

// Resolve replaces the placeholders in task with the outputs of earlier
// steps, keyed by step id:
//
//	#E1          the whole output, trimmed
//	#E1.summary  the first non-empty line of the output, trimmed
//	#E1.head=N   the first N runes of the trimmed output, then "…" if cut
//	#E1.last=N   "…" if cut, then the last N runes of the trimmed output
//
// A placeholder of a failed step (Err set) becomes "[step E1 failed: err]"
// whatever its form. A placeholder whose id is not in outputs, or whose
// suffix is malformed, is left as it is; Validate rejects both beforehand.
func Resolve(task string, outputs map[string]Output) string {
	refs := scanRefs(task, func(id string) bool { _, ok := outputs[id]; return ok })
	if len(refs) == 0 {
		return task
	}
	var b strings.Builder
	last := 0
	for _, r := range refs {
		out, ok := outputs[r.id]
		if !ok || r.problem != "" {
			continue
		}
		b.WriteString(task[last:r.start])
		b.WriteString(render(r, out))
		last = r.end
	}
	b.WriteString(task[last:])
	return b.String()
}

// render is the text one placeholder resolves to.
func render(r ref, out Output) string {
	if out.Skipped {
		return fmt.Sprintf("[step %s skipped: %s]", r.id, strings.TrimSpace(out.Err))
	}
	if out.Err != "" {
		return fmt.Sprintf("[step %s failed: %s]", r.id, strings.TrimSpace(out.Err))
	}
	text := strings.TrimSpace(out.Text)
	switch r.form {
	case formSummary:
		return firstLine(text)
	case formHead:
		return head(text, r.n)
	case formLast:
		return tail(text, r.n)
	}
	return text
}

// firstLine returns the first line of s that is not blank, trimmed.
func firstLine(s string) string {
	for line := range strings.Lines(s) {
		if t := strings.TrimSpace(line); t != "" {
			return t
		}
	}
	return ""
}

// head returns the first n runes of s, with "…" appended when s is longer.
func head(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	i, count := 0, 0
	for i = range s {
		if count == n {
			break
		}
		count++
	}
	return s[:i] + "…"
}

// tail returns the last n runes of s, with "…" prepended when s is longer.
func tail(s string, n int) string {
	total := utf8.RuneCountInString(s)
	if total <= n {
		return s
	}
	skip := total - n
	for i := range s {
		if skip == 0 {
			return "…" + s[i:]
		}
		skip--
	}
	return s
}
