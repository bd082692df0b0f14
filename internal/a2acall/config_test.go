package a2acall_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dawn-go/dawn/internal/a2acall"
	"github.com/dawn-go/dawn/internal/app"
	"github.com/dawn-go/dawn/internal/apptest"
	"github.com/dawn-go/dawn/markers"
)

func TestParse(t *testing.T) {
	cases := []struct {
		name, yaml string
		want       []string // in the error, or none for success
		check      func(t *testing.T, c a2acall.Config)
	}{
		{name: "defaults", yaml: "card: http://127.0.0.1:9/\n", check: func(t *testing.T, c a2acall.Config) {
			if c.Card != "http://127.0.0.1:9/.well-known/agent-card.json" || c.Timeout != a2acall.DefaultTimeout || c.Retries != a2acall.DefaultRetries || c.MaxTextBytes != a2acall.DefaultMaxTextBytes {
				t.Errorf("config = %+v", c)
			}
		}},
		{name: "all set", yaml: "card: https://agents.example/a/card.json\ncredential_env: REMOTE_TOKEN\ntimeout: 90s\nretries: 0\nmax_text_bytes: 2048\n", check: func(t *testing.T, c a2acall.Config) {
			if c.Card != "https://agents.example/a/card.json" || c.CredentialEnv != "REMOTE_TOKEN" || c.Timeout != 90*time.Second || c.Retries != 0 || c.MaxTextBytes != 2048 {
				t.Errorf("config = %+v", c)
			}
		}},
		{name: "empty", yaml: "", want: []string{"card is missing"}},
		{name: "not a URL", yaml: "card: agents.example\n", want: []string{`card "agents.example" is not an http or https URL`}},
		{name: "ftp", yaml: "card: ftp://agents.example/card\n", want: []string{"is not an http or https URL"}},
		{name: "token instead of a name", yaml: "card: http://h/\ncredential_env: Bearer abc\n", want: []string{`credential_env "Bearer abc" is not an environment variable's name`}},
		{name: "bad timeout", yaml: "card: http://h/\ntimeout: soon\n", want: []string{`timeout "soon" is not a positive duration`}},
		{name: "negative timeout", yaml: "card: http://h/\ntimeout: -1s\n", want: []string{"is not a positive duration"}},
		{name: "retries", yaml: "card: http://h/\nretries: 9\n", want: []string{"retries is 9; it must be 0 to 5"}},
		{name: "text bound", yaml: "card: http://h/\nmax_text_bytes: 10\n", want: []string{"max_text_bytes is 10"}},
		{name: "unknown key", yaml: "card: http://h/\nurl: http://h/\n", want: []string{"field url not found", "the keys are card, credential_env"}},
		{name: "two problems", yaml: "retries: -1\n", want: []string{"card is missing", "retries is -1"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "a2a.yaml")
			if err := os.WriteFile(path, []byte(tc.yaml), 0o644); err != nil {
				t.Fatal(err)
			}
			c, err := a2acall.Parse(path, "remote")
			if tc.want == nil {
				if err != nil {
					t.Fatal(err)
				}
				tc.check(t, c)
				return
			}
			if err == nil {
				t.Fatalf("no error; want %q", tc.want)
			}
			for _, w := range append(tc.want, path) {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not say %q", err, w)
				}
			}
		})
	}
}

func load(t *testing.T, files map[string]string) error {
	t.Helper()
	_, err := app.Load(context.Background(), apptest.WriteApp(t, files), app.Options{ToolsKnown: true, Markers: markers.All()})
	return err
}

// TestFolderProblems: a broken a2a.yaml, or one beside an agent.md, stops
// the parent route with the file and what to do named.
func TestFolderProblems(t *testing.T) {
	err := load(t, map[string]string{"lead/agent.md": "You lead.", "lead/subagents/remote/a2a.yaml": "card: nope\n"})
	if err == nil || !strings.Contains(err.Error(), "route /lead: [a2a_subagents#load]") || !strings.Contains(err.Error(), filepath.Join("remote", "a2a.yaml")) {
		t.Errorf("bad card: %v", err)
	}
	err = load(t, map[string]string{"lead/agent.md": "You lead.", "lead/subagents/both/a2a.yaml": "card: http://h/\n", "lead/subagents/both/agent.md": "Me too."})
	if err == nil || !strings.Contains(err.Error(), "and an agent.md are in one subagent folder") {
		t.Errorf("both: %v", err)
	}
	if err := load(t, map[string]string{"lead/agent.md": "You lead.", "lead/subagents/remote/a2a.yaml": "card: http://127.0.0.1:9/\n"}); err != nil {
		t.Errorf("good folder: %v", err)
	}
}

// TestRemoteSubagentLoaded: a route whose only subagent is remote has it,
// at its card's URL.
func TestRemoteSubagentLoaded(t *testing.T) {
	dir := apptest.WriteApp(t, map[string]string{"lead/agent.md": "You lead.", "lead/subagents/remote/a2a.yaml": "card: http://127.0.0.1:9/\n"})
	a, err := app.Load(context.Background(), dir, app.Options{ToolsKnown: true, Markers: markers.All()})
	if err != nil {
		t.Fatal(err)
	}
	p := a.Routes["/lead"]
	if p == nil || p.RemoteSubagents["remote"] == nil || p.RemoteSubagents["remote"].Address() != "http://127.0.0.1:9/.well-known/agent-card.json" {
		t.Fatalf("route /lead = %+v; want the remote subagent", p)
	}
}
