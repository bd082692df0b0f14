package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dawn-go/dawn/internal/pgtest"
)

// setItemClock sets the clock s judges item expiry by; f stands for
// time.Now.
func setItemClock(s Store, f func() time.Time) {
	dbOf(s).itemTime.Store(&f)
}

// itemClock is a clock a test moves by hand.
type itemClock struct{ t time.Time }

func (c *itemClock) now() time.Time          { return c.t }
func (c *itemClock) advance(d time.Duration) { c.t = c.t.Add(d) }
func newItemClock(s Store) *itemClock {
	c := &itemClock{t: time.Now()}
	setItemClock(s, c.now)
	return c
}
func itemKeys(items []Item) (out []string) {
	for _, it := range items {
		out = append(out, it.Key)
	}
	return out
}

// TestItemTTL: an item put with a TTL is read as any other until it
// expires, and from then on is gone for get, search and the namespace
// list, sweep or no sweep; one put without a TTL never expires.
func TestItemTTL(t *testing.T) {
	eachKind(t, func(t *testing.T, s Store) {
		ctx := context.Background()
		clock := newItemClock(s)
		must(t, s.PutItemTTL(ctx, []string{"cache", "a"}, "short", json.RawMessage(`{"text":"short lived"}`), 10*time.Minute))
		must(t, s.PutItem(ctx, []string{"cache", "b"}, "forever", json.RawMessage(`{"text":"kept"}`)))

		it, err := s.PeekItem(ctx, []string{"cache", "a"}, "short")
		must(t, err)
		if it.TTL != 10*time.Minute || it.ExpiresAt.Sub(clock.t.Add(10*time.Minute)).Abs() > time.Microsecond {
			t.Errorf("item with a TTL: TTL %v, expires %v; want 10m, %v", it.TTL, it.ExpiresAt, clock.t.Add(10*time.Minute))
		}
		forever, err := s.PeekItem(ctx, []string{"cache", "b"}, "forever")
		must(t, err)
		if forever.TTL != 0 || !forever.ExpiresAt.IsZero() {
			t.Errorf("item without a TTL: TTL %v, expires %v; want none", forever.TTL, forever.ExpiresAt)
		}

		clock.advance(10*time.Minute - time.Second)
		found, err := s.SearchItems(ctx, ItemQuery{Prefix: []string{"cache"}, NoRefresh: true})
		must(t, err)
		if got := itemKeys(found); !reflect.DeepEqual(got, []string{"forever", "short"}) {
			t.Fatalf("before expiry, search found %v", got)
		}

		clock.advance(time.Second)
		if _, err := s.GetItem(ctx, []string{"cache", "a"}, "short"); !errors.Is(err, ErrNotFound) {
			t.Errorf("GetItem of an expired item: %v, want ErrNotFound", err)
		}
		if _, err := s.PeekItem(ctx, []string{"cache", "a"}, "short"); !errors.Is(err, ErrNotFound) {
			t.Errorf("PeekItem of an expired item: %v, want ErrNotFound", err)
		}
		found, err = s.SearchItems(ctx, ItemQuery{Prefix: []string{"cache"}})
		must(t, err)
		if got := itemKeys(found); !reflect.DeepEqual(got, []string{"forever"}) {
			t.Errorf("after expiry, search found %v, want [forever]", got)
		}
		nss, err := s.ListNamespaces(ctx, NamespaceQuery{Prefix: []string{"cache"}})
		must(t, err)
		if want := [][]string{{"cache", "b"}}; !reflect.DeepEqual(nss, want) {
			t.Errorf("after expiry, namespaces %v, want %v", nss, want)
		}

		// A put over an expired item that the sweep has not deleted yet
		// makes a new item.
		must(t, s.PutItem(ctx, []string{"cache", "a"}, "short", json.RawMessage(`{"text":"again"}`)))
		again, err := s.GetItem(ctx, []string{"cache", "a"}, "short")
		must(t, err)
		if !again.CreatedAt.After(it.CreatedAt) || again.TTL != 0 || !again.ExpiresAt.IsZero() {
			t.Errorf("item put over an expired one: %+v; want a new item that does not expire", again)
		}
	})
}

