/*
 * Dawn dev inspector
 * ==================
 * The page `dawn dev` serves at /_dawn/. It is a plain client of the public
 * HTTP API: no build step, no framework, no request anywhere but the dev
 * server, so it works offline.
 *
 *   GET  /routes                               route picker and plan seed
 *   POST /threads/:id/runs/stream              send a message (SSE back)
 *   GET  /threads/:id/runs/:run/stream?after=N rejoin or replay a run
 *   GET  /threads/:id/state, /threads/:id/runs rebuild the page for a thread
 *   GET  /threads/:id/plan                     the harness-owned plan
 *   POST /threads/:id/plan/pause|resume|cancel the supervisor's buttons
 *   POST /threads/:id/cancel                   stop a run (plans without enforce)
 *   POST /threads/:id/resume                   answer what a parked run waits on
 *
 * Layout, top to bottom: the plan card (runtime state, not chat text), the
 * decisions a parked run waits on, the timeline of tool calls (each
 * collapsed), the conversation (answer text only) and the message box.
 *
 * The thread id lives in the URL hash (#thread=…) and localStorage, so a
 * reload finds it again: the page draws the plan from the thread's state,
 * then replays the newest run's events from the event log (after=0), which
 * for a run still in flight goes on live until its done event.
 *
 * window.__dawnMetrics is for tests and the curious: the time the first
 * plan_update arrived, how long until the card was repainted (the next
 * animation frame after the DOM update), and the glyph line of each render.
 */
