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
// directive, script its answer to them. The runner adds the app's markers
// to every run's context; without them the offline model takes every text
// of a user turn as the user's.
func WithMarkers(ctx context.Context, markers []capabilities.Marker) context.Context {
	var scripts []capabilities.OfflineScript
	for _, m := range markers {
		if s, ok := m.(capabilities.OfflineScript); ok {
			scripts = append(scripts, s)
		}
	}
	return context.WithValue(ctx, scriptsKey{}, scripts)
}

// offlineScripts are the scripts ctx carries (see WithMarkers).
type offlineScripts []capabilities.OfflineScript

// scriptsFrom returns the scripts of ctx.
func scriptsFrom(ctx context.Context) offlineScripts {
	s, _ := ctx.Value(scriptsKey{}).([]capabilities.OfflineScript)
	return s
}

// reply asks the scripts about text from a user turn: own reports a
// capability wrote it, and reply is the answer it scripts, if any.
func (ss offlineScripts) reply(text string) (reply string, own bool) {
	for _, s := range ss {
		if reply, own := s.OfflineReply(text); own {
			return reply, true
		}
	}
	return "", false
}
