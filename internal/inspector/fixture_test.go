package inspector_test

import (
	"context"
	"encoding/json"
	"github.com/dawn-go/dawn/markers"
	"io"
	"io/fs"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/dawn-go/dawn/internal/app"
	"github.com/dawn-go/dawn/internal/inspector"
	"github.com/dawn-go/dawn/internal/models"
	"github.com/dawn-go/dawn/internal/runner"
	"github.com/dawn-go/dawn/internal/server"
	_ "github.com/dawn-go/dawn/internal/server/wires" // Dawn's other wires: LangGraph, AG-UI, OpenAI, MCP, A2A
	"github.com/dawn-go/dawn/internal/store"
	"github.com/tmc/langchaingo/llms"
)

// onboardingAgent and onboardingPlan add a route whose plan the harness
// owns, with a budget small enough that the offline model pauses mid-plan.
const onboardingAgent = `---
description: Gets a new customer to a working login, step by step.
---
You onboard new customers. Work through the plan one item at a time.
`

const onboardingPlan = `---
enforce: true
goal: Get the new customer to a working login
advance: auto
budget: 3
---
- [ ] Create the account
- [ ] Send the welcome email
- [ ] Set up single sign-on
- [ ] Invite the first teammates
- [ ] Confirm the first login

## Done when
- [ ] The customer can log in
`

// onboardingSeed is the plan.md checklist above, in order.
var onboardingSeed = []string{"Create the account", "Send the welcome email", "Set up single sign-on", "Invite the first teammates", "Confirm the first login"}

// exampleApp copies examples/app (without its .dawn folder) into a temp dir
// and adds the onboarding route with an enforced plan.
func exampleApp(t *testing.T) string {
	t.Helper()
	src, err := filepath.Abs("../../examples/app")
	if err != nil {
		t.Fatal(err)
	}
	dst := filepath.Join(t.TempDir(), "app")
	err = filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		if d.IsDir() {
			if d.Name() == ".dawn" {
				return filepath.SkipDir
			}
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), data, 0o644)
	})
	if err != nil {
		t.Fatalf("copying the example app: %v", err)
	}
	write := func(name, text string) {
		path := filepath.Join(dst, "onboarding", name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("agent.md", onboardingAgent)
	write("plan.md", onboardingPlan)
	return dst
}

// slowModel is the offline model with a pause before each answer, so a
// browser polling the page can see the plan move one step at a time.
type slowModel struct {
	llms.Model
	delay time.Duration
}

func (m slowModel) GenerateContent(ctx context.Context, msgs []llms.MessageContent, opts ...llms.CallOption) (*llms.ContentResponse, error) {
	select {
	case <-time.After(m.delay):
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	return m.Model.GenerateContent(ctx, msgs, opts...)
}

// devServer serves the API and the inspector for dir on a loopback port,
// the way `dawn dev` does, with every route on the (slowed) offline model,
// and returns its base URL.
func devServer(t *testing.T, dir string, delay time.Duration) string {
	t.Helper()
	return startServer(t, dir, delay).URL
}

func startServer(t *testing.T, dir string, delay time.Duration) *httptest.Server {
	t.Helper()
	return startServerWith(t, dir, slowModel{Model: models.NewOffline(), delay: delay})
}

// startServerWith is startServer with every route on model.
func startServerWith(t *testing.T, dir string, model llms.Model) *httptest.Server {
	t.Helper()
	a, err := app.Load(context.Background(), dir, app.Options{Markers: markers.All()})
	if err != nil {
		t.Fatalf("loading %s: %v", dir, err)
	}
	st, err := store.Open(filepath.Join(t.TempDir(), "dawn.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	runs := runner.New(st, a, runner.Options{
		Models: func(string) (llms.Model, error) { return model, nil },
		Env:    func(string) string { return "" },
	})
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		runs.Shutdown(ctx)
	})
	api := server.New(runs, server.Options{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	inspector.Register(api.Echo())
	srv := httptest.NewServer(server.LocalOnly(api)) // as dawn dev serves it
	t.Cleanup(srv.Close)
	return srv
}

// serverPlan is GET /threads/:id/plan as the test reads it.
type serverPlan struct {
	State       string `json:"state"`
	PauseReason string `json:"pause_reason"`
	RunInFlight bool   `json:"run_in_flight"`
	Items       []struct {
		Content string `json:"content"`
		Status  string `json:"status"`
	} `json:"items"`
}

func getPlan(t *testing.T, base, thread string) serverPlan {
	t.Helper()
	resp, err := http.Get(base + "/threads/" + thread + "/plan")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var p serverPlan
	if resp.StatusCode != http.StatusOK {
		body, _ := io.ReadAll(resp.Body)
		t.Fatalf("GET /threads/%s/plan: status %d: %s", thread, resp.StatusCode, body)
	}
	if err := json.NewDecoder(resp.Body).Decode(&p); err != nil {
		t.Fatal(err)
	}
	return p
}
