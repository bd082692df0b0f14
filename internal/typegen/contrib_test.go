package typegen

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/dawn-go/dawn/capabilities"
	"github.com/dawn-go/dawn/router"
)

// widgetMarker contributes a Widget type with two constants.
type widgetMarker struct{}

func (widgetMarker) Name() string                 { return "widgets" }
func (widgetMarker) Detect(string) (string, bool) { return "", false }
func (widgetMarker) Load(context.Context, *router.Route, string) (*capabilities.Contribution, error) {
	return nil, nil
}
func (widgetMarker) TypegenTypes() []capabilities.TypegenType {
	return []capabilities.TypegenType{{
		Name:      "Widget",
		Doc:       "Widget is a test type.",
		Schema:    json.RawMessage(`{"type":"object","properties":{"size":{"type":"integer"}},"required":["size"]}`),
		ConstsDoc: "Sizes of a Widget.",
		Consts:    []capabilities.TypegenConst{{Name: "SizeSmall", Value: "small"}},
	}}
}

// TestContributedTypes: typegen writes the types the app's markers
// contribute, and knows no capability by name.
func TestContributedTypes(t *testing.T) {
	a := memoryApp([]byte(`{"type":"object"}`))
	a.Config.Markers = []capabilities.Marker{widgetMarker{}}
	m, err := buildModel(a)
	if err != nil {
		t.Fatal(err)
	}
	src, err := renderGo(m, "gen")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"// Sizes of a Widget.\nconst (\n\tSizeSmall = \"small\"\n)", "// Widget is a test type.\ntype Widget struct {\n\tSize int64 `json:\"size\"`\n}"} {
		if !strings.Contains(string(src), want) {
			t.Errorf("Go output lacks %q", want)
		}
	}
	if strings.Contains(string(src), "StatusPending") || strings.Contains(string(src), "type Todo ") {
		t.Error("Go output has planning's Todo although no marker contributes it")
	}
	ts := string(renderTS(m))
	if !strings.Contains(ts, "export interface Widget {") {
		t.Errorf("TypeScript output lacks Widget:\n%s", ts)
	}
}
