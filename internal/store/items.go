package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"reflect"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/dawn-go/dawn/internal/store/dialect"
)

// Item is an item of the key-value store that the LangGraph Store API
// serves and tools reach: a JSON object kept under a namespace (a path of
// labels, such as ["memories", "/support/[tenant]"]) and a key.
type Item struct {
	Namespace []string
	Key       string
	Value     json.RawMessage
	CreatedAt time.Time
	UpdatedAt time.Time
	// Score is how well the item matched a search's Query (0 to 1); 0
	// when the search had none.
	Score float64
	// TTL is how long the item lives after it is put or read, and
	// ExpiresAt when it expires; zero for an item that does not expire.
	TTL       time.Duration
	ExpiresAt time.Time
}

// itemSweepBatch is how many expired items one transaction of SweepItems
// deletes at most, so that a sweep never holds the database long.
const itemSweepBatch = 500

// ItemQuery selects items: those under Prefix whose value holds every
// field of Filter with an equal value and, when Query is set, whose text
// holds at least one of Query's words, case-insensitively, best match
// first; then Offset of them are skipped and at most Limit (10 when 0)
// returned.
//
// Reading an item that has a TTL moves its expiry to the read's time
// plus its TTL (LangGraph's refresh on read), unless NoRefresh is set.
type ItemQuery struct {
	Prefix        []string
	Filter        map[string]json.RawMessage
	Query         string
	Limit, Offset int
	NoRefresh     bool
}

// NamespaceQuery selects the namespaces that hold items: those that begin
// with Prefix and end with Suffix, cut to MaxDepth labels when positive,
// each once, in order; then Offset skipped and at most Limit (100 when 0)
// returned.
type NamespaceQuery struct {
	Prefix, Suffix          []string
	MaxDepth, Limit, Offset int
}

// labelEnd ends every label of an encoded namespace, so that the
// namespaces under a prefix are those whose encoding begins with the
// prefix's.
const labelEnd = "\x1f"

// CheckNamespace refuses a namespace a client cannot name: empty, or with
// a label that is empty or holds a period (the LangGraph SDK joins labels
// with periods) or a control character.
func CheckNamespace(field string, ns []string, mayBeEmpty bool) error {
	if len(ns) == 0 && !mayBeEmpty {
		return fmt.Errorf("%s: %w: it must name at least one label, like [\"memories\", \"user-1\"]", field, ErrInvalid)
	}
	for i, l := range ns {
		if l == "" || strings.ContainsAny(l, ".") || strings.IndexFunc(l, func(r rune) bool { return r < 0x20 || r == 0x7f }) >= 0 {
			return fmt.Errorf("%s[%d] %q: %w: a label must be non-empty, without periods or control characters", field, i, l, ErrInvalid)
		}
	}
	return nil
}

func encodeNamespace(ns []string) string {
	if len(ns) == 0 {
		return ""
	}
	return strings.Join(ns, labelEnd) + labelEnd
}

func decodeNamespace(s string) []string {
	return strings.Split(strings.TrimSuffix(s, labelEnd), labelEnd)
}

func checkKey(key string) error {
	if key == "" || strings.ContainsRune(key, 0) {
		return fmt.Errorf("key %q: %w: it must be non-empty text", key, ErrInvalid)
	}
	return nil
}

// PutItem keeps value, a JSON object, under namespace and key, replacing
// the value of an item already there (which keeps its CreatedAt). The
// item does not expire.
func (s *DB) PutItem(ctx context.Context, namespace []string, key string, value json.RawMessage) error {
	return s.PutItemTTL(ctx, namespace, key, value, 0)
}

// PutItemTTL is PutItem for an item that expires ttl after it is put or
// last read (see ItemQuery); a ttl of 0 makes one that does not expire.
// An expired item is gone for every read at once; SweepItems deletes its
// row later.
func (s *DB) PutItemTTL(ctx context.Context, namespace []string, key string, value json.RawMessage, ttl time.Duration) error {
	if err := CheckNamespace("namespace", namespace, false); err != nil {
		return err
	}
	if err := checkKey(key); err != nil {
		return err
	}
	if err := checkTTL(ttl, "an item"); err != nil {
		return err
	}
	var obj map[string]any
	if err := json.Unmarshal(value, &obj); err != nil || obj == nil {
		return fmt.Errorf("value: %w: it must be a JSON object, like {\"text\": \"...\"}", ErrInvalid)
	}
	// The model is asked before the write, so that no transaction waits
	// on it.
	vectors, err := s.vectorsFor(ctx, encodeNamespace(namespace), key, value)
	if err != nil {
		return err
	}
	return s.write(ctx, func(tx dialect.Tx) error {
		now, at := s.now(), s.itemNow()
		it := dialect.ItemRow{Namespace: encodeNamespace(namespace), Key: key, Value: string(value), CreatedAt: now, UpdatedAt: now}
		if ttl > 0 {
			it.TTLMinutes, it.ExpiresAt = ttl.Minutes(), at+int64(ttl)
		}
		if err := tx.PutItem(ctx, it, at); err != nil {
			return fmt.Errorf("store: put item %q in %v: %w", key, namespace, err)
		}
		if s.index != nil {
			if err := tx.SetItemVectors(ctx, it.Namespace, key, vectors); err != nil {
				return fmt.Errorf("store: put the vectors of item %q in %v: %w", key, namespace, err)
			}
		}
		return s.checkItems(ctx, tx, namespace, at)
	})
}

