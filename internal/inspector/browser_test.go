package inspector_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
	"github.com/dawn-go/dawn/dawntest"
	"github.com/dawn-go/dawn/stream"
	"github.com/tmc/langchaingo/llms"
)

// TestInspectorInBrowser drives the real page in headless Chromium against
// a server on a copy of examples/app with the offline model.
func TestInspectorInBrowser(t *testing.T) {
	browserCtx := browser(t)
	t.Run("plan card follows the plan and the supervisor", func(t *testing.T) { testPlanCard(t, browserCtx) })
	t.Run("pause and cancel a run in flight", func(t *testing.T) { testPauseInFlight(t, browserCtx) })
	t.Run("a reload rejoins the run in flight", func(t *testing.T) { testReload(t, browserCtx) })
	t.Run("a dropped connection rejoins after the last event", func(t *testing.T) { testDroppedStream(t, browserCtx) })
	t.Run("subagent plans nest under their call", func(t *testing.T) { testSubagentPlan(t, browserCtx) })
	t.Run("the SSE parser reads what the server writes", func(t *testing.T) { testSSEParser(t, browserCtx) })
	t.Run("an answer the gate rejects is taken back", func(t *testing.T) { testRejectedAnswer(t, browserCtx) })
	t.Run("a call that needs approval is edited, refused and approved from the page", func(t *testing.T) { testToolApproval(t, browserCtx) })
	t.Run("a proposed plan is approved from the page", func(t *testing.T) { testPlanApproval(t, browserCtx, false) })
	t.Run("a proposed plan is edited from the page", func(t *testing.T) { testPlanApproval(t, browserCtx, true) })
	t.Run("step, DAG and unknown interrupts send their payloads", func(t *testing.T) { testOtherKinds(t, browserCtx) })
	t.Run("model calls show their duration and tokens", func(t *testing.T) { testModelCalls(t, browserCtx) })
	t.Run("a thread in order, parked, reloaded, forked and refused", func(t *testing.T) { testThreadInOrder(t, browserCtx) })
	t.Run("workspace files and Markdown arguments", func(t *testing.T) { testWorkspaceFiles(t, browserCtx) })
	t.Run("the plan's life: dropped items, verifiers, subagent plans, revisions", func(t *testing.T) { testPlanLife(t, browserCtx) })
}

// testModelCalls: each model call is a row of the timeline with its
// duration, and with its tokens when the provider reported them, the
// input tokens read from its prompt cache included (the scripted first
// call does, the second does not).
func testModelCalls(t *testing.T, browserCtx context.Context) {
	dir := exampleApp(t)
	if err := os.MkdirAll(filepath.Join(dir, "plain"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "plain", "agent.md"), []byte("You answer."), 0o644); err != nil {
		t.Fatal(err)
	}
	todos := map[string]any{"todos": []map[string]string{{"content": "Answer", "status": "completed"}}}
	args, _ := json.Marshal(todos)
	model := dawntest.Script().Then(func([]llms.MessageContent, llms.CallOptions) (*llms.ContentResponse, error) {
		call := llms.ToolCall{ID: "c1", Type: "function", FunctionCall: &llms.FunctionCall{Name: "writeTodos", Arguments: string(args)}}
		return &llms.ContentResponse{Choices: []*llms.ContentChoice{{
			ToolCalls: []llms.ToolCall{call}, StopReason: "tool_calls",
			GenerationInfo: map[string]any{"PromptTokens": 21, "CompletionTokens": 9, "PromptCachedTokens": 8},
		}}}, nil
	}).Reply("Answered.")
	p := openPage(t, browserCtx, startServerWith(t, dir, model).URL)
	p.pickRoute("/plain")
	p.send("Answer me")
	p.waitFor("the run to end", `[...document.querySelectorAll('#chat .msg.assistant')].some(e => e.textContent === 'Answered.') && !document.getElementById('send-button').disabled`)
	var rows []string
	p.eval(`[...document.querySelectorAll('#chat .steps > li.model-call')].map(e => e.dataset.durationMs + '|' + e.textContent)`, &rows)
	if len(rows) != 2 {
		t.Fatalf("timeline model-call rows = %q, want one per model call (2)", rows)
	}
	for i, want := range []string{"21 in (8 cached) / 9 out tokens · tool_calls", "stop"} {
		ms, text, _ := strings.Cut(rows[i], "|")
		if ms == "" || !strings.Contains(text, " ms") || !strings.Contains(text, ms+" ms") || !strings.HasSuffix(text, want) {
			t.Errorf("model call %d row = %q, want its duration in ms and %q", i+1, rows[i], want)
		}
	}
	if strings.Contains(rows[1], "tokens") {
		t.Errorf("second model call row = %q; the model reported no tokens", rows[1])
	}
}

