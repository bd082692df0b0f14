package routeprompt

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dawn-go/dawn/router"
	"github.com/dawn-go/dawn/thread"
)

// agentRoute writes agent.md with text under a temp folder and parses it
// like the router does.
func agentRoute(t testing.TB, text string, params ...string) *router.Route {
	t.Helper()
	path := filepath.Join(t.TempDir(), "agent.md")
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	a, err := router.ParseAgent(path, []byte(text))
	if err != nil {
		t.Fatal(err)
	}
	return &router.Route{ID: "/support/[tenant]", Params: params, Agent: a}
}

func TestPrompt(t *testing.T) {
	state := thread.State{"topic": json.RawMessage(`"billing"`), "count": json.RawMessage(`3`)}
	params := map[string]string{"tenant": "acme"}
	tests := []struct {
		name, text, want string
	}{
		{"verbatim without template syntax", "---\nmodel: offline\n---\nUse {curly} and $.Params as written.\n", "Use {curly} and $.Params as written."},
		{"param", "---\nmodel: offline\n---\nYou help {{ .Params.tenant }}.\n", "You help acme."},
		{"state fields", "You handle {{ .State.topic }} ({{ .State.count }} open).", "You handle billing (3 open)."},
		{"if on a state field", "{{ if eq .State.topic \"billing\" }}Be exact.{{ end }}", "Be exact."},
		{"root variable", "---\ndescription: d\n---\n\n\nHi {{ $.Params.tenant }}", "Hi acme"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Prompt(agentRoute(t, tt.text, "tenant"), params, state, "")
			if err != nil || got != tt.want {
				t.Errorf("Prompt = %q, %v; want %q", got, err, tt.want)
			}
		})
	}
}

// TestPromptMissingStateFieldAtRunTime: a state field absent from the
// thread's state is an error naming the file and line, not "<no value>".
func TestPromptMissingStateFieldAtRunTime(t *testing.T) {
	r := agentRoute(t, "---\nmodel: offline\n---\nLine one.\n{{ .State.topic }}\n", "tenant")
	_, err := Prompt(r, nil, thread.State{}, "")
	if err == nil || !strings.Contains(err.Error(), r.Agent.File+":5:") || !strings.Contains(err.Error(), "topic") {
		t.Fatalf("err = %v, want one naming %s line 5 and topic", err, r.Agent.File)
	}
}

func TestCheck(t *testing.T) {
	tests := []struct {
		name, text string
		want       []string // substrings, one per error, in order
	}{
		{"verbatim", "Hello.", nil},
		{"known names", "{{ .Params.tenant }} {{ .State.topic }} {{ $.State.topic }}", nil},
		{"unknown param", "---\nmodel: offline\n---\nHi\n{{ .Params.tenat }}", []string{`:5: prompt template: route /support/[tenant] has no param "tenat"; its params are tenant`}},
		{"unknown state field", "{{ if .State.mood }}x{{ end }}", []string{`:1: prompt template: route /support/[tenant] has no state field "mood"; its fields are topic`}},
		{"unknown top-level name", "{{ .Tenant }}", []string{`unknown name .Tenant; a prompt can use .Params.<name>, .State.<field> and .User`}},
		{"parse error with line", "---\nmodel: offline\n---\nok\n\n{{ .Params.tenant ", []string{`agent.md:6: unclosed action`}},
		{"two problems", "{{ .Params.a }}\n{{ .State.b }}", []string{`no param "a"`, `no state field "b"`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := agentRoute(t, tt.text, "tenant")
			errs := Check(r, []string{"topic"})
			if len(errs) != len(tt.want) {
				t.Fatalf("Check = %v, want %d error(s)", errs, len(tt.want))
			}
			for i, w := range tt.want {
				if !strings.Contains(errs[i].Error(), w) || !strings.Contains(errs[i].Error(), r.Agent.File) {
					t.Errorf("error %d = %q, want it to name %s and contain %q", i, errs[i], r.Agent.File, w)
				}
			}
		})
	}
}

// FuzzCheck: any agent.md body parses, checks and renders without a panic.
func FuzzCheck(f *testing.F) {
	for _, seed := range []string{"Hi", "{{ .Params.tenant }}", "{{ range .State.items }}{{ . }}{{ end }}", "{{ template \"x\" }}", "{{ define \"x\" }}{{ .State.a }}{{ end }}", "{{"} {
		f.Add(seed)
	}
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, body string) {
		path := filepath.Join(dir, "agent.md")
		if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		a, err := router.ParseAgent(path, []byte(body))
		if err != nil {
			return
		}
		r := &router.Route{ID: "/x", Params: []string{"tenant"}, Agent: a}
		_ = Check(r, []string{"topic"})
		tmpl, err := Parse(a)
		if err != nil || tmpl == nil {
			return
		}
		_, _ = tmpl.Render(map[string]string{"tenant": "acme"}, thread.State{"topic": json.RawMessage(`"x"`)}, "")
	})
}
