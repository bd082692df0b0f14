// Thread TTLs through the LangGraph SDK against the stock dawn binary:
// threads.create and threads.update take a ttl in minutes, and a thread
// left alone that long is deleted by the server's sweep (which
// e2e/langgraph_test.go runs every 100ms).
import { test } from "node:test";
import assert from "node:assert/strict";
import { apiUrl, client } from "./helpers.mjs";

// until polls check every 100ms until it returns true or ms pass.
async function until(check, ms) {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (await check()) return true;
    await new Promise((r) => setTimeout(r, 100));
  }
  return false;
}

// gone says whether the thread is no longer there.
async function gone(c, id) {
  try {
    await c.threads.get(id);
    return false;
  } catch (err) {
    if (/HTTP 404/.test(String(err))) return true;
    throw err;
  }
}

test("threads: a thread created with a ttl (minutes) is deleted once it has been left alone that long", async () => {
  const c = client();
  const brief = await c.threads.create({ ttl: 0.02, metadata: { user: "ttl" } }); // 1.2 seconds
  const kept = await c.threads.create({ metadata: { user: "ttl" } });
  assert.deepEqual(Object.keys(brief).sort(), Object.keys(kept).sort(), "a thread with a ttl shows the same fields");
  assert.deepEqual((await c.threads.get(brief.thread_id)).metadata, { user: "ttl" });
  assert.ok(await until(() => gone(c, brief.thread_id), 10000), "a thread created with ttl 0.02 was still there 10s later");
  assert.ok(!(await gone(c, kept.thread_id)), "the sweep took a thread without a ttl");
});

test("threads: the object form with strategy delete, and threads.update giving a ttl", async () => {
  const c = client();
  const long = await c.threads.create({ ttl: { ttl: 60, strategy: "delete" } });
  await new Promise((r) => setTimeout(r, 1500));
  assert.ok(!(await gone(c, long.thread_id)), "a thread with a 60-minute ttl went within 2 seconds");
  const updated = await c.threads.update(long.thread_id, { ttl: 0.02, metadata: { shortened: true } });
  assert.equal(updated.metadata.shortened, true);
  assert.ok(await until(() => gone(c, long.thread_id), 10000), "a thread updated to ttl 0.02 was still there 10s later");
});

test("threads: each update and run starts a thread's ttl again", async () => {
  const c = client();
  const thread = await c.threads.create({ ttl: 0.05 }); // 3 seconds
  const start = Date.now();
  for (let i = 0; Date.now() - start < 4500; i++) {
    if (i === 4) {
      await c.runs.wait(thread.thread_id, "/support/acme", { input: { messages: [{ type: "human", content: "Hello" }] } });
    } else {
      await c.threads.update(thread.thread_id, { metadata: { beat: i } });
    }
    await new Promise((r) => setTimeout(r, 500));
  }
  assert.ok(!(await gone(c, thread.thread_id)), "a thread updated every 500ms expired");
  assert.ok(await until(() => gone(c, thread.thread_id), 10000), "a thread left alone did not expire");
});

test("threads: a ttl that is not a positive number of minutes, or a strategy Dawn does not build, is refused", async () => {
  const c = client();
  await assert.rejects(c.threads.create({ ttl: -1 }), /HTTP 400.*ttl -1 is not a number of minutes above 0/);
  await assert.rejects(c.threads.create({ ttl: { ttl: 5, strategy: "keep_latest" } }), /HTTP 400.*keep_latest.{1,3} is not built.*strategy.{1,3}: .{1,3}delete/);
  const thread = await c.threads.create();
  await assert.rejects(c.threads.update(thread.thread_id, { ttl: 0 }), /HTTP 400.*ttl 0 is not a number of minutes above 0/);
  await assert.rejects(c.threads.update(thread.thread_id, { ttl: { ttl: 5, strategy: "archive" } }), /HTTP 400.*ttl.strategy .{1,3}archive/);
});

test("threads: Dawn's own POST /threads takes the same ttl, and answers as before without one", async () => {
  const post = (body) => fetch(`${apiUrl}/threads`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
  const plain = await post({ metadata: { wire: "dawn" } });
  assert.equal(plain.status, 200);
  assert.deepEqual(Object.keys(await plain.json()).sort(), ["created_at", "metadata", "status", "thread_id", "updated_at"]);
  const res = await post({ metadata: { wire: "dawn" }, ttl: { ttl: 0.02 } });
  assert.equal(res.status, 200);
  const thread = await res.json();
  assert.deepEqual(Object.keys(thread).sort(), ["created_at", "metadata", "status", "thread_id", "updated_at"]);
  const c = client();
  assert.ok(await until(() => gone(c, thread.thread_id), 10000), "a thread Dawn's wire created with ttl 0.02 was still there 10s later");
  const bad = await post({ ttl: "soon" });
  assert.equal(bad.status, 400);
  assert.match((await bad.json()).error.message, /ttl must be an object or a number of minutes/);
});
