package typegen

import (
	"bytes"
	"context"
	"encoding/json"
	"go/format"
	"strings"
	"testing"

	"github.com/dawn-go/dawn/capabilities"
	"github.com/dawn-go/dawn/internal/app"
)

// orderInput is the input of the test app's shared Go tool.
type orderInput struct {
	Customer string      `json:"customer" jsonschema:"the customer's id"`
	Lines    []orderLine `json:"lines"`
	Rush     bool        `json:"rush,omitempty"`
	Ship     *address    `json:"ship,omitempty"`
}

type orderLine struct {
	SKU string `json:"sku"`
	Qty int    `json:"qty"`
}

type address struct {
	City string `json:"city"`
	Zip  string `json:"zip,omitempty"`
}

// testAppFiles is an app with every kind of route id.
var testAppFiles = map[string]string{
	"agent.md":                               agentMD,
	"support/[tenant]/agent.md":              agentMD,
	"support/[tenant]/plan.md":               "- [ ] Read\n- [x] Answer\n",
	"support/[tenant]/state.yaml":            "ticket_id:\n  type: string\n  default: \"\"\nnotes:\n  type: array\n",
	"support/tenant/agent.md":                agentMD,
	"(marketing)/blog/agent.md":              agentMD,
	"Blog/agent.md":                          agentMD,
	"docs/[...slug]/agent.md":                agentMD,
	"files/[[...path]]/agent.md":             agentMD,
	"orgs/[org]/repos/[repo]/agent.md":       agentMD,
	"my-route/v2/agent.md":                   agentMD,
	"2024/agent.md":                          agentMD,
	"research/agent.md":                      agentMD,
	"research/plan.md":                       "- [ ] Frame\n",
	"research/subagents/researcher/agent.md": agentMD,
	"research/subagents/writer/agent.md":     agentMD,
}

// testAppTools are the test app's Go tools: a typed tool and a hand-written
// schema, each scoped to a route.
func testAppTools() []capabilities.AppTool {
	order := capabilities.Func("placeOrder", "Place an order.", func(context.Context, orderInput) (string, error) { return "ok", nil })
	return []capabilities.AppTool{
		{Tool: order, Route: "/support/[tenant]"},
		schemaTool("/docs/[...slug]", "search", `{"type":"object","properties":{"query":{"type":"string"},"filters":{"$ref":"#/$defs/filters"},"mode":{"enum":["fast","deep"]}},"required":["query"],"$defs":{"filters":{"type":"object","properties":{"tags":{"type":"array","items":{"type":"string"}},"since":{"type":["null","string"]}}}}}`),
	}
}

func testApp(t testing.TB) *app.App {
	t.Helper()
	return loadApp(t, writeApp(t, testAppFiles), testAppTools()...)
}

func TestRouteNames(t *testing.T) {
	m, err := buildModel(testApp(t))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		id, constName, params, state, slug string
	}{
		{"/", "RouteRoot", "", "RootState", "root"},
		{"/2024", "RouteX2024", "", "X2024State", "2024"},
		{"/Blog", "RouteBlog", "", "BlogState", "Blog"},
		{"/blog", "RouteBlog2", "", "Blog2State", "blog-2"},
		{"/docs/[...slug]", "RouteDocsSlug", "DocsSlugParams", "DocsSlugState", "docs_slug"},
		{"/files/[[...path]]", "RouteFilesPath", "FilesPathParams", "FilesPathState", "files_path"},
		{"/my-route/v2", "RouteMyRouteV2", "", "MyRouteV2State", "my-route_v2"},
		{"/orgs/[org]/repos/[repo]", "RouteOrgsOrgReposRepo", "OrgsOrgReposRepoParams", "OrgsOrgReposRepoState", "orgs_org_repos_repo"},
		{"/research", "RouteResearch", "", "ResearchState", "research"},
		{"/research/subagents/researcher", "RouteResearchSubagentsResearcher", "", "ResearchSubagentsResearcherState", "research_subagents_researcher"},
		{"/research/subagents/writer", "RouteResearchSubagentsWriter", "", "ResearchSubagentsWriterState", "research_subagents_writer"},
		{"/support/[tenant]", "RouteSupportTenant", "SupportTenantParams", "SupportTenantState", "support_tenant"},
		{"/support/tenant", "RouteSupportTenant2", "", "SupportTenant2State", "support_tenant-2"},
	}
	if len(m.routes) != len(tests) {
		t.Fatalf("%d routes, want %d", len(m.routes), len(tests))
	}
	for i, tt := range tests {
		rm := m.routes[i]
		got := []string{rm.id, rm.constName, rm.paramsType, rm.stateType, rm.slug}
		want := []string{tt.id, tt.constName, tt.params, tt.state, tt.slug}
		if strings.Join(got, " ") != strings.Join(want, " ") {
			t.Errorf("route %d\n got %q\nwant %q", i, got, want)
		}
	}
}

