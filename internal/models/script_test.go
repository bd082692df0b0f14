package models_test

import (
	"context"
	"testing"

	"github.com/dawn-go/dawn/harness"
	"github.com/dawn-go/dawn/internal/models"
	"github.com/dawn-go/dawn/internal/planfirst"
	"github.com/dawn-go/dawn/markers"
	"github.com/tmc/langchaingo/llms"
)

// TestOfflineScripts: the offline model answers plan-first's directive and
// passes over plan-first's report and the harness's notes, learning both
// from the markers its context carries (capabilities.OfflineScript) rather
// than by importing those packages or the registry.
func TestOfflineScripts(t *testing.T) {
	ctx := models.WithMarkers(context.Background(), markers.All())
	ask := func(texts ...string) string {
		t.Helper()
		var msgs []llms.MessageContent
		for _, text := range texts {
			msgs = append(msgs, llms.TextParts(llms.ChatMessageTypeHuman, text))
		}
		resp, err := models.NewOffline().GenerateContent(ctx, msgs)
		if err != nil {
			t.Fatal(err)
		}
		return resp.Choices[0].Content
	}
	plan, err := planfirst.Parse(ask(planfirst.Directive("Fix the login bug", nil, []string{"researcher"})))
	if err != nil {
		t.Fatalf("the answer to a directive is not a plan: %v", err)
	}
	if len(plan.Steps) != 3 || plan.Steps[1].Subagent != "researcher" {
		t.Errorf("plan = %+v", plan)
	}
	for _, own := range []string{planfirst.ReportPrefix + " 3 steps, 3 completed.", harness.NotePrefix + " your answer was not accepted"} {
		if got, want := ask("Onboard ACME", own), ask("Onboard ACME"); got != want {
			t.Errorf("after %q the answer is %q, want the answer to the user's text, %q", own, got, want)
		}
	}
}

// TestOfflineWithoutMarkers: with no markers in its context the offline
// model knows no capability's texts: a directive is the user's request.
func TestOfflineWithoutMarkers(t *testing.T) {
	msgs := []llms.MessageContent{llms.TextParts(llms.ChatMessageTypeHuman, planfirst.Directive("Fix the login bug", nil, nil))}
	resp, err := models.NewOffline().GenerateContent(context.Background(), msgs)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := planfirst.Parse(resp.Choices[0].Content); err == nil {
		t.Errorf("without markers the offline model answered the directive with a plan: %q", resp.Choices[0].Content)
	}
}
