package inspector_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/dawn-go/dawn/dawntest"
)

// console collects what the page writes to the browser console: errors
// from scripts and failed requests (a 404 is logged as an error).
type console struct {
	mu   sync.Mutex
	errs []string
}

// watchConsole starts collecting p's console errors.
func watchConsole(p *page) *console {
	c := &console{}
	go func() {
		for m, err := range chromedp.Console(p.ctx) {
			if err != nil {
				return
			}
			if m.Type == chromedp.ConsoleError || m.IsException() {
				c.mu.Lock()
				c.errs = append(c.errs, m.Text+" "+m.URL)
				c.mu.Unlock()
			}
		}
	}()
	return c
}

func (c *console) errors() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.errs)
}

// shot keeps a PNG of the page as a test artifact in $DAWN_ARTIFACTS, else
// testdata/screenshots (ignored by git); with DAWN_INSPECTOR_DOCS set, a
// copy goes there too (docs/images is made that way).
func (p *page) shot(name string) {
	p.t.Helper()
	dir := os.Getenv("DAWN_ARTIFACTS")
	if dir == "" {
		dir = filepath.Join("testdata", "screenshots")
	}
	ctx, cancel := context.WithTimeout(p.ctx, wait)
	defer cancel()
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		p.t.Errorf("screenshot %s: %v", name, err)
		return
	}
	for _, d := range []string{dir, os.Getenv("DAWN_INSPECTOR_DOCS")} {
		if d == "" {
			continue
		}
		if err := os.MkdirAll(d, 0o755); err != nil {
			p.t.Errorf("screenshot %s: %v", name, err)
			continue
		}
		if err := os.WriteFile(filepath.Join(d, name+".png"), png, 0o644); err != nil {
			p.t.Errorf("screenshot %s: %v", name, err)
		}
	}
}

// threadView is the thread as a person reads it: each turn's user
// message, its runs' steps and its answers, in document order.
const threadView = `[...document.querySelectorAll('#chat .msg, #chat .steps > li')].map(e => (e.classList.contains('msg') ? e.className.replace('msg ', '').replace(' md', '') + ': ' : '  ') + e.textContent.replace(/\s+/g, ' ').trim())`

