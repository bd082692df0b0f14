package runs

import (
	"context"
	"encoding/json"
	"time"

	"github.com/dawn-go/dawn/internal/ownership"
	"github.com/dawn-go/dawn/internal/store"
)

// The item store is per user: a user's namespaces live under ["users",
// user] (ownership.Namespace) and are shown without that prefix; the
// service credential and a server without authentication see the whole
// store.

// PutItem puts an item in ctx's user's namespace.
func (s *Service) PutItem(ctx context.Context, namespace []string, key string, value json.RawMessage) error {
	return s.items.PutItem(ctx, ownership.Namespace(ctx, namespace), key, value)
}

// PutItemTTL puts an item that expires.
func (s *Service) PutItemTTL(ctx context.Context, namespace []string, key string, value json.RawMessage, ttl time.Duration) error {
	return s.items.PutItemTTL(ctx, ownership.Namespace(ctx, namespace), key, value, ttl)
}

// GetItem reads an item, moving its expiry.
func (s *Service) GetItem(ctx context.Context, namespace []string, key string) (store.Item, error) {
	it, err := s.items.GetItem(ctx, ownership.Namespace(ctx, namespace), key)
	return ownedItem(ctx, it, err)
}

// PeekItem reads an item without moving its expiry.
func (s *Service) PeekItem(ctx context.Context, namespace []string, key string) (store.Item, error) {
	it, err := s.items.PeekItem(ctx, ownership.Namespace(ctx, namespace), key)
	return ownedItem(ctx, it, err)
}

// ownedItem shows an item read from the store under the namespace its
// user named.
func ownedItem(ctx context.Context, it store.Item, err error) (store.Item, error) {
	if err != nil {
		return it, err
	}
	it.Namespace, _ = ownership.Unnamespace(ctx, it.Namespace)
	return it, nil
}

// DeleteItem deletes an item of ctx's user.
func (s *Service) DeleteItem(ctx context.Context, namespace []string, key string) error {
	return s.items.DeleteItem(ctx, ownership.Namespace(ctx, namespace), key)
}

// SearchItems searches ctx's user's items.
func (s *Service) SearchItems(ctx context.Context, q store.ItemQuery) ([]store.Item, error) {
	q.Prefix = ownership.Namespace(ctx, q.Prefix)
	found, err := s.items.SearchItems(ctx, q)
	for i := range found {
		found[i].Namespace, _ = ownership.Unnamespace(ctx, found[i].Namespace)
	}
	return found, err
}

// ListNamespaces lists ctx's user's namespaces.
func (s *Service) ListNamespaces(ctx context.Context, q store.NamespaceQuery) ([][]string, error) {
	q.Prefix = ownership.Namespace(ctx, q.Prefix)
	if _, scoped := ownership.Owner(ctx); scoped && q.MaxDepth > 0 {
		q.MaxDepth += 2
	}
	found, err := s.items.ListNamespaces(ctx, q)
	out := found[:0]
	for _, ns := range found {
		if ns, ok := ownership.Unnamespace(ctx, ns); ok && len(ns) > 0 {
			out = append(out, ns)
		}
	}
	return out, err
}
