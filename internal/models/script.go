package models

import (
	"sync"

	"github.com/dawn-go/dawn/capabilities"
	"github.com/dawn-go/dawn/markers"
)

// offlineScripts are the registered markers that tell the offline model
// about texts they write to it (capabilities.OfflineScript), such as
// plan-first's planning directive. They are found once, by interface
// assertion; the offline model names no capability.
var offlineScripts = sync.OnceValue(func() []capabilities.OfflineScript {
	var scripts []capabilities.OfflineScript
	for _, m := range markers.All() {
		if s, ok := m.(capabilities.OfflineScript); ok {
			scripts = append(scripts, s)
		}
	}
	return scripts
})

// scriptedReply asks the scripts about text from a user turn: own reports a
// capability wrote it, and reply is the answer it scripts, if any.
func scriptedReply(text string) (reply string, own bool) {
	for _, s := range offlineScripts() {
		if reply, own := s.OfflineReply(text); own {
			return reply, true
		}
	}
	return "", false
}
