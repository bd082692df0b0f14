package eval

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestParseFiles(t *testing.T) {
	for _, name := range []string{"support.yaml", "research.yaml", "judge.yaml"} {
		data, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			t.Fatal(err)
		}
		cases, err := Parse(name, "/r", data)
		if err != nil || len(cases) == 0 {
			t.Errorf("%s: %d cases, %v", name, len(cases), err)
		}
	}
}

func TestParse(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("testdata", "judge.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	cases, err := Parse("judge.yaml", "/support/[tenant]", data)
	if err != nil {
		t.Fatal(err)
	}
	c := cases[0]
	got, _ := json.Marshal(c)
	want := `{"name":"judged","file":"judge.yaml","line":2,"route":"/support/[tenant]",` +
		`"input":{"messages":[{"role":"user","content":"Help me with my account"}]},` +
		`"setup":{"messages":[{"role":"user","content":"Hello"}]},` +
		`"expect":{"tools_called":[{"name":"lookupAccount","args":{"email":"ann@acme.com"}}],` +
		`"judge":{"criteria":["The answer says the account is in good standing."],"threshold":0.8}}}`
	if string(got) != want {
		t.Errorf("Parse =\n%s\nwant\n%s", got, want)
	}
	if names := strings.Join(c.Expect.Names(), " "); names != "run tools_called judge" {
		t.Errorf("Names = %s", names)
	}
}

// TestParseErrors: every problem names the file, line, case and field.
func TestParseErrors(t *testing.T) {
	const head = "cases:\n  - name: c\n    input: {message: hi}\n"
	tests := []struct{ name, yaml, want string }{
		{"empty", "", "f.yaml: the file is empty"},
		{"not yaml", "cases: [\n", "f.yaml:1: not valid YAML"},
		{"not a mapping", "- a\n", "f.yaml:1: expected a mapping with the key cases"},
		{"unknown top key", "tests: []\ncases: []\n", "f.yaml:1: tests: field not found; an eval file has the keys cases and model"},
		{"no cases", "cases: []\n", "f.yaml:1: cases: must be a list of one or more cases"},
		{"case not mapping", "cases: [x]\n", `f.yaml:1: case "#1": must be a mapping`},
		{"no name", "cases:\n  - input: {message: hi}\n    expect: {max_turns: 1}\n", `f.yaml:2: case "#1": name: is missing`},
		{"no input", "cases:\n  - name: c\n    expect: {max_turns: 1}\n", `f.yaml:2: case "c": input: is missing`},
		{"no expect", head, `f.yaml:2: case "c": expect: is missing`},
		{"empty expect", head + "    expect: {}\n", `f.yaml:4: case "c": expect: is empty`},
		{"unknown case key", head + "    expect: {max_turns: 1}\n    extra: 1\n", `f.yaml:5: case "c": extra: field not found; allowed keys: name, input, setup, expect`},
		{"unknown expect key", head + "    expect: {max_turn: 1}\n", `f.yaml:4: case "c": expect.max_turn: field not found`},
		{"duplicate name", head + "    expect: {max_turns: 1}\n" + strings.TrimPrefix(head, "cases:\n") + "    expect: {max_turns: 1}\n", `f.yaml:5: case "c": name: the name is used by the case on line 2 too`},
		{"message and messages", "cases:\n  - name: c\n    input: {message: hi, messages: [hi]}\n    expect: {max_turns: 1}\n", `case "c": input.message: give message or messages, not both`},
		{"bad role", "cases:\n  - name: c\n    input: {messages: [{role: robot, content: hi}]}\n    expect: {max_turns: 1}\n", `case "c": input.messages[0].role: is "robot"`},
		{"setup not user", head + "    setup: {messages: [{role: assistant, content: hi}]}\n    expect: {max_turns: 1}\n", `case "c": setup.messages[0].role: is "assistant"; use user`},
		{"bad params", "cases:\n  - name: c\n    input: {message: hi, params: [a]}\n    expect: {max_turns: 1}\n", `case "c": input.params: must be a mapping of param names to text`},
		{"bad status", head + "    expect:\n      todos: [{content: a, status: done}]\n", `f.yaml:5: case "c": expect.todos[0].status: must be one of pending, in_progress, completed`},
		{"bad regex", head + "    expect: {answer_matches: '('}\n", `case "c": expect.answer_matches: is not a regular expression`},
		{"bad args regex", head + "    expect:\n      tools_called: [{name: a, args_match: {x: '['}}]\n", `case "c": expect.tools_called[0].args_match.x: is not a regular expression`},
		{"no calls", head + "    expect:\n      tools_called: {in_order: true}\n", `case "c": expect.tools_called.calls: is missing`},
		{"zero turns", head + "    expect: {max_turns: 0}\n", `case "c": expect.max_turns: is 0; it must be above 0`},
		{"bad threshold", head + "    expect: {judge: {criteria: [x], threshold: 2}}\n", `case "c": expect.judge.threshold: is 2; it must be from 0 to 1`},
		{"judge without criteria", head + "    expect: {judge: {threshold: 0.5}}\n", `case "c": expect.judge.criteria: is missing`},
		{"plan_completed not bool", head + "    expect: {plan_completed: yes please}\n", `case "c": expect.plan_completed: must be true or false`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse("f.yaml", "/r", []byte(tc.yaml))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err = %v\nwant it to contain %s", err, tc.want)
			}
			var e *Error
			if !errors.As(err, &e) {
				t.Errorf("err is %T, want *Error", err)
			}
		})
	}
}

// TestParseKeepsGoodCases: a bad case does not hide the good ones.
func TestParseKeepsGoodCases(t *testing.T) {
	src := "cases:\n  - name: good\n    input: {message: hi}\n    expect: {max_turns: 1}\n  - name: bad\n    input: {message: hi}\n    expect: {max_turns: -1}\n"
	cases, err := Parse("f.yaml", "/r", []byte(src))
	if err == nil || len(cases) != 1 || cases[0].Name != "good" {
		t.Errorf("Parse = %v, %v; want the good case and an error", cases, err)
	}
}

func FuzzParse(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join("testdata", "*.yaml"))
	for _, file := range files {
		data, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		cases, err := Parse("f.yaml", "/r", data)
		for _, c := range cases {
			if c.Name == "" || len(c.Input.Messages) == 0 || c.File != "f.yaml" {
				t.Errorf("Parse returned an incomplete case %+v", c)
			}
			Check(c.Expect, Observation{Answer: "x"})
		}
		if err != nil {
			for _, e := range splitErrors(err) {
				var pe *Error
				if !errors.As(e, &pe) || pe.File != "f.yaml" || pe.Msg == "" {
					t.Errorf("error %v is not an *Error naming the file", e)
				}
			}
		}
	})
}

func splitErrors(err error) []error {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		var out []error
		for _, e := range j.Unwrap() {
			out = append(out, splitErrors(e)...)
		}
		return out
	}
	return []error{err}
}
