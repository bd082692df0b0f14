package dawn_test

import (
	"context"
	"reflect"
	"testing"

	"github.com/dawn-go/dawn"
)

type echoIn struct {
	Text string `json:"text"`
}

func echo(_ context.Context, in echoIn) (string, error) { return in.Text, nil }

// TestOptionIsOpaque: an Option shows app authors nothing of the CLI's
// configuration, so cli can move without breaking them.
func TestOptionIsOpaque(t *testing.T) {
	typ := reflect.TypeOf(dawn.Option{})
	if typ.Kind() != reflect.Struct {
		t.Fatalf("dawn.Option is a %s; want an opaque struct", typ.Kind())
	}
	for i := range typ.NumField() {
		if f := typ.Field(i); f.IsExported() {
			t.Errorf("dawn.Option has the exported field %s of type %s", f.Name, f.Type)
		}
	}
}

func TestToolsKeepsOrderAndRoutes(t *testing.T) {
	tools := dawn.Tools(
		dawn.Tool("shared", "Shared.", echo),
		dawn.Option{}, // the zero Option does nothing
		dawn.RouteTool("/support/[tenant]", "scoped", "Scoped.", echo),
	)
	if len(tools) != 2 {
		t.Fatalf("got %d tools, want 2", len(tools))
	}
	if got := tools[0].Tool.Spec().Name; got != "shared" || tools[0].Route != "" {
		t.Errorf("tools[0] = %q on %q, want shared on every route", got, tools[0].Route)
	}
	if got := tools[1].Tool.Spec().Name; got != "scoped" || tools[1].Route != "/support/[tenant]" {
		t.Errorf("tools[1] = %q on %q, want scoped on /support/[tenant]", got, tools[1].Route)
	}
}