// testThreadInOrder drives a route whose writeTodos needs approval through
// two turns, a fork and a refusal:
//   - while the run is parked, the plan badge and the item say "waiting for
//     you", and the composer is disabled with a pointer to the decision;
//   - each user message comes before the run it started, and after the
//     approval and a reload the view is the same: the first model call,
//     writeTodos, the decision and who gave it, the second model call;
//   - Markdown answers are rendered;
//   - a fork with an edited message makes a second branch the view shows;
//   - a message the server refuses is taken back and explained without
//     HTTP advice, and the thread view stays;
//   - the console has no error (no 404 for GET /plan on a plan the harness
//     does not own).
func testThreadInOrder(t *testing.T, browserCtx context.Context) {
	dir := exampleApp(t)
	writeApp(t, dir, map[string]string{
		"gated/agent.md": "---\ndescription: Plans with a person's approval.\napprove: [writeTodos]\n---\nYou plan.",
		"gated/plan.md":  "- [ ] The one thing\n",
	})
	todos := map[string]any{"todos": []map[string]string{{"content": "The one thing", "status": "completed"}}}
	model := dawntest.Script().CallTool("writeTodos", todos).
		Reply("Planned and **done**:\n\n- first\n- second").
		Reply("Second answer.").
		Reply("Forked answer.").
		CallTool("writeTodos", todos)
	base := startServerWith(t, dir, model).URL
	p := openPage(t, browserCtx, base)
	logs := watchConsole(p)
	p.pickRoute("/gated")
	if got := p.text(`document.getElementById('route-description').textContent + '|' + document.querySelector('#route option[value="/gated"]').textContent`); got != "Plans with a person's approval.|/gated — Plans with a person's approval." {
		t.Errorf("route description and option = %q, want the route's description in both", got)
	}

	// Turn one parks on the approval.
	p.send("Plan it")
	p.waitFor("the decision", `document.querySelector('`+decision+` button[data-decision="once"]') && !`+sendDisabled)
	if b := p.badge(); b != "waiting for you" {
		t.Errorf("plan badge while parked = %q, want waiting for you", b)
	}
	if w := p.text(`[...document.querySelectorAll('#plan-items > li.waiting .wait')].map(e => e.parentNode.textContent).join('|')`); !strings.Contains(w, "The one thing") || !strings.Contains(w, "waiting for you") {
		t.Errorf("plan items while parked: waiting marker on %q, want on The one thing", w)
	}
	var composer struct {
		Box, Button, Note bool
		Link              string
	}
	p.eval(`({box: document.getElementById('message').disabled, button: document.getElementById('send-button').disabled,
		note: document.getElementById('composer-note').checkVisibility(), link: document.querySelector('#composer-note a').getAttribute('href')})`, &composer)
	if !composer.Box || !composer.Button || !composer.Note || composer.Link != "#decisions" {
		t.Errorf("composer while parked = %+v, want the box and Send disabled and a note that links to the decision card", composer)
	}
	if got := p.text(`document.querySelector('` + decision + ` button[data-decision="always"]').textContent`); !strings.Contains(got, "every thread") {
		t.Errorf("Always allow reads %q, want it to say it applies to every thread", got)
	}
	p.shot("inspector-parked")

	p.run(chromedp.Click(chromedp.CSS(decision + ` button[data-decision="once"]`)))
	p.waitFor("the answer", `document.querySelector('#chat .msg.assistant strong') && !`+sendDisabled)
	if got := p.text(`[...document.querySelectorAll('#chat .msg.assistant li')].map(e => e.textContent).join()`); got != "first,second" {
		t.Errorf("the Markdown answer's list items = %q, want first,second", got)
	}
	var live []string
	p.eval(threadView, &live)
	wantSteps := []string{"user: Plan it", "◆ model call offline", "✓ writeTodos done", "tool decision: once · by you", "◆ model call offline", "assistant: Planned and done:"}
	checkOrder(t, "after the approval", live, wantSteps)

	// Turn two, then a reload: both turns, in order, as drawn live.
	p.send("Again")
	p.waitFor("the second answer", `[...document.querySelectorAll('#chat .msg.assistant')].some(e => e.textContent === 'Second answer.') && !`+sendDisabled)
	p.eval(threadView, &live)
	p.run(chromedp.Reload())
	p.waitFor("the thread after a reload", `document.body.dataset.ready === 'true' && document.querySelectorAll('#chat .msg.assistant').length === 2`)
	var reloaded []string
	p.eval(threadView, &reloaded)
	if !slices.Equal(live, reloaded) {
		t.Errorf("the thread view changed with a reload:\nlive:     %q\nreloaded: %q", live, reloaded)
	}
	checkOrder(t, "after a reload", reloaded, append(wantSteps, "user: Again", "◆ model call offline", "assistant: Second answer."))
	p.shot("inspector-thread")

	// Fork from the checkpoint that added "Again", with the message edited.
	p.run(chromedp.Click(chromedp.CSS(`#history-body > summary`)))
	p.waitFor("the checkpoints", `document.querySelector('#checkpoints button[data-action=fork]')`)
	var forks int
	p.eval(`document.querySelectorAll('#checkpoints button[data-action=fork]').length`, &forks)
	if forks != 2 {
		t.Errorf("%d checkpoints offer a fork, want 2 (one per user message)", forks)
	}
	p.run(chromedp.Click(chromedp.CSS(`#checkpoints li:has(button[data-action=fork]) > button.link`)))
	if got := p.text(`document.getElementById('checkpoint-view').textContent`); !strings.Contains(got, "user: Again") || !strings.Contains(got, "todos") {
		t.Errorf("the state at the newest input checkpoint = %q, want its messages and todos", got)
	}
	p.run(chromedp.Click(chromedp.ID("diff")))
	if got := p.text(`document.getElementById('checkpoint-view').textContent`); !strings.Contains(got, "+ assistant: Second answer.") {
		t.Errorf("the diff of the two newest checkpoints = %q, want the second answer added", got)
	}
	p.run(chromedp.Click(chromedp.CSS(`#checkpoints li:has(button[data-action=fork]) button[data-action=fork]`)),
		chromedp.SetValue(chromedp.CSS(`#checkpoint-view .fork-form textarea`), "Again, but shorter"),
		chromedp.Click(chromedp.CSS(`#checkpoint-view .fork-form button[type=submit]`)))
	p.waitFor("the forked answer", `[...document.querySelectorAll('#chat .msg.assistant')].some(e => e.textContent === 'Forked answer.') && !`+sendDisabled)
	p.waitFor("the second branch in the history", `document.getElementById('history-count').textContent.includes('2 branches')`)
	p.eval(threadView, &live)
	checkOrder(t, "after the fork", live, append(wantSteps, "user: Again, but shorter", "◆ model call offline", "assistant: Forked answer."))
	if slices.Contains(live, "user: Again") {
		t.Errorf("after the fork the view still shows the old branch's message: %q", live)
	}
	if got := p.text(`(document.querySelector('#chat .versions') || {}).textContent || ''`); !strings.Contains(got, "2 versions") {
		t.Errorf("the edited message says %q, want that it has 2 versions", got)
	}
	var branches []string
	p.eval(`[...new Set([...document.querySelectorAll('#checkpoints li')].map(e => e.dataset.branch))]`, &branches)
	if len(branches) != 2 {
		t.Errorf("checkpoints are on branches %q, want 2", branches)
	}
	p.shot("inspector-history")
	if errs := logs.errors(); len(errs) > 0 {
		t.Errorf("console errors: %q", errs)
	}

	// Another client parks the thread; the page, not knowing, sends.
	resp, err := http.Post(base+"/threads/"+p.thread()+"/runs/wait", "application/json", strings.NewReader(`{"route":"/gated","input":{"messages":[{"role":"user","content":"From elsewhere"}]}}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	var turns int
	p.eval(`document.querySelectorAll('#chat article.turn').length`, &turns)
	p.send("One more")
	p.waitFor("the refusal", `document.getElementById('status').textContent.includes('waiting for your decision') && document.querySelector('`+decision+`')`)
	var after struct {
		Turns          int
		Status, Box    string
		Page           string
		Disabled, Sent bool
	}
	p.eval(`({turns: document.querySelectorAll('#chat article.turn').length, status: document.getElementById('status').textContent,
		box: document.getElementById('message').value, page: document.body.innerText, disabled: document.getElementById('message').disabled,
		sent: [...document.querySelectorAll('#chat .msg.user')].some(e => e.textContent === 'One more')})`, &after)
	if after.Turns != turns || after.Sent || after.Box != "One more" || !after.Disabled {
		t.Errorf("after the refusal: %d turns (was %d), message shown as sent %v, box %q, composer disabled %v; want the view as it was, the text back in the box and the composer disabled", after.Turns, turns, after.Sent, after.Box, after.Disabled)
	}
	if strings.Contains(after.Page, "POST /") || strings.Contains(after.Page, "/resume") {
		t.Errorf("the page gives HTTP advice to a person: status %q", after.Status)
	}
}

// checkOrder checks that view holds want's entries in that order, each as
// a prefix of one of its lines.
func checkOrder(t *testing.T, when string, view, want []string) {
	t.Helper()
	i := 0
	for _, line := range view {
		if i < len(want) && strings.HasPrefix(strings.TrimSpace(line), want[i]) {
			i++
		}
	}
	if i < len(want) {
		t.Errorf("%s the thread view lacks %q in order; it shows:\n%s", when, want[i], strings.Join(view, "\n"))
	}
}

// testWorkspaceFiles: a route with a workspace lists the thread's files
// with their content, and a tool's Markdown argument is rendered, not
// shown as a string with \n in it.
func testWorkspaceFiles(t *testing.T, browserCtx context.Context) {
	model := dawntest.Script().
		CallTool("writeFile", map[string]any{"path": "notes.md", "content": "# Notes\n\n- buy milk\n- call Ann"}).
		Reply("Saved.")
	p := openPage(t, browserCtx, startServerWith(t, exampleApp(t), model).URL)
	p.pickRoute("/scratchpad")
	p.send("Keep a note")
	p.waitFor("the file in the files card", `document.querySelector('#file-list details.file[data-path="notes.md"]') && !`+sendDisabled)
	p.run(chromedp.Click(chromedp.CSS(`#file-list details.file > summary`)))
	p.waitFor("the file's content", `document.querySelector('#file-list .file-body h3')`)
	if got := p.text(`[...document.querySelectorAll('#file-list .file-body li')].map(e => e.textContent).join()`); got != "buy milk,call Ann" {
		t.Errorf("the file's list items = %q", got)
	}
	p.run(chromedp.Click(chromedp.CSS(`#chat details.call > summary`)))
	if got := p.text(`document.querySelector('#chat details.call').innerText`); strings.Contains(got, `\n`) || !strings.Contains(got, "buy milk") {
		t.Errorf("the writeFile call reads %q, want its Markdown content rendered, no literal \\n", got)
	}
	if got := p.text(`localStorage.getItem('dawn.route')`); got != "/scratchpad" {
		t.Errorf("the remembered route is %q", got)
	}
	p.shot("inspector-files")
}

// testPlanLife: on a harness-owned plan, an item's verifier outcome, the
// plan of the subagent that carried an item out, the items a revision
// dropped and the revisions with their diffs are drawn on the plan card,
// from the shapes the harness sends (a plan_update with revised and
// dropped, GET /threads/:id/plan/revisions).
func testPlanLife(t *testing.T, browserCtx context.Context) {
	dropped := `{"id":"s0002","content":"Ask legal","status":"pending","dropped":true,"revision":2}`
	revised := `{"n":2,"source":"model","change":"writeTodos","reason":"legal is not needed","diff":{"added":["Research"],"removed":[` + dropped + `]}}`
	update := `{"state":"running","revision_n":2,"items":[` +
		`{"id":"s0001","content":"Build","status":"completed","attempts":0,"verification":{"verified_by":"go build ./...","passed":true,"exit_code":0}},` +
		`{"id":"s0003","content":"Research","status":"in_progress","attempts":0,"children":[{"call_id":"call_1","subagent":"researcher","route_id":"/research/subagents/researcher","owned":false,"todos":[{"id":"0","content":"Find sources","status":"completed","attempts":0}]}]}],` +
		`"revised":` + revised + `,"dropped":[` + dropped + `]}`
	f := &fakeAPI{
		streams:   []string{"event: plan_update\ndata: " + update + "\n\nevent: plan_revised\ndata: " + revised + "\n\nevent: done\ndata: {\"output\":{}}\n\n"},
		revisions: `{"thread_id":"x","revisions":[{"n":1,"source":"harness","change":"seeded from plan.md"},` + revised + `],"total":2,"trimmed":0,"dropped":[` + dropped + `]}`,
	}
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	p := openPage(t, browserCtx, srv.URL)
	p.send("Go")
	p.waitFor("the plan", `document.querySelector('#plan-dropped li') && !`+sendDisabled)
	var rows []string
	p.eval(`[...document.querySelectorAll('#plan-items li')].map(e => e.querySelector('.item-btn').textContent)`, &rows)
	want := []string{"✓Buildverified by go build ./... (completed)", "▶Research (in progress, current)", "✓Find sources (completed)"}
	if !slices.Equal(rows, want) {
		t.Errorf("plan items = %q, want %q", rows, want)
	}
	if got := p.text(`document.querySelector('#plan-items .child .subplan-head').textContent`); !strings.Contains(got, "researcher") {
		t.Errorf("the child plan's heading = %q, want the subagent", got)
	}
	if got := p.text(`document.querySelector('#plan-dropped li').textContent`); got != "Ask legal dropped in revision 2, pending" {
		t.Errorf("the dropped item reads %q", got)
	}
	if got := p.text(`[...document.querySelectorAll('#chat .steps > li.note')].map(e => e.textContent).join('|')`); !strings.Contains(got, "plan revised (revision 2, by the model): writeTodos (legal is not needed)") {
		t.Errorf("the run's notes = %q, want the revision", got)
	}
	p.run(chromedp.Click(chromedp.ID("plan-revisions")))
	p.waitFor("the revisions", `document.querySelectorAll('#revision-list > li').length === 2`)
	if got := p.text(`document.querySelector('#revision-list > li[data-revision="2"]').textContent`); !strings.Contains(got, "legal is not needed") || !strings.Contains(got, "+ Research") || !strings.Contains(got, "− Ask legal (dropped unfinished)") {
		t.Errorf("revision 2 reads %q, want its reason, the added item and the dropped one", got)
	}
}
