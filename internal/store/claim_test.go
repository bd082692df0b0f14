package store

import (
	"context"
	"encoding/json"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/dawn-go/dawn/internal/pgtest"
)

// claimers are stores on one database, as replicas: the first one's
// owner dies (crash), the others claim its runs.
type claimers struct {
	dead   Store
	crash  func()
	others []Store
}

// TestClaimOrphans: the runs of a gone owner that kept their request are
// claimed by exactly one of several stores claiming at once, stay
// running, keep their request and their saved step, and the winner
// finishes them; a run without a request is marked interrupted as
// before. On SQLite (several stores on one file) and on Postgres.
func TestClaimOrphans(t *testing.T) {
	t.Run("sqlite", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "dawn.db")
		a := openTest(t, path)
		var others []*DB
		for range 3 {
			others = append(others, openTest(t, path))
		}
		// a's lease runs out: the others' clocks go an hour on.
		c := claimers{dead: a, crash: func() {
			abandon(t, a)
			for _, b := range others {
				setClock(b, func() time.Time { return time.Now().Add(time.Hour) })
			}
		}}
		for _, b := range others {
			c.others = append(c.others, b)
		}
		testClaim(t, c)
	})
	t.Run("postgres", func(t *testing.T) {
		dsn := pgtest.Database(t)
		a := openPostgresTest(t, dsn, Options{})
		c := claimers{dead: a, crash: func() { abandonPG(t, a) }}
		for range 3 {
			c.others = append(c.others, openPostgresTest(t, dsn, Options{}))
		}
		testClaim(t, c)
	})
}

func testClaim(t *testing.T, c claimers) {
	ctx := context.Background()
	request := json.RawMessage(`{"route":"/support/acme","messages":[{"role":"user","content":"hi"}]}`)
	if _, err := c.dead.BeginRunChecked(ctx, Run{ID: "kept", ThreadID: "t1", Route: "/support/[tenant]", Request: request}, nil); err != nil {
		t.Fatal(err)
	}
	must(t, c.dead.SaveStep(ctx, sampleStep("t1", "kept", 1, 1)))
	if _, err := c.dead.BeginRunChecked(ctx, Run{ID: "bare", ThreadID: "t2", Route: "/support/[tenant]"}, nil); err != nil {
		t.Fatal(err)
	}
	// A live owner's run is nobody's to claim.
	claimed, n, err := c.others[0].ClaimOrphans(ctx)
	must(t, err)
	if len(claimed) != 0 || n != 0 {
		t.Fatalf("ClaimOrphans with the owner alive = %v, %d; want nothing", claimed, n)
	}
	c.crash()

	var mu sync.Mutex
	var wins []Run
	var winner Store
	interrupted := 0
	var wg sync.WaitGroup
	for _, s := range c.others {
		wg.Go(func() {
			claimed, n, err := s.ClaimOrphans(ctx)
			if err != nil {
				t.Error(err)
				return
			}
			mu.Lock()
			defer mu.Unlock()
			wins = append(wins, claimed...)
			interrupted += n
			if len(claimed) > 0 {
				winner = s
			}
		})
	}
	wg.Wait()
	if len(wins) != 1 || wins[0].ID != "kept" || wins[0].ThreadID != "t1" || wins[0].Status != RunRunning {
		t.Fatalf("claimed runs across the stores = %+v, want run kept once", wins)
	}
	var got, want any
	must(t, json.Unmarshal(wins[0].Request, &got))
	must(t, json.Unmarshal(request, &want))
	if b1, b2 := string(mustJSON(t, got)), string(mustJSON(t, want)); b1 != b2 {
		t.Errorf("claimed request = %s, want %s", b1, b2)
	}
	if interrupted != 1 || runStatusOf(t, winner, "bare") != RunInterrupted {
		t.Errorf("runs interrupted = %d, bare is %s; want the run without a request interrupted", interrupted, runStatusOf(t, winner, "bare"))
	}
	if st := runStatusOf(t, winner, "kept"); st != RunRunning {
		t.Fatalf("claimed run is %s, want running", st)
	}
	// Claimed, the run belongs to a live owner: nobody claims it again.
	for _, s := range c.others {
		if again, _, err := s.ClaimOrphans(ctx); err != nil || len(again) != 0 {
			t.Fatalf("a second ClaimOrphans = %v, %v; want nothing", again, err)
		}
	}
	cp, err := winner.Latest(ctx, "t1")
	must(t, err)
	if cp.Step != 1 || cp.RunID != "kept" {
		t.Errorf("claimed run's checkpoint = step %d of %q, want its saved step 1", cp.Step, cp.RunID)
	}
	must(t, winner.SaveStep(ctx, sampleStep("t1", "kept", 2, 4)))
	must(t, winner.FinishRun(ctx, "kept", RunSuccess, "", json.RawMessage(`{"answer":"ok"}`), nil))
}