// testRejectedAnswer: on a route whose plan the harness owns, the model
// answers before the plan is done. That answer streams, then the gate
// rejects it (answer_rejected): the page takes its text back and shows only
// the accepted answer, live and after a reload.
func testRejectedAnswer(t *testing.T, browserCtx context.Context) {
	dir := exampleApp(t)
	if err := os.MkdirAll(filepath.Join(dir, "quick"), 0o755); err != nil {
		t.Fatal(err)
	}
	for name, text := range map[string]string{
		"quick/agent.md": "You do one thing.",
		"quick/plan.md":  "---\nenforce: true\n---\n- [ ] The one thing\n",
	} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	done := map[string]any{"todos": []map[string]string{{"content": "The one thing", "status": "completed"}}, "reason": "did it"}
	model := dawntest.Script().Reply("All done, bye!").CallTool("writeTodos", done).Reply("Finished for real.")
	p := openPage(t, browserCtx, startServerWith(t, dir, model).URL)
	p.pickRoute("/quick")
	p.send("Do the thing")
	p.waitFor("the run to end", `document.querySelector('#plan-items .completed') && !document.getElementById('send-button').disabled`)
	answers := `JSON.stringify([...document.querySelectorAll('#chat .msg.assistant')].map(e => e.textContent))`
	if got := p.text(answers); got != `["Finished for real."]` {
		t.Errorf("live answers = %s, want only the accepted one", got)
	}
	p.run(chromedp.Reload())
	p.waitFor("the page to come back", `document.body.dataset.ready === 'true' && document.querySelector('#chat .msg.assistant')`)
	if got := p.text(answers); got != `["Finished for real."]` {
		t.Errorf("answers after a reload = %s, want only the accepted one", got)
	}
}

