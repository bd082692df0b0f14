// A fetch client written to Dawn's documented HTTP contract (Dawn's
// docs/dev-server.mdx: threads, runs/wait, runs/stream, state, cancel,
// delete, errors with error.details.code), driven against a real Dawn for Go
// server. It knows nothing of Dawn for Go: if a Dawn front end would break,
// this test breaks.
//
// Env: DAWN_URL (the server), DAWN_API_KEY (optional). The route /chat runs
// on an OpenAI model served by aimock: "Say hello" answers at once, "Tell me
// a long story" streams slowly and "Take your time" answers after 3 s, so
// that the client can act on a run in flight.
import { test } from "node:test";
import assert from "node:assert/strict";

const base = process.env.DAWN_URL;
const route = "/chat#agent"; // Dawn's route key: <routeId>#<kind>

// DawnClient is the thin client a Dawn front end writes.
class DawnClient {
  constructor(url, apiKey) {
    this.url = url;
    this.headers = { "content-type": "application/json" };
    if (apiKey) this.headers.authorization = `Bearer ${apiKey}`;
  }

  async request(method, path, body, signal) {
    return fetch(this.url + path, {
      method,
      headers: this.headers,
      body: body === undefined ? undefined : JSON.stringify(body),
      signal,
    });
  }

  async json(method, path, body) {
    const res = await this.request(method, path, body);
    const text = await res.text();
    return { status: res.status, body: text ? JSON.parse(text) : null, text };
  }

  createThread(metadata = {}) {
    return this.json("POST", "/threads", { metadata });
  }

  wait(threadId, message) {
    return this.json("POST", `/threads/${threadId}/runs/wait`, runInput(message));
  }

  state(threadId) {
    return this.json("GET", `/threads/${threadId}/state`);
  }

  cancel(threadId) {
    return this.json("POST", `/threads/${threadId}/cancel`);
  }

  remove(threadId) {
    return this.json("DELETE", `/threads/${threadId}`);
  }

  // stream yields {id, event, data} with data parsed as JSON, as Dawn's
  // clients read runs/stream.
  async *stream(threadId, message) {
    const res = await this.request("POST", `/threads/${threadId}/runs/stream`, runInput(message));
    assert.equal(res.status, 200, `runs/stream answered ${res.status}`);
    assert.match(res.headers.get("content-type"), /^text\/event-stream/);
    const decoder = new TextDecoder();
    let buffer = "";
    for await (const bytes of res.body) {
      buffer += decoder.decode(bytes, { stream: true });
      let end;
      while ((end = buffer.indexOf("\n\n")) >= 0) {
        const block = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        const ev = { id: null, event: "message", data: "" };
        for (const line of block.split("\n")) {
          if (line.startsWith(":")) continue;
          const colon = line.indexOf(":");
          const field = colon < 0 ? line : line.slice(0, colon);
          const value = colon < 0 ? "" : line.slice(colon + 1).replace(/^ /, "");
          if (field === "id") ev.id = value;
          if (field === "event") ev.event = value;
          if (field === "data") ev.data += value;
        }
        if (ev.data === "") continue;
        yield { ...ev, data: JSON.parse(ev.data) };
      }
    }
  }
}

function runInput(message) {
  return { route, input: { messages: [{ role: "user", content: message }] } };
}

const client = new DawnClient(base, process.env.DAWN_API_KEY);
let n = 0;
const newThread = () => `contract-${process.pid}-${++n}`;

test("healthz", async () => {
  const res = await client.json("GET", "/healthz");
  assert.equal(res.status, 200);
  assert.deepEqual(res.body, { status: "ready" });
});

test("POST /threads returns the thread", async () => {
  const res = await client.createThread({ user: "u1" });
  assert.equal(res.status, 200);
  for (const key of ["thread_id", "created_at", "updated_at", "metadata", "status"]) {
    assert.ok(key in res.body, `thread lacks ${key}: ${res.text}`);
  }
  assert.deepEqual(res.body.metadata, { user: "u1" });
});

test("runs/wait returns the final state values", async () => {
  const thread = newThread();
  const res = await client.wait(thread, "Say hello");
  assert.equal(res.status, 200, res.text);
  const last = res.body.messages.at(-1);
  assert.equal(last.content, "Hello from the contract test.");
});

