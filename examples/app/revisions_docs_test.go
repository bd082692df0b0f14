package main

import (
	"encoding/json"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dawn-go/dawn/dawntest"
	"github.com/dawn-go/dawn/internal/docstext"
	"github.com/dawn-go/dawn/internal/models"
	"github.com/dawn-go/dawn/plandiff"
)

// TestPlanningRevisionsDocs runs the Planning page's revisions example
// against the example app on the offline model and checks what the page
// says of its answer: the model's revisions, then the person's, which
// moved an item back and added one.
func TestPlanningRevisionsDocs(t *testing.T) {
	blocks, err := docstext.Blocks("../..")
	if err != nil {
		t.Fatal(err)
	}
	var text string
	for _, b := range blocks {
		if filepath.Base(b.File) == "planning.md" && b.Lang == "sh" && strings.Contains(b.Text, "/plan/revisions") {
			text = "```sh\n" + b.Text + "```\n"
		}
	}
	calls := curlCalls(t, text)
	if len(calls) != 3 {
		t.Fatalf("the Planning page's revisions example has %d curl commands, want 3", len(calls))
	}
	h := dawntest.New(t, ".", models.NewOffline(), dawntest.Options{Tools: appTools(), Markers: appMarkers()})
	var last []byte
	for _, c := range calls {
		req, err := http.NewRequest(c.method, h.URL+c.path, strings.NewReader(c.body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		last, _ = io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("curl %s %s = %d: %s", c.method, c.path, resp.StatusCode, last)
		}
	}
	var page plandiff.Page
	if err := json.Unmarshal(last, &page); err != nil {
		t.Fatal(err)
	}
	n := len(page.Revisions)
	if n < 2 || page.Revisions[0].Source != plandiff.SourceModel || page.Revisions[n-1].Source != plandiff.SourcePerson {
		t.Fatalf("revisions = %s; want the model's, then the person's", last)
	}
	if d := page.Revisions[n-1].Diff; d == nil || len(d.Backwards) != 1 || d.Backwards[0].Content != "Write the final response" || len(d.Added) != 1 || d.Added[0] != "Follow up tomorrow" {
		t.Fatalf("the person's revision = %s; want the last item moved backwards and one added, as the page says", last)
	}
}
