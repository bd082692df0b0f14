package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
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
}

// ItemQuery selects items: those under Prefix whose value holds every
// field of Filter with an equal value and, when Query is set, whose text
// holds at least one of Query's words, case-insensitively, best match
// first; then Offset of them are skipped and at most Limit (10 when 0)
// returned.
type ItemQuery struct {
	Prefix        []string
	Filter        map[string]json.RawMessage
	Query         string
	Limit, Offset int
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
// the value of an item already there (which keeps its CreatedAt).
func (s *DB) PutItem(ctx context.Context, namespace []string, key string, value json.RawMessage) error {
	if err := CheckNamespace("namespace", namespace, false); err != nil {
		return err
	}
	if err := checkKey(key); err != nil {
		return err
	}
	var obj map[string]any
	if err := json.Unmarshal(value, &obj); err != nil || obj == nil {
		return fmt.Errorf("value: %w: it must be a JSON object, like {\"text\": \"...\"}", ErrInvalid)
	}
	return s.write(ctx, func(tx dialect.Tx) error {
		now := s.now()
		it := dialect.ItemRow{Namespace: encodeNamespace(namespace), Key: key, Value: string(value), CreatedAt: now, UpdatedAt: now}
		if err := tx.PutItem(ctx, it); err != nil {
			return fmt.Errorf("store: put item %q in %v: %w", key, namespace, err)
		}
		return nil
	})
}

// GetItem reads the item under namespace and key, or ErrNotFound.
func (s *DB) GetItem(ctx context.Context, namespace []string, key string) (Item, error) {
	if err := CheckNamespace("namespace", namespace, false); err != nil {
		return Item{}, err
	}
	row, err := s.d.Item(ctx, encodeNamespace(namespace), key)
	if errors.Is(err, dialect.ErrNoRow) {
		return Item{}, fmt.Errorf("item %q in %v: %w", key, namespace, ErrNotFound)
	}
	if err != nil {
		return Item{}, fmt.Errorf("store: get item %q in %v: %w", key, namespace, err)
	}
	return itemOf(row), nil
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

// SearchItems returns the items q selects.
func (s *DB) SearchItems(ctx context.Context, q ItemQuery) ([]Item, error) {
	if err := CheckNamespace("namespace_prefix", q.Prefix, true); err != nil {
		return nil, err
	}
	filter, err := decodeFilter(q.Filter)
	if err != nil {
		return nil, err
	}
	words := strings.Fields(strings.ToLower(q.Query))
	var out []Item
	err = s.d.Items(ctx, encodeNamespace(q.Prefix), func(row dialect.ItemRow) error {
		it, ok := matchItem(row, filter, words)
		if ok {
			out = append(out, it)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("store: search items under %v: %w", q.Prefix, err)
	}
	if len(words) > 0 {
		sort.SliceStable(out, func(i, j int) bool { return out[i].Score > out[j].Score })
	}
	return page(out, q.Offset, q.Limit, 10), nil
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
	err := s.d.ItemNamespaces(ctx, encodeNamespace(q.Prefix), func(enc string) error {
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

// matchItem says whether row's value holds every field of filter and, with
// words, scores it by the share of words its text holds.
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
	return it, found > 0
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
