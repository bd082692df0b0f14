package harness

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/dawn-go/dawn/capabilities"
	"github.com/dawn-go/dawn/thread"
)

// fakeHost is a ThreadHost over one thread's saved state.
type fakeHost struct {
	p       *capabilities.Prepared
	values  thread.State
	running bool
	signals []string
	refuse  bool
	pending string
}

func (h *fakeHost) Thread(_ context.Context, id string) (capabilities.ThreadView, error) {
	if id != "t1" {
		return capabilities.ThreadView{}, errors.New("thread not found")
	}
	return capabilities.ThreadView{Route: h.p, Values: h.values, Running: h.running, PendingSignal: h.pending}, nil
}

func (h *fakeHost) Signal(_ context.Context, _ string, sig string, _ time.Duration) (bool, error) {
	if h.refuse {
		return false, capabilities.ErrSignalRefused
	}
	if h.running {
		h.pending = sig
		return true, nil
	}
	h.signals = append(h.signals, sig)
	p := New(Settings{Advance: AdvanceAuto, Budget: 2}, []Seed{{Content: "a"}})
	p.State = Paused
	h.values = thread.State{PlanField: mustJSON(p)}
	return false, nil
}

func mustJSON(v any) json.RawMessage {
	raw, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return raw
}

// serve mounts the harness's routes on a plain net/http mux, as a host
// would, and answers errors as {"kind","status"}.
func serve(host capabilities.ThreadHost) *httptest.Server {
	mux := http.NewServeMux()
	for _, rt := range Marker().(capabilities.HTTPRoutes).ThreadRoutes(host) {
		mux.HandleFunc(rt.Method+" /threads/{id}/"+rt.Path, func(w http.ResponseWriter, r *http.Request) {
			if err := rt.Handler(w, r); err != nil {
				var he *capabilities.HTTPError
				if !errors.As(err, &he) {
					he = &capabilities.HTTPError{Status: 500, Kind: "internal", Msg: err.Error()}
				}
				w.WriteHeader(he.Status)
				_ = json.NewEncoder(w).Encode(map[string]string{"kind": he.Kind, "message": he.Msg})
			}
		})
	}
	return httptest.NewServer(mux)
}

func ownedRoute() *capabilities.Prepared {
	return &capabilities.Prepared{
		Fields: []capabilities.Field{{Name: PlanField, Type: "object", Capability: "planning"}},
		Hooks:  []*capabilities.Hooks{{}},
	}
}

func do(t *testing.T, method, url string) (int, map[string]any) {
	t.Helper()
	req, _ := http.NewRequest(method, url, nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var body map[string]any
	_ = json.NewDecoder(resp.Body).Decode(&body)
	return resp.StatusCode, body
}

func TestThreadRoutes(t *testing.T) {
	draft := New(Settings{Advance: AdvanceAuto, Budget: 3, Goal: "Onboard"}, []Seed{{Content: "a"}, {Content: "b"}})
	host := &fakeHost{p: ownedRoute(), values: thread.State{PlanField: mustJSON(draft)}}
	srv := serve(host)
	defer srv.Close()

	code, body := do(t, http.MethodGet, srv.URL+"/threads/t1/plan")
	if code != 200 || body["thread_id"] != "t1" || body["state"] != "draft" || body["goal"] != "Onboard" || body["budget_left"] != 3.0 || body["run_in_flight"] != false {
		t.Errorf("GET plan = %d %v", code, body)
	}
	code, body = do(t, http.MethodPost, srv.URL+"/threads/t1/plan/pause")
	if code != 200 || body["state"] != "paused" || strings.Join(host.signals, ",") != "pause" {
		t.Errorf("pause = %d %v, signals %v", code, body, host.signals)
	}

	host.running = true
	if code, body := do(t, http.MethodPost, srv.URL+"/threads/t1/plan/resume"); code != 409 || body["kind"] != "plan_state" {
		t.Errorf("resume with a run in flight = %d %v, want 409 plan_state", code, body)
	}
	if code, body := do(t, http.MethodPost, srv.URL+"/threads/t1/plan/pause"); code != 202 || body["pending_signal"] != "pause" || body["run_in_flight"] != true {
		t.Errorf("pause the run has not reached = %d %v, want 202 with pending_signal", code, body)
	}
	host.running, host.refuse = false, true
	if code, body := do(t, http.MethodPost, srv.URL+"/threads/t1/plan/cancel"); code != 409 || body["message"] != "the plan cannot cancel in its current state" {
		t.Errorf("refused cancel = %d %v", code, body)
	}
	host.p = &capabilities.Prepared{Fields: []capabilities.Field{{Name: PlanField, Type: "object", Source: "state.yaml"}}}
	if code, body := do(t, http.MethodGet, srv.URL+"/threads/t1/plan"); code != 404 || body["kind"] != "plan_not_found" {
		t.Errorf("route without a harness plan (a state.yaml field named plan) = %d %v, want 404 plan_not_found", code, body)
	}
	if code, _ := do(t, http.MethodGet, srv.URL+"/threads/other/plan"); code != 500 {
		t.Errorf("host error = %d, want it passed to the host", code)
	}
}

func TestMarkerFacets(t *testing.T) {
	m := Marker()
	if _, ok := m.Detect(t.TempDir()); ok {
		t.Error("the harness marker detected a route")
	}
	if got := strings.Join(m.(capabilities.MessageMetadata).MessageKeys(), ","); got != "harness,plan" {
		t.Errorf("MessageKeys = %s", got)
	}
	s := m.(capabilities.OfflineScript)
	if _, own := s.OfflineReply(NotePrefix + " your answer was not accepted"); !own {
		t.Error("a harness note is not the harness's own")
	}
	if _, own := s.OfflineReply("Onboard ACME"); own {
		t.Error("user text taken for the harness's")
	}
}