'use strict';
(() => {
  const GLYPHS = { pending: '○', in_progress: '▶', completed: '✓', failed: '✗', skipped: '—' };
  const ACTIVE = ['draft', 'running', 'paused'];
  const $ = (id) => document.getElementById(id);
  const metrics = (window.__dawnMetrics = { planUpdates: 0, firstPlanUpdateAt: null, firstRepaintMs: null, repaintMs: [], renders: [] });

  // el builds an element: el('li', {class: 'x'}, child, 'text', ...).
  function el(tag, attrs, ...kids) {
    const e = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (v === false || v == null) continue;
      if (k === 'text') e.textContent = v;
      else if (k.startsWith('on')) e.addEventListener(k.slice(2), v);
      else e.setAttribute(k, v === true ? '' : v);
    }
    for (const k of kids) if (k != null) e.append(k);
    return e;
  }

  // ---- Server-sent events from a fetch body -------------------------------

  // sseParser returns a function to feed text to (final true on the last
  // piece); it calls onEvent with {id, type, data} at each blank line, as
  // the EventSource spec reads them.
  function sseParser(onEvent) {
    let buf = '', id = '', type = '', data = [];
    const line = (l) => {
      if (l === '') {
        if (data.length) onEvent({ id, type: type || 'message', data: data.join('\n') });
        type = ''; data = [];
        return;
      }
      if (l[0] === ':') return;
      const i = l.indexOf(':');
      const field = i < 0 ? l : l.slice(0, i);
      let value = i < 0 ? '' : l.slice(i + 1);
      if (value[0] === ' ') value = value.slice(1);
      if (field === 'event') type = value;
      else if (field === 'data') data.push(value);
      else if (field === 'id') id = value;
    };
    return (text, final) => {
      buf += text;
      let m;
      while ((m = /\r\n|\r|\n/.exec(buf))) {
        if (m[0] === '\r' && m.index === buf.length - 1 && !final) break; // maybe half of \r\n
        line(buf.slice(0, m.index));
        buf = buf.slice(m.index + m[0].length);
      }
    };
  }
  window.__dawnSSE = sseParser; // for the browser test

  async function readStream(resp, onEvent) {
    const reader = resp.body.getReader();
    const decoder = new TextDecoder();
    const feed = sseParser(onEvent);
    st.reader = reader;
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      st.arrivedAt = performance.now();
      feed(decoder.decode(value, { stream: true }));
    }
    feed(decoder.decode(), true);
  }

  // ---- API -----------------------------------------------------------------

  async function api(method, path, body) {
    const resp = await fetch(path, {
      method,
      headers: body === undefined ? {} : { 'Content-Type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await resp.text();
    let json = null;
    try { json = text ? JSON.parse(text) : null; } catch { /* not JSON */ }
    if (!resp.ok) {
      const err = new Error((json && json.error && json.error.message) || `${method} ${path}: HTTP ${resp.status}`);
      err.kind = json && json.error && json.error.kind;
      err.status = resp.status;
      throw err;
    }
    return json;
  }
  const threadPath = (rest) => `/threads/${encodeURIComponent(st.thread)}${rest}`;

  // ---- Page state ----------------------------------------------------------

  const st = {
    routes: [],
    route: null,      // the picked route from GET /routes
    thread: '',       // the thread id; '' before the first message
    known: false,     // the server has this thread
    plan: null,       // see toPlan
    running: false,
    reader: null,     // the stream being read, to cancel on thread switch
    arrivedAt: 0,     // performance.now() when the last bytes arrived
    calls: [],        // top-level timeline entries, in order
    byKey: new Map(), // depth + ':' + call id → entry, the newest wins
    expanded: new Set(),
    answer: null,     // the element the answer streams into
    turnStart: null,  // length of the answer text before the current model turn's chunks
    pending: [],      // interrupts the parked run waits on, see addInterrupt
    messages: [],     // the thread's saved messages, for a held call's arguments
  };

  // toPlan reads a plan from a plan_update event, GET /plan or the seed.
  function toPlan(d, fallbackState) {
    const items = (d.todos || d.items || []).map((it, i) => ({
      id: it.id || String(i), content: it.content || it.Content || '', status: it.status || it.Status || 'pending',
      evidence: it.evidence || '', attempts: it.attempts || 0,
    }));
    return {
      enforced: !!d.state, state: d.state || fallbackState || '', goal: d.goal || '', items,
      postconditions: d.postconditions || [], advance: d.advance || '', budgetLeft: d.budget_left,
      pauseReason: d.pause_reason || '', reason: d.reason || '',
    };
  }

  // badgeOf is the state shown on the card. Plans without enforce: true have
  // no lifecycle of their own; the badge follows the run.
  function badgeOf(p) {
    if (p.enforced || p.state === 'draft') return p.state;
    if (st.running) return 'running';
    return p.items.length && p.items.every((it) => it.status !== 'pending' && it.status !== 'in_progress') ? 'done' : 'idle';
  }

  // ---- Plan card -----------------------------------------------------------

  function itemRow(it, key, current) {
    const open = st.expanded.has(key);
    const detail = [it.evidence ? `Evidence: ${it.evidence}` : 'No evidence or result recorded yet.'];
    if (it.attempts) detail.push(`Attempts: ${it.attempts}`);
    if (it.id && !/^\d+$/.test(it.id)) detail.push(`Id: ${it.id}`);
    const evId = `ev-${key.replace(/[^\w-]/g, '_')}`;
    return el('li', { class: `${it.status}${current ? ' current' : ''}`, 'aria-current': current ? 'step' : false, 'data-key': key },
      el('button', { type: 'button', class: 'item-btn', 'aria-expanded': String(open), 'aria-controls': evId, onclick: () => toggle(key) },
        el('span', { class: 'glyph', 'aria-hidden': 'true', text: GLYPHS[it.status] || '?' }),
        el('span', { class: 'text', text: it.content }),
        el('span', { class: 'sr', text: ` (${it.status.replace('_', ' ')}${current ? ', current' : ''})` })),
      el('div', { id: evId, class: 'evidence', hidden: !open, text: detail.join('\n') }));
  }

  function toggle(key) {
    if (st.expanded.has(key)) st.expanded.delete(key); else st.expanded.add(key);
    renderPlan();
  }

  function itemList(p, prefix) {
    const cur = p.items.findIndex((it) => it.status === 'in_progress');
    return p.items.map((it, i) => itemRow(it, prefix + it.id, i === cur));
  }

  // subplanBlocks draws the plans of subagents spawned by entry's call and by
  // the calls below it.
  function subplanBlocks(entry) {
    const out = [];
    if (entry.subplan) {
      const p = entry.subplan;
      out.push(el('div', { class: 'subplan', 'data-call': entry.id },
        el('div', { class: 'subplan-head' },
          `↳ ${entry.subagent || 'subagent'} `, el('small', { text: `(${entry.name} ${entry.id})` }), ' ',
          el('span', { class: `badge ${badgeOf(p)}`, text: badgeOf(p) })),
        el('ol', { class: 'items' }, ...itemList(p, entry.key + '/'))));
    }
    for (const c of entry.children) out.push(...subplanBlocks(c));
    return out;
  }

  function renderPlan() {
    const p = st.plan;
    const card = $('plan');
    card.hidden = !p;
    if (!p) return;
    const focused = document.activeElement && document.activeElement.closest('#plan li[data-key]');
    const focusKey = focused && focused.getAttribute('data-key');
    const badge = badgeOf(p);
    $('plan-state').textContent = badge;
    $('plan-state').className = `badge ${badge}`;
    let goal = p.goal;
    if (p.state === 'paused' && p.pauseReason) goal += `${goal ? ' ' : ''}(paused: ${p.pauseReason})`;
    if ((p.state === 'failed' || p.state === 'cancelled') && p.reason) goal += `${goal ? ' ' : ''}(${p.reason})`;
    $('plan-goal').textContent = goal;
    $('plan-budget').textContent = p.advance === 'auto' && p.budgetLeft != null ? `⚡${p.budgetLeft}` : '';

    // Subagent plans hang under the item that was current when their call began.
    const under = new Map();
    for (const c of st.calls) {
      const blocks = subplanBlocks(c);
      if (!blocks.length) continue;
      const at = c.item >= 0 && c.item < p.items.length ? c.item : -1;
      under.set(at, (under.get(at) || []).concat(blocks));
    }
    const rows = itemList(p, '');
    rows.forEach((row, i) => { for (const b of under.get(i) || []) row.append(b); });
    $('plan-items').replaceChildren(...rows);
    const loose = under.get(-1) || [];
    $('subplans').replaceChildren(...(loose.length ? [el('h3', { text: 'Subagent plans' }), ...loose] : []));

    const post = $('plan-post');
    post.hidden = !p.postconditions.length;
    post.querySelector('ul').replaceChildren(...p.postconditions.map((pc, i) => itemRow(
      { id: `pc${i}`, content: pc.content, status: pc.verified ? 'completed' : 'pending', evidence: pc.evidence || '' }, `post/${i}`, false)));
    renderControls();
    if (focusKey) {
      const again = card.querySelector(`li[data-key="${CSS.escape(focusKey)}"] > .item-btn`);
      if (again) again.focus();
    }
    metrics.renders.push(p.items.map((it) => GLYPHS[it.status] || '?').join(''));
    if (metrics.renders.length > 500) metrics.renders.shift();
  }

  function renderControls() {
    const p = st.plan;
    const busy = st.supervising;
    if (p && p.enforced) {
      $('pause').disabled = busy || !st.known || !['draft', 'running'].includes(p.state);
      $('resume').disabled = busy || !st.known || p.state !== 'paused';
      $('cancel').disabled = busy || !st.known || !ACTIVE.includes(p.state);
      $('pause').title = $('resume').title = $('cancel').title = '';
    } else {
      const why = 'Pause and Resume need enforce: true in the front matter of this route\'s plan.md';
      $('pause').disabled = $('resume').disabled = true;
      $('pause').title = $('resume').title = why;
      $('cancel').disabled = busy || !st.running;
      $('cancel').title = 'Cancel the run in flight';
    }
  }

  function onPlanUpdate(d) {
    const arrived = st.arrivedAt || performance.now();
    const first = metrics.planUpdates++ === 0;
    if (first) metrics.firstPlanUpdateAt = arrived;
    st.plan = toPlan(d, st.running ? 'running' : '');
    renderPlan();
    requestAnimationFrame(() => {
      const ms = performance.now() - arrived;
      if (first) metrics.firstRepaintMs = ms;
      metrics.repaintMs.push(ms);
      if (metrics.repaintMs.length > 500) metrics.repaintMs.shift();
    });
  }

  async function supervise(action) {
    if (!st.thread) return;
    const had = document.activeElement; // disabling the buttons below drops it
    st.supervising = true;
    renderControls();
    $('plan-note').textContent = '';
    try {
      if (st.plan && st.plan.enforced) {
        st.plan = toPlan(await api('POST', threadPath(`/plan/${action}`)));
      } else if (action === 'cancel') {
        await api('POST', threadPath('/cancel'));
      }
    } catch (err) {
      $('plan-note').textContent = err.message;
    } finally {
      st.supervising = false;
      renderPlan();
      // Give the keyboard focus back, or, when that button is now disabled,
      // to the control that makes sense next (Resume → Pause and back).
      if (had && had.closest && had.closest('.controls')) {
        const next = had.disabled ? ['pause', 'resume', 'cancel'].map($).find((b) => !b.disabled) : had;
        if (next) next.focus();
      }
    }
  }

  // refreshPlan reads the plan as the server has it now: GET /plan for a
  // harness-owned plan, else the todos in the thread's state.
  async function refreshPlan() {
    if (!st.known) return;
    try {
      st.plan = toPlan(await api('GET', threadPath('/plan')));
    } catch (err) {
      if (err.kind !== 'plan_not_found') return;
      const s = await api('GET', threadPath('/state')).catch(() => null);
      if (s && s.values && Array.isArray(s.values.todos)) st.plan = toPlan({ todos: s.values.todos });
    }
    renderPlan();
  }

  // seedPlan is the route's plan.md before any run: a draft.
  function seedPlan(route) {
    const d = (route && route.details && route.details.planning) || {};
    if (!route || !Array.isArray(route.seed)) return null;
    const post = (d.postconditions || []).map((c) => ({ content: c }));
    return toPlan({ todos: route.seed, state: d.enforce ? 'draft' : '', goal: d.goal, advance: d.advance, postconditions: post }, 'draft');
  }

  // ---- Timeline ------------------------------------------------------------

  function resetTimeline() {
    st.calls = [];
    st.byKey = new Map();
    $('timeline').replaceChildren();
    $('timeline-count').textContent = '';
  }

  function addCall(depth, parent, d) {
    const cur = st.plan ? st.plan.items.findIndex((it) => it.status === 'in_progress') : -1;
    const entry = {
      key: `${depth}:${d.id}:${st.byKey.size}`, id: d.id || '', name: d.name || '', depth, input: d.input,
      item: parent ? parent.item : cur, children: [], subplan: null, subagent: '', streaming: false,
    };
    const mark = el('span', { class: 'mark', 'aria-hidden': 'true', text: '…' });
    const meta = el('span', { class: 'meta', text: 'running' });
    const out = el('pre', { class: 'out', text: '(waiting for the result)' });
    const kids = el('ol');
    entry.el = { details: el('details', { class: 'call' },
      el('summary', {}, mark, ' ', el('span', { class: 'name', text: entry.name }), ' ', meta),
      el('div', { class: 'note', text: 'Input' }), el('pre', { text: pretty(d.input) }),
      el('div', { class: 'note', text: 'Result' }), out, kids), mark, meta, out, kids };
    st.byKey.set(`${depth}:${d.id}`, entry);
    (parent ? parent.children : st.calls).push(entry);
    (parent ? parent.el.kids : $('timeline')).append(el('li', {}, entry.el.details));
    $('timeline-count').textContent = `(${st.byKey.size} call${st.byKey.size === 1 ? '' : 's'})`;
    return entry;
  }

  function finishCall(depth, d) {
    const entry = st.byKey.get(`${depth}:${d.id}`);
    if (!entry) return;
    const failed = d.error != null && d.error !== '' && d.error !== false;
    entry.el.details.classList.add(failed ? 'error' : 'ok');
    entry.el.mark.textContent = failed ? '✗' : '✓';
    entry.el.meta.textContent = failed ? 'failed' : 'done';
    entry.el.out.textContent = failed ? `${pretty(d.error)}\n${pretty(d.output)}`.trim() : pretty(d.output);
  }

  function pretty(v) {
    if (v == null) return '';
    if (typeof v === 'string') return v;
    return JSON.stringify(v, null, 2);
  }

  // ---- Decisions -----------------------------------------------------------

  // A parked run waits on interrupts: GET /threads/:id/state lists them, a
  // live run sends `interrupt` events. Each is drawn with what its kind
  // allows; POST /threads/:id/resume answers all of them at once, so the
  // answers are sent when the last one has its answer.
  //
  // DECISIONS gives, per kind, its buttons: [payload, label] sends the
  // payload; [name, label, form] opens a form whose payload(text) makes the
  // payload, or throws an Error whose message is shown instead.
  const DECISIONS = {
    tool: (it) => [['once', 'Approve once'], ['always', 'Always allow'], ['deny', 'Deny'],
      ['edit', 'Edit', { label: 'Arguments (JSON)', text: () => pretty(callArgs(it)), payload: (s) => ({ decision: 'edit', args: jsonObject(s, 'The arguments') }) }]],
    plan: (it) => [['approve', 'Approve'],
      ['edit', 'Edit', { label: 'Plan (JSON)', text: () => pretty(it.detail && it.detail.plan ? { plan: it.detail.plan } : it.detail), payload: (s) => ({ decision: 'edit', ...jsonObject(s, 'The plan') }) }],
      ['reject', 'Reject']],
    // A step offers the decisions its detail lists (a plan-first step
    // cannot be revised), all four when it lists none.
    step: (it) => [['continue', 'Continue'], ['skip', 'Skip'],
      ['revise', 'Revise', { label: 'What to change', text: () => '', payload: (s) => {
        if (!s.trim()) throw new Error('Write what to change.');
        return { decision: 'revise', note: s.trim() };
      } }],
      ['cancel', 'Cancel']].filter(([name]) => !Array.isArray(it.detail.decisions) || it.detail.decisions.includes(name)),
  };
  // freeForm answers a kind the page does not know: JSON, or else the text.
  const freeForm = { label: 'Payload (JSON, or text sent as a string)', text: () => '', open: true, payload: (s) => {
    if (!s.trim()) throw new Error('Write a payload.');
    try { return JSON.parse(s); } catch { return s; }
  } };

  function jsonObject(s, what) {
    let v;
    try { v = JSON.parse(s); } catch (err) { throw new Error(`${what} are not JSON: ${err.message}`); }
    if (!v || typeof v !== 'object' || Array.isArray(v)) throw new Error(`${what} must be one JSON object.`);
    return v;
  }

  // callArgs is the full arguments of the call a tool interrupt holds: from
  // its tool_call event, else the saved messages, else the preview.
  function callArgs(it) {
    const call = st.byKey.get(`${it.path.length}:${it.callId}`);
    if (call && call.input !== undefined) return call.input;
    for (const m of st.messages) for (const c of m.tool_calls || []) if (c.id === it.callId) return c.input;
    try { return JSON.parse(it.detail.argsPreview); } catch { return it.detail.argsPreview || {}; }
  }

  function titleOf(it) {
    const where = it.path.length ? ` (in the subagent of call ${it.path.join(' › ')})` : '';
    const d = it.detail;
    if (it.kind === 'tool') return `Approve a call of ${d.toolName || 'a tool'}?${where}`;
    if (it.kind === 'plan') return `Approve this plan?${where}`;
    if (it.kind === 'step') {
      const s = d.finished || d.step || d.item || d;
      const name = s.content || s.task || s.title || s.id || '';
      const next = d.next && d.next.content ? ` Next: ${d.next.content}.` : '';
      return `Step finished${name ? `: ${name}` : ''}.${next} Go on?${where}`;
    }
    return `Decision needed (${it.kind || 'interrupt'})${where}`;
  }

  // planView draws a proposed plan: todos with their glyphs, a plan-first
  // DAG's steps with what they wait for, else the JSON.
  function planView(d) {
    const plan = d.plan && typeof d.plan === 'object' ? d.plan : d;
    const out = [];
    if (plan.goal) out.push(el('div', { text: `Goal: ${plan.goal}` }));
    if (Array.isArray(plan.todos)) {
      out.push(el('ol', { class: 'items' }, ...plan.todos.map((t) => el('li', { class: t.status || 'pending' },
        el('span', { class: 'glyph', 'aria-hidden': 'true', text: GLYPHS[t.status] || '○' }), ' ', t.content || ''))));
    } else if (Array.isArray(plan.steps)) {
      out.push(el('ol', { class: 'items' }, ...plan.steps.map((s) => el('li', {},
        el('code', { text: s.id || '' }), ' ', s.task || s.content || '',
        (s.deps || []).length ? el('small', { text: ` (after ${s.deps.join(', ')})` }) : null))));
    } else {
      out.push(el('pre', { text: pretty(d) }));
    }
    if (d.reason) out.push(el('div', { class: 'note', text: `Reason: ${d.reason}` }));
    return out;
  }

  function detailView(it) {
    const d = it.detail;
    if (it.kind === 'tool') return [el('pre', { text: pretty(callArgs(it)) })];
    if (it.kind === 'plan') return planView(d);
    const json = el('pre', { text: pretty(d) });
    return it.kind === 'step' ? [el('details', {}, el('summary', { text: 'Detail' }), json)] : [json];
  }

  // addInterrupt draws one pending interrupt (once per id).
  function addInterrupt(d) {
    if (!d || !d.interruptId || st.pending.some((p) => p.id === d.interruptId)) return;
    const detail = d.detail && typeof d.detail === 'object' ? d.detail : { value: d.detail };
    const it = { id: d.interruptId, kind: d.kind || '', detail, callId: d.callId || '', path: d.path || [], answer: undefined };
    it.err = el('div', { class: 'err', role: 'alert' });
    const forms = [];
    const buttons = (DECISIONS[it.kind] ? DECISIONS[it.kind](it) : []).map(([name, label, spec]) => {
      const form = spec && answerForm(it, spec);
      if (form) forms.push(form);
      return el('button', { type: 'button', 'data-decision': name, text: label, onclick: () => (form ? openForm(forms, form) : answer(it, name)) });
    });
    if (!DECISIONS[it.kind]) forms.push(answerForm(it, freeForm));
    it.box = el('fieldset', { 'aria-label': titleOf(it) }, el('div', { class: 'actions' }, ...buttons), ...forms);
    it.li = el('li', { class: 'interrupt', 'data-interrupt': it.id, 'data-kind': it.kind },
      el('div', { class: 'name', text: titleOf(it) }), ...detailView(it), it.box, it.err);
    st.pending.push(it);
    $('interrupts').append(it.li);
    markWaiting();
    renderDecisions();
  }

  // markWaiting says on the timeline which calls wait for a decision.
  function markWaiting() {
    for (const it of st.pending) {
      const call = st.byKey.get(`${it.path.length}:${it.callId}`);
      if (call && call.el.meta.textContent === 'running') call.el.meta.textContent = 'waiting for your decision';
    }
  }

  function answerForm(it, spec) {
    const box = el('textarea', { rows: spec.open ? 3 : 10, spellcheck: 'false' });
    const form = el('form', { class: 'answer-form', hidden: !spec.open, onsubmit: (e) => {
      e.preventDefault();
      try { answer(it, spec.payload(box.value)); } catch (err) { it.err.textContent = err.message; }
    } }, el('label', {}, spec.label, box), el('button', { type: 'submit', text: 'Send' }));
    form.fill = () => { if (!form.filled) box.value = spec.text(); form.filled = true; };
    if (spec.open) form.fill();
    return form;
  }

  function openForm(forms, form) {
    for (const f of forms) f.hidden = f !== form;
    form.fill();
    form.querySelector('textarea').focus();
  }

  // renderDecisions shows the card when something waits; an answered
  // decision, or any while a run streams, takes no input.
  function renderDecisions() {
    $('decisions').hidden = !st.pending.length;
    for (const it of st.pending) {
      it.box.disabled = st.running || it.answer !== undefined;
      it.li.classList.toggle('answered', it.answer !== undefined);
    }
  }

  function clearDecisions() {
    st.pending = [];
    $('interrupts').replaceChildren();
    renderDecisions();
  }

  function answer(it, payload) {
    it.answer = payload;
    it.err.textContent = '';
    renderDecisions();
    if (st.pending.every((p) => p.answer !== undefined)) resume();
    else setStatus('Answer the other decisions too; they are sent together.');
  }

  // resume sends the answers. When the server refuses them, the decision it
  // names (else the edited ones) opens again with its message; the others
  // keep their answers and the thread stays as it was.
  async function resume() {
    const answers = st.pending.map((it) => ({ interruptId: it.id, status: 'resolved', payload: it.answer }));
    setStatus('Running…');
    setRunning(true);
    let resp, msg = '';
    try {
      resp = await fetch(threadPath('/resume'), {
        method: 'POST', headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({ route: routePath(), resume: answers }),
      });
      if (!resp.ok) {
        const body = await resp.json().catch(() => null);
        msg = (body && body.error && body.error.message) || `HTTP ${resp.status}`;
      }
    } catch (err) {
      msg = `Could not reach the dev server: ${err.message}`;
    }
    if (msg) {
      const named = st.pending.filter((it) => msg.includes(it.id));
      const edited = st.pending.filter((it) => it.answer && typeof it.answer === 'object');
      for (const it of named.length ? named : edited.length ? edited : st.pending) {
        it.answer = undefined;
        it.err.textContent = msg;
      }
      setRunning(false);
      return setStatus('');
    }
    for (const it of st.pending) {
      const a = it.answer;
      timelineNote(`${it.kind || 'interrupt'} decision: ${typeof a === 'string' ? a : (a && a.decision) || JSON.stringify(a)}`);
    }
    clearDecisions();
    await follow(resp, true);
  }

  // modelCall describes a model_call event: the model, how long it took,
  // and the tokens when the provider reported them, with the input tokens
  // read from the provider's prompt cache.
  function modelCall(d) {
    const parts = [`${d.model || 'model'}`, `${Number(d.duration_ms) || 0} ms`];
    if (d.input_tokens != null || d.output_tokens != null) {
      const cached = d.cached_input_tokens != null ? ` (${d.cached_input_tokens} cached)` : '';
      parts.push(`${d.input_tokens ?? '?'} in${cached} / ${d.output_tokens ?? '?'} out tokens`);
    }
    if (d.finish_reason) parts.push(d.finish_reason);
    return parts.join(' · ');
  }

  // addModelCall adds a model call's row to the timeline, or under the
  // subagent call whose model it was.
  function addModelCall(parent, d) {
    const row = el('li', { class: 'model-call', 'data-duration-ms': String(Number(d.duration_ms) || 0) },
      el('span', { class: 'mark', 'aria-hidden': 'true', text: '◆' }), ' ',
      el('span', { class: 'name', text: 'model call' }), ' ',
      el('span', { class: 'meta', text: modelCall(d) }));
    (parent ? parent.el.kids : $('timeline')).append(row);
  }

  function timelineNote(text) {
    $('timeline').append(el('li', { class: 'note', text }));
  }

  // onSubagent handles subagent.* events: they belong to the call that
  // spawned the subagent (call_id at depth-1).
  function onSubagent(type, d) {
    const depth = d.depth || 1;
    let parent = st.byKey.get(`${depth - 1}:${d.call_id}`);
    if (!parent) parent = addCall(depth - 1, null, { id: d.call_id, name: d.subagent || 'subagent' });
    parent.subagent = d.subagent || parent.subagent;
    const text = type === 'message' || type === 'chunk';
    if (!text && type !== 'answer_rejected') parent.turnStart = null;
    switch (type) {
      case 'message': // the subagent's answer streams into the call's result: {chunk, call_id, ...}
      case 'chunk': // the same, as runs recorded by earlier releases hold it: {data, call_id, ...}
        if (!parent.streaming) parent.el.out.textContent = '';
        parent.streaming = true;
        if (parent.turnStart == null) parent.turnStart = parent.el.out.textContent.length;
        parent.el.out.textContent += typeof d.chunk === 'string' ? d.chunk : typeof d.data === 'string' ? d.data : '';
        break;
      case 'answer_rejected': // take back the subagent's refused answer
        if (parent.streaming && parent.turnStart != null) parent.el.out.textContent = parent.el.out.textContent.slice(0, parent.turnStart);
        parent.turnStart = null;
        break;
      case 'tool_call': addCall(depth, parent, { ...d, name: d.tool || d.name }); break; // Dawn names the tool "tool"
      case 'tool_result': finishCall(depth, d); break;
      case 'model_call': addModelCall(parent, d); break;
      case 'plan_update': parent.subplan = toPlan(d, 'running'); renderPlan(); break;
      case 'plan_paused': case 'plan_done': case 'plan_failed': case 'plan_cancelled':
        if (parent.subplan) { parent.subplan.state = d.state; renderPlan(); }
        break;
    }
  }

  // ---- Conversation --------------------------------------------------------

  function addMessage(role, text) {
    const m = el('div', { class: `msg ${role}`, text });
    $('chat').append(m);
    return m;
  }

  // showHistory draws the conversation. An assistant answer followed by a
  // harness message is one the harness refused, not an answer: it is left
  // out with the harness message.
  function showHistory(messages) {
    $('chat').replaceChildren();
    messages.forEach((m, i) => {
      if (m.harness || !m.content || (m.role !== 'user' && m.role !== 'assistant')) return;
      if (m.role === 'assistant' && messages[i + 1] && messages[i + 1].harness) return;
      addMessage(m.role, m.content);
    });
  }

  // ---- Runs ----------------------------------------------------------------

  // handle applies one stream event to the page. live is false while
  // replaying a finished run, whose answer is already in the history.
  function handle(ev, live) {
    let d = {};
    try { d = JSON.parse(ev.data); } catch { /* keep {} */ }
    // A chunk's data is a bare JSON string, as Dawn sends it.
    const text = typeof d === 'string' ? d : '';
    if (d === null || typeof d !== 'object') d = {};
    // A model turn's chunks come in a row; answer_rejected right after
    // them takes them back (the harness refused that answer).
    if (ev.type !== 'chunk' && ev.type !== 'answer_rejected') st.turnStart = null;
    switch (ev.type) {
      case 'chunk':
        if (!live) break;
        if (!st.answer) st.answer = addMessage('assistant', '');
        if (st.turnStart == null) st.turnStart = st.answer.textContent.length;
        st.answer.textContent += text;
        break;
      case 'answer_rejected':
        if (st.answer && st.turnStart != null) {
          st.answer.textContent = st.answer.textContent.slice(0, st.turnStart);
          if (!st.answer.textContent) { st.answer.remove(); st.answer = null; }
        }
        st.turnStart = null;
        timelineNote('answer not accepted; the agent goes on');
        break;
      case 'tool_call': addCall(0, null, d); break;
      case 'tool_result': finishCall(0, d); break;
      case 'model_call': addModelCall(null, d); break;
      case 'interrupt': if (live) addInterrupt(d); break; // a replay's are in the state
      case 'plan_update': onPlanUpdate(d); break;
      case 'plan_paused': case 'plan_done': case 'plan_failed': case 'plan_cancelled':
        if (st.plan) {
          Object.assign(st.plan, { state: d.state || st.plan.state, pauseReason: d.pause_reason || '', reason: d.reason || '' });
          renderPlan();
        }
        timelineNote(`${ev.type.replace('_', ' ')}${d.pause_reason ? ` (${d.pause_reason})` : ''}${d.reason ? `: ${d.reason}` : ''}`);
        break;
      case 'done': {
        const out = d.output || {};
        if (live && out.error) addMessage('error', out.error);
        if (live) for (const i of out.interrupts || []) addInterrupt(i);
        markWaiting(); // a replay draws the calls after the state's interrupts
        const paused = st.plan && st.plan.enforced && st.plan.state === 'paused';
        setStatus(out.error ? 'The run failed.' : out.cancelled ? 'The run was cancelled.'
          : out.interrupted ? 'Waiting for your decision: answer it above.'
          : paused ? 'The plan paused. Press Resume, or send a message to go on.' : 'Done.');
        break;
      }
      default:
        if (ev.type.startsWith('subagent.')) onSubagent(ev.type.slice('subagent.'.length), d);
    }
  }

  function setStatus(text) { $('status').textContent = text; }

  function setRunning(on) {
    st.running = on;
    $('send-button').disabled = on;
    if (st.plan) renderPlan();
    renderDecisions();
  }

  // follow reads a run's stream to its done event. When the connection
  // drops first, it rejoins the run after the last event it saw (a few
  // tries); at the end it reads the plan as saved.
  async function follow(resp, live) {
    const thread = st.thread;
    const run = resp.headers.get('Dawn-Run-Id');
    let lastId = 0, done = false;
    const onEvent = (ev) => {
      if (+ev.id) lastId = +ev.id;
      if (ev.type === 'done') done = true;
      handle(ev, live);
    };
    setRunning(true);
    try {
      for (let tries = 1; ; tries++) {
        try {
          await readStream(resp, onEvent);
        } catch { /* the connection dropped; rejoin below */ }
        if (done || st.thread !== thread || !run || tries > 3) break;
        setStatus('Reconnecting…');
        await new Promise((ok) => setTimeout(ok, 300 * tries));
        resp = await fetch(threadPath(`/runs/${encodeURIComponent(run)}/stream?after=${lastId}`)).catch(() => null);
        if (!resp || !resp.ok) break;
      }
      if (!done && st.thread === thread) setStatus('The stream broke off before the run ended. Reload the page to rejoin it.');
    } finally {
      if (st.thread === thread) {
        st.reader = null;
        st.answer = null;
        setRunning(false);
        await refreshPlan();
      }
    }
  }

  async function send(text) {
    if (st.running || !text.trim() || !st.route) return;
    if (!st.thread) st.thread = newThreadId();
    rememberThread();
    addMessage('user', text);
    resetTimeline();
    setStatus('Running…');
    setRunning(true);
    let resp;
    try {
      resp = await fetch(threadPath('/runs/stream'), {
        method: 'POST', headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({ route: routePath(), input: { messages: [{ role: 'user', content: text }] } }),
      });
    } catch (err) {
      setRunning(false);
      return setStatus(`Could not reach the dev server: ${err.message}`);
    }
    if (!resp.ok) {
      const body = await resp.json().catch(() => null);
      setRunning(false);
      addMessage('error', (body && body.error && body.error.message) || `HTTP ${resp.status}`);
      return setStatus('');
    }
    st.known = true;
    await follow(resp, true);
  }

  // ---- Threads -------------------------------------------------------------

  const saved = () => { try { return JSON.parse(localStorage.getItem('dawn.threads')) || []; } catch { return []; } };

  function newThreadId() {
    const rand = crypto.getRandomValues(new Uint32Array(2));
    return `t-${Date.now().toString(36)}-${rand[0].toString(36)}${rand[1].toString(36)}`;
  }

  function rememberThread() {
    const list = saved().filter((t) => t.id !== st.thread);
    list.unshift({ id: st.thread, route: st.route.id, params: paramValues() });
    localStorage.setItem('dawn.threads', JSON.stringify(list.slice(0, 30)));
    localStorage.setItem('dawn.current', st.thread);
    history.replaceState(null, '', `#thread=${encodeURIComponent(st.thread)}`);
    fillThreads();
  }

  function fillThreads() {
    const opts = [el('option', { value: '', text: '(new thread)' })];
    for (const t of saved()) opts.push(el('option', { value: t.id, text: `${t.route} · ${t.id}` }));
    if (st.thread && !saved().some((t) => t.id === st.thread)) opts.push(el('option', { value: st.thread, text: st.thread }));
    $('thread').replaceChildren(...opts);
    $('thread').value = st.thread;
  }

  function stopReading() {
    if (st.reader) st.reader.cancel().catch(() => {});
    st.reader = null;
  }

  function newThread() {
    stopReading();
    Object.assign(st, { thread: '', known: false, answer: null, messages: [] });
    clearDecisions();
    localStorage.removeItem('dawn.current');
    history.replaceState(null, '', location.pathname);
    $('chat').replaceChildren();
    resetTimeline();
    setStatus('');
    st.plan = seedPlan(st.route);
    renderPlan();
    fillThreads();
    setRunning(false);
  }

  // openThread redraws the page for thread id: its history, its plan, and
  // the newest run replayed (live when it is still in flight).
  async function openThread(id) {
    stopReading();
    Object.assign(st, { thread: id, known: false, answer: null, messages: [] });
    clearDecisions();
    setRunning(false);
    const info = saved().find((t) => t.id === id);
    resetTimeline();
    $('chat').replaceChildren();
    let state;
    try {
      state = await api('GET', threadPath('/state'));
    } catch (err) {
      if (info) pickRoute(info.route, info.params);
      st.plan = seedPlan(st.route);
      renderPlan();
      fillThreads();
      return setStatus(err.status === 404 ? '' : err.message);
    }
    st.known = true;
    pickRoute((info && info.route) || (state.checkpoint && state.checkpoint.route), info && info.params);
    localStorage.setItem('dawn.current', id);
    history.replaceState(null, '', `#thread=${encodeURIComponent(id)}`);
    fillThreads();
    const values = state.values || {};
    if (values.plan && Array.isArray(values.plan.items)) st.plan = toPlan(values.plan);
    else if (Array.isArray(values.todos)) st.plan = toPlan({ todos: values.todos });
    else st.plan = seedPlan(st.route);
    renderPlan();
    const runs = await api('GET', threadPath('/runs')).catch(() => []);
    const last = runs && runs[0];
    const msgs = values.messages || [];
    st.messages = msgs;
    for (const d of state.interrupts || []) addInterrupt(d);
    const live = !!last && last.status === 'running';
    if (live) {
      // The run's own messages are not all saved yet: show the history up
      // to its user message and let the replay stream the answer.
      const cut = msgs.map((m) => m.role === 'user' && !m.harness).lastIndexOf(true);
      const endsWithAnswer = msgs.length && msgs[msgs.length - 1].role === 'assistant' && !(msgs[msgs.length - 1].tool_calls || []).length;
      showHistory(cut >= 0 && !endsWithAnswer ? msgs.slice(0, cut + 1) : msgs);
      setStatus('Rejoining the run in flight…');
    } else {
      showHistory(msgs);
    }
    if (!last) return;
    const resp = await fetch(threadPath(`/runs/${encodeURIComponent(last.run_id)}/stream?after=0`)).catch(() => null);
    if (!resp || !resp.ok || st.thread !== id) return;
    follow(resp, live); // goes on in the background until the run's done event
  }

  // ---- Routes --------------------------------------------------------------

  function routePath() {
    const values = paramValues();
    return st.route.id.replace(/#.*$/, '').replace(/\[\[?(?:\.\.\.)?([^\]]+)\]\]?/g, (_, name) => values[name] || name);
  }

  function paramValues() {
    const out = {};
    for (const input of $('params').querySelectorAll('input')) out[input.dataset.param] = input.value.trim();
    return out;
  }

  function pickRoute(id, params) {
    const r = st.routes.find((x) => x.id === id) || st.route || st.routes[0];
    st.route = r || null;
    $('route').value = r ? r.id : '';
    const inputs = ((r && r.params) || []).map((name) => el('label', {}, `${name} `,
      el('input', { 'data-param': name, value: (params && params[name]) || 'demo', size: 10, 'aria-label': `Route parameter ${name}` })));
    $('params').replaceChildren(...inputs);
  }

  async function init() {
    $('route').addEventListener('change', () => { pickRoute($('route').value); newThread(); });
    $('thread').addEventListener('change', () => { if ($('thread').value) openThread($('thread').value); else newThread(); });
    $('new-thread').addEventListener('click', newThread);
    $('pause').addEventListener('click', () => supervise('pause'));
    $('resume').addEventListener('click', () => supervise('resume'));
    $('cancel').addEventListener('click', () => supervise('cancel'));
    $('send').addEventListener('submit', (e) => {
      e.preventDefault();
      const box = $('message');
      const text = box.value;
      if (!text.trim() || st.running) return;
      box.value = '';
      send(text);
    });
    $('message').addEventListener('keydown', (e) => {
      if (e.key === 'Enter' && !e.shiftKey && !e.isComposing) { e.preventDefault(); $('send').requestSubmit(); }
    });
    try {
      st.routes = (await api('GET', '/routes')).filter((r) => r.kind !== 'subagent' && !r.error);
    } catch (err) {
      return setStatus(`Could not list routes: ${err.message}`);
    }
    $('route').replaceChildren(...st.routes.map((r) => el('option', { value: r.id, text: r.id, title: r.description || '' })));
    pickRoute(null);
    const hash = new URLSearchParams(location.hash.slice(1)).get('thread');
    const id = hash || localStorage.getItem('dawn.current');
    if (id) await openThread(id);
    else newThread();
    document.body.dataset.ready = 'true';
  }

  init();
})();