func TestRouteTools(t *testing.T) {
	m, err := buildModel(testApp(t))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"/":                              "",
		"/docs/[...slug]":                "search:DocsSlugSearchInput",
		"/research":                      "task:ResearchTaskInput writeTodos:ResearchWriteTodosInput",
		"/research/subagents/researcher": "",
		"/support/[tenant]":              "placeOrder:SupportTenantPlaceOrderInput writeTodos:SupportTenantWriteTodosInput",
	}
	for _, rm := range m.routes {
		w, ok := want[rm.id]
		if !ok {
			continue
		}
		var got []string
		for _, tool := range rm.tools {
			got = append(got, tool.name+":"+tool.inputType)
		}
		if strings.Join(got, " ") != w {
			t.Errorf("route %s tools = %v, want %s", rm.id, got, w)
		}
	}
}

func TestGeneratedGoDeclares(t *testing.T) {
	files, err := Generate(testApp(t), Options{})
	if err != nil {
		t.Fatal(err)
	}
	src := string(files[GoFile])
	for _, want := range []string{
		"// " + GeneratedMarker + "\n",
		"package dawngen\n",
		"\tRouteSupportTenant = \"/support/[tenant]\"\n",
		"func (p SupportTenantParams) Path() string {\n\treturn \"/support/\" + url.PathEscape(p.Tenant)\n}",
		"func (p DocsSlugParams) Path() string {\n\treturn \"/docs/\" + escapeParts(p.Slug)\n}",
		"type OrgsOrgReposRepoParams struct {",
		"\tSlug []string\n",
		"type SupportTenantWriteTodosInput struct {\n\tTodos []Todo `json:\"todos\"`\n}",
		"type SupportTenantPlaceOrderInput struct {\n\t// the customer's id\n\tCustomer string                                  `json:\"customer\"`\n\tLines    []SupportTenantPlaceOrderInputLinesItem `json:\"lines\"`\n\tRush     bool                                    `json:\"rush,omitempty\"`\n\tShip     *SupportTenantPlaceOrderInputShip       `json:\"ship,omitempty\"`\n}",
		"type DocsSlugSearchInput struct {",
		"\tMode string `json:\"mode,omitempty\"`",
		"\tSince *string  `json:\"since,omitempty\"`",
		"type ResearchTaskInput struct {",
		"\t// One of \"researcher\", \"writer\".\n\tSubagent string `json:\"subagent\"`",
		"\tTicketID      string                     `json:\"ticket_id,omitempty\"`",
		"func (c *Client) WaitSupportTenant(ctx context.Context, threadID string, p SupportTenantParams, input Input) (*SupportTenantState, error) {",
		"func (c *Client) StreamBlog2(ctx context.Context, threadID string, input Input) (*EventStream, error) {",
	} {
		if !strings.Contains(src, want) {
			t.Errorf("dawngen.go lacks\n%s", want)
		}
	}
	if strings.Contains(src, "BlogWriteTodosInput") || strings.Contains(src, "RootTaskInput") {
		t.Error("writeTodos or task generated for a route without plan.md or subagents")
	}
}

