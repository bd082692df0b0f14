package a2a_test

import (
	"net/http"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/a2aproject/a2a-go/a2a"
	"github.com/dawn-go/dawn/internal/apptest"
	"github.com/dawn-go/dawn/internal/auth/authtest"
)

// BenchmarkSend is one A2A message/send on a new context (the Go SDK's
// client, over loopback, with the SDK's JSON-RPC and the scripted model),
// beside BenchmarkRunsWait, the same run through Dawn's runs/wait: the
// difference is what the A2A wire costs.
func BenchmarkSend(b *testing.B) {
	base := serve(b, a2aApp(b), filepath.Join(b.TempDir(), "dawn.db"), &testModel{})
	c, _ := client(b, base, "/support/acme", "ann")
	for b.Loop() {
		res, err := c.SendMessage(b.Context(), userText("", "hi"))
		if err != nil || res.(*a2a.Task).Status.State != a2a.TaskStateCompleted {
			b.Fatalf("send: %v %v", res, err)
		}
	}
}

func BenchmarkRunsWait(b *testing.B) {
	base := serve(b, a2aApp(b), filepath.Join(b.TempDir(), "dawn.db"), &testModel{})
	token := authtest.HS256(b, secret, authtest.Claims("ann", "", "dawn"))
	i := 0
	for b.Loop() {
		i++
		req, _ := http.NewRequestWithContext(b.Context(), http.MethodPost, base+"/threads/bench-"+strconv.Itoa(i)+"/runs/wait", strings.NewReader(apptest.RunBody("/support/acme", "hi")))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := http.DefaultClient.Do(req)
		if err != nil || resp.StatusCode != http.StatusOK {
			b.Fatalf("runs/wait: %v %v", resp, err)
		}
		resp.Body.Close()
	}
}
