package store

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/dawn-go/dawn/internal/store/dialect"
	"github.com/dawn-go/dawn/internal/store/erasecheck"
	"github.com/dawn-go/dawn/thread"
)

// personData gives user (whose name is in every text of theirs) a row in
// every table that can hold a person's rows: two threads with runs,
// steps, events, a fork (branches), a tool output, a queued run, an
// ended run with a webhook delivery, and a run still running; a cron; a
// store item with its vector; an app value; an audit entry.
func personData(t *testing.T, s Store, user string) {
	t.Helper()
	ctx := context.Background()
	th := user + "-thread"
	if _, err := s.CreateOwnedThread(ctx, user, th, json.RawMessage(`{"who":"`+user+`"}`)); err != nil {
		t.Fatal(err)
	}
	_, err := beginRun(ctx, s, Run{ID: user + "-run-1", ThreadID: th, Route: "/r", Owner: user})
	must(t, err)
	must(t, s.SaveStep(ctx, sampleStep(th, user+"-run-1", 1, 1)))
	must(t, s.SaveStep(ctx, sampleStep(th, user+"-run-1", 2, 4)))
	must(t, s.PutToolOutput(ctx, th, user+"-out", "search", []byte("found "+user)))
	must(t, s.EndRun(ctx, user+"-run-1", Finish{Status: RunSuccess, Webhook: &Webhook{URL: "https://hooks.example.com/" + user, Payload: []byte(`{"user":"` + user + `"}`), MaxAttempts: 3}}, nil))
	h, err := s.History(ctx, th, HistoryQuery{})
	must(t, err)
	_, err = s.UpdateState(ctx, StateUpdate{ThreadID: th, Checkpoint: h[len(h)-1].ID, Merge: func(Checkpoint) ([]thread.Message, thread.State, error) {
		return []thread.Message{{Role: thread.RoleUser, Content: "a fork by " + user}}, thread.State{}, nil
	}})
	must(t, err)
	_, err = s.EnqueueRun(ctx, QueuedRun{ID: user + "-queued", ThreadID: th, Route: "/r", Request: json.RawMessage(`{"by":"` + user + `"}`), Owner: user}, 10)
	must(t, err)
	_, err = beginRun(ctx, s, Run{ID: user + "-live", ThreadID: user + "-busy", Route: "/r", Owner: user})
	must(t, err)
	_, err = s.CreateCron(ctx, Cron{ID: user + "-cron", AssistantID: "/r", Schedule: "0 9 * * *", Payload: json.RawMessage(`{}`), NextRunAt: time.Now().Add(time.Hour), Enabled: true, Owner: user})
	must(t, err)
	// The item is put as a store with an index puts it, with its
	// embedding: a vector made from the person's words is theirs too.
	db := dbOf(s)
	db.index = &Index{Embedder: hashEmbedder{8}, Model: "test:hash", Dims: 8, MinSimilarity: -1}
	must(t, s.PutItem(ctx, []string{"users", user, "memories", "%2Fr"}, "k", json.RawMessage(`{"text":"likes tea"}`)))
	db.index = nil
	must(t, s.SetAppValues(ctx, map[string]json.RawMessage{"user:" + user + "/always": json.RawMessage(`true`)}))
	must(t, s.AppendAudit(ctx, AuditEntry{Action: "cancel", ThreadID: th, User: user, Outcome: "ok"}))
}

// threadPKs reads the pks of the threads named.
func threadPKs(t *testing.T, s Store, ids ...string) []int64 {
	t.Helper()
	var out []int64
	for _, id := range ids {
		out = append(out, queryInt(t, s, `SELECT pk FROM threads WHERE id = ?`, id))
	}
	return out
}

func erasure(user string) Erasure {
	return Erasure{User: user, ItemNamespace: []string{"users", user}, AppKeyPrefix: "user:" + user + "/"}
}