func TestGeneratedTypeScriptDeclares(t *testing.T) {
	files, err := Generate(testApp(t), Options{})
	if err != nil {
		t.Fatal(err)
	}
	ts := string(files[TypeScriptFile])
	for _, want := range []string{
		"// " + GeneratedMarker + "\n",
		"export type RouteId =\n  | \"/\"\n  | \"/2024\"\n",
		"export interface SupportTenantParams {\n  tenant: string;\n}",
		"export interface DocsSlugParams {\n  slug: string[];\n}",
		"export interface FilesPathParams {\n  path?: string[];\n}",
		"export interface SupportTenantTools {\n  placeOrder: SupportTenantPlaceOrderInput;\n  writeTodos: SupportTenantWriteTodosInput;\n}",
		"export interface SupportTenantWriteTodosInput {\n  todos: Todo[];\n}",
		"  status: \"pending\" | \"in_progress\" | \"completed\";\n",
		"  mode?: \"fast\" | \"deep\";\n",
		"  since?: string | null;\n",
		"export interface SupportTenantInput {\n  messages?: InputMessage[];\n  notes?: unknown[];\n  ticket_id?: string;\n}",
		"export interface PlanUpdateEvent {\n  todos: Todo[];\n}",
		"| { id: number; event: \"subagent.plan_update\"; data: PlanUpdateEvent & SubagentFields }",
		"| { id: number; event: \"subagent.start\"; data: SubagentFields }",
		"| { id: number; event: \"subagent.message\"; data: { chunk: string } & SubagentFields }",
		"| { id: number; event: \"subagent.end\"; data: ({ final_message: string } | { error: string }) & SubagentFields }",
		"  \"/support/[tenant]\": {\n    params: SupportTenantParams;\n    tools: SupportTenantTools;\n    state: SupportTenantState;\n    input: SupportTenantInput;\n  };",
		"export type BlogTools = Record<string, never>;",
	} {
		if !strings.Contains(ts, want) {
			t.Errorf("dawn.generated.d.ts lacks\n%s", want)
		}
	}
}

func TestGeneratedSchemas(t *testing.T) {
	files, err := Generate(testApp(t), Options{})
	if err != nil {
		t.Fatal(err)
	}
	var tools struct {
		Comment string                     `json:"$comment"`
		Schema  string                     `json:"$schema"`
		Defs    map[string]json.RawMessage `json:"$defs"`
		OneOf   []json.RawMessage          `json:"oneOf"`
	}
	if err := json.Unmarshal(files["schemas/support_tenant.tools.json"], &tools); err != nil {
		t.Fatal(err)
	}
	if tools.Comment != GeneratedMarker || tools.Schema != schemaDialect || len(tools.Defs) != 2 || len(tools.OneOf) != 2 {
		t.Errorf("support_tenant.tools.json = %+v", tools)
	}
	var state struct {
		Properties map[string]map[string]any `json:"properties"`
		Required   []string                  `json:"required"`
	}
	if err := json.Unmarshal(files["schemas/support_tenant.state.json"], &state); err != nil {
		t.Fatal(err)
	}
	todos := state.Properties["todos"]
	if todos["readOnly"] != true || todos["type"] != "array" || len(todos["default"].([]any)) != 2 {
		t.Errorf("todos schema = %v", todos)
	}
	if state.Properties["ticket_id"]["default"] != "" || state.Properties["ticket_id"]["readOnly"] != nil {
		t.Errorf("ticket_id schema = %v", state.Properties["ticket_id"])
	}
	if len(state.Required) != 1 || state.Required[0] != "messages" {
		t.Errorf("required = %v", state.Required)
	}
	var none map[string]any
	if err := json.Unmarshal(files["schemas/blog-2.tools.json"], &none); err != nil {
		t.Fatal(err)
	}
	if _, ok := none["not"]; !ok {
		t.Errorf("a route without tools should accept no call: %v", none)
	}
	for name, data := range files {
		if strings.HasSuffix(name, ".json") && !bytes.HasSuffix(data, []byte("}\n")) {
			t.Errorf("%s does not end in a newline", name)
		}
	}
}