func testPlanCard(t *testing.T, browserCtx context.Context) {
	base := devServer(t, exampleApp(t), 200*time.Millisecond)
	p := openPage(t, browserCtx, base)
	reportWeight(t, p)

	// Before any run the card shows plan.md's seed as a draft.
	p.pickRoute("/onboarding")
	p.waitFor("the seed plan", `document.querySelectorAll('#plan-items > li').length === 5`)
	var items []string
	p.eval(`[...document.querySelectorAll('#plan-items .text')].map(e => e.textContent)`, &items)
	if !slices.Equal(items, onboardingSeed) {
		t.Fatalf("plan card items = %q, want the seed %q", items, onboardingSeed)
	}
	if g, b := p.glyphs(), p.badge(); g != "○○○○○" || b != "draft" {
		t.Fatalf("seed plan: glyphs %q badge %q, want ○○○○○ and draft", g, b)
	}
	if goal := p.text(`document.getElementById('plan-goal').textContent`); goal != "Get the new customer to a working login" {
		t.Errorf("goal = %q", goal)
	}

	// Send a message: the plan moves one item per plan_update until the
	// auto budget (3) is spent and the plan pauses itself.
	p.send("Please onboard acme.com")
	seen := []string{p.glyphs()}
	deadline := time.Now().Add(wait)
	for p.badge() != "paused" {
		if g := p.glyphs(); g != seen[len(seen)-1] {
			seen = append(seen, g)
		}
		if time.Now().After(deadline) {
			t.Fatalf("the plan never paused; glyphs seen %q, badge %q", seen, p.badge())
		}
		time.Sleep(10 * time.Millisecond)
	}
	seen = append(seen, p.glyphs())
	// What a poll sees depends on the machine's load; the card's own
	// record of its renders below is what shows it followed every step.
	t.Logf("glyphs seen while polling the card: %q", seen)
	var renders []string
	p.eval(`window.__dawnMetrics.renders`, &renders)
	for _, want := range []string{"▶○○○○", "✓▶○○○", "✓✓▶○○", "✓✓✓▶○"} {
		if !slices.Contains(renders, want) {
			t.Errorf("the card never showed %s; it showed %q", want, renders)
		}
	}
	if g := p.glyphs(); g != "✓✓✓▶○" {
		t.Errorf("glyphs after the budget pause = %q, want ✓✓✓▶○", g)
	}
	if b := p.text(`document.getElementById('plan-budget').textContent`); b != "⚡0" {
		t.Errorf("budget indicator = %q, want ⚡0", b)
	}
	if cur := p.text(`document.querySelector('#plan-items > li[aria-current=step] .text').textContent`); cur != onboardingSeed[3] {
		t.Errorf("the current item is %q, want %q", cur, onboardingSeed[3])
	}
	thread := p.thread()
	if thread == "" {
		t.Fatal("the page did not put the thread id in the URL")
	}
	if sp := getPlan(t, base, thread); sp.State != "paused" || sp.PauseReason != "budget" {
		t.Fatalf("server plan after the budget pause: state %q reason %q, want paused/budget", sp.State, sp.PauseReason)
	}
	var m struct {
		FirstPlanUpdateAt float64 `json:"firstPlanUpdateAt"`
		FirstRepaintMs    float64 `json:"firstRepaintMs"`
		PlanUpdates       int     `json:"planUpdates"`
		RepaintMs         []float64
	}
	p.eval(`window.__dawnMetrics`, &m)
	if m.PlanUpdates == 0 {
		t.Fatal("window.__dawnMetrics counted no plan_update")
	}
	t.Logf("first plan_update on the wire → card repainted: %.2f ms (max over %d updates: %.2f ms)", m.FirstRepaintMs, len(m.RepaintMs), slices.Max(m.RepaintMs))

	// Evidence expands on click.
	p.run(chromedp.Click(chromedp.CSS(`#plan-items > li:first-child > .item-btn`)))
	p.waitFor("the first item's evidence to open", `!document.querySelector('#plan-items > li:first-child > .evidence').hidden`)
	if ev := p.text(`document.querySelector('#plan-items > li:first-child > .evidence').textContent`); !strings.Contains(ev, "Evidence: offline model: finished") {
		t.Errorf("first item's evidence = %q", ev)
	}
	p.screenshotFor("DAWN_INSPECTOR_SCREENSHOT")

	// Resume from the keyboard: focus the button and press Enter.
	p.run(chromedp.Focus(chromedp.ID("resume")), chromedp.KeyEvent(kb.Enter))
	p.waitFor("the badge to read running after Resume", `document.getElementById('plan-state').textContent === 'running'`)
	if sp := getPlan(t, base, thread); sp.State != "running" {
		t.Fatalf("server plan after Resume: %q, want running", sp.State)
	}
	// Resume is disabled now, so the keyboard focus moved on to Pause,
	// which shows a visible focus ring.
	if f := p.text(`document.activeElement.id + ' ' + getComputedStyle(document.activeElement).outlineStyle`); f != "pause solid" {
		t.Errorf("after Resume from the keyboard the focus is on %q, want Pause with a solid outline", f)
	}
	var labels []string
	p.eval(`[...document.querySelectorAll('button')].filter(b => !(b.getAttribute('aria-label') || b.textContent).trim()).map(b => b.outerHTML)`, &labels)
	if len(labels) > 0 {
		t.Errorf("buttons without an accessible name: %q", labels)
	}

	// Pause with no run in flight changes the saved plan.
	p.run(chromedp.Click(chromedp.ID("pause")))
	p.waitFor("the badge to read paused after Pause", `document.getElementById('plan-state').textContent === 'paused'`)
	if sp := getPlan(t, base, thread); sp.State != "paused" || sp.PauseReason != "supervisor" || sp.RunInFlight {
		t.Fatalf("server plan after Pause: %+v, want paused by the supervisor", sp)
	}
	p.run(chromedp.Click(chromedp.ID("resume")))
	p.waitFor("the badge to read running after the second Resume", `document.getElementById('plan-state').textContent === 'running'`)

	// Another message finishes the plan, sent with Enter from the box.
	p.run(chromedp.SendKeys(chromedp.ID("message"), "Carry on"), chromedp.KeyEvent(kb.Enter))
	p.waitFor("the plan to finish", `document.getElementById('plan-state').textContent === 'done' && !document.getElementById('send-button').disabled`)
	if g := p.glyphs(); g != "✓✓✓✓✓" {
		t.Errorf("glyphs when done = %q", g)
	}
	if sp := getPlan(t, base, thread); sp.State != "done" {
		t.Errorf("server plan at the end: %q, want done", sp.State)
	}
	checkAnswerApart(t, p)

	// A reload shows the same thread, plan and answer.
	p.run(chromedp.Reload())
	p.waitFor("the page to come back", `document.body.dataset.ready === 'true'`)
	p.waitFor("the finished plan after the reload", `document.getElementById('plan-state').textContent === 'done'`)
	if g := p.glyphs(); g != "✓✓✓✓✓" {
		t.Errorf("glyphs after the reload = %q", g)
	}
	if n := p.text(`String(document.querySelectorAll('#chat .msg.assistant').length)`); n != "1" {
		t.Errorf("after the reload the conversation has %s answers, want 1 (the first run paused before answering)", n)
	}
}

