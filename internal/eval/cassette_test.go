package eval

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tmc/langchaingo/llms"
)

// echoModel answers every call with the text of its last message.
type echoModel struct{ calls int }

func (m *echoModel) GenerateContent(_ context.Context, msgs []llms.MessageContent, _ ...llms.CallOption) (*llms.ContentResponse, error) {
	m.calls++
	last := msgs[len(msgs)-1].Parts[0].(llms.TextContent).Text
	return &llms.ContentResponse{Choices: []*llms.ContentChoice{{Content: "echo " + last, StopReason: "stop"}}}, nil
}

func (m *echoModel) Call(ctx context.Context, prompt string, options ...llms.CallOption) (string, error) {
	return llms.GenerateFromSinglePrompt(ctx, m, prompt, options...)
}

func ask(t *testing.T, ctx context.Context, m llms.Model, text string) (string, error) {
	t.Helper()
	resp, err := m.GenerateContent(ctx, []llms.MessageContent{llms.TextParts(llms.ChatMessageTypeHuman, text)})
	if err != nil {
		return "", err
	}
	return resp.Choices[0].Content, nil
}

// TestTapesRecordThenReplay records two calls of a case, then replays
// them: in another order (as concurrent calls may come), with a call the
// recording lacks, and with a call fewer than recorded.
func TestTapesRecordThenReplay(t *testing.T) {
	dir := t.TempDir()
	c := Case{Name: "greets", File: filepath.Join(dir, "basics.yaml")}
	inner := &echoModel{}
	rec := NewRecorder()
	mdl, err := rec.Models(func(string) (llms.Model, error) { return inner, nil })("openai:x")
	if err != nil {
		t.Fatal(err)
	}
	ctx, tp := rec.begin(context.Background(), &c)
	for _, text := range []string{"one", "two"} {
		if _, err := ask(t, ctx, mdl, text); err != nil {
			t.Fatal(err)
		}
	}
	if rec.end(&c, tp) != nil {
		t.Fatal("a recording has no replay result")
	}
	paths, err := rec.Save()
	if err != nil || len(paths) != 1 || paths[0] != filepath.Join(dir, "basics.cassette.json") {
		t.Fatalf("Save: %v %v", paths, err)
	}

	play, err := LoadReplay([]Case{c})
	if err != nil {
		t.Fatal(err)
	}
	replay, _ := play.Models(nil)("openai:x")
	cases := []struct {
		name    string
		asks    []string
		wantErr string // of the last ask
		pass    bool
		detail  string
	}{
		{name: "in another order", asks: []string{"two", "one"}, pass: true, detail: "2 model call(s) replayed"},
		{name: "a call not recorded", asks: []string{"one", "three"}, wantErr: `replay diverged at model call 2: message 1 (human) differs: the run sent "three", the recording has "two"`},
		{name: "a call too many", asks: []string{"one", "two", "two"}, wantErr: "replay diverged at model call 3: the recording has only 2 call(s)"},
		{name: "a call fewer", asks: []string{"one"}, detail: "the run made 1 model call(s); the recording has 2: the run diverged after call 1"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ctx, tp := play.begin(context.Background(), &c)
			var err error
			for i, text := range tc.asks {
				var got string
				got, err = ask(t, ctx, replay, text)
				if err == nil && got != "echo "+text {
					t.Fatalf("ask %d: %q, want the recorded echo %q", i+1, got, "echo "+text)
				}
			}
			if tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)) {
				t.Fatalf("err = %v, want %q", err, tc.wantErr)
			}
			r := play.end(&c, tp)
			if r == nil || r.Pass != tc.pass || (tc.detail != "" && r.Detail != tc.detail) {
				t.Fatalf("replay result = %+v, want pass %v detail %q", r, tc.pass, tc.detail)
			}
		})
	}
	if inner.calls != 2 {
		t.Fatalf("the model was called %d times; a replay must not call it", inner.calls)
	}
}

// TestLoadReplayMissing: a replay of an eval file with no cassette, or a
// case the cassette lacks, says to record it.
func TestLoadReplayMissing(t *testing.T) {
	dir := t.TempDir()
	c := Case{Name: "greets", File: filepath.Join(dir, "basics.yaml")}
	if _, err := LoadReplay([]Case{c}); err == nil || !strings.Contains(err.Error(), "basics.cassette.json: no recording to replay; record one with dawn eval --record") {
		t.Fatalf("err = %v", err)
	}
	if err := os.WriteFile(CassettePath(c.File), []byte(`{"version":1,"cases":{}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	play, err := LoadReplay([]Case{c})
	if err != nil {
		t.Fatal(err)
	}
	ctx, tp := play.begin(context.Background(), &c)
	replay, _ := play.Models(nil)("offline")
	if _, err := ask(t, ctx, replay, "hi"); err == nil || !strings.Contains(err.Error(), `has no recording of case "greets"`) {
		t.Fatalf("err = %v", err)
	}
	if r := play.end(&c, tp); r == nil || r.Pass {
		t.Fatalf("result = %+v, want a failed replay", r)
	}
}

// TestReportShowsReplay: a replay's result is a row of the report, so a
// diverged replay is named among the failures.
func TestReportShowsReplay(t *testing.T) {
	c := Case{Name: "greets", Route: "/greet", File: "app/greet/evals/basics.yaml", Line: 2}
	a := Attempt{Case: &c, N: 1, Results: []Result{{Expectation: ExpectReplay, Detail: "replay diverged at model call 1"}, {Expectation: ExpectRun, Pass: true}}}
	r := newReport([]Case{c}, [][]Attempt{{a}})
	below := r.Below(1)
	if len(below) != 1 || !strings.Contains(below[0], "replay passed 0/1: replay diverged at model call 1") {
		t.Fatalf("Below = %q, want the replay named", below)
	}
}