// itemNow is the time items expire by, in Unix nanoseconds.
func (s *DB) itemNow() int64 { return (*s.itemTime.Load())().UnixNano() }

// GetItem reads the item under namespace and key, or ErrNotFound (also
// for an item that has expired). Reading an item with a TTL moves its
// expiry to now plus its TTL.
func (s *DB) GetItem(ctx context.Context, namespace []string, key string) (Item, error) {
	return s.getItem(ctx, namespace, key, true)
}

// PeekItem is GetItem, except that it leaves the item's expiry where it
// is.
func (s *DB) PeekItem(ctx context.Context, namespace []string, key string) (Item, error) {
	return s.getItem(ctx, namespace, key, false)
}

func (s *DB) getItem(ctx context.Context, namespace []string, key string, refresh bool) (Item, error) {
	if err := CheckNamespace("namespace", namespace, false); err != nil {
		return Item{}, err
	}
	at := s.itemNow()
	row, err := s.d.Item(ctx, encodeNamespace(namespace), key, at)
	if errors.Is(err, dialect.ErrNoRow) {
		return Item{}, fmt.Errorf("item %q in %v: %w", key, namespace, ErrNotFound)
	}
	if err != nil {
		return Item{}, fmt.Errorf("store: get item %q in %v: %w", key, namespace, err)
	}
	it := itemOf(row)
	if refresh {
		items := []Item{it}
		if err := s.refreshItems(ctx, items, at); err != nil {
			return Item{}, err
		}
		it = items[0]
	}
	return it, nil
}