// testPauseInFlight clicks Pause while the model is working: the run stops
// at its next step boundary, and Cancel then ends the plan.
func testPauseInFlight(t *testing.T, browserCtx context.Context) {
	base := devServer(t, exampleApp(t), 300*time.Millisecond)
	p := openPage(t, browserCtx, base)
	p.pickRoute("/onboarding")
	p.send("Onboard globex.com")
	p.waitFor("the first item to start", `document.querySelector('#plan-items .in_progress')`)
	p.run(chromedp.Click(chromedp.ID("pause")))
	p.waitFor("the badge to read paused", `document.getElementById('plan-state').textContent === 'paused'`)
	thread := p.thread()
	sp := getPlan(t, base, thread)
	if sp.State != "paused" || sp.PauseReason != "supervisor" || sp.RunInFlight {
		t.Fatalf("server plan after Pause in flight: %+v, want paused by the supervisor with the run stopped", sp)
	}
	if g := p.glyphs(); g == "✓✓✓▶○" || strings.Count(g, "✓") >= 3 {
		t.Errorf("glyphs %q: the plan went on to the budget pause instead of stopping for the supervisor", g)
	}
	p.waitFor("the run to end", `!document.getElementById('send-button').disabled`)
	p.run(chromedp.Click(chromedp.ID("cancel")))
	p.waitFor("the badge to read cancelled", `document.getElementById('plan-state').textContent === 'cancelled'`)
	if sp := getPlan(t, base, thread); sp.State != "cancelled" {
		t.Fatalf("server plan after Cancel: %q, want cancelled", sp.State)
	}
	var disabled []bool
	p.eval(`['pause','resume','cancel'].map(id => document.getElementById(id).disabled)`, &disabled)
	if !slices.Equal(disabled, []bool{true, true, true}) {
		t.Errorf("buttons disabled = %v on a cancelled plan, want all disabled", disabled)
	}
}

// checkAnswerApart checks the answer streamed into the conversation and the
// tool calls went to the timeline, collapsed.
func checkAnswerApart(t *testing.T, p *page) {
	t.Helper()
	answer := p.text(`[...document.querySelectorAll('#chat .msg.assistant')].map(e => e.textContent).join('\n')`)
	if !strings.Contains(answer, "Offline model:") {
		t.Errorf("conversation answer = %q, want the offline model's answer", answer)
	}
	if strings.Contains(answer, "writeTodos") || strings.Contains(answer, `"todos"`) {
		t.Errorf("plan or tool data leaked into the answer: %q", answer)
	}
	var calls, open int
	p.eval(`document.querySelectorAll('#chat details.call').length`, &calls)
	p.eval(`document.querySelectorAll('#chat details.call[open]').length`, &open)
	if calls == 0 || open != 0 {
		t.Errorf("timeline: %d calls, %d open; want calls, all collapsed", calls, open)
	}
}

