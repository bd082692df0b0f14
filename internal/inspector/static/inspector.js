/*
 * Dawn dev inspector
 * ==================
 * The page `dawn dev` serves at /_dawn/. It is a plain client of the public
 * HTTP API: no build step, no framework, no request anywhere but the dev
 * server, so it works offline.
 *
 *   GET  /routes                               route picker, descriptions, plan seed
 *   POST /threads/:id/runs/stream              send a message (SSE back)
 *   GET  /threads/:id/runs/:run/stream?after=N rejoin or replay a run
 *   GET  /threads/:id/state, /runs, /history   rebuild the thread from the store
 *   GET  /threads/:id/plan                     the harness-owned plan (enforce: true only)
 *   POST /threads/:id/plan/pause|resume|cancel the supervisor's buttons
 *   POST /threads/:id/cancel                   Stop: end the run in flight
 *   POST /threads/:id/resume                   answer what a parked run waits on
 *   GET  /threads/:id/files[/path]             the workspace's files
 *   POST /threads/:id/state + runs/stream with checkpoint_id   fork from a checkpoint
 *
 * Layout, top to bottom: the plan card (runtime state, not chat text), the
 * thread (each user message, then the runs it started with their steps,
 * then the answer), the decisions a parked run waits on, the message box,
 * then the workspace's files and the thread's checkpoints.
 *
 * The thread id lives in the URL hash (#thread=…) and localStorage, so a
 * reload finds it again: the page draws the plan from the thread's state,
 * finds the runs of the thread's branch from its checkpoints and replays
 * each run's events from the event log (after=0); a run still in flight
 * goes on live until its done event.
 *
 * window.__dawnMetrics is for tests and the curious: the time the first
 * plan_update arrived, how long until the card was repainted (the next
 * animation frame after the DOM update), and the glyph line of each render.
 */
