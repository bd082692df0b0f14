package langgraph

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/dawn-go/dawn/internal/server/wire"
	"github.com/dawn-go/dawn/internal/store"
	"github.com/labstack/echo/v4"
)

// routeStore adds the LangGraph Store API: items of JSON under a namespace
// and key, kept in the thread store and so shared by every replica.
func (s *dialect) routeStore(h wire.Mux) {
	h.Add(http.MethodPut, "/store/items", s.putItem, markLG)
	h.Add(http.MethodGet, "/store/items", s.getItem, markLG)
	h.Add(http.MethodDelete, "/store/items", s.deleteItem, markLG)
	h.Add(http.MethodPost, "/store/items/search", s.searchItems, markLG)
	h.Add(http.MethodPost, "/store/namespaces", s.listNamespaces, markLG)
}

// lgItem is an item as the LangGraph SDK reads it; Score is sent by
// searches only.
type lgItem struct {
	Namespace []string        `json:"namespace"`
	Key       string          `json:"key"`
	Value     json.RawMessage `json:"value"`
	CreatedAt time.Time       `json:"created_at"`
	UpdatedAt time.Time       `json:"updated_at"`
	Score     *float64        `json:"score,omitempty"`
}

func itemOf(it store.Item) lgItem {
	return lgItem{Namespace: it.Namespace, Key: it.Key, Value: it.Value, CreatedAt: it.CreatedAt, UpdatedAt: it.UpdatedAt}
}

// storeError makes the store's refusal of a namespace, key or value a 400
// that names the field.
func storeError(err error) error {
	if errors.Is(err, store.ErrInvalid) {
		return wire.BadBody(err.Error())
	}
	return err
}

type itemBody struct {
	Namespace []string        `json:"namespace"`
	Key       string          `json:"key"`
	Value     json.RawMessage `json:"value"`
	Index     json.RawMessage `json:"index"`
	TTL       json.RawMessage `json:"ttl"`
}

func (s *dialect) putItem(c echo.Context) error {
	var b itemBody
	if err := wire.Decode(c, &b); err != nil {
		return err
	}
	ttl, err := itemTTL(b.TTL)
	if err != nil {
		return err
	}
	if len(b.Value) == 0 || isNull(b.Value) {
		return wire.BadBody(`value is required: a JSON object, like {"text": "..."}`)
	}
	if err := s.host.PutItemTTL(c.Request().Context(), b.Namespace, b.Key, b.Value, ttl); err != nil {
		return storeError(err)
	}
	return c.NoContent(http.StatusNoContent)
}

// itemTTL reads a put's ttl: a positive number of minutes, as LangGraph
// takes it, or null (or none) for an item that does not expire.
func itemTTL(raw json.RawMessage) (time.Duration, error) {
	if isNull(raw) {
		return 0, nil
	}
	const how = "ttl must be a positive number of minutes, like 60, or null for an item that does not expire"
	var minutes float64
	if err := json.Unmarshal(raw, &minutes); err != nil {
		return 0, wire.BadBody(fmt.Sprintf("%s; got %s", how, raw))
	}
	if minutes > store.MaxTTL.Minutes() {
		return 0, wire.BadBody(fmt.Sprintf("ttl %s is too long: at most %.0f minutes (a hundred years), or null for an item that does not expire", raw, store.MaxTTL.Minutes()))
	}
	ttl := time.Duration(math.Round(minutes * float64(time.Minute)))
	if minutes <= 0 || ttl <= 0 {
		return 0, wire.BadBody(fmt.Sprintf("%s; got %s", how, raw))
	}
	return ttl, nil
}

// refreshTTL reads refresh_ttl, a boolean; unset (or null) it is true,
// LangGraph's default: reading an item with a TTL moves its expiry.
func refreshTTL(v string) (bool, error) {
	if v == "" || v == "null" {
		return true, nil
	}
	refresh, err := strconv.ParseBool(v)
	if err != nil {
		return false, wire.BadBody(fmt.Sprintf("refresh_ttl must be true or false, got %q", v))
	}
	return refresh, nil
}

