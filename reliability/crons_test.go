//go:build unix

package reliability

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dawn-go/dawn/internal/pgtest"
)

// tickModel answers every chat completion at once and records when each
// request whose messages carry its marker arrived.
type tickModel struct {
	marker string
	mu     sync.Mutex
	times  []time.Time
}

func (m *tickModel) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	data, _ := io.ReadAll(r.Body)
	var body struct {
		Model  string `json:"model"`
		Stream bool   `json:"stream"`
	}
	_ = json.Unmarshal(data, &body)
	if strings.Contains(string(data), m.marker) {
		m.mu.Lock()
		m.times = append(m.times, time.Now())
		m.mu.Unlock()
	}
	if !body.Stream {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"id":"c1","object":"chat.completion","created":1,"model":%q,"choices":[{"index":0,"message":{"role":"assistant","content":"Done"},"finish_reason":"stop"}]}`, body.Model)
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	fmt.Fprint(w, "data: {\"id\":\"c1\",\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"Done\"},\"finish_reason\":\"stop\"}]}\n\n")
	fmt.Fprint(w, "data: [DONE]\n\n")
}

// perTick counts the recorded requests by the period-long tick they
// belong to (a run reaches the model well within a period of its tick).
func (m *tickModel) perTick(period time.Duration) map[int64]int {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := map[int64]int{}
	for _, at := range m.times {
		out[at.UnixNano()/int64(period)]++
	}
	return out
}

// TestCronFiresOncePerTickOnReplicas runs three `dawn start` replicas on
// one Postgres database, with a cron due every two seconds (a schedule
// with a seconds field, allowed by the test-only DAWN_CRON_SECONDS) and
// each replica looking for due ticks every 100ms: every tick starts
// exactly one run, before and after one replica is killed with SIGKILL.
func TestCronFiresOncePerTickOnReplicas(t *testing.T) {
	const period = 2 * time.Second
	dsn := pgtest.Database(t)
	model := &tickModel{marker: "cron tick marker"}
	srv := httptest.NewServer(model)
	t.Cleanup(srv.Close)
	dir := writeApp(t, map[string]string{
		"ticker/agent.md": "---\ndescription: Answers each tick.\nmodel: openai:gpt-tick\n---\nAnswer.\n",
	})
	env := []string{"OPENAI_API_KEY=k", "OPENAI_BASE_URL=" + srv.URL + "/v1", "DAWN_CRON_SECONDS=1", "DAWN_CRON_INTERVAL=100ms"}
	reps := startReplicas(t, 3, dir, dsn, env)
	c := newClient(reps[1].url)
	t.Cleanup(c.close)
	logs := func() string {
		var b strings.Builder
		for i, r := range reps {
			fmt.Fprintf(&b, "replica %d:\n%s\n", i, r.logs.String())
		}
		return b.String()
	}

	body := `{"assistant_id":"/ticker","schedule":"*/2 * * * * *","on_run_completed":"keep",
		"input":{"messages":[{"type":"human","content":"cron tick marker"}]}}`
	r := c.must(t, http.MethodPost, "/runs/crons", []byte(body))
	if r.status != http.StatusOK {
		t.Fatalf("POST /runs/crons = %d %s", r.status, r.body)
	}
	start := time.Now()
	time.Sleep(5 * period)
	reps[0].kill()
	killed := time.Now()
	time.Sleep(5 * period)
	end := time.Now()

	counts := model.perTick(period)
	first, last := start.UnixNano()/int64(period)+1, end.UnixNano()/int64(period)-1
	killTick := killed.UnixNano() / int64(period)
	for tick := first; tick < last; tick++ {
		n := counts[tick]
		// A replica killed between claiming a tick and starting its run
		// takes that tick with it: the tick it dies in fires at most once.
		if n == 1 || (n == 0 && (tick == killTick || tick == killTick-1)) {
			continue
		}
		t.Errorf("tick at %s started %d runs, want exactly 1 (all ticks: %v)\n%s",
			time.Unix(0, tick*int64(period)).Format("15:04:05"), n, counts, logs())
		return
	}
	if t.Failed() {
		return
	}
	if counts[killTick+1]+counts[killTick+2] != 2 {
		t.Errorf("the ticks after the kill fired %v", counts)
	}
}