func TestGenerateIsDeterministic(t *testing.T) {
	dir := writeApp(t, testAppFiles)
	first, err := Generate(loadApp(t, dir, testAppTools()...), Options{})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 5 {
		// A fresh load each time: new maps, new tool values.
		again, err := Generate(loadApp(t, dir, testAppTools()...), Options{})
		if err != nil {
			t.Fatal(err)
		}
		if len(again) != len(first) {
			t.Fatalf("run %d: %d files, want %d", i, len(again), len(first))
		}
		for name, data := range first {
			if !bytes.Equal(again[name], data) {
				t.Fatalf("run %d: %s differs", i, name)
			}
		}
	}
	formatted, err := format.Source(first[GoFile])
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(formatted, first[GoFile]) {
		t.Error("dawngen.go is not gofmt-clean")
	}
}

func TestGenerateEmptyApp(t *testing.T) {
	for _, a := range []*app.App{nil, {}, loadApp(t, t.TempDir())} {
		files, err := Generate(a, Options{Package: "api"})
		if err != nil {
			t.Fatal(err)
		}
		if len(files) != 2 || !strings.Contains(string(files[GoFile]), "package api\n") || !strings.Contains(string(files[TypeScriptFile]), "export type RouteId = never;") {
			t.Errorf("files for an empty app: %d, Go:\n%s", len(files), files[GoFile])
		}
	}
}

func TestGenerateBadPackage(t *testing.T) {
	for _, pkg := range []string{"main", "my-pkg", "func", "_"} {
		if _, err := Generate(nil, Options{Package: pkg}); err == nil || !strings.Contains(err.Error(), "cannot be a Go package name") {
			t.Errorf("package %q: error = %v", pkg, err)
		}
	}
}

func TestGenerateBadToolSchema(t *testing.T) {
	_, err := Generate(memoryApp([]byte(`{"type":`)), Options{})
	if err == nil || !strings.Contains(err.Error(), `route /t: tool "probe": input schema`) {
		t.Errorf("error = %v, want one naming the route and the tool", err)
	}
}

func TestStaticNamesAreReserved(t *testing.T) {
	names := staticNames()
	for _, want := range []string{"Client", "NewClient", "Message", "Input", "EventStream", "PlanUpdate", "DecodePlanUpdate", "Routes"} {
		found := false
		for _, n := range names {
			found = found || n == want
		}
		if !found {
			t.Errorf("%s is not reserved", want)
		}
	}
	// A route named like a fixed type gets a different name.
	a := loadApp(t, writeApp(t, map[string]string{"client/agent.md": agentMD, "plan/update/agent.md": agentMD}))
	m, err := buildModel(a)
	if err != nil {
		t.Fatal(err)
	}
	if m.routes[0].constName != "RouteClient" || m.routes[1].stateType != "PlanUpdateState" {
		t.Errorf("names = %s, %s", m.routes[0].constName, m.routes[1].stateType)
	}
}

func TestSubagentOfDynamicRouteHasNoParams(t *testing.T) {
	a := loadApp(t, writeApp(t, map[string]string{
		"support/[tenant]/agent.md":                  agentMD,
		"support/[tenant]/subagents/helper/agent.md": agentMD,
	}))
	files, err := Generate(a, Options{})
	if err != nil {
		t.Fatal(err)
	}
	src := string(files[GoFile])
	for _, want := range []string{
		"type SupportTenantParams struct",
		"func (c *Client) WaitSupportTenantSubagentsHelper(ctx context.Context, threadID string, input Input) (*SupportTenantSubagentsHelperState, error) {",
		"c.Client.WaitState(ctx, threadID, client.Run{Route: RouteSupportTenantSubagentsHelper, Input: input}, &s)",
		"type SupportTenantTaskInput struct",
	} {
		if !strings.Contains(src, want) {
			t.Errorf("dawngen.go lacks %s", want)
		}
	}
	if strings.Contains(src, "SupportTenantSubagentsHelperParams") {
		t.Error("a subagent got a Params type")
	}
}
