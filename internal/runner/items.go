package runner

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/dawn-go/dawn/capabilities"
	"github.com/dawn-go/dawn/internal/ownership"
	"github.com/dawn-go/dawn/internal/store"
)

// items is the store's key-value store as tools see it
// (capabilities.ItemStore): per user, as the LangGraph Store API shows it
// (ownership.Namespace), when the run acts for one.
type items struct{ s store.Items }

func (i items) Get(ctx context.Context, namespace []string, key string) (capabilities.StoreItem, bool, error) {
	it, err := i.s.GetItem(ctx, ownership.Namespace(ctx, namespace), key)
	if errors.Is(err, store.ErrNotFound) {
		return capabilities.StoreItem{}, false, nil
	}
	if err != nil {
		return capabilities.StoreItem{}, false, err
	}
	return storeItem(ctx, it), true, nil
}

func (i items) Put(ctx context.Context, namespace []string, key string, value json.RawMessage) error {
	return i.s.PutItem(ctx, ownership.Namespace(ctx, namespace), key, value)
}

func (i items) Delete(ctx context.Context, namespace []string, key string) error {
	return i.s.DeleteItem(ctx, ownership.Namespace(ctx, namespace), key)
}

func (i items) Search(ctx context.Context, prefix []string, q capabilities.ItemSearch) ([]capabilities.StoreItem, error) {
	found, err := i.s.SearchItems(ctx, store.ItemQuery{Prefix: ownership.Namespace(ctx, prefix), Filter: q.Filter, Query: q.Query, Limit: q.Limit, Offset: q.Offset})
	if err != nil {
		return nil, err
	}
	out := make([]capabilities.StoreItem, len(found))
	for n, it := range found {
		out[n] = storeItem(ctx, it)
	}
	return out, nil
}

func storeItem(ctx context.Context, it store.Item) capabilities.StoreItem {
	ns, _ := ownership.Unnamespace(ctx, it.Namespace)
	return capabilities.StoreItem{Namespace: ns, Key: it.Key, Value: it.Value, CreatedAt: it.CreatedAt, UpdatedAt: it.UpdatedAt, Score: it.Score}
}

// Items is the app's item store as capabilities.AppHost lends it to a
// capability's app endpoints: scoped by each call's context, as a tool's.
func (m *Manager) Items() capabilities.ItemStore { return items{m.items} }