func testReload(t *testing.T, browserCtx context.Context) {
	base := devServer(t, exampleApp(t), 250*time.Millisecond)
	p := openPage(t, browserCtx, base)
	p.pickRoute("/support/[tenant]")
	p.run(chromedp.SetValue(chromedp.CSS(`#params input[data-param=tenant]`), "acme"))
	p.send("My invoice looks wrong")
	p.waitFor("the first plan_update", `document.querySelector('#plan-items .in_progress')`)
	before := p.glyphs()
	p.run(chromedp.Reload())
	p.waitFor("the page to come back", `document.body.dataset.ready === 'true'`)
	p.waitFor("the plan to show progress after the reload", `document.querySelector('#plan-items .in_progress, #plan-items .completed')`)
	mid := p.glyphs()
	p.waitFor("the rejoined run to finish", `document.querySelectorAll('#plan-items .completed').length === 4 && !document.getElementById('send-button').disabled`)
	t.Logf("glyphs before the reload %q, right after %q, at the end %q", before, mid, p.glyphs())
	if n := p.text(`String(document.querySelectorAll('#chat .msg.assistant').length)`); n != "1" {
		t.Errorf("after rejoining, the conversation has %s answers, want 1", n)
	}
	if n := p.text(`String(document.querySelectorAll('#chat .msg.user').length)`); n != "1" {
		t.Errorf("after rejoining, the conversation has %s user messages, want 1", n)
	}
	if route := p.text(`document.getElementById('route').value`); route != "/support/[tenant]" {
		t.Errorf("route picker after the reload = %q", route)
	}
	checkAnswerApart(t, p)
	// Pause, Resume and Cancel are the harness's: a plan without enforce
	// has none of them, not even disabled.
	var shown []bool
	p.eval(`['pause','resume','cancel'].map(id => document.getElementById(id).checkVisibility())`, &shown)
	if !slices.Equal(shown, []bool{false, false, false}) {
		t.Errorf("Pause, Resume, Cancel visible = %v on a plan without enforce, want none shown", shown)
	}
}

// testDroppedStream cuts every connection mid-run: the page rejoins the
// run after the last event it saw, so nothing is lost or shown twice.
func testDroppedStream(t *testing.T, browserCtx context.Context) {
	srv := startServer(t, exampleApp(t), 250*time.Millisecond)
	p := openPage(t, browserCtx, srv.URL)
	p.pickRoute("/support/[tenant]")
	p.send("Where is my invoice?")
	p.waitFor("the first plan_update", `document.querySelector('#plan-items .in_progress')`)
	srv.CloseClientConnections()
	p.waitFor("the run to finish after the drop", `document.querySelectorAll('#plan-items .completed').length === 4 && !document.getElementById('send-button').disabled`)
	answer := p.text(`[...document.querySelectorAll('#chat .msg.assistant')].map(e => e.textContent).join('|')`)
	if strings.Count(answer, "Offline model:") != 1 || strings.Contains(answer, "|") {
		t.Errorf("answer after the drop = %q, want one answer, once", answer)
	}
	resp, err := http.Get(srv.URL + "/threads/" + p.thread() + "/runs")
	if err != nil {
		t.Fatal(err)
	}
	var runs []struct {
		RunID string `json:"run_id"`
	}
	err = json.NewDecoder(resp.Body).Decode(&runs)
	resp.Body.Close()
	if err != nil || len(runs) != 1 {
		t.Fatalf("runs: %v %+v", err, runs)
	}
	resp, err = http.Get(srv.URL + "/threads/" + p.thread() + "/runs/" + runs[0].RunID + "/stream")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	var calls int
	p.eval(`document.querySelectorAll('#chat details.call').length`, &calls)
	if want := strings.Count(string(body), "event: tool_call\n"); calls != want {
		t.Errorf("timeline shows %d calls, the run made %d", calls, want)
	}
}

func testSubagentPlan(t *testing.T, browserCtx context.Context) {
	base := devServer(t, exampleApp(t), 20*time.Millisecond)
	p := openPage(t, browserCtx, base)
	p.pickRoute("/research")
	p.send("How do solar panels degrade?")
	p.waitFor("the research plan to finish", `document.querySelectorAll('#plan-items .completed').length === 3 && !document.getElementById('send-button').disabled`)
	head := p.text(`(document.querySelector('#plan .subplan .subplan-head') || {}).textContent || ''`)
	if !strings.Contains(head, "researcher") || !strings.Contains(head, "task") {
		t.Errorf("subagent plan heading = %q, want the researcher and its task call", head)
	}
	var sub []string
	p.eval(`[...document.querySelectorAll('#plan .subplan .items > li')].map(li => li.querySelector('.glyph').textContent + li.querySelector('.text').textContent)`, &sub)
	if !slices.Equal(sub, []string{"✓Find sources", "✓Summarize findings"}) {
		t.Errorf("subagent plan = %q", sub)
	}
	var nested int
	p.eval(`document.querySelectorAll('#chat .run > .steps > li > details.call ol details.call').length`, &nested)
	if nested == 0 {
		t.Error("the subagent's tool calls are not nested under the task call in the timeline")
	}
}