'use strict';
(() => {
  const GLYPHS = { pending: '○', in_progress: '▶', completed: '✓', failed: '✗', skipped: '—' };
  const ACTIVE = ['draft', 'running', 'paused'];
  const WAITING = 'waiting for you';
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
    calls: [],        // top-level tool calls of the thread, in order
    byKey: new Map(), // depth + ':' + call id → entry, the newest wins
    expanded: new Set(),
    turn: null,       // the turn runs are drawn into, see newTurn
    steps: null,      // the <ol> of the run being drawn, see openRun
    answer: null,     // the element the answer streams into
    turnStart: null,  // length of the answer text before the current model turn's chunks
    pending: [],      // interrupts the parked run waits on, see addInterrupt
    decided: new Set(), // interrupt ids whose decision the thread view shows
    messages: [],     // the thread's saved messages, for a held call's arguments
  };

  // parked: the thread waits for a person, and no run is going on.
  const parked = () => st.pending.length > 0 && !st.running;

  // toPlan reads a plan from a plan_update event, GET /plan or the seed.
  // toPlan reads a plan from a plan_update event, GET /plan or the seed.
  // Where the harness sends them, it keeps each item's verifier outcome
  // (verification) and the plans of the subagents that carried it out
  // (children), and the plan's revisions and the items it dropped.
  function toPlan(d, fallbackState) {
    const items = (d.todos || d.items || []).map((it, i) => ({
      id: it.id || String(i), content: it.content || it.Content || '', status: it.status || it.Status || 'pending',
      evidence: it.evidence || '', attempts: it.attempts || 0,
      verification: it.verification && typeof it.verification === 'object' ? it.verification : null,
      children: (Array.isArray(it.children) ? it.children : []).map((c) => ({
        subagent: c.subagent || '', routeId: c.route_id || '', callId: c.call_id || '', answer: c.answer || '',
        plan: toPlan({ todos: c.todos || [], goal: c.goal }, ''), state: c.state || '' })),
    }));
    const revisions = Array.isArray(d.revisions) ? d.revisions : d.revised ? [d.revised] : [];
    return {
      enforced: !!d.state, state: d.state || fallbackState || '', goal: d.goal || '', items,
      postconditions: d.postconditions || [], advance: d.advance || '', budgetLeft: d.budget_left,
      pauseReason: d.pause_reason || '', reason: d.reason || '',
      revision: Number(d.revision_n) || (revisions.length ? Number(revisions[revisions.length - 1].n) || 0 : 0),
      revisions: Array.isArray(d.revisions) ? d.revisions : null, dropped: Array.isArray(d.dropped) ? d.dropped : [],
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

  function itemRow(it, key, current, waiting) {
    const open = st.expanded.has(key);
    const detail = [it.evidence ? `Evidence: ${it.evidence}` : 'No evidence or result recorded yet.'];
    const v = it.verification;
    if (v) detail.push(`${v.passed ? 'Verified' : 'Verification failed'}: ${v.verified_by || '?'}${v.exit_code != null ? ` (exit ${v.exit_code})` : ''}${v.output ? `\n${v.output}` : ''}`);
    if (it.attempts) detail.push(`Attempts: ${it.attempts}`);
    if (it.id && !/^\d+$/.test(it.id)) detail.push(`Id: ${it.id}`);
    const evId = `ev-${key.replace(/[^\w-]/g, '_')}`;
    return el('li', { class: `${it.status}${current ? ' current' : ''}${waiting ? ' waiting' : ''}`, 'aria-current': current ? 'step' : false, 'data-key': key },
      el('button', { type: 'button', class: 'item-btn', 'aria-expanded': String(open), 'aria-controls': evId, onclick: () => toggle(key) },
        el('span', { class: 'glyph', 'aria-hidden': 'true', text: GLYPHS[it.status] || '?' }),
        el('span', { class: 'text', text: it.content }),
        waiting ? el('span', { class: 'wait', text: WAITING }) : null,
        v ? el('span', { class: `meta ${v.passed ? 'verified' : 'unverified'}`, text: v.passed ? `verified by ${v.verified_by}` : `check failed: ${v.verified_by}` }) : null,
        el('span', { class: 'sr', text: ` (${it.status.replace('_', ' ')}${current ? ', current' : ''})` })),
      el('div', { id: evId, class: 'evidence', hidden: !open, text: detail.join('\n') }),
      ...(it.children || []).map((c, n) => el('div', { class: 'subplan child', 'data-call': c.callId },
        el('div', { class: 'subplan-head' }, `↳ ${c.subagent || 'subagent'} `, el('small', { text: `(${c.routeId})` }),
          c.state ? el('span', { class: `badge ${c.state}`, text: c.state }) : null),
        el('ol', { class: 'items' }, ...itemList(c.plan, `${key}/${n}/`)))));
  }

  function toggle(key) {
    if (st.expanded.has(key)) st.expanded.delete(key); else st.expanded.add(key);
    renderPlan();
  }

  // itemList draws p's items; while the run is parked (top-level plans
  // only), the item it stopped on says so: the one in progress, else the
  // first one not started.
  function itemList(p, prefix, parked) {
    const cur = p.items.findIndex((it) => it.status === 'in_progress');
    const wait = !parked ? -1 : cur >= 0 ? cur : p.items.findIndex((it) => it.status === 'pending');
    return p.items.map((it, i) => itemRow(it, prefix + it.id, i === cur, i === wait));
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
    const badge = parked() ? WAITING : badgeOf(p);
    $('plan-state').textContent = badge;
    $('plan-state').className = `badge ${badge === WAITING ? 'waiting' : badge}`;
    let goal = p.goal;
    if (p.state === 'paused' && p.pauseReason) goal += `${goal ? ' ' : ''}(paused: ${p.pauseReason})`;
    if ((p.state === 'failed' || p.state === 'cancelled') && p.reason) goal += `${goal ? ' ' : ''}(${p.reason})`;
    $('plan-goal').textContent = goal;
    $('plan-budget').textContent = p.advance === 'auto' && p.budgetLeft != null ? `⚡${p.budgetLeft}` : '';
    $('plan-revisions').hidden = !(p.enforced && p.revision > 1 && st.known);
    $('plan-revisions').textContent = `Revisions (${p.revision})`;
    $('plan-dropped').hidden = !p.dropped.length;
    $('plan-dropped').querySelector('ul').replaceChildren(...p.dropped.map((it) => el('li', { class: 'dropped' },
      el('span', { class: 'text', text: it.content }), el('span', { class: 'meta', text: ` dropped${it.revision ? ` in revision ${it.revision}` : ''}, ${String(it.status || '').replace('_', ' ')}` }))));

    // Subagent plans hang under the item that was current when their call began.
    const under = new Map();
    for (const c of st.calls) {
      const blocks = subplanBlocks(c);
      if (!blocks.length) continue;
      const at = c.item >= 0 && c.item < p.items.length ? c.item : -1;
      under.set(at, (under.get(at) || []).concat(blocks));
    }
    const rows = itemList(p, '', parked());
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

  // renderControls shows Pause, Resume and Cancel only where the harness
  // owns the plan (enforce: true); elsewhere they never apply, and the
  // composer's Stop button stops a run in flight.
  function renderControls() {
    const p = st.plan;
    const busy = st.supervising;
    const owned = !!(p && p.enforced);
    $('plan-controls').hidden = !owned;
    if (owned) {
      $('pause').disabled = busy || !st.known || !['draft', 'running'].includes(p.state);
      $('resume').disabled = busy || !st.known || p.state !== 'paused';
      $('cancel').disabled = busy || !st.known || !ACTIVE.includes(p.state);
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
      if (st.plan && st.plan.enforced) st.plan = toPlan(await api('POST', threadPath(`/plan/${action}`)));
    } catch (err) {
      $('plan-note').textContent = humanError(err);
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

  // refreshPlan reads the plan as the server has it now: GET /plan where
  // the harness owns it (only there: elsewhere the route has none), else
  // the todos in the thread's state.
  async function refreshPlan() {
    if (!st.known) return;
    if (routeOwnsPlan(st.route) || (st.plan && st.plan.enforced)) {
      try { st.plan = toPlan(await api('GET', threadPath('/plan'))); } catch { return; }
    } else {
      const s = await api('GET', threadPath('/state')).catch(() => null);
      if (!s || !s.values || !Array.isArray(s.values.todos)) return;
      st.plan = toPlan({ todos: s.values.todos });
    }
    renderPlan();
  }

  // showRevisions lists the plan's revisions (GET /plan/revisions), each
  // with who made it, why, and its diff: items added, removed (dropped
  // when unfinished), reworded, reordered, moved back.
  async function showRevisions() {
    const box = $('revision-list');
    if (!box.hidden) { box.hidden = true; return; }
    box.hidden = false;
    let list;
    try {
      list = ((await api('GET', threadPath('/plan/revisions?limit=50'))) || {}).revisions || [];
    } catch (err) {
      if (!st.plan.revisions) return box.replaceChildren(el('li', { class: 'note', text: humanError(err) }));
      list = st.plan.revisions; // what the thread's state keeps
    }
    box.replaceChildren(...list.map((rev) => {
      const d = rev.diff || {};
      const lines = [...(d.added || []).map((c) => ['add', `+ ${c}`]),
        ...(d.removed || []).map((r) => ['del', `− ${r.content}${r.dropped ? ' (dropped unfinished)' : ''}`]),
        ...(d.reworded || []).map((r) => ['', `~ ${r.from} → ${r.to}`]),
        ...(d.backwards || []).map((m) => ['del', `↩ ${m.content}: ${m.from} → ${m.to}`]),
        ...(d.reordered ? [['', '⇅ reordered']] : [])];
      return el('li', { 'data-revision': String(rev.n) },
        el('div', { text: `Revision ${rev.n} · ${rev.source || '?'}${rev.change ? ` · ${rev.change}` : ''}${rev.reason ? `: ${rev.reason}` : ''}` }),
        lines.length ? el('ul', { class: 'diff' }, ...lines.map(([cls, text]) => el('li', { class: cls || false, text }))) : null);
    }));
  }

  const routeOwnsPlan = (route) => !!(route && route.details && route.details.planning && route.details.planning.enforce);

  // seedPlan is the route's plan.md before any run: a draft.
  function seedPlan(route) {
    const d = (route && route.details && route.details.planning) || {};
    if (!route || !Array.isArray(route.seed)) return null;
    const post = (d.postconditions || []).map((c) => ({ content: c }));
    return toPlan({ todos: route.seed, state: d.enforce ? 'draft' : '', goal: d.goal, advance: d.advance, postconditions: post }, 'draft');
  }

  // ---- Markdown and values -------------------------------------------------

  // markdown renders the Markdown a model writes (headings, paragraphs,
  // lists with task boxes, fenced code, quotes, inline code, bold, italic,
  // links) as DOM nodes; it never parses HTML, so nothing a model writes
  // runs in the page.
  function markdown(text) {
    const out = document.createDocumentFragment();
    const lines = String(text).replace(/\r\n?/g, '\n').split('\n');
    let i = 0;
    const until = (stop) => { const start = i; while (i < lines.length && !stop(lines[i])) i++; return lines.slice(start, i); };
    while (i < lines.length) {
      const l = lines[i];
      let m;
      if (!l.trim()) { i++; continue; }
      if ((m = /^\s*(```|~~~)(.*)$/.exec(l))) {
        i++;
        const code = until((x) => x.trim().startsWith(m[1]));
        i++;
        out.append(el('pre', { class: 'code', 'data-lang': m[2].trim() || false }, el('code', { text: code.join('\n') })));
      } else if ((m = /^(#{1,6})\s+(.*)$/.exec(l))) {
        i++;
        out.append(el(`h${Math.min(6, m[1].length + 2)}`, {}, ...inline(m[2])));
      } else if (/^\s*>/.test(l)) {
        const q = until((x) => !/^\s*>/.test(x)).map((x) => x.replace(/^\s*>\s?/, ''));
        out.append(el('blockquote', {}, markdown(q.join('\n'))));
      } else if ((m = /^\s*([-*+]|\d+[.)])\s+/.exec(l))) {
        const ordered = /\d/.test(m[1]);
        const items = [];
        while (i < lines.length && (m = /^\s*([-*+]|\d+[.)])\s+(.*)$/.exec(lines[i])) && /\d/.test(m[1]) === ordered) {
          let body = m[2];
          i++;
          while (i < lines.length && /^\s{2,}\S/.test(lines[i]) && !/^\s*([-*+]|\d+[.)])\s+/.test(lines[i])) body += ` ${lines[i++].trim()}`;
          const box = /^\[([ xX])\]\s+(.*)$/.exec(body);
          items.push(box
            ? el('li', { class: 'task' }, el('input', { type: 'checkbox', disabled: true, checked: box[1] !== ' ', 'aria-label': box[1] !== ' ' ? 'done' : 'not done' }), ' ', ...inline(box[2]))
            : el('li', {}, ...inline(body)));
        }
        out.append(el(ordered ? 'ol' : 'ul', {}, ...items));
      } else {
        const para = until((x) => !x.trim() || /^(#{1,6}\s|\s*(```|~~~|>)|\s*([-*+]|\d+[.)])\s+)/.test(x));
        const p = el('p');
        para.forEach((x, k) => { if (k) p.append(el('br')); p.append(...inline(x)); });
        out.append(p);
      }
    }
    return out;
  }

  // inline renders code spans, bold, italic and links of one line.
  function inline(text) {
    const out = [];
    const re = /`([^`]+)`|\*\*([^*]+)\*\*|__([^_]+)__|\*([^*\s][^*]*)\*|\[([^\]]+)\]\(([^)\s]+)\)/g;
    let last = 0, m;
    while ((m = re.exec(text))) {
      if (m.index > last) out.push(text.slice(last, m.index));
      if (m[1] != null) out.push(el('code', { text: m[1] }));
      else if (m[2] != null || m[3] != null) out.push(el('strong', { text: m[2] ?? m[3] }));
      else if (m[4] != null) out.push(el('em', { text: m[4] }));
      else out.push(/^https?:\/\//.test(m[6]) ? el('a', { href: m[6], rel: 'noreferrer noopener', target: '_blank', text: m[5] }) : m[5]);
      last = re.lastIndex;
    }
    if (last < text.length) out.push(text.slice(last));
    return out;
  }

  // valueView draws a tool's input or output: an object as its fields, a
  // string of several lines as Markdown, a string that holds JSON as that
  // JSON, anything else as indented JSON. No field shows a literal \n.
  function valueView(v, depth = 0) {
    if (typeof v === 'string') {
      const t = v.trim();
      if ((t.startsWith('{') || t.startsWith('[')) && depth < 2) {
        try { return valueView(JSON.parse(t), depth + 1); } catch { /* not JSON */ }
      }
      if (v.includes('\n')) return el('div', { class: 'md' }, markdown(v));
      return el('pre', { class: 'value', text: v });
    }
    if (v && typeof v === 'object' && !Array.isArray(v) && depth < 2 && Object.values(v).some((x) => typeof x === 'string' && x.includes('\n'))) {
      return el('dl', { class: 'fields' }, ...Object.entries(v).flatMap(([k, x]) => [el('dt', { text: k }),
        el('dd', {}, typeof x === 'string' && !x.includes('\n') ? x : valueView(x, depth + 1))]));
    }
    return el('pre', { class: 'value', text: v === undefined ? '' : JSON.stringify(v, null, 2) });
  }

  // ---- The thread view -----------------------------------------------------
  //
  // #chat holds the thread's turns in order. A turn is a user message, the
  // runs it started (a resumed run continues the turn of the run it
  // resumes), each with its steps: model calls, tool calls (collapsed; a
  // subagent's steps nest under its task call), decisions, plan events;
  // then the answer.

  function newTurn(text) {
    const t = { el: null, runs: el('div', { class: 'runs' }), answers: el('div', { class: 'answers' }), user: null };
    t.user = text == null ? null : el('div', { class: 'msg user', text });
    t.el = el('article', { class: 'turn' }, t.user, t.runs, t.answers);
    $('chat').append(t.el);
    st.turn = t;
    st.answer = null;
    return t;
  }

  // openRun starts drawing a run in turn t: its steps go there from now on.
  function openRun(t, runId) {
    st.steps = el('ol', { class: 'steps' });
    t.runs.append(el('section', { class: 'run', 'data-run': runId || '' },
      el('div', { class: 'run-head', text: `run ${(runId || '').slice(0, 8)}` }), st.steps));
    return st.steps;
  }

  const stepsList = () => st.steps || openRun(st.turn || newTurn(null), '');

  function resetThreadView() {
    st.calls = [];
    st.byKey = new Map();
    st.turn = st.steps = st.answer = null;
    st.decided = new Set();
    $('chat').replaceChildren();
  }

  function addAnswer(t, text) {
    const m = el('div', { class: 'msg assistant md' }, markdown(text));
    m.raw = text;
    t.answers.append(m);
    return m;
  }

  // streamAnswer adds a chunk to the answer being streamed, redrawn as
  // Markdown.
  function streamAnswer(text) {
    if (!st.answer) st.answer = addAnswer(st.turn || newTurn(null), '');
    if (st.turnStart == null) st.turnStart = st.answer.raw.length;
    setAnswer(st.answer, st.answer.raw + text);
  }

  function setAnswer(m, text) {
    m.raw = text;
    m.replaceChildren(markdown(text));
  }

  function addError(text) {
    (st.turn ? st.turn.answers : $('chat')).append(el('div', { class: 'msg error', role: 'alert', text }));
  }

  function addCall(depth, parent, d) {
    const cur = st.plan ? st.plan.items.findIndex((it) => it.status === 'in_progress') : -1;
    const entry = {
      key: `${depth}:${d.id}:${st.byKey.size}`, id: d.id || '', name: d.name || '', depth, input: d.input,
      item: parent ? parent.item : cur, children: [], subplan: null, subagent: '', streaming: false,
    };
    const mark = el('span', { class: 'mark', 'aria-hidden': 'true', text: '…' });
    const meta = el('span', { class: 'meta', text: 'running' });
    const out = el('div', { class: 'out' }, el('pre', { class: 'value', text: '(waiting for the result)' }));
    const kids = el('ol', { class: 'steps' });
    entry.el = { details: el('details', { class: 'call', 'data-call': entry.id },
      el('summary', {}, mark, ' ', el('span', { class: 'name', text: entry.name }), ' ', meta),
      el('div', { class: 'note', text: 'Input' }), valueView(d.input),
      el('div', { class: 'note', text: 'Result' }), out, kids), mark, meta, out, kids };
    st.byKey.set(`${depth}:${d.id}`, entry);
    (parent ? parent.children : st.calls).push(entry);
    (parent ? parent.el.kids : stepsList()).append(el('li', {}, entry.el.details));
    return entry;
  }

  function finishCall(depth, d) {
    const entry = st.byKey.get(`${depth}:${d.id}`);
    if (!entry) return;
    const failed = d.error != null && d.error !== '' && d.error !== false;
    entry.el.details.classList.add(failed ? 'error' : 'ok');
    entry.el.mark.textContent = failed ? '✗' : '✓';
    entry.el.meta.textContent = failed ? 'failed' : 'done';
    if (entry.streaming) return; // a subagent's answer streamed in already
    entry.el.out.replaceChildren(...(failed ? [valueView(d.error), d.output != null ? valueView(d.output) : null] : [valueView(d.output)]).filter(Boolean));
  }

  function pretty(v) {
    if (v == null) return '';
    if (typeof v === 'string') return v;
    return JSON.stringify(v, null, 2);
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

  // addModelCall adds a model call's row to the run, or under the subagent
  // call whose model it was.
  function addModelCall(parent, d) {
    const row = el('li', { class: 'model-call', 'data-duration-ms': String(Number(d.duration_ms) || 0) },
      el('span', { class: 'mark', 'aria-hidden': 'true', text: '◆' }), ' ',
      el('span', { class: 'name', text: 'model call' }), ' ',
      el('span', { class: 'meta', text: modelCall(d) }));
    (parent ? parent.el.kids : stepsList()).append(row);
  }

  function stepNote(text, cls) {
    const li = el('li', { class: `note${cls ? ` ${cls}` : ''}`, text });
    stepsList().append(li);
    return li;
  }

  // decisionNote shows an answer to an interrupt at the top of the run it
  // let go on, and who gave it once the server says (d.by).
  function decisionNote(d) {
    const a = d.payload;
    const what = d.status === 'cancelled' ? 'cancelled' : typeof a === 'string' ? a : (a && a.decision) || JSON.stringify(a);
    const text = `${d.kind || 'interrupt'} decision: ${what}${d.by ? ` · by ${deciderName(d.by)}` : ''}`;
    let li = st.steps && st.steps.querySelector(`li.decision[data-interrupt="${CSS.escape(d.interruptId)}"]`);
    if (!li) {
      if (st.decided.has(d.interruptId)) return;
      li = el('li', { class: 'note decision', 'data-interrupt': d.interruptId });
      stepsList().prepend(li);
    }
    st.decided.add(d.interruptId);
    li.textContent = text;
  }

  function deciderName(by) {
    if (by.user) return by.user;
    if (by.service) return 'the service credential';
    return 'you (the dev server has no sign-in)';
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
      case 'start':
        parent.el.details.classList.add('task');
        parent.el.kids.before(el('div', { class: 'note', text: `Subagent ${d.subagent || ''} (${d.route_id || ''})` }));
        break;
      case 'message': // the subagent's answer streams into the call's result: {chunk, call_id, ...}
      case 'chunk': { // the same, as runs recorded by earlier releases hold it: {data, call_id, ...}
        if (!parent.streaming) { parent.raw = ''; parent.streaming = true; }
        if (parent.turnStart == null) parent.turnStart = parent.raw.length;
        parent.raw += typeof d.chunk === 'string' ? d.chunk : typeof d.data === 'string' ? d.data : '';
        parent.el.out.replaceChildren(el('div', { class: 'md' }, markdown(parent.raw)));
        break;
      }
      case 'answer_rejected': // take back the subagent's refused answer
        if (parent.streaming && parent.turnStart != null) {
          parent.raw = parent.raw.slice(0, parent.turnStart);
          parent.el.out.replaceChildren(el('div', { class: 'md' }, markdown(parent.raw)));
        }
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
      case 'chunk': if (live) streamAnswer(text); break;
      case 'answer_rejected':
        if (st.answer && st.turnStart != null) {
          setAnswer(st.answer, st.answer.raw.slice(0, st.turnStart));
          if (!st.answer.raw) { st.answer.remove(); st.answer = null; }
        }
        st.turnStart = null;
        stepNote('answer not accepted; the agent goes on');
        break;
      case 'tool_call': addCall(0, null, d); break;
      case 'tool_result': finishCall(0, d); break;
      case 'model_call': addModelCall(null, d); break;
      case 'context_compacted':
        stepNote(`context compacted: ${d.summarized_messages ?? '?'} messages summarized, ${d.before_tokens ?? '?'} → ${d.after_tokens ?? '?'} tokens`, 'compaction');
        break;
      case 'interrupt': if (live) addInterrupt(d); break; // a replay's are in the state
      case 'plan_update': onPlanUpdate(d); break;
      case 'plan_revised': stepNote(`plan revised${d.n != null ? ` (revision ${d.n}${d.source ? `, by the ${d.source}` : ''})` : ''}${d.change ? `: ${d.change}` : ''}${d.reason ? ` (${d.reason})` : ''}`); break;
      case 'plan_paused': case 'plan_done': case 'plan_failed': case 'plan_cancelled':
        if (st.plan && live) {
          Object.assign(st.plan, { state: d.state || st.plan.state, pauseReason: d.pause_reason || '', reason: d.reason || '' });
          renderPlan();
        }
        stepNote(`${ev.type.replace('_', ' ')}${d.pause_reason ? ` (${d.pause_reason})` : ''}${d.reason ? `: ${d.reason}` : ''}`);
        break;
      case 'done': onDone(d.output || {}, live); break;
      default:
        if (ev.type.startsWith('subagent.')) onSubagent(ev.type.slice('subagent.'.length), d);
    }
  }

  function onDone(out, live) {
    for (const dec of out.__decisions || []) decisionNote(dec);
    if (out.error) addError(`The run failed: ${humanText(out.error)}`);
    if (out.cancelled) stepNote('run cancelled');
    if (live) for (const i of out.interrupts || []) addInterrupt(i);
    markWaiting(); // a replay draws the calls after the state's interrupts
    if (!live) return;
    const paused = st.plan && st.plan.enforced && st.plan.state === 'paused';
    setStatus(out.error ? 'The run failed.' : out.cancelled ? 'The run was cancelled.'
      : out.interrupted ? 'Waiting for your decision: answer it above.'
      : paused ? 'The plan paused. Press Resume, or send a message to go on.' : 'Done.');
  }

  function setStatus(text) { $('status').textContent = text; }

  function setRunning(on) {
    st.running = on;
    document.body.dataset.running = String(on);
    if (st.plan) renderPlan();
    renderDecisions();
  }

  // renderComposer: no message while a run streams; while the thread is
  // parked the box says where the decision waits, and Stop shows only with
  // a run in flight.
  function renderComposer() {
    const wait = parked();
    $('message').disabled = wait;
    $('send-button').disabled = st.running || wait;
    $('stop').hidden = !st.running;
    $('composer-note').hidden = !wait;
    $('message').placeholder = wait ? 'The agent is waiting for your decision above; answer it first.'
      : 'Ask the agent… (Enter sends, Shift+Enter for a new line)';
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
        refreshSide();
      }
    }
  }

  // humanText turns a server message into one for a person at the page:
  // advice about HTTP calls is for API clients, not for someone who clicks.
  function humanText(msg) {
    return String(msg).split(/(?<=[.;])\s+|;\s*/)
      .filter((part) => !/\b(GET|POST|PUT|PATCH|DELETE)\s+\/|\/threads\//.test(part))
      .join(' ').replace(/\s*;\s*$/, '.').trim() || 'The dev server refused that.';
  }

  // REFUSALS says, per error kind, what the refusal means at the page.
  const REFUSALS = {
    interrupt_pending: 'Not sent: the agent is waiting for your decision on this thread. Answer it below, then send your message again.',
    run_in_flight: 'Not sent: the agent is still working on this thread. Wait for it to finish, or press Stop.',
    plan_not_found: 'This route\'s plan is not run by the harness, so it cannot be paused or resumed.',
    no_run_in_flight: 'Nothing to stop: no run is going on.',
  };

  function humanError(err) {
    return REFUSALS[err.kind] || humanText(err.message || 'The dev server refused that.');
  }

  // send starts a run with the user's message as a new turn. A refusal
  // takes the turn back, puts the text back in the box and says why; the
  // thread view stays as it was.
  async function send(text) {
    if (st.running || parked() || !text.trim() || !st.route) return;
    if (!st.thread) st.thread = newThreadId();
    rememberThread();
    const turn = newTurn(text);
    setStatus('Running…');
    setRunning(true);
    let resp, refusal = '';
    try {
      resp = await fetch(threadPath('/runs/stream'), {
        method: 'POST', headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({ route: routePath(), input: { messages: [{ role: 'user', content: text }] } }),
      });
      if (!resp.ok) {
        const body = await resp.json().catch(() => null);
        const e = (body && body.error) || {};
        refusal = humanError({ kind: e.kind, message: e.message || `The dev server answered HTTP ${resp.status}.` });
      }
    } catch (err) {
      refusal = `Could not reach the dev server: ${err.message}`;
    }
    if (refusal) {
      turn.el.remove();
      const turns = $('chat').querySelectorAll('article.turn');
      st.turn = turns.length ? turnOf(turns[turns.length - 1]) : null;
      st.steps = st.turn ? st.turn.el.querySelector('.run:last-child ol.steps') : null;
      if (!$('message').value) $('message').value = text;
      setRunning(false);
      setStatus(refusal);
      if (st.known) await reloadDecisions();
      return;
    }
    st.known = true;
    openRun(turn, resp.headers.get('Dawn-Run-Id'));
    await follow(resp, true);
  }

  // turnOf finds the turn object of a drawn turn element again.
  function turnOf(article) {
    return { el: article, runs: article.querySelector('.runs'), answers: article.querySelector('.answers'), user: article.querySelector('.msg.user') };
  }

  // reloadDecisions draws what the thread waits on, as the server has it
  // now (another tab or client may have parked it).
  async function reloadDecisions() {
    const s = await api('GET', threadPath('/state')).catch(() => null);
    if (!s) return;
    for (const d of s.interrupts || []) addInterrupt(d);
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
    tool: (it) => [['once', 'Approve once'], ['always', 'Always allow (every thread)', null, 'Allow this tool from now on, on every thread of this app, not only this one'], ['deny', 'Deny'],
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
    const buttons = (DECISIONS[it.kind] ? DECISIONS[it.kind](it) : []).map(([name, label, spec, title]) => {
      const form = spec && answerForm(it, spec);
      if (form) forms.push(form);
      return el('button', { type: 'button', 'data-decision': name, text: label, title, onclick: () => (form ? openForm(forms, form) : answer(it, name)) });
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
    renderComposer();
    if (st.plan) renderPlan();
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
        msg = (body && body.error && body.error.message) || `The dev server answered HTTP ${resp.status}.`;
      }
    } catch (err) {
      msg = `Could not reach the dev server: ${err.message}`;
    }
    if (msg) {
      msg = humanText(msg);
      const named = st.pending.filter((it) => msg.includes(it.id));
      const edited = st.pending.filter((it) => it.answer && typeof it.answer === 'object');
      for (const it of named.length ? named : edited.length ? edited : st.pending) {
        it.answer = undefined;
        it.err.textContent = msg;
      }
      setRunning(false);
      return setStatus('');
    }
    const decided = st.pending.map((it) => ({ interruptId: it.id, kind: it.kind, status: 'resolved', payload: it.answer }));
    clearDecisions();
    openRun(st.turn || newTurn(null), resp.headers.get('Dawn-Run-Id'));
    for (const d of decided) decisionNote(d);
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
    resetThreadView();
    setStatus('');
    st.plan = seedPlan(st.route);
    renderPlan();
    fillThreads();
    setRunning(false);
    refreshSide();
  }

  // openThread redraws the page for thread id from the store: its state
  // (plan, pending decisions), its checkpoints (which runs made the branch
  // the thread is on) and every run's events, replayed in order. A run
  // still in flight goes on live.
  async function openThread(id) {
    stopReading();
    Object.assign(st, { thread: id, known: false, answer: null, messages: [] });
    clearDecisions();
    setRunning(false);
    const info = saved().find((t) => t.id === id);
    resetThreadView();
    let state;
    try {
      state = await api('GET', threadPath('/state'));
    } catch (err) {
      if (info) pickRoute(info.route, info.params);
      st.plan = seedPlan(st.route);
      renderPlan();
      fillThreads();
      refreshSide();
      return setStatus(err.status === 404 ? '' : humanError(err));
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
    st.messages = values.messages || [];
    const [runs, checkpoints] = await Promise.all([
      api('GET', threadPath('/runs')).catch(() => []),
      api('GET', threadPath('/history?limit=1000')).catch(() => []),
    ]);
    st.checkpoints = checkpoints || [];
    const logs = await Promise.all((runs || []).map((r) => fetch(threadPath(`/runs/${encodeURIComponent(r.run_id)}/stream?after=0`))
      .then((resp) => (resp.ok && r.status !== 'running' ? resp.text() : '')).catch(() => '')));
    if (st.thread !== id) return;
    const live = drawThread(state, runs || [], logs);
    for (const d of state.interrupts || []) addInterrupt(d);
    markWaiting();
    refreshSide();
    if (!live) return;
    setStatus('Rejoining the run in flight…');
    const resp = await fetch(threadPath(`/runs/${encodeURIComponent(live.run_id)}/stream?after=0`)).catch(() => null);
    if (!resp || !resp.ok || st.thread !== id) return;
    follow(resp, true); // goes on in the background until the run's done event
  }

  // drawThread draws the turns of the thread's current branch: each user
  // message, the runs that began from it, and its answers. It returns the
  // run still in flight, whose steps and answer its live stream draws.
  function drawThread(state, runs, logs) {
    const msgs = st.messages;
    const turnsByMsg = new Map();
    const ordered = branchRuns(state, runs);
    const live = ordered.length && ordered[ordered.length - 1].run.status === 'running' ? ordered[ordered.length - 1].run : null;
    // The user messages and, after each, its answers; a refused answer
    // (followed by a harness message) is left out.
    const turns = [];
    msgs.forEach((m, i) => {
      if (m.harness) return;
      if (m.role === 'user') {
        const t = { msg: m, answers: [], runs: [] };
        turns.push(t);
        if (m.id) turnsByMsg.set(m.id, t);
      } else if (m.role === 'assistant' && m.content && !(msgs[i + 1] && msgs[i + 1].harness)) {
        if (!turns.length) turns.push({ msg: null, answers: [], runs: [] });
        turns[turns.length - 1].answers.push(m.content);
      }
    });
    let prev = null;
    for (const o of ordered) {
      const t = (o.userId && turnsByMsg.get(o.userId)) || (o === ordered[ordered.length - 1] && !prev ? turns[turns.length - 1] : prev) || turns[turns.length - 1];
      if (!t) continue;
      t.runs.push(o);
      prev = t;
    }
    for (const t of turns) {
      const turn = newTurn(t.msg ? t.msg.content : null);
      for (const o of t.runs) {
        openRun(turn, o.run.run_id);
        const text = logs[runs.indexOf(o.run)] || '';
        const feed = sseParser((ev) => handle(ev, false));
        feed(text, true);
      }
      if (live && t.runs.some((o) => o.run === live)) continue; // its stream draws the answer
      for (const a of t.answers) addAnswer(turn, a);
    }
    if (live) st.steps = st.turn ? st.turn.el.querySelector(`.run[data-run="${CSS.escape(live.run_id)}"] ol.steps`) : null;
    return live;
  }

  // branchRuns orders the runs that made the thread's current branch,
  // oldest first, each with the id of the last user message its first
  // checkpoint holds (the turn it belongs to). Runs of other branches are
  // left out: a branch forked where a run's input was added shares that
  // checkpoint, not the run's steps. A run with no checkpoint (it failed
  // before its first step, or is starting) keeps its place by time.
  function branchRuns(state, runs) {
    const byId = new Map(st.checkpoints.map((c) => [c.checkpoint.checkpoint_id, c]));
    const onBranch = [];
    for (let c = state.checkpoint && byId.get(state.checkpoint.checkpoint_id); c; c = c.parent_checkpoint && byId.get(c.parent_checkpoint.checkpoint_id)) onBranch.unshift(c);
    const first = new Map();
    const anywhere = new Set(st.checkpoints.map((c) => c.checkpoint.run_id));
    const stepped = new Set(st.checkpoints.filter((c) => !isInput(c)).map((c) => c.checkpoint.run_id));
    for (const c of onBranch) {
      const run = c.checkpoint.run_id;
      if (run && !first.has(run) && !(isInput(c) && stepped.has(run))) first.set(run, c);
    }
    const lastUser = (c) => {
      const ms = (c.values && c.values.messages) || [];
      for (let i = ms.length - 1; i >= 0; i--) if (ms[i].role === 'user' && !ms[i].harness) return ms[i].id;
      return '';
    };
    return runs.slice().reverse()
      .filter((r) => first.has(r.run_id) || !anywhere.has(r.run_id))
      .map((r) => ({ run: r, userId: first.has(r.run_id) ? lastUser(first.get(r.run_id)) : '' }));
  }

  const isInput = (c) => !!(c.metadata && c.metadata.source === 'input');

  // ---- Files and history ---------------------------------------------------

  // refreshSide redraws the cards beside the thread: the workspace's files
  // (routes with a workspace) and the checkpoints.
  function refreshSide() {
    refreshFiles();
    refreshHistory();
  }

  async function refreshFiles() {
    const has = !!(st.route && (st.route.capabilities || []).includes('workspace'));
    $('files').hidden = !has || !st.known;
    if ($('files').hidden) return;
    const thread = st.thread;
    const list = await api('GET', threadPath('/files')).catch((err) => ({ error: humanError(err) }));
    if (st.thread !== thread) return;
    if (list.error) return $('file-list').replaceChildren(el('li', { class: 'note', text: list.error }));
    const files = list.files || [];
    $('file-list').replaceChildren(...(files.length ? files.map((f) => el('li', {},
      el('details', { class: 'file', 'data-path': f.path, ontoggle: (e) => loadFile(e.target, f.path) },
        el('summary', {}, el('span', { class: 'name', text: f.path }), ' ', el('span', { class: 'meta', text: `${f.size} bytes` })),
        el('div', { class: 'file-body', text: 'Loading…' })))) : [el('li', { class: 'note', text: 'No files yet.' })]));
  }

  async function loadFile(details, path) {
    if (!details.open || details.loaded) return;
    details.loaded = true;
    const body = details.querySelector('.file-body');
    try {
      const resp = await fetch(threadPath(`/files/${path.split('/').map(encodeURIComponent).join('/')}`));
      const text = await resp.text();
      if (!resp.ok) throw new Error(`HTTP ${resp.status}`);
      body.replaceChildren(/\.(md|markdown)$/i.test(path) ? el('div', { class: 'md' }, markdown(text)) : el('pre', { class: 'value', text }));
    } catch (err) {
      body.textContent = `Could not read the file: ${err.message}`;
    }
  }

  // refreshHistory lists the thread's checkpoints (every branch), newest
  // first; each can be opened (its state), compared with another (a diff)
  // and, where it added a user message, forked with that message edited.
  async function refreshHistory() {
    $('history').hidden = !st.known;
    if (!st.known) return;
    const thread = st.thread;
    const list = await api('GET', threadPath('/history?limit=1000')).catch(() => null);
    if (!list || st.thread !== thread) return;
    st.checkpoints = list;
    const branches = branchesOf(list);
    $('history-count').textContent = `(${list.length} checkpoint${list.length === 1 ? '' : 's'}, ${branches.count} branch${branches.count === 1 ? '' : 'es'})`;
    const label = (c) => `step ${c.metadata && c.metadata.step != null ? c.metadata.step : '?'} · ${(c.metadata && c.metadata.source) || ''} · branch ${branches.of.get(c.checkpoint.checkpoint_id)}`;
    $('checkpoints').replaceChildren(...list.map((c) => {
      const id = c.checkpoint.checkpoint_id;
      const added = addedUserMessage(c);
      return el('li', { 'data-checkpoint': id, 'data-branch': String(branches.of.get(id)), class: branches.current.has(id) ? 'current' : 'other' },
        el('button', { type: 'button', class: 'link', text: label(c), onclick: () => showCheckpoint(c) }), ' ',
        el('span', { class: 'meta', text: `${((c.values && c.values.messages) || []).length} messages` }),
        added ? el('button', { type: 'button', 'data-action': 'fork', text: 'Fork from here', title: 'Edit this message and run again from here, on a new branch', onclick: () => openFork(c, added) }) : null);
    }));
    const opts = list.map((c) => el('option', { value: c.checkpoint.checkpoint_id, text: label(c) }));
    const from = $('diff-from').value, to = $('diff-to').value;
    $('diff-from').replaceChildren(...opts);
    $('diff-to').replaceChildren(...opts.map((o) => o.cloneNode(true)));
    $('diff-from').value = list.some((c) => c.checkpoint.checkpoint_id === from) ? from : (list[1] || list[0] || { checkpoint: {} }).checkpoint.checkpoint_id || '';
    $('diff-to').value = list.some((c) => c.checkpoint.checkpoint_id === to) ? to : (list[0] || { checkpoint: {} }).checkpoint.checkpoint_id || '';
    markBranchedTurns(list, branches);
  }

  // branchesOf numbers the branches of a history: a leaf checkpoint (none
  // follows it) ends a branch; every checkpoint belongs to the oldest
  // branch that reaches it. current holds the thread's branch.
  function branchesOf(list) {
    const byId = new Map(list.map((c) => [c.checkpoint.checkpoint_id, c]));
    const parents = new Set(list.map((c) => c.parent_checkpoint && c.parent_checkpoint.checkpoint_id).filter(Boolean));
    const leaves = list.filter((c) => !parents.has(c.checkpoint.checkpoint_id)).reverse(); // oldest leaf first
    const of = new Map();
    leaves.forEach((leaf, n) => {
      for (let c = leaf; c && !of.has(c.checkpoint.checkpoint_id); c = c.parent_checkpoint && byId.get(c.parent_checkpoint.checkpoint_id)) of.set(c.checkpoint.checkpoint_id, n + 1);
    });
    const current = new Set();
    for (let c = list[0]; c; c = c.parent_checkpoint && byId.get(c.parent_checkpoint.checkpoint_id)) current.add(c.checkpoint.checkpoint_id);
    return { of, count: Math.max(1, leaves.length), current };
  }

  // markBranchedTurns marks, in the thread view, a user message that has
  // other versions on other branches.
  function markBranchedTurns(list, branches) {
    const versions = new Map(); // message id → its texts (an edit keeps the id)
    for (const c of list) {
      const m = addedUserMessage(c);
      if (m) versions.set(m.id, (versions.get(m.id) || new Set()).add(m.content));
    }
    for (const c of list) {
      const m = addedUserMessage(c);
      if (!m || !branches.current.has(c.checkpoint.checkpoint_id)) continue;
      const n = versions.get(m.id).size;
      if (n < 2) continue;
      const user = [...$('chat').querySelectorAll('.msg.user')].find((u) => u.textContent === m.content);
      if (user && !user.dataset.versions) {
        user.dataset.versions = String(n);
        user.after(el('div', { class: 'versions note', text: `edited: ${n} versions of this message, on ${n} branches (see History)` }));
      }
    }
  }

  // addedUserMessage is the user message checkpoint c added to the one
  // before it, if any.
  function addedUserMessage(c) {
    const ms = (c.values && c.values.messages) || [];
    const last = ms[ms.length - 1];
    if (!last || last.role !== 'user' || last.harness) return null;
    const byId = new Map(st.checkpoints.map((x) => [x.checkpoint.checkpoint_id, x]));
    const parent = c.parent_checkpoint && byId.get(c.parent_checkpoint.checkpoint_id);
    const before = (parent && parent.values && parent.values.messages) || [];
    return before.some((m) => m.id === last.id && m.content === last.content) ? null : last;
  }

  // summary is the state at a checkpoint a person reads: messages, todos,
  // a harness's items, files and every other field.
  function summary(values) {
    const v = values || {};
    const out = { messages: (v.messages || []).map((m) => `${m.role}: ${m.content || (m.tool_calls || []).map((c) => `${c.name}(${JSON.stringify(c.input || c.args)})`).join(', ')}`) };
    if (Array.isArray(v.todos)) out.todos = v.todos.map((t) => `${GLYPHS[t.status] || '?'} ${t.content}`);
    if (v.plan && Array.isArray(v.plan.items)) out['plan items'] = v.plan.items.map((t) => `${GLYPHS[t.status] || '?'} ${t.content}`);
    if (v.plan && Array.isArray(v.plan.dropped) && v.plan.dropped.length) out['dropped items'] = v.plan.dropped.map((t) => `${t.content} (revision ${t.revision || '?'})`);
    if (v.files && typeof v.files === 'object') out.files = Object.keys(v.files.files || v.files).sort();
    for (const [k, x] of Object.entries(v)) if (!(k in out) && k !== 'plan' && !k.startsWith('__')) out[k] = [JSON.stringify(x)];
    return out;
  }

  function showCheckpoint(c) {
    const s = summary(c.values);
    $('checkpoint-view').replaceChildren(el('h3', { text: `State at step ${c.metadata ? c.metadata.step : '?'} (${c.checkpoint.checkpoint_id})` }),
      ...Object.entries(s).flatMap(([k, lines]) => [el('h4', { text: k }), el('ul', { class: 'state-list' }, ...lines.map((l) => el('li', { text: l })))]));
  }

  // showDiff compares the state at two checkpoints, field by field: lines
  // only in the first are removed (−), lines only in the second added (+).
  function showDiff() {
    const get = (id) => st.checkpoints.find((c) => c.checkpoint.checkpoint_id === id);
    const a = get($('diff-from').value), b = get($('diff-to').value);
    if (!a || !b) return;
    const sa = summary(a.values), sb = summary(b.values);
    const rows = [];
    for (const k of new Set([...Object.keys(sa), ...Object.keys(sb)])) {
      const x = sa[k] || [], y = sb[k] || [];
      const gone = x.filter((l) => !y.includes(l)), added = y.filter((l) => !x.includes(l));
      if (!gone.length && !added.length) continue;
      rows.push(el('h4', { text: k }), el('ul', { class: 'diff' },
        ...gone.map((l) => el('li', { class: 'del', text: `− ${l}` })), ...added.map((l) => el('li', { class: 'add', text: `+ ${l}` }))));
    }
    $('checkpoint-view').replaceChildren(el('h3', { text: 'Changes between the two checkpoints' }), ...(rows.length ? rows : [el('p', { class: 'note', text: 'No change.' })]));
  }

  // openFork offers to edit the user message checkpoint c added and run
  // again from there: the edit is a state update on the checkpoint (a new
  // branch), and the run answers from it.
  function openFork(c, msg) {
    const box = el('textarea', { rows: 3, 'aria-label': 'The edited message' });
    box.value = msg.content;
    const err = el('div', { class: 'err', role: 'alert' });
    const form = el('form', { class: 'fork-form', onsubmit: async (e) => {
      e.preventDefault();
      if (!box.value.trim()) { err.textContent = 'Write the message.'; return; }
      form.querySelector('button').disabled = true;
      try { await fork(c, msg, box.value); } catch (x) { err.textContent = humanError(x); form.querySelector('button').disabled = false; }
    } }, el('label', {}, 'Edit the message, then run from here on a new branch', box), el('button', { type: 'submit', text: 'Fork and run' }), err);
    $('checkpoint-view').replaceChildren(form);
    box.focus();
  }

  async function fork(c, msg, text) {
    if (st.running || parked()) throw new Error('Wait until the thread is idle to fork it.');
    const upd = await api('POST', threadPath('/state'), {
      checkpoint_id: c.checkpoint.checkpoint_id,
      values: { messages: [{ id: msg.id, type: 'human', role: 'user', content: text }] },
    });
    const from = upd && upd.checkpoint && upd.checkpoint.checkpoint_id;
    const resp = await fetch(threadPath('/runs/stream'), {
      method: 'POST', headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ route: routePath(), checkpoint_id: from }),
    });
    if (!resp.ok) {
      const body = await resp.json().catch(() => null);
      const e = (body && body.error) || {};
      throw Object.assign(new Error(e.message || `HTTP ${resp.status}`), { kind: e.kind });
    }
    $('checkpoint-view').replaceChildren();
    const id = st.thread;
    setStatus('Running on the new branch…');
    setRunning(true);
    await resp.text().catch(() => '');
    setRunning(false);
    await openThread(id);
    setStatus('Forked: the thread is on the new branch; the old one stays in History.');
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

  // pickRoute shows route id (else the current one, else the last one
  // picked, else the first) with its description, and remembers it.
  function pickRoute(id, params) {
    const find = (x) => x && st.routes.find((r) => r.id === x);
    const r = find(id) || st.route || find(localStorage.getItem('dawn.route')) || st.routes[0];
    st.route = r || null;
    $('route').value = r ? r.id : '';
    $('route-description').textContent = (r && r.description) || '';
    if (r) localStorage.setItem('dawn.route', r.id);
    const inputs = ((r && r.params) || []).map((name) => el('label', {}, `${name} `,
      el('input', { 'data-param': name, value: (params && params[name]) || 'demo', size: 10, 'aria-label': `Route parameter ${name}` })));
    $('params').replaceChildren(...inputs);
  }

  function routeOption(r) {
    const desc = r.description ? ` — ${r.description.length > 60 ? `${r.description.slice(0, 59)}…` : r.description}` : '';
    return el('option', { value: r.id, text: `${r.id}${desc}`, title: r.description || '' });
  }

  async function stopRun() {
    try { await api('POST', threadPath('/cancel')); } catch (err) { setStatus(humanError(err)); }
  }

  async function init() {
    $('route').addEventListener('change', () => { pickRoute($('route').value); newThread(); });
    $('thread').addEventListener('change', () => { if ($('thread').value) openThread($('thread').value); else newThread(); });
    $('new-thread').addEventListener('click', newThread);
    $('pause').addEventListener('click', () => supervise('pause'));
    $('resume').addEventListener('click', () => supervise('resume'));
    $('cancel').addEventListener('click', () => supervise('cancel'));
    $('stop').addEventListener('click', stopRun);
    $('plan-revisions').addEventListener('click', showRevisions);
    $('diff').addEventListener('click', showDiff);
    $('to-decisions').addEventListener('click', (e) => {
      e.preventDefault();
      $('decisions').scrollIntoView({ block: 'center' });
      const first = $('decisions').querySelector('button:not(:disabled)');
      if (first) first.focus();
    });
    $('send').addEventListener('submit', (e) => {
      e.preventDefault();
      const box = $('message');
      const text = box.value;
      if (!text.trim() || st.running || parked()) return;
      box.value = '';
      send(text);
    });
    $('message').addEventListener('keydown', (e) => {
      if (e.key === 'Enter' && !e.shiftKey && !e.isComposing) { e.preventDefault(); $('send').requestSubmit(); }
    });
    try {
      st.routes = (await api('GET', '/routes')).filter((r) => r.kind !== 'subagent' && !r.error);
    } catch (err) {
      return setStatus(`Could not list routes: ${humanError(err)}`);
    }
    $('route').replaceChildren(...st.routes.map(routeOption));
    pickRoute(null);
    const hash = new URLSearchParams(location.hash.slice(1)).get('thread');
    const id = hash || localStorage.getItem('dawn.current');
    if (id) await openThread(id);
    else newThread();
    document.body.dataset.ready = 'true';
  }

  init();
})();