// refreshItems moves the expiry of those of items that have a TTL to at
// plus their TTL, in one transaction, and sets their ExpiresAt to match.
// An item that expired since it was read stays expired.
func (s *DB) refreshItems(ctx context.Context, items []Item, at int64) error {
	var due []int
	for i, it := range items {
		if it.TTL > 0 {
			due = append(due, i)
		}
	}
	if len(due) == 0 {
		return nil
	}
	err := s.write(ctx, func(tx dialect.Tx) error {
		for _, i := range due {
			it := items[i]
			if err := tx.RefreshItem(ctx, encodeNamespace(it.Namespace), it.Key, at+int64(it.TTL), at); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("store: refresh the ttl of %d items: %w", len(due), err)
	}
	for _, i := range due {
		items[i].ExpiresAt = fromNanos(at + int64(items[i].TTL))
	}
	return nil
}

// SweepItems deletes the items that have expired and says how many it
// deleted. It costs one read of an index when none has. Several stores
// on one database may sweep at once: each deletes rows the others do not
// hold.
func (s *DB) SweepItems(ctx context.Context) (int, error) {
	at := s.itemNow()
	total := 0
	for {
		expired, err := s.d.AnyExpiredItem(ctx, at)
		if err != nil || !expired {
			return total, wrapErr("store: delete expired items", err)
		}
		n := 0
		err = s.write(ctx, func(tx dialect.Tx) error {
			var err error
			n, err = tx.DeleteExpiredItems(ctx, at, itemSweepBatch)
			return err
		})
		total += n
		if err != nil || n < itemSweepBatch {
			return total, wrapErr("store: delete expired items", err)
		}
	}
}

// DeleteItem deletes the item under namespace and key, if there is one.
func (s *DB) DeleteItem(ctx context.Context, namespace []string, key string) error {
	if err := CheckNamespace("namespace", namespace, false); err != nil {
		return err
	}
	return s.write(ctx, func(tx dialect.Tx) error {
		return tx.DeleteItem(ctx, encodeNamespace(namespace), key)
	})
}

// SearchItems returns the items q selects. When the store has an Index
// and q has a Query, the items are ranked by meaning fused with the word
// match (see rankByMeaning), and an item whose text holds none of the
// query's words may still be found.
func (s *DB) SearchItems(ctx context.Context, q ItemQuery) ([]Item, error) {
	if err := CheckNamespace("namespace_prefix", q.Prefix, true); err != nil {
		return nil, err
	}
	filter, err := decodeFilter(q.Filter)
	if err != nil {
		return nil, err
	}
	words := strings.Fields(strings.ToLower(q.Query))
	byMeaning := s.index != nil && len(words) > 0
	var out []Item
	at := s.itemNow()
	err = s.d.Items(ctx, encodeNamespace(q.Prefix), at, func(row dialect.ItemRow) error {
		it, ok := matchItem(row, filter, words)
		if ok && (byMeaning || len(words) == 0 || it.Score > 0) {
			out = append(out, it)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("store: search items under %v: %w", q.Prefix, err)
	}
	switch {
	case byMeaning:
		if out, err = s.rankByMeaning(ctx, q, out); err != nil {
			return nil, err
		}
	case len(words) > 0:
		sort.SliceStable(out, func(i, j int) bool { return out[i].Score > out[j].Score })
	}
	out = page(out, q.Offset, q.Limit, 10)
	if !q.NoRefresh {
		if err := s.refreshItems(ctx, out, at); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// ListNamespaces returns the namespaces q selects.
func (s *DB) ListNamespaces(ctx context.Context, q NamespaceQuery) ([][]string, error) {
	if err := CheckNamespace("prefix", q.Prefix, true); err != nil {
		return nil, err
	}
	if err := CheckNamespace("suffix", q.Suffix, true); err != nil {
		return nil, err
	}
	seen := map[string]bool{}
	var out [][]string
	err := s.d.ItemNamespaces(ctx, encodeNamespace(q.Prefix), s.itemNow(), func(enc string) error {
		ns := decodeNamespace(enc)
		if len(ns) < len(q.Suffix) || !slices.Equal(ns[len(ns)-len(q.Suffix):], q.Suffix) {
			return nil
		}
		if q.MaxDepth > 0 && len(ns) > q.MaxDepth {
			ns = ns[:q.MaxDepth]
		}
		if k := encodeNamespace(ns); !seen[k] {
			seen[k] = true
			out = append(out, ns)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("store: list namespaces under %v: %w", q.Prefix, err)
	}
	sort.Slice(out, func(i, j int) bool { return slices.Compare(out[i], out[j]) < 0 })
	return page(out, q.Offset, q.Limit, 100), nil
}

func page[T any](all []T, offset, limit, byDefault int) []T {
	if limit <= 0 {
		limit = byDefault
	}
	start := min(max(offset, 0), len(all))
	return all[start:min(start+limit, len(all))]
}

func itemOf(row dialect.ItemRow) Item {
	return Item{
		Namespace: decodeNamespace(row.Namespace),
		Key:       row.Key,
		Value:     json.RawMessage(row.Value),
		CreatedAt: time.Unix(0, row.CreatedAt).UTC(),
		UpdatedAt: time.Unix(0, row.UpdatedAt).UTC(),
		TTL:       time.Duration(math.Round(row.TTLMinutes * float64(time.Minute))),
		ExpiresAt: fromNanos(row.ExpiresAt),
	}
}

func decodeFilter(f map[string]json.RawMessage) (map[string]any, error) {
	out := make(map[string]any, len(f))
	for k, raw := range f {
		var v any
		if err := json.Unmarshal(raw, &v); err != nil {
			return nil, fmt.Errorf("filter.%s: %w: the value must be JSON", k, ErrInvalid)
		}
		out[k] = v
	}
	return out, nil
}

// matchItem says whether row's value holds every field of filter and,
// with words, sets its Score to the share of words its text holds.
func matchItem(row dialect.ItemRow, filter map[string]any, words []string) (Item, bool) {
	it := itemOf(row)
	if len(filter) == 0 && len(words) == 0 {
		return it, true
	}
	var value map[string]any
	if json.Unmarshal(it.Value, &value) != nil {
		return it, false
	}
	for k, want := range filter {
		if got, ok := value[k]; !ok || !reflect.DeepEqual(got, want) {
			return it, false
		}
	}
	if len(words) == 0 {
		return it, true
	}
	text := strings.ToLower(strings.Join(textOf(value, nil), " "))
	found := 0
	for _, w := range words {
		if strings.Contains(text, w) {
			found++
		}
	}
	it.Score = float64(found) / float64(len(words))
	return it, true
}

// textOf collects the strings in v, values and object keys' values alike.
func textOf(v any, into []string) []string {
	switch v := v.(type) {
	case string:
		into = append(into, v)
	case map[string]any:
		for _, x := range v {
			into = textOf(x, into)
		}
	case []any:
		for _, x := range v {
			into = textOf(x, into)
		}
	}
	return into
}
