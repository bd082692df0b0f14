package planfirst

import (
	"regexp"
	"strings"
)

// Caps on each signal of ComplexityScore. They add up to 10.
const (
	VerbCap      = 5
	FileCap      = 3
	SequencerCap = 2
)

// actionVerbs are the English verbs that name a piece of work. Inflected
// forms (-s, -es, -ed, -ing) are matched by isActionVerb; the irregular past
// forms that matter are listed.
var actionVerbs = wordSet(`
	add analyse analyze benchmark build built check collect commit compare
	configure convert create debug delete deploy document draft edit find fix
	gather generate implement install investigate merge migrate move optimise
	optimize plan publish push ran refactor release remove rename research
	review run search send sent summarise summarize test translate update
	upgrade validate verify write wrote written`)

// sequencerWords mark an ordering of work. "after that" counts once, as
// "after"; the phrases "followed by" and "once … done" are matched apart.
var sequencerWords = wordSet(`after afterwards before finally first lastly next second then third`)

var (
	wordPattern     = regexp.MustCompile(`[a-z]+`)
	filePattern     = regexp.MustCompile(`(?i)\b[\w./-]+\.(go|ts|tsx|js|py|md|yaml|yml|json|toml|sql|sh|rs|java|rb|css|html)\b|\b(Dockerfile|Makefile)\b`)
	followedPattern = regexp.MustCompile(`\bfollowed by\b`)
	oncePattern     = regexp.MustCompile(`\bonce\b[^.!?\n]*?\bdone\b`)
)

// ComplexityScore rates how much a task would gain from a plan, from 0 to
// 10, as the sum of three capped counts over the task text (case-insensitive):
//
//   - action verbs, at most VerbCap (5): every whole-word occurrence of a verb
//     like implement, add, fix, write, test, deploy, run, update, review,
//     summarize, including its -s, -es, -ed and -ing forms;
//   - file artefacts, at most FileCap (3): every name with a source, config
//     or document extension (main.go, app.tsx, README.md, deploy.yaml, …),
//     and Dockerfile and Makefile;
//   - sequencers, at most SequencerCap (2): then, after (that), afterwards,
//     before, finally, next, first, second, third, lastly, "followed by" and
//     "once … done".
//
// File names are removed before words are counted, so "deploy.yaml" is a
// file and not the verb deploy. A question or a one-action request scores 0 to 2; a task with several
// actions on several files in sequence reaches DefaultThreshold.
func ComplexityScore(task string) int {
	verbs := 0
	files := len(filePattern.FindAllStringIndex(task, -1))
	// File names count as artefacts only: "health_test.go" is not the verb
	// "test".
	lower := strings.ToLower(filePattern.ReplaceAllString(task, " "))
	seqs := len(followedPattern.FindAllStringIndex(lower, -1)) + len(oncePattern.FindAllStringIndex(lower, -1))
	for _, w := range wordPattern.FindAllString(lower, -1) {
		switch {
		case isActionVerb(w):
			verbs++
		case sequencerWords[w]:
			seqs++
		}
	}
	return min(verbs, VerbCap) + min(files, FileCap) + min(seqs, SequencerCap)
}

// isActionVerb reports whether w (lower case) is an action verb or one of its
// regular inflections: adds, fixes, tested, created, planned, running,
// applies.
func isActionVerb(w string) bool {
	if actionVerbs[w] {
		return true
	}
	for _, suffix := range []string{"ing", "ed", "es", "s"} {
		base, ok := strings.CutSuffix(w, suffix)
		if !ok || len(base) < 2 {
			continue
		}
		if actionVerbs[base] || actionVerbs[base+"e"] {
			return true
		}
		n := len(base)
		if n >= 3 && base[n-1] == base[n-2] && actionVerbs[base[:n-1]] { // planned, running
			return true
		}
		if base[n-1] == 'i' && (suffix == "ed" || suffix == "es") && actionVerbs[base[:n-1]+"y"] { // verified
			return true
		}
	}
	return false
}

func wordSet(words string) map[string]bool {
	set := make(map[string]bool)
	for _, w := range strings.Fields(words) {
		set[w] = true
	}
	return set
}
