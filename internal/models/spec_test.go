package models

import (
	"strings"
	"testing"
)

func TestParseSpec(t *testing.T) {
	tests := []struct {
		in      string
		want    Spec
		wantErr string // fragment of the error; empty means no error
	}{
		{in: "openai:gpt-4o-mini", want: Spec{"openai", "gpt-4o-mini"}},
		{in: "  OpenAI : gpt-4o ", want: Spec{"openai", "gpt-4o"}},
		{in: "anthropic:claude-3-5-haiku-latest", want: Spec{"anthropic", "claude-3-5-haiku-latest"}},
		{in: "ollama:llama3.2:1b", want: Spec{"ollama", "llama3.2:1b"}},
		{in: "offline", want: Spec{"offline", ""}},
		{in: "offline:anything", want: Spec{"offline", "anything"}},
		{in: "OFFLINE", want: Spec{"offline", ""}},
		{in: "", wantErr: "model name is empty"},
		{in: "   ", wantErr: "model name is empty"},
		{in: "mistral:large", wantErr: `unknown provider "mistral"; use one of openai, anthropic, gemini, ollama, openai-compatible, offline`},
		{in: "gpt-4o", wantErr: `unknown provider "gpt-4o"`},
		{in: "openai", wantErr: "needs a model name after the provider; write openai:<model>"},
		{in: "openai:", wantErr: "has no model name"},
		{in: "ollama: ", wantErr: "for example ollama:llama3.2"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := ParseSpec(tt.in)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("ParseSpec(%q) error = %v, want it to contain %q", tt.in, err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("ParseSpec(%q): %v", tt.in, err)
			}
			if got != tt.want {
				t.Fatalf("ParseSpec(%q) = %+v, want %+v", tt.in, got, tt.want)
			}
		})
	}
}

func TestSpecString(t *testing.T) {
	tests := []struct {
		spec Spec
		want string
	}{
		{Spec{"openai", "gpt-4o-mini"}, "openai:gpt-4o-mini"},
		{Spec{"offline", ""}, "offline"},
		{Spec{"offline", "x"}, "offline:x"},
		{Spec{"ollama", "llama3.2:1b"}, "ollama:llama3.2:1b"},
	}
	for _, tt := range tests {
		if got := tt.spec.String(); got != tt.want {
			t.Errorf("%+v.String() = %q, want %q", tt.spec, got, tt.want)
		}
	}
}

func FuzzParseSpec(f *testing.F) {
	for _, seed := range []string{"openai:gpt-4o-mini", "offline", "ollama:a:b", "", ":", "x:"} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, in string) {
		spec, err := ParseSpec(in)
		if err != nil {
			return
		}
		again, err := ParseSpec(spec.String())
		if err != nil {
			t.Fatalf("ParseSpec(%q) = %+v, but its String %q does not parse: %v", in, spec, spec.String(), err)
		}
		if again != spec {
			t.Fatalf("round trip of %q: %+v then %+v", in, spec, again)
		}
	})
}
