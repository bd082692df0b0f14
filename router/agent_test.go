package router

import (
	"errors"
	"reflect"
	"strings"
	"testing"
)

func TestParseAgent(t *testing.T) {
	tests := []struct {
		name    string
		data    string
		want    Agent
		wantErr []string // substrings of the error; nil means no error
	}{
		{
			name: "no front matter is all prompt",
			data: "You are helpful.\n\n---\n\nMore.\n",
			want: Agent{Prompt: "You are helpful.\n\n---\n\nMore."},
		},
		{
			name: "every key",
			data: "---\nmodel: offline\ndescription: Helps\ntools: [search, fetch]\nmax_turns: 7\ntemperature: 0.2\n---\n\nBe brief.\n",
			want: Agent{Model: "offline", Description: "Helps", Tools: []string{"search", "fetch"}, MaxTurns: 7, Temperature: ptr(0.2), Prompt: "Be brief."},
		},
		{
			name: "temperature 0 is set, not absent",
			data: "---\ntemperature: 0\n---\nHi",
			want: Agent{Temperature: ptr(0.0), Prompt: "Hi"},
		},
		{
			name: "model list joined by commas",
			data: "---\nmodel:\n  - openai:gpt-4o-mini\n  - anthropic:claude-3-5-haiku-latest\n---\nHi",
			want: Agent{Model: "openai:gpt-4o-mini,anthropic:claude-3-5-haiku-latest", Prompt: "Hi"},
		},
		{
			name: "block list of tools",
			data: "---\ntools:\n  - search\n  - fetch\n---\nHi",
			want: Agent{Tools: []string{"search", "fetch"}, Prompt: "Hi"},
		},
		{
			name: "empty tools list is not nil",
			data: "---\ntools: []\n---\nHi",
			want: Agent{Tools: []string{}, Prompt: "Hi"},
		},
		{
			name: "tool policy",
			data: "---\napprove: [a]\ntools: {allow: [search, deploy], deny: [runBash], approve: [deploy, a]}\n---\nHi",
			want: Agent{Tools: []string{"search", "deploy"}, Deny: []string{"runBash"}, Approve: []string{"a", "deploy"}, Prompt: "Hi"},
		},
		{
			name: "tool policy without allow keeps every tool",
			data: "---\ntools:\n  deny: [writeFile]\n---\nHi",
			want: Agent{Deny: []string{"writeFile"}, Prompt: "Hi"},
		},
		{
			name:    "tool policy with an unknown key",
			data:    "---\ntools: {alow: [a]}\n---\n",
			wantErr: []string{"agent.md:2: ", `"tools" has an unknown key "alow"`, "allow, deny and approve"},
		},
		{
			name:    "tool policy with a bad list",
			data:    "---\ntools: {deny: runBash}\n---\n",
			wantErr: []string{"agent.md:2: ", `"tools.deny" must be a list of tool names`},
		},
		{
			name:    "tool policy naming task",
			data:    "---\ntools: {approve: [task]}\n---\n",
			wantErr: []string{"agent.md:2: ", `"tools.approve" names "task"`},
		},
		{
			name: "byte order mark",
			data: "\uFEFF---\nmodel: m\n---\nHi\n",
			want: Agent{Model: "m", Prompt: "Hi"},
		},
		{
			name: "CRLF line endings",
			data: "---\r\nmodel: m\r\ndescription: d\r\n---\r\nLine one\r\nLine two\r\n",
			want: Agent{Model: "m", Description: "d", Prompt: "Line one\nLine two"},
		},
		{
			name: "BOM and CRLF",
			data: "\uFEFF---\r\nmax_turns: 2\r\n---\r\nHi\r\n",
			want: Agent{MaxTurns: 2, Prompt: "Hi"},
		},
		{
			name: "empty front matter",
			data: "---\n---\nHi",
			want: Agent{Prompt: "Hi"},
		},
		{
			name: "front matter of comments only",
			data: "---\n# nothing yet\n---\nHi",
			want: Agent{Prompt: "Hi"},
		},
		{
			name: "front matter and no body",
			data: "---\nmodel: m\n---",
			want: Agent{Model: "m"},
		},
		{
			name: "fences with trailing spaces",
			data: "---  \nmodel: m\n--- \nHi",
			want: Agent{Model: "m", Prompt: "Hi"},
		},
		{
			name: "null values",
			data: "---\nmodel:\ntools:\nmax_turns: ~\ntemperature: ~\n---\nHi",
			want: Agent{Prompt: "Hi"},
		},
		{
			name: "empty file",
			data: "",
			want: Agent{},
		},
		{
			name:    "unterminated front matter",
			data:    "---\nmodel: m\nHi\n",
			wantErr: []string{"agent.md:1: ", `no closing "---"`},
		},
		{
			name:    "only an opening fence",
			data:    "---",
			wantErr: []string{"agent.md:1: ", `no closing "---"`},
		},
		{
			name:    "unknown key",
			data:    "---\nmodel: m\ntop_p: 0.2\n---\nHi",
			wantErr: []string{"agent.md:3: ", `unknown front matter key "top_p"`, "allowed keys: model, description, tools, max_turns, temperature"},
		},
		{
			name:    "temperature out of range",
			data:    "---\ntemperature: 3\n---\n",
			wantErr: []string{"agent.md:2: ", `"temperature"`, "from 0 to 2", `"3"`},
		},
		{
			name:    "temperature is not a number",
			data:    "---\ntemperature: warm\n---\n",
			wantErr: []string{"agent.md:2: ", `"temperature"`, "from 0 to 2", `"warm"`},
		},
		{
			name:    "max_turns is not a number",
			data:    "---\nmax_turns: lots\n---\n",
			wantErr: []string{"agent.md:2: ", `"max_turns"`, "whole number", `"lots"`},
		},
		{
			name:    "max_turns is negative",
			data:    "---\nmax_turns: -1\n---\n",
			wantErr: []string{`"max_turns"`, "0 or more"},
		},
		{
			name:    "max_turns is a fraction",
			data:    "---\nmax_turns: 1.5\n---\n",
			wantErr: []string{`"max_turns"`},
		},
		{
			name:    "tools is one name",
			data:    "---\ntools: search\n---\n",
			wantErr: []string{`"tools"`, "list of tool names"},
		},
		{
			name:    "tools holds a map",
			data:    "---\ntools:\n  - search\n  - {a: b}\n---\n",
			wantErr: []string{`"tools"`, "item 2"},
		},
		{
			name:    "model is a mapping",
			data:    "---\nmodel: {a: b}\n---\n",
			wantErr: []string{`"model"`},
		},
		{
			name:    "model list holds a list",
			data:    "---\nmodel: [a, [b]]\n---\n",
			wantErr: []string{`"model"`},
		},
		{
			name:    "description is a map",
			data:    "---\ndescription: {a: b}\n---\n",
			wantErr: []string{`"description"`},
		},
		{
			name:    "key twice",
			data:    "---\nmodel: a\nmodel: b\n---\n",
			wantErr: []string{"agent.md:3: ", `"model" appears twice`},
		},
		{
			name:    "front matter is a list",
			data:    "---\n- a\n- b\n---\n",
			wantErr: []string{"agent.md:2: ", "key: value"},
		},
		{
			name:    "bad YAML",
			data:    "---\nmodel: m\ndescription: a: b\n---\n",
			wantErr: []string{"agent.md:3: ", "not valid YAML"},
		},
		{
			name:    "not UTF-8",
			data:    "Hi \xff\xfe",
			wantErr: []string{"agent.md: ", "UTF-8"},
		},
		{
			name:    "too big",
			data:    strings.Repeat("a", MaxAgentFileSize+1),
			wantErr: []string{"agent.md: ", "256 KiB"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			const path = "app/x/agent.md"
			got, err := ParseAgent(path, []byte(tt.data))
			if tt.wantErr != nil {
				if err == nil {
					t.Fatalf("ParseAgent() = %+v, want an error", got)
				}
				var p *Problem
				if !errors.As(err, &p) || p.Path != path {
					t.Errorf("error %v is not a *Problem for %s", err, path)
				}
				for _, want := range tt.wantErr {
					if !strings.Contains(err.Error(), want) {
						t.Errorf("error %q does not contain %q", err, want)
					}
				}
				return
			}
			if err != nil {
				t.Fatalf("ParseAgent() error = %v", err)
			}
			tt.want.File = path
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("ParseAgent() =\n%#v\nwant\n%#v", got, tt.want)
			}
		})
	}
}

func TestProblemError(t *testing.T) {
	tests := []struct {
		p    Problem
		want string
	}{
		{Problem{Path: "app/x", Msg: "bad"}, "app/x: bad"},
		{Problem{Path: "app/x/agent.md", Line: 3, Msg: "bad"}, "app/x/agent.md:3: bad"},
		{Problem{Msg: "bad"}, "bad"},
	}
	for _, tt := range tests {
		if got := tt.p.Error(); got != tt.want {
			t.Errorf("Error() = %q, want %q", got, tt.want)
		}
	}
}

func ptr[T any](v T) *T { return &v }