// testSSEParser feeds the page's parser what stream.AppendSSE writes, cut
// at every byte, plus the other line endings and comments SSE allows.
func testSSEParser(t *testing.T, browserCtx context.Context) {
	base := devServer(t, exampleApp(t), 0)
	p := openPage(t, browserCtx, base)
	var wire []byte
	events := []stream.Event{
		{ID: 1, Type: "chunk", Data: json.RawMessage(`"héllo ✓"`)},
		{ID: 2, Type: "plan_update", Data: json.RawMessage(`{"todos":[{"content":"a","status":"in_progress"}]}`)},
		{ID: 3, Type: "done", Data: json.RawMessage(`{"output":{}}`)},
	}
	for _, e := range events {
		wire = stream.AppendSSE(wire, e)
	}
	tests := []struct {
		name, input, want string
	}{
		{"server output", string(wire), `1 chunk "héllo ✓"|2 plan_update {"todos":[{"content":"a","status":"in_progress"}]}|3 done {"output":{}}`},
		{"CRLF and comments", ": keep-alive\r\n\r\nid: 7\r\nevent: chunk\r\ndata: \"x\"\r\n\r\n", `7 chunk "x"`},
		{"CR only, multi-line data", "event: note\rdata: a\rdata:b\r\r", ` note a` + "\n" + `b`},
		{"no event name", "data: {}\n\n", ` message {}`},
		{"unfinished event is held", "event: chunk\ndata: {}\n", ``},
	}
	for _, tt := range tests {
		var got []string
		p.eval(fmt.Sprintf(`(() => {
			const s = %s, out = new Set();
			for (let k = 0; k <= s.length; k++) {
				const evs = [], feed = window.__dawnSSE(e => evs.push(e.id + ' ' + e.type + ' ' + e.data));
				feed(s.slice(0, k)); feed(s.slice(k), true);
				out.add(evs.join('|'));
			}
			return [...out];
		})()`, jsString(tt.input)), &got)
		if len(got) != 1 || got[0] != tt.want {
			t.Errorf("%s: parsed as %q, want %q at every split", tt.name, got, tt.want)
		}
	}
}

// reportWeight logs the bytes the page load transferred and checks nothing
// came from another origin.
func reportWeight(t *testing.T, p *page) {
	t.Helper()
	var w struct {
		Page     float64  `json:"page"`
		Decoded  float64  `json:"decoded"`
		Requests int      `json:"requests"`
		LoadMs   float64  `json:"loadMs"`
		Foreign  []string `json:"foreign"`
	}
	p.eval(`(() => {
		const nav = performance.getEntriesByType('navigation')[0];
		const assets = performance.getEntriesByType('resource').filter(r => r.initiatorType === 'link' || r.initiatorType === 'script' || r.initiatorType === 'css');
		const all = [nav, ...performance.getEntriesByType('resource')];
		return {
			page: assets.reduce((n, r) => n + r.transferSize, nav.transferSize),
			decoded: assets.reduce((n, r) => n + r.decodedBodySize, nav.decodedBodySize),
			requests: assets.length + 1,
			loadMs: nav.loadEventEnd - nav.startTime,
			foreign: all.filter(r => !r.name.startsWith(location.origin)).map(r => r.name),
		};
	})()`, &w)
	t.Logf("page weight: %d bytes transferred in %d requests (%d bytes decoded), load event after %.1f ms", int(w.Page), w.Requests, int(w.Decoded), w.LoadMs)
	if len(w.Foreign) > 0 {
		t.Errorf("the page fetched from other origins: %q", w.Foreign)
	}
	if w.Page == 0 || w.Page > 30*1024 {
		t.Errorf("page transferred %d bytes, want 0 < n <= 30 KiB", int(w.Page))
	}
}