// getItem answers GET /store/items?namespace=a.b&key=k with the item, or
// null when there is none (what the SDK's getItem reads as no item).
func (s *dialect) getItem(c echo.Context) error {
	ns, key := c.QueryParam("namespace"), c.QueryParam("key")
	if key == "" {
		return wire.BadBody("key is required: GET /store/items?namespace=a.b&key=k")
	}
	refresh, err := refreshTTL(c.QueryParam("refresh_ttl"))
	if err != nil {
		return err
	}
	var labels []string
	if ns != "" {
		labels = strings.Split(ns, ".")
	}
	read := s.host.GetItem
	if !refresh {
		read = s.host.PeekItem
	}
	it, err := read(c.Request().Context(), labels, key)
	if errors.Is(err, store.ErrNotFound) {
		return c.JSON(http.StatusOK, nil)
	}
	if err != nil {
		return storeError(err)
	}
	return c.JSON(http.StatusOK, itemOf(it))
}

func (s *dialect) deleteItem(c echo.Context) error {
	var b itemBody
	if err := wire.Decode(c, &b); err != nil {
		return err
	}
	if b.Key == "" {
		return wire.BadBody("key is required: the item's key, beside its namespace")
	}
	if err := s.host.DeleteItem(c.Request().Context(), b.Namespace, b.Key); err != nil {
		return storeError(err)
	}
	return c.NoContent(http.StatusNoContent)
}

type searchBody struct {
	NamespacePrefix []string                   `json:"namespace_prefix"`
	Filter          map[string]json.RawMessage `json:"filter"`
	Limit           *int                       `json:"limit"`
	Offset          int                        `json:"offset"`
	Query           string                     `json:"query"`
	RefreshTTL      json.RawMessage            `json:"refresh_ttl"`
}

func (s *dialect) searchItems(c echo.Context) error {
	var b searchBody
	if err := wire.Decode(c, &b); err != nil {
		return err
	}
	limit := 10
	if b.Limit != nil {
		limit = *b.Limit
	}
	if limit < 1 || b.Offset < 0 {
		return wire.BadBody("limit must be at least 1 and offset at least 0")
	}
	refresh := true
	if !isNull(b.RefreshTTL) && json.Unmarshal(b.RefreshTTL, &refresh) != nil {
		return wire.BadBody(fmt.Sprintf("refresh_ttl must be true, false or null, got %s", b.RefreshTTL))
	}
	found, err := s.host.SearchItems(c.Request().Context(), store.ItemQuery{
		Prefix: b.NamespacePrefix, Filter: b.Filter, Query: b.Query, Limit: limit, Offset: b.Offset, NoRefresh: !refresh,
	})
	if err != nil {
		return storeError(err)
	}
	items := make([]lgItem, 0, len(found))
	for _, it := range found {
		item := itemOf(it)
		if b.Query != "" {
			item.Score = &it.Score
		}
		items = append(items, item)
	}
	return c.JSON(http.StatusOK, map[string]any{"items": items})
}

type namespacesBody struct {
	Prefix   []string `json:"prefix"`
	Suffix   []string `json:"suffix"`
	MaxDepth *int     `json:"max_depth"`
	Limit    *int     `json:"limit"`
	Offset   int      `json:"offset"`
}

func (s *dialect) listNamespaces(c echo.Context) error {
	var b namespacesBody
	if err := wire.Decode(c, &b); err != nil {
		return err
	}
	q := store.NamespaceQuery{Prefix: b.Prefix, Suffix: b.Suffix, Limit: 100, Offset: b.Offset}
	if b.Limit != nil {
		q.Limit = *b.Limit
	}
	if b.MaxDepth != nil {
		if *b.MaxDepth < 1 {
			return wire.BadBody("max_depth must be at least 1")
		}
		q.MaxDepth = *b.MaxDepth
	}
	if q.Limit < 1 || q.Offset < 0 {
		return wire.BadBody("limit must be at least 1 and offset at least 0")
	}
	nss, err := s.host.ListNamespaces(c.Request().Context(), q)
	if err != nil {
		return storeError(err)
	}
	if nss == nil {
		nss = [][]string{}
	}
	return c.JSON(http.StatusOK, map[string]any{"namespaces": nss})
}
