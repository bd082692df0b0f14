package server

import (
	"context"
	"net/http"

	"github.com/dawn-go/dawn/internal/ownership"
	"github.com/dawn-go/dawn/internal/server/wire"
	"github.com/dawn-go/dawn/internal/store"
)

// Assistants are the app's configuration, shared by every user: anyone
// who may call the server reads them, and only the service credential
// (or anyone, on a server without authentication) changes them. A user
// who tries is answered 403, before the store is written.

// mayChangeAssistants returns nil when ctx may change assistants, the
// 403 forbidden answer when ctx is a user's.
func mayChangeAssistants(ctx context.Context) error {
	if _, scoped := ownership.Owner(ctx); scoped {
		return wire.NewError(http.StatusForbidden, "forbidden",
			"assistants are shared by every user and are changed with the service credential (DAWN_API_KEY); a user's token may only read them")
	}
	return nil
}

func (h *host) CreateAssistant(ctx context.Context, a store.Assistant) (store.Assistant, error) {
	if err := mayChangeAssistants(ctx); err != nil {
		return store.Assistant{}, err
	}
	return h.store.CreateAssistant(ctx, a)
}

func (h *host) UpdateAssistant(ctx context.Context, id string, change func(*store.Assistant) error) (store.Assistant, error) {
	if err := mayChangeAssistants(ctx); err != nil {
		return store.Assistant{}, err
	}
	return h.store.UpdateAssistant(ctx, id, change)
}

func (h *host) SetLatestAssistant(ctx context.Context, id string, version int) (store.Assistant, error) {
	if err := mayChangeAssistants(ctx); err != nil {
		return store.Assistant{}, err
	}
	return h.store.SetLatestAssistant(ctx, id, version)
}

func (h *host) DeleteAssistant(ctx context.Context, id string) error {
	if err := mayChangeAssistants(ctx); err != nil {
		return err
	}
	return h.store.DeleteAssistant(ctx, id)
}

// GetAssistant, SearchAssistants, CountAssistants and AssistantVersions
// read for everyone.

func (h *host) GetAssistant(ctx context.Context, id string) (store.Assistant, error) {
	return h.store.GetAssistant(ctx, id)
}

func (h *host) SearchAssistants(ctx context.Context, q store.AssistantQuery) ([]store.Assistant, error) {
	return h.store.SearchAssistants(ctx, q)
}

func (h *host) CountAssistants(ctx context.Context, q store.AssistantQuery) (int, error) {
	return h.store.CountAssistants(ctx, q)
}

func (h *host) AssistantVersions(ctx context.Context, id string, q store.AssistantQuery) ([]store.Assistant, error) {
	return h.store.AssistantVersions(ctx, id, q)
}
