package inspector_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// wait bounds every browser step.
const wait = 20 * time.Second

// browser starts headless Chromium for the test: Debian's /usr/bin/chromium
// or $CHROME_PATH. Without one the test is skipped, or fails when
// DAWN_REQUIRE_BROWSER=1 (as in CI).
func browser(t *testing.T) context.Context {
	t.Helper()
	path := os.Getenv("CHROME_PATH")
	if path == "" {
		path = "/usr/bin/chromium"
	}
	if _, err := os.Stat(path); err != nil {
		msg := fmt.Sprintf("no Chromium at %s: install it (apt-get install chromium) or set CHROME_PATH", path)
		if os.Getenv("DAWN_REQUIRE_BROWSER") == "1" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(path),
		chromedp.Headless,
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.NoFirstRun,
		chromedp.NoDefaultBrowserCheck,
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(1100, 900),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-extensions", true),
		chromedp.Flag("disable-default-apps", true),
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.Flag("metrics-recording-only", true),
	}
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	t.Cleanup(cancelAlloc)
	ctx, cancel := chromedp.NewContext(allocCtx)
	t.Cleanup(cancel)
	// The first call starts the browser, which lives as long as the
	// context of that call, so it gets no timeout of its own.
	if err := chromedp.Do(ctx); err != nil {
		t.Fatalf("starting Chromium at %s: %v", path, err)
	}
	return ctx
}

// page is one browser tab on the inspector of a dev server.
type page struct {
	t    *testing.T
	ctx  context.Context
	base string
}

// openPage opens a new tab on base's inspector. When the test fails, a
// screenshot goes into $DAWN_ARTIFACTS, or else a temp dir that outlives the
// test (t.TempDir is removed when the test ends), and the page text into
// the log.
func openPage(t *testing.T, browserCtx context.Context, base string) *page {
	t.Helper()
	ctx, cancel := chromedp.NewContext(browserCtx)
	t.Cleanup(cancel)
	p := &page{t: t, ctx: ctx, base: base}
	if err := chromedp.Do(ctx); err != nil { // opens the tab for the life of ctx
		t.Fatalf("opening a tab: %v", err)
	}
	t.Cleanup(func() {
		if !t.Failed() {
			return
		}
		c, stop := context.WithTimeout(ctx, 5*time.Second)
		defer stop()
		shot, err := chromedp.Run(c, chromedp.FullScreenshot(100))
		if err != nil {
			t.Logf("no screenshot: %v", err)
			return
		}
		text, _ := chromedp.Run(c, chromedp.Evaluate[string](`document.body.innerText`))
		dir := os.Getenv("DAWN_ARTIFACTS")
		if dir == "" {
			dir, err = os.MkdirTemp("", "dawn-inspector-")
		}
		name := filepath.Join(dir, strings.NewReplacer("/", "_", " ", "_").Replace(t.Name())+".png")
		if err == nil {
			err = os.WriteFile(name, shot, 0o644)
		}
		if err != nil {
			t.Logf("screenshot not saved: %v", err)
		} else {
			t.Logf("screenshot of the page: %s", name)
		}
		t.Logf("page text at failure:\n%s", text)
	})
	p.run(chromedp.Navigate(base + "/"))
	p.waitFor("the page to load its routes", `document.body.dataset.ready === 'true'`)
	return p
}

// screenshotFor saves a PNG of the page to the file the environment
// variable env names, when it is set: the README's picture of the
// inspector is made this way (see docs/images).
func (p *page) screenshotFor(env string) {
	p.t.Helper()
	path := os.Getenv(env)
	if path == "" {
		return
	}
	ctx, cancel := context.WithTimeout(p.ctx, wait)
	defer cancel()
	shot, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err == nil {
		err = os.WriteFile(path, shot, 0o644)
	}
	if err != nil {
		p.t.Errorf("%s=%s: %v", env, path, err)
	}
}

func (p *page) run(steps ...chromedp.Action[chromedp.Void]) {
	p.t.Helper()
	ctx, cancel := context.WithTimeout(p.ctx, wait)
	defer cancel()
	if err := chromedp.Do(ctx, steps...); err != nil {
		p.t.Fatalf("browser: %v", err)
	}
}

// eval runs a JavaScript expression in the page and decodes its value,
// passed through JSON, into out.
func (p *page) eval(js string, out any) {
	p.t.Helper()
	ctx, cancel := context.WithTimeout(p.ctx, wait)
	defer cancel()
	raw, err := chromedp.Run(ctx, chromedp.Evaluate[string](`JSON.stringify(`+js+`)`))
	if err != nil {
		p.t.Fatalf("browser: evaluating %s: %v", js, err)
	}
	if err := json.Unmarshal([]byte(raw), out); err != nil {
		p.t.Fatalf("browser: %s gave %s: %v", js, raw, err)
	}
}

func (p *page) text(js string) string {
	p.t.Helper()
	var s string
	p.eval(js, &s)
	return s
}

// waitFor polls the JS condition until it is true, failing after wait.
func (p *page) waitFor(what, cond string) {
	p.t.Helper()
	deadline := time.Now().Add(wait)
	for {
		var ok bool
		p.eval(`!!(`+cond+`)`, &ok)
		if ok {
			return
		}
		if time.Now().After(deadline) {
			p.t.Fatalf("waited %s for %s; plan card: badge %q, glyphs %q; status %q", wait, what, p.badge(), p.glyphs(), p.text(`document.getElementById('status').textContent`))
		}
		time.Sleep(15 * time.Millisecond)
	}
}

// glyphs is the plan card's item glyphs in order, like "✓▶○".
func (p *page) glyphs() string {
	p.t.Helper()
	return p.text(`[...document.querySelectorAll('#plan-items > li > .item-btn .glyph')].map(e => e.textContent).join('')`)
}

func (p *page) badge() string {
	p.t.Helper()
	return p.text(`document.getElementById('plan-state').textContent`)
}

// pickRoute chooses a route in the picker as a user would, firing change.
func (p *page) pickRoute(id string) {
	p.t.Helper()
	var ok bool
	p.eval(fmt.Sprintf(`(() => { const s = document.getElementById('route'); s.value = %q; s.dispatchEvent(new Event('change')); return s.value === %[1]q })()`, id), &ok)
	if !ok {
		p.t.Fatalf("the route picker has no route %s; it offers %s", id, p.text(`[...document.querySelectorAll('#route option')].map(o => o.value).join(', ')`))
	}
}

// send types a message and clicks Send.
func (p *page) send(msg string) {
	p.t.Helper()
	p.run(chromedp.SendKeys(chromedp.ID("message"), msg), chromedp.Click(chromedp.ID("send-button")))
}

func (p *page) thread() string {
	p.t.Helper()
	return p.text(`new URLSearchParams(location.hash.slice(1)).get('thread') || ''`)
}

// jsString quotes s as a JavaScript string literal.
func jsString(s string) string {
	return "'" + strings.NewReplacer(`\`, `\\`, `'`, `\'`, "\n", `\n`, "\r", `\r`).Replace(s) + "'"
}
