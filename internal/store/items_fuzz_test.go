package store

import (
	"slices"
	"strings"
	"testing"
)

// FuzzNamespaceEncoding: every namespace CheckNamespace accepts decodes to
// itself, and one namespace's encoding begins with another's exactly when
// the other is a prefix of it, label by label (so a search under ["a"]
// never finds ["ab"]).
func FuzzNamespaceEncoding(f *testing.F) {
	f.Add("memories|/support/[tenant]", "memories")
	f.Add("a|b", "ab")
	f.Add("users|u1|prefs", "users|u1")
	f.Add("x", "")
	f.Fuzz(func(t *testing.T, a, b string) {
		na, nb := strings.Split(a, "|"), strings.Split(b, "|")
		if b == "" {
			nb = nil
		}
		if CheckNamespace("a", na, false) != nil || CheckNamespace("b", nb, true) != nil {
			return
		}
		if got := decodeNamespace(encodeNamespace(na)); !slices.Equal(got, na) {
			t.Fatalf("decode(encode(%q)) = %q", na, got)
		}
		isPrefix := len(nb) <= len(na) && slices.Equal(na[:len(nb)], nb)
		if strings.HasPrefix(encodeNamespace(na), encodeNamespace(nb)) != isPrefix {
			t.Fatalf("encoding of %q begins with that of %q: %v, want %v", na, nb, !isPrefix, isPrefix)
		}
	})
}