// TestForgetUserEveryTable: two people have rows in every table that can
// hold a person's; after forgetting one, no table of the schema (read
// from the database's catalogue) keeps a row of theirs, the other's rows
// are all there, one audit entry records the erasure with its counts,
// and forgetting again finds nothing. A table the erasure does not know
// fails the test until it is handled (dialect.EraseSteps) or declared to
// hold no person's rows (dialect.KeepsNoPersonalRows).
func TestForgetUserEveryTable(t *testing.T) {
	eachKind(t, func(t *testing.T, s Store) {
		ctx := context.Background()
		p, pg, ok := PeekerOf(s)
		if !ok {
			t.Fatal("no peeker")
		}
		checkTablesKnown(t, p, pg)
		personData(t, s, "ann-zq")
		personData(t, s, "bob-zq")
		annPKs := threadPKs(t, s, "ann-zq-thread", "ann-zq-busy")
		bobPKs := threadPKs(t, s, "bob-zq-thread", "bob-zq-busy")
		before, err := erasecheck.Leftovers(ctx, p, pg, "ann-zq", annPKs)
		must(t, err)
		for _, st := range dialect.EraseSteps {
			if before[st.Table] == 0 {
				t.Errorf("before forgetting, table %s holds no row of ann: the test does not cover it", st.Table)
			}
		}
		bobBefore, err := erasecheck.Leftovers(ctx, p, pg, "bob-zq", bobPKs)
		must(t, err)

		counts, err := s.(Forgetter).ForgetUser(ctx, erasure("ann-zq"), AuditEntry{Action: "forget", Service: true, Outcome: "ok", Detail: json.RawMessage(`{"subject":"sha256:x"}`)})
		must(t, err)
		if counts["threads"] != 2 || counts["runs"] != 2 || counts["crons"] != 1 || counts["store_items"] != 1 || counts["app_values"] != 1 {
			t.Errorf("counts = %v", counts)
		}
		after, err := erasecheck.Leftovers(ctx, p, pg, "ann-zq", annPKs)
		must(t, err)
		if len(after) > 0 {
			t.Errorf("rows of the forgotten user left: %v", after)
		}
		bobAfter, err := erasecheck.Leftovers(ctx, p, pg, "bob-zq", bobPKs)
		must(t, err)
		if !mapsEqual(bobBefore, bobAfter) {
			t.Errorf("the other user's rows changed: before %v, after %v", bobBefore, bobAfter)
		}
		checkForgetAudit(t, s, counts)

		again, err := s.(Forgetter).ForgetUser(ctx, erasure("ann-zq"), AuditEntry{Action: "forget", Service: true, Outcome: "ok"})
		must(t, err)
		for table, n := range again {
			if n != 0 {
				t.Errorf("forgetting again deleted %d rows of %s", n, table)
			}
		}
	})
}

// checkTablesKnown fails for a table of the schema that the erasure
// neither erases nor declares free of a person's rows.
func checkTablesKnown(t *testing.T, p dialect.Peeker, pg bool) {
	t.Helper()
	tables, err := erasecheck.Tables(context.Background(), p, pg)
	must(t, err)
	for _, table := range tables {
		known := slices.Contains(dialect.KeepsNoPersonalRows, table) || slices.ContainsFunc(dialect.EraseSteps, func(s dialect.EraseStep) bool { return s.Table == table })
		if !known {
			t.Errorf("table %s is in the schema but forgetting a user does not know it: erase its rows in dialect.EraseSteps, or list it in dialect.KeepsNoPersonalRows", table)
		}
	}
}

func checkForgetAudit(t *testing.T, s Store, counts map[string]int) {
	t.Helper()
	log, err := s.Audit(context.Background(), AuditQuery{})
	must(t, err)
	var forgets []AuditEntry
	for _, e := range log {
		if e.Action == "forget" {
			forgets = append(forgets, e)
		}
	}
	if len(forgets) != 1 || !forgets[0].Service {
		t.Fatalf("forget audit entries: %+v", forgets)
	}
	var d struct {
		Subject string         `json:"subject"`
		Counts  map[string]int `json:"counts"`
	}
	must(t, json.Unmarshal(forgets[0].Detail, &d))
	if d.Subject != "sha256:x" || !mapsEqual(d.Counts, counts) {
		t.Errorf("forget audit detail: %s", forgets[0].Detail)
	}
}

func mapsEqual(a, b map[string]int) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

// TestForgetUserRefusesNoUser: an erasure that names no user is refused,
// since the empty owner is every thread made without authentication.
func TestForgetUserRefusesNoUser(t *testing.T) {
	s := openTest(t, ":memory:")
	if _, err := s.ForgetUser(context.Background(), Erasure{ItemNamespace: []string{"users", ""}, AppKeyPrefix: "user:/"}, AuditEntry{Action: "forget"}); !errors.Is(err, ErrInvalid) {
		t.Fatalf("ForgetUser with no user = %v, want ErrInvalid", err)
	}
}