test("runs/stream: chunk data is a bare JSON string and done ends the stream", async () => {
  const thread = newThread();
  const events = [];
  for await (const ev of client.stream(thread, "Say hello")) events.push(ev);
  const chunks = events.filter((e) => e.event === "chunk");
  assert.ok(chunks.length > 0, "no chunk events");
  for (const c of chunks) assert.equal(typeof c.data, "string", `chunk data ${JSON.stringify(c.data)} is not a string`);
  assert.equal(chunks.map((c) => c.data).join(""), "Hello from the contract test.");
  const done = events.at(-1);
  assert.equal(done.event, "done");
  assert.equal(done.data.output.messages.at(-1).content, "Hello from the contract test.");
  const ids = events.map((e) => Number(e.id));
  assert.deepEqual(ids, ids.map((_, i) => i + 1), "event ids are not 1, 2, 3, …");
});

test("GET state has Dawn's shape", async () => {
  const thread = newThread();
  await client.wait(thread, "Say hello");
  const res = await client.state(thread);
  assert.equal(res.status, 200);
  for (const key of ["values", "next", "config", "metadata", "created_at", "parent_config"]) {
    assert.ok(key in res.body, `state lacks ${key}: ${res.text}`);
  }
  assert.ok(Array.isArray(res.body.next));
  assert.equal(res.body.config.configurable.thread_id, thread);
  assert.equal(res.body.values.messages.at(-1).content, "Hello from the contract test.");
});

test("DELETE answers 204 with no body, then the thread is gone", async () => {
  const thread = newThread();
  await client.wait(thread, "Say hello");
  const res = await client.remove(thread);
  assert.equal(res.status, 204);
  assert.equal(res.text, "");
  const after = await client.state(thread);
  assert.equal(after.status, 404);
  assert.equal(after.body.error.details.code, "thread_not_found");
});

test("cancel with no run in flight is 409 no_run_in_flight", async () => {
  const created = await client.createThread();
  const res = await client.cancel(created.body.thread_id);
  assert.equal(res.status, 409, res.text);
  assert.equal(res.body.error.details.code, "no_run_in_flight");
  assert.equal(typeof res.body.error.message, "string");
});

test("cancel mid-stream: 200 interrupted, and the stream ends with done {cancelled: true}", async () => {
  const thread = newThread();
  const events = [];
  let cancelled = null;
  for await (const ev of client.stream(thread, "Tell me a long story")) {
    events.push(ev);
    if (ev.event === "chunk" && cancelled === null) {
      cancelled = await client.cancel(thread);
    }
  }
  assert.ok(cancelled, "no chunk arrived before the run ended");
  assert.equal(cancelled.status, 200, cancelled.text);
  assert.deepEqual(cancelled.body, { thread_id: thread, status: "interrupted" });
  const done = events.at(-1);
  assert.equal(done.event, "done");
  assert.deepEqual(done.data, { output: { cancelled: true } });
});

test("a second run on a busy thread is 409 run_in_flight; a cancelled runs/wait is 409 run_cancelled", async () => {
  const thread = newThread();
  const waiting = client.wait(thread, "Take your time"); // the model answers after 3 s
  // Wait until the thread is busy with that run.
  let busy = false;
  for (let i = 0; i < 200 && !busy; i++) {
    const res = await client.json("GET", `/threads/${thread}`);
    busy = res.status === 200 && res.body.status === "busy";
    if (!busy) await new Promise((r) => setTimeout(r, 10));
  }
  assert.ok(busy, "the thread never became busy");
  const second = await client.wait(thread, "Say hello");
  assert.equal(second.status, 409, second.text);
  assert.equal(second.body.error.details.code, "run_in_flight");

  const cancelled = await client.cancel(thread);
  assert.equal(cancelled.status, 200, cancelled.text);
  const first = await waiting;
  assert.equal(first.status, 409, first.text);
  assert.equal(first.body.error.details.code, "run_cancelled");
});

test("an unknown route is a 404 with a code", async () => {
  const res = await client.json("POST", `/threads/${newThread()}/runs/wait`, {
    route: "/nowhere#agent",
    input: { messages: [{ role: "user", content: "hi" }] },
  });
  assert.equal(res.status, 404, res.text);
  assert.equal(res.body.error.details.code, "route_not_found");
});
