package planfirst

import (
	"strings"
	"testing"
)

func TestResolve(t *testing.T) {
	long := strings.Repeat("é", 10) + "xyz" // 13 runes, multi-byte
	outputs := map[string]Output{
		"E1":    {Text: "\n  first line\nsecond line\n\n"},
		"E2":    {Text: long},
		"E3":    {Text: "ignored", Err: "  model timed out\n"},
		"E10":   {Text: "ten"},
		"fetch": {Text: "fetched"},
		"empty": {Text: "   "},
	}
	tests := []struct {
		name, task, want string
	}{
		{"full trimmed", "Use #E1", "Use first line\nsecond line"},
		{"summary", "Use #E1.summary!", "Use first line!"},
		{"summary of blank", "[#empty.summary]", "[]"},
		{"full of blank", "[#empty]", "[]"},
		{"head cuts", "#E2.head=4", "éééé…"},
		{"head exact", "#E2.head=13", long},
		{"head longer", "#E2.head=200", long},
		{"last cuts", "#E2.last=2", "…yz"},
		{"last exact", "#E2.last=13", long},
		{"failed full", "Fix #E3", "Fix [step E3 failed: model timed out]"},
		{"failed summary", "Fix #E3.summary", "Fix [step E3 failed: model timed out]"},
		{"failed head", "Fix #E3.head=2", "Fix [step E3 failed: model timed out]"},
		{"full stop stays", "Read #E10. Then go.", "Read ten. Then go."},
		{"E1 is not a prefix of E10", "#E10 and #E1.summary", "ten and first line"},
		{"free-form id", "got #fetch, then #fetch.last=3", "got fetched, then …hed"},
		{"unknown id left", "keep #E99 and #E99.summary", "keep #E99 and #E99.summary"},
		{"malformed suffix left", "keep #E1.foo and #E1.head=0", "keep #E1.foo and #E1.head=0"},
		{"not after word chars", "C#E1 and x#E1", "C#E1 and x#E1"},
		{"trailing dash is text", "#E10-", "ten-"},
		{"several", "#E10,#E10", "ten,ten"},
		{"glued to a word is text", "#E10#E10", "ten#E10"},
		{"no placeholders", "plain text", "plain text"},
		{"hash at end", "trailing #", "trailing #"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Resolve(tt.task, outputs); got != tt.want {
				t.Errorf("Resolve(%q) = %q, want %q", tt.task, got, tt.want)
			}
		})
	}
}

func TestScanRefsForms(t *testing.T) {
	known := func(id string) bool { return id == "E1" }
	tests := []struct {
		task string
		form form
		n    int
		end  string // the text the ref covers
	}{
		{"#E1", formFull, 0, "#E1"},
		{"#E1.", formFull, 0, "#E1"},
		{"#E1.summary.", formSummary, 0, "#E1.summary"},
		{"#E1.head=200 x", formHead, 200, "#E1.head=200"},
		{"#E1.last=100000", formLast, 100000, "#E1.last=100000"},
		{"#E1.head=12abc", formHead, 12, "#E1.head=12"},
	}
	for _, tt := range tests {
		refs := scanRefs(tt.task, known)
		if len(refs) != 1 {
			t.Fatalf("%q: %d refs", tt.task, len(refs))
		}
		r := refs[0]
		if r.problem != "" || r.form != tt.form || r.n != tt.n || tt.task[r.start:r.end] != tt.end {
			t.Errorf("%q: got %+v", tt.task, r)
		}
	}
}
