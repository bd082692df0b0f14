package langgraph_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/dawn-go/dawn/dawntest"
	"github.com/dawn-go/dawn/internal/apptest"
)

// storeCall sends method to url with body and returns the status and the
// body of the answer.
func storeCall(t *testing.T, method, url, body string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(data)
}

// TestStoreItemTTLRefused: a ttl that is not a positive number of minutes,
// and a refresh_ttl that is not a boolean, are refused with a 400 that
// names the field and says what to write; nothing is kept.
func TestStoreItemTTLRefused(t *testing.T) {
	h := apptest.New(t, supportApp(t), dawntest.Script(), apptest.Options{})
	url := h.Serve(t)
	for _, ttl := range []string{`-5`, `0`, `"60"`, `true`, `{"minutes":5}`, `1e12`} {
		status, body := storeCall(t, "PUT", url+"/store/items", `{"namespace":["a"],"key":"k","value":{"x":1},"ttl":`+ttl+`}`)
		if status != 400 || !strings.Contains(body, "ttl") || !strings.Contains(body, "minutes") {
			t.Errorf("PUT with ttl %s: %d %s, want 400 naming ttl and its unit", ttl, status, body)
		}
	}
	if status, body := storeCall(t, "GET", url+"/store/items?namespace=a&key=k", ""); status != 200 || body != "null\n" {
		t.Errorf("a refused put kept an item: %d %s", status, body)
	}
	if status, body := storeCall(t, "GET", url+"/store/items?namespace=a&key=k&refresh_ttl=maybe", ""); status != 400 || !strings.Contains(body, "refresh_ttl") {
		t.Errorf("GET with refresh_ttl=maybe: %d %s, want 400 naming refresh_ttl", status, body)
	}
	if status, body := storeCall(t, "POST", url+"/store/items/search", `{"refresh_ttl":"yes"}`); status != 400 || !strings.Contains(body, "refresh_ttl") {
		t.Errorf("search with refresh_ttl \"yes\": %d %s, want 400 naming refresh_ttl", status, body)
	}
}

// TestStoreItemTTL: a put's ttl, in minutes, gives the item its expiry;
// get and search move it (LangGraph's refresh on read) unless refresh_ttl
// is false; a null ttl makes an item that does not expire. Items are read
// back without an expiry field, as LangGraph sends them.
func TestStoreItemTTL(t *testing.T) {
	h := apptest.New(t, supportApp(t), dawntest.Script(), apptest.Options{})
	url := h.Serve(t)
	ctx := context.Background()
	expiry := func() time.Time {
		t.Helper()
		it, err := h.Store.PeekItem(ctx, []string{"cache", "u1"}, "k")
		if err != nil {
			t.Fatal(err)
		}
		return it.ExpiresAt
	}
	before := time.Now()
	if status, body := storeCall(t, "PUT", url+"/store/items", `{"namespace":["cache","u1"],"key":"k","value":{"text":"hello"},"ttl":1.5}`); status != 204 {
		t.Fatalf("PUT with ttl 1.5: %d %s", status, body)
	}
	put := expiry()
	if d := put.Sub(before); d < 90*time.Second || d > 95*time.Second {
		t.Fatalf("an item put with ttl 1.5 expires %v after the put, want 90s", d)
	}

	status, body := storeCall(t, "GET", url+"/store/items?namespace=cache.u1&key=k&refresh_ttl=false", "")
	if status != 200 || !expiry().Equal(put) {
		t.Fatalf("GET with refresh_ttl=false: %d %s; expiry moved from %v to %v", status, body, put, expiry())
	}
	var item map[string]json.RawMessage
	if err := json.Unmarshal([]byte(body), &item); err != nil || len(item) != 5 || item["created_at"] == nil || item["updated_at"] == nil {
		t.Errorf("item %s, want namespace, key, value, created_at and updated_at only", body)
	}
	storeCall(t, "GET", url+"/store/items?namespace=cache.u1&key=k", "")
	got := expiry()
	if !got.After(put) {
		t.Fatalf("GET without refresh_ttl left the expiry at %v", got)
	}
	storeCall(t, "POST", url+"/store/items/search", `{"namespace_prefix":["cache"],"refresh_ttl":false}`)
	if !expiry().Equal(got) {
		t.Fatalf("search with refresh_ttl false moved the expiry")
	}
	status, body = storeCall(t, "POST", url+"/store/items/search", `{"namespace_prefix":["cache"],"refresh_ttl":null}`)
	if status != 200 || !strings.Contains(body, `"key":"k"`) || !expiry().After(got) {
		t.Fatalf("search with refresh_ttl null: %d %s; want the item found and its expiry moved", status, body)
	}

	storeCall(t, "PUT", url+"/store/items", `{"namespace":["cache","u1"],"key":"k","value":{"text":"kept"},"ttl":null}`)
	if e := expiry(); !e.IsZero() {
		t.Errorf("an item put again with ttl null expires at %v, want never", e)
	}
}
