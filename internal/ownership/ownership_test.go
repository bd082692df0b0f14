package ownership

import (
	"context"
	"slices"
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
