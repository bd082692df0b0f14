package typegen

import (
	"go/token"
	"strconv"
	"strings"
	"unicode"

	"github.com/dawn-go/dawn/router"
)

// initialisms are words written in capitals in Go names ("userId" → "UserID").
var initialisms = map[string]string{
	"api": "API", "http": "HTTP", "id": "ID", "ip": "IP", "json": "JSON",
	"uri": "URI", "url": "URL", "uuid": "UUID",
}

// exportedName turns s ("lookupAccount", "ticket_id", "s0") into an exported
// Go identifier ("LookupAccount", "TicketID", "S0"). Anything that is not a
// letter or digit separates words; a lower-case letter followed by an upper-
// case one starts a new word. The result is "" when s holds no letter or
// digit. A name that would not start with an upper-case letter gets an "X"
// in front ("2024" → "X2024").
func exportedName(s string) string {
	var b strings.Builder
	for _, w := range words(s) {
		if up, ok := initialisms[strings.ToLower(w)]; ok {
			b.WriteString(up)
			continue
		}
		r := []rune(w)
		r[0] = unicode.ToUpper(r[0])
		b.WriteString(string(r))
	}
	name := b.String()
	if name == "" {
		return ""
	}
	if first := []rune(name)[0]; !unicode.IsUpper(first) {
		name = "X" + name
	}
	return name
}

// words splits s into runs of letters and digits, also breaking a run where
// a lower-case letter is followed by an upper-case one.
func words(s string) []string {
	var out []string
	var cur []rune
	flush := func() {
		if len(cur) > 0 {
			out = append(out, string(cur))
			cur = cur[:0]
		}
	}
	for _, r := range s {
		if !unicode.IsLetter(r) && !unicode.IsDigit(r) {
			flush()
			continue
		}
		if len(cur) > 0 && unicode.IsUpper(r) && unicode.IsLower(cur[len(cur)-1]) {
			flush()
		}
		cur = append(cur, r)
	}
	flush()
	return out
}

// routeName is the Go name of a route id: its parts, dynamic segments by
// param name ("/support/[tenant]" → "SupportTenant"). The root route is
// "Root".
func routeName(r *router.Route) string {
	var b strings.Builder
	for _, seg := range r.Segments {
		b.WriteString(exportedName(seg.Value))
	}
	if b.Len() == 0 {
		if r.ID == "/" {
			return "Root"
		}
		return "Route"
	}
	return b.String()
}

// maxSlug bounds a schema file name's slug, well under file name limits.
const maxSlug = 120

// routeSlug is the file name stem of a route's schema files: the id with
// "/" turned into "_" and brackets and dots dropped ("/support/[tenant]" →
// "support_tenant"; "/" → "root"). Characters other than ASCII letters,
// digits, "-" and "_" become "-".
func routeSlug(id string) string {
	var b strings.Builder
	for _, r := range strings.Trim(id, "/") {
		switch {
		case r == '/':
			b.WriteByte('_')
		case r == '[' || r == ']' || r == '.':
		case r < 0x80 && (unicode.IsLetter(r) || unicode.IsDigit(r) || r == '-' || r == '_'):
			b.WriteRune(r)
		default:
			b.WriteByte('-')
		}
	}
	slug := b.String()
	if len(slug) > maxSlug {
		slug = slug[:maxSlug]
	}
	if slug == "" {
		return "root"
	}
	return slug
}

// namer hands out unique names. A taken name gets the smallest number
// suffix ("2", "3", ...) that makes it unique. fold compares names case-
// insensitively, for file names on case-insensitive file systems.
type namer struct {
	taken map[string]bool
	sep   string
	fold  bool
}

func newNamer(sep string, fold bool, reserved ...string) *namer {
	n := &namer{taken: map[string]bool{}, sep: sep, fold: fold}
	for _, r := range reserved {
		n.taken[n.key(r)] = true
	}
	return n
}

func (n *namer) key(s string) string {
	if n.fold {
		return strings.ToLower(s)
	}
	return s
}

// unique returns name, or name with a number suffix when name is taken, and
// marks the result taken.
func (n *namer) unique(name string) string {
	got := name
	for i := 2; n.taken[n.key(got)]; i++ {
		got = name + n.sep + strconv.Itoa(i)
	}
	n.taken[n.key(got)] = true
	return got
}

// isPackageName reports whether s can be a Go package name.
func isPackageName(s string) bool {
	return token.IsIdentifier(s) && s != "_" && s != "main"
}

// isTSIdentifier reports whether s can be a TypeScript property name without
// quotes. It is cautious: ASCII letters, digits, "_" and "$" only.
func isTSIdentifier(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		letter := c == '_' || c == '$' || ('a' <= c && c <= 'z') || ('A' <= c && c <= 'Z')
		if !letter && (i == 0 || c < '0' || c > '9') {
			return false
		}
	}
	return true
}

// validJSONTag reports whether encoding/json accepts s as the name in a
// struct field's json tag (the same rule as encoding/json's isValidTag).
func validJSONTag(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range s {
		switch {
		case strings.ContainsRune("!#$%&()*+-./:;<=>?@[]^_{|}~ ", c):
		case !unicode.IsLetter(c) && !unicode.IsDigit(c):
			return false
		}
	}
	return true
}
