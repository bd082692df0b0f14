// The LangGraph SDK's client.crons against the stock dawn binary serving
// examples/app on the offline model. The server runs with the test-only
// DAWN_CRON_SECONDS=1 (schedules may carry a leading seconds field) and a
// short DAWN_CRON_INTERVAL, so that a tick comes within the test.
import { test } from "node:test";
import assert from "node:assert/strict";
import { apiUrl, client, eventually } from "./helpers.mjs";

const ask = { messages: [{ type: "human", content: "Help me with my account" }] };

test("crons: createForThread fires on its thread; search, count, update and delete", async () => {
  const c = client();
  const thread = await c.threads.create();
  const cron = await c.crons.createForThread(thread.thread_id, "/support/acme", {
    schedule: "* * * * * *",
    input: ask,
    metadata: { owner: "crons-test" },
  });
  assert.match(cron.cron_id, /^[0-9a-f-]{36}$/);
  assert.equal(cron.thread_id, thread.thread_id);
  assert.equal(cron.assistant_id, "/support/acme");
  assert.equal(cron.schedule, "* * * * * *");
  assert.deepEqual(cron.metadata, { owner: "crons-test" });
  assert.deepEqual(cron.payload.input, ask);
  assert.ok(Date.parse(cron.next_run_date) > Date.parse(cron.created_at) - 1000);
  assert.equal(cron.enabled, true);

  // Each tick starts a run on the thread, through the same path as runs.create.
  const runs = await eventually("a cron run on the thread", async () => {
    const list = await c.runs.list(thread.thread_id);
    return list.length >= 2 && list;
  });
  assert.equal(runs[0].thread_id, thread.thread_id);

  const found = await c.crons.search({ threadId: thread.thread_id });
  assert.equal(found.length, 1);
  assert.equal(found[0].cron_id, cron.cron_id);
  assert.equal(await c.crons.count({ threadId: thread.thread_id }), 1);
  assert.equal(await c.crons.count({ assistantId: "/nowhere" }), 0);

  const off = await c.crons.update(cron.cron_id, { enabled: false, schedule: "0 9 * * *" });
  assert.equal(off.enabled, false);
  assert.equal(off.schedule, "0 9 * * *");
  assert.equal((await c.crons.search({ threadId: thread.thread_id, enabled: false })).length, 1);
  // A run a tick started just before the update may still be ending.
  await new Promise((resolve) => setTimeout(resolve, 1500));
  const before = (await c.runs.list(thread.thread_id)).length;
  await new Promise((resolve) => setTimeout(resolve, 2000));
  assert.equal((await c.runs.list(thread.thread_id)).length, before, "a disabled cron starts no run");

  await c.crons.delete(cron.cron_id);
  assert.equal(await c.crons.count({ threadId: thread.thread_id }), 0);
  await assert.rejects(c.crons.delete(cron.cron_id), /HTTP 404/);
});

test("crons: create runs on a new thread each tick, in a time zone; bad schedules are refused", async () => {
  const c = client();
  // docs:crons begin
  const made = await c.crons.create("/support/acme", {
    schedule: "30 9 * * 1-5", // 09:30 UTC, Monday to Friday
    input: { messages: [{ type: "human", content: "Help me with my account" }] },
    onRunCompleted: "keep", // keep each run's new thread
  });
  const mine = await c.crons.search({ assistantId: "/support/acme" });
  const count = await c.crons.count({ assistantId: "/support/acme" });
  const paused = await c.crons.update(made.cron_id, { enabled: false });
  await c.crons.delete(made.cron_id);
  // docs:crons end
  assert.equal(made.thread_id, null);
  assert.equal(made.on_run_completed, "keep");
  assert.equal(new Date(made.next_run_date).getUTCHours(), 9);
  assert.ok(mine.some((x) => x.cron_id === made.cron_id));
  assert.equal(count, mine.length);
  assert.equal(paused.enabled, false);
  // The SDK sends no time zone; the request body's timezone sets one.
  const res = await fetch(`${apiUrl}/runs/crons`, {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify({ assistant_id: "/support/acme", schedule: "30 9 * * 1-5", timezone: "Europe/Paris", input: ask }),
  });
  assert.equal(res.status, 200);
  const cron = await res.json();
  assert.equal(cron.timezone, "Europe/Paris");
  // 09:30 in Paris is 07:30 or 08:30 UTC, on a weekday.
  const next = new Date(cron.next_run_date);
  assert.ok([7, 8].includes(next.getUTCHours()) && next.getUTCMinutes() === 30, cron.next_run_date);
  assert.ok(next.getUTCDay() >= 1 && next.getUTCDay() <= 5, cron.next_run_date);
  const listed = await c.crons.search({ assistantId: "/support/acme", sortBy: "created_at", sortOrder: "desc", limit: 1 });
  assert.deepEqual(listed.map((x) => x.cron_id), [cron.cron_id]);
  await c.crons.delete(cron.cron_id);

  await assert.rejects(c.crons.create("/support/acme", { schedule: "every monday", input: ask }), /HTTP 400.*five fields/);
  await assert.rejects(c.crons.create("/nowhere", { schedule: "0 9 * * *", input: ask }), /HTTP 404.*assistant_not_found/);
});
