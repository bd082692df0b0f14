package models

import (
	"context"

	"github.com/dawn-go/dawn/capabilities"
)

// scriptsKey marks a call's context with the offline scripts of its app.
type scriptsKey struct{}

// WithMarkers returns a context that tells the offline model about the
// markers of the app it answers for: those that write model turns of their
// own (capabilities.OfflineScript), such as plan-first's planning
// directive, script its answer to them; those whose tools it knows how to
// call (capabilities.OfflineScripter), such as planning's plan steps,
// script its calls. The runner adds the app's markers to every run's
// context; without them the offline model takes every text of a user turn
// as the user's and calls no capability's tool but a subagent's task.
func WithMarkers(ctx context.Context, markers []capabilities.Marker) context.Context {
	var ss offlineScripts
	for _, m := range markers {
		if s, ok := m.(capabilities.OfflineScript); ok {
			ss.replies = append(ss.replies, s)
		}
		if s, ok := m.(capabilities.OfflineScripter); ok {
			ss.calls = append(ss.calls, s)
		}
	}
	return context.WithValue(ctx, scriptsKey{}, ss)
}

// offlineScripts are the scripts ctx carries (see WithMarkers): replies
// to a capability's own turns, and calls of a capability's tools.
type offlineScripts struct {
	replies []capabilities.OfflineScript
	calls   []capabilities.OfflineScripter
}

// scriptsFrom returns the scripts of ctx.
func scriptsFrom(ctx context.Context) offlineScripts {
	s, _ := ctx.Value(scriptsKey{}).(offlineScripts)
	return s
}

// reply asks the scripts about text from a user turn: own reports a
// capability wrote it, and reply is the answer it scripts, if any.
func (ss offlineScripts) reply(text string) (reply string, own bool) {
	for _, s := range ss.replies {
		if reply, own := s.OfflineReply(text); own {
			return reply, true
		}
	}
	return "", false
}

// step asks the scripters, in order, for their next call: the first call
// named or app tool call asked for, else no call and the first summary given.
func (ss offlineScripts) step(t capabilities.OfflineTranscript) capabilities.OfflineStep {
	var summary string
	for _, s := range ss.calls {
		step := s.OfflineStep(t)
		if step.Tool != "" || step.AppTool {
			return step
		}
		if summary == "" {
			summary = step.Summary
		}
	}
	return capabilities.OfflineStep{Summary: summary}
}
