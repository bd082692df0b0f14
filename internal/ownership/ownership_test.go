package ownership

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/dawn-go/dawn/capabilities"
)

func TestOwner(t *testing.T) {
	bg := context.Background()
	ann := capabilities.WithIdentity(bg, capabilities.Identity{User: "ann"})
	svc := capabilities.WithIdentity(bg, capabilities.Identity{Service: true})
	blank := capabilities.WithIdentity(bg, capabilities.Identity{})
	tests := []struct {
		name       string
		ctx        context.Context
		owner      string
		scoped     bool
		seesAnn    bool
		seesNobody bool
	}{
		{"no identity", bg, "", false, true, true},
		{"service", svc, "", false, true, true},
		{"user", ann, "ann", true, true, false},
		{"identity naming no user", blank, nobody, true, false, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			owner, scoped := Owner(tt.ctx)
			if owner != tt.owner || scoped != tt.scoped {
				t.Errorf("Owner = %q, %v; want %q, %v", owner, scoped, tt.owner, tt.scoped)
			}
			if got := Sees(tt.ctx, "ann"); got != tt.seesAnn {
				t.Errorf("Sees(ann) = %v, want %v", got, tt.seesAnn)
			}
			if got := Sees(tt.ctx, ""); got != tt.seesNobody {
				t.Errorf("Sees(\"\") = %v, want %v", got, tt.seesNobody)
			}
		})
	}
}

func TestNamespace(t *testing.T) {
	bg := context.Background()
	ann := capabilities.WithIdentity(bg, capabilities.Identity{User: "ann"})
	if got := Namespace(bg, []string{"m"}); !slices.Equal(got, []string{"m"}) {
		t.Errorf("unscoped namespace = %v", got)
	}
	got := Namespace(ann, []string{"m", "x"})
	if !slices.Equal(got, []string{"users", "ann", "m", "x"}) {
		t.Errorf("ann's namespace = %v", got)
	}
	back, ok := Unnamespace(ann, got)
	if !ok || !slices.Equal(back, []string{"m", "x"}) {
		t.Errorf("Unnamespace = %v, %v", back, ok)
	}
	if _, ok := Unnamespace(ann, []string{"users", "bob", "m"}); ok {
		t.Errorf("ann unnamespaced bob's namespace")
	}
	if _, ok := Unnamespace(As(bg, "bob"), []string{"users", "ann", "m"}); ok {
		t.Errorf("bob unnamespaced ann's namespace")
	}
}

func TestUserLabel(t *testing.T) {
	for _, tc := range []struct{ user, label string }{
		{"ann", "ann"},
		{"ada@example.com", "ada@example%2Ecom"},
		{"50%.off", "50%25%2Eoff"},
		{"a%2Eb", "a%252Eb"},
		{"tab\there", "tab%09here"},
		{"élan.vital", "élan%2Evital"},
	} {
		if got := UserLabel(tc.user); got != tc.label {
			t.Errorf("UserLabel(%q) = %q, want %q", tc.user, got, tc.label)
		}
		if back, err := UserFromLabel(tc.label); err != nil || back != tc.user {
			t.Errorf("UserFromLabel(%q) = %q, %v; want %q", tc.label, back, err, tc.user)
		}
	}
	ada := As(context.Background(), "ada@example.com")
	ns := Namespace(ada, []string{"notes"})
	if !slices.Equal(ns, []string{"users", "ada@example%2Ecom", "notes"}) {
		t.Errorf("ada's namespace = %v", ns)
	}
	if back, ok := Unnamespace(ada, ns); !ok || !slices.Equal(back, []string{"notes"}) {
		t.Errorf("Unnamespace = %v, %v", back, ok)
	}
}

// FuzzUserLabel: every user id has a label without periods or control
// characters that reads back as the id.
func FuzzUserLabel(f *testing.F) {
	for _, s := range []string{"ann", "ada@example.com", "%2E", "a.b%c\x00"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, user string) {
		label := UserLabel(user)
		if strings.ContainsFunc(label, func(r rune) bool { return r == '.' || r < 0x20 || r == 0x7f }) {
			t.Fatalf("UserLabel(%q) = %q holds a period or a control character", user, label)
		}
		if back, err := UserFromLabel(label); err != nil || back != user {
			t.Fatalf("UserFromLabel(UserLabel(%q)) = %q, %v", user, back, err)
		}
	})
}