// TestItemTTLRefresh: reading an item with a TTL moves its expiry to the
// read's time plus its TTL, unless the read asks not to; a put with no TTL
// takes the TTL away.
func TestItemTTLRefresh(t *testing.T) {
	eachKind(t, func(t *testing.T, s Store) {
		ctx := context.Background()
		clock := newItemClock(s)
		ns := []string{"sessions"}
		put := func(key string) {
			t.Helper()
			must(t, s.PutItemTTL(ctx, ns, key, json.RawMessage(`{"text":"`+key+`"}`), 10*time.Minute))
		}
		put("got")
		put("searched")
		put("peeked")
		put("unread")

		clock.advance(6 * time.Minute)
		read, err := s.GetItem(ctx, ns, "got")
		must(t, err)
		if want := clock.t.Add(10 * time.Minute); read.ExpiresAt.Sub(want).Abs() > time.Microsecond {
			t.Errorf("GetItem returned expiry %v, want %v", read.ExpiresAt, want)
		}
		found, err := s.SearchItems(ctx, ItemQuery{Prefix: ns, Query: "searched"})
		must(t, err)
		if got := itemKeys(found); !reflect.DeepEqual(got, []string{"searched"}) {
			t.Fatalf("search found %v", got)
		}
		_, err = s.PeekItem(ctx, ns, "peeked")
		must(t, err)
		found, err = s.SearchItems(ctx, ItemQuery{Prefix: ns, Query: "peeked unread", NoRefresh: true})
		must(t, err)
		if len(found) != 2 {
			t.Fatalf("search found %v", itemKeys(found))
		}

		clock.advance(6 * time.Minute) // 12 minutes after the puts
		found, err = s.SearchItems(ctx, ItemQuery{Prefix: ns, NoRefresh: true})
		must(t, err)
		if got, want := itemKeys(found), []string{"got", "searched"}; !reflect.DeepEqual(slices.Sorted(slices.Values(got)), want) {
			t.Errorf("12 minutes on, items %v, want %v (the refreshed ones)", got, want)
		}

		must(t, s.PutItem(ctx, ns, "got", json.RawMessage(`{"text":"no ttl now"}`)))
		clock.advance(time.Hour)
		if _, err := s.GetItem(ctx, ns, "got"); err != nil {
			t.Errorf("an item put again without a TTL expired: %v", err)
		}
	})
}

// TestSweepItems: the sweep deletes the rows of expired items and nothing
// else, and finds nothing to do when nothing has expired.
func TestSweepItems(t *testing.T) {
	eachKind(t, func(t *testing.T, s Store) {
		ctx := context.Background()
		clock := newItemClock(s)
		must(t, s.PutItem(ctx, []string{"keep"}, "forever", json.RawMessage(`{}`)))
		must(t, s.PutItemTTL(ctx, []string{"keep"}, "later", json.RawMessage(`{}`), time.Hour))
		for _, key := range []string{"a", "b", "c"} {
			must(t, s.PutItemTTL(ctx, []string{"gone"}, key, json.RawMessage(`{}`), time.Minute))
		}
		if n, err := s.SweepItems(ctx); err != nil || n != 0 {
			t.Fatalf("sweep before any expiry: %d, %v; want 0", n, err)
		}
		clock.advance(2 * time.Minute)
		if n, err := s.SweepItems(ctx); err != nil || n != 3 {
			t.Fatalf("sweep: %d, %v; want 3", n, err)
		}
		if rows := queryInt(t, s, `SELECT count(*) FROM store_items`); rows != 2 {
			t.Errorf("%d rows left, want 2", rows)
		}
		if n, err := s.SweepItems(ctx); err != nil || n != 0 {
			t.Errorf("second sweep: %d, %v; want 0", n, err)
		}
		if _, err := s.GetItem(ctx, []string{"keep"}, "later"); err != nil {
			t.Errorf("the sweep took an item that has not expired: %v", err)
		}
	})
}

// TestItemTTLRefused: a TTL that is negative or too long for the store is
// refused, naming the ttl.
func TestItemTTLRefused(t *testing.T) {
	s := openTest(t, ":memory:")
	for _, ttl := range []time.Duration{-time.Minute, MaxTTL + time.Minute} {
		err := s.PutItemTTL(context.Background(), []string{"a"}, "k", json.RawMessage(`{}`), ttl)
		if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "ttl") {
			t.Errorf("PutItemTTL with ttl %v: %v, want ErrInvalid naming ttl", ttl, err)
		}
	}
}

// TestSweepItemsReplicas: stores sharing one Postgres database sweep at
// once without errors, and between them delete every expired item once,
// across several batches.
func TestSweepItemsReplicas(t *testing.T) {
	dsn := pgtest.Database(t)
	a, b := openPostgresTest(t, dsn, Options{}), openPostgresTest(t, dsn, Options{})
	ctx := context.Background()
	const expired = 3*itemSweepBatch + 7
	for i := range expired {
		must(t, a.PutItemTTL(ctx, []string{"gone"}, fmt.Sprint(i), json.RawMessage(`{}`), time.Minute))
	}
	must(t, a.PutItemTTL(ctx, []string{"keep"}, "later", json.RawMessage(`{}`), time.Hour))
	later := func() time.Time { return time.Now().Add(2 * time.Minute) }
	setItemClock(a, later)
	setItemClock(b, later)

	var wg sync.WaitGroup
	counts := make([]int, 2)
	errs := make([]error, 2)
	for i, s := range []Store{a, b} {
		wg.Go(func() { counts[i], errs[i] = s.SweepItems(ctx) })
	}
	wg.Wait()
	must(t, errors.Join(errs...))
	t.Logf("the replicas deleted %v", counts)
	if counts[0]+counts[1] != expired {
		t.Errorf("the replicas deleted %v items, %d in all; want %d", counts, counts[0]+counts[1], expired)
	}
	if rows := queryInt(t, a, `SELECT count(*) FROM store_items`); rows != 1 {
		t.Errorf("%d rows left, want 1 (the item that has not expired)", rows)
	}
	// The sweep reads an index of the expiring items only.
	if def := queryString(t, a, `SELECT indexdef FROM pg_indexes WHERE indexname = 'store_items_expiry'`); !strings.Contains(def, "(expires_at) WHERE (expires_at IS NOT NULL)") {
		t.Errorf("store_items_expiry is %q, want a partial index of expires_at", def)
	}
}
