// The LangGraph SDK's Client on runs in flight, against the gated server:
// a run whose message says [hold:NAME] stops after its first tool step
// until the test opens gate NAME.
import { test, after } from "node:test";
import assert from "node:assert/strict";
import { client, collect, eventually, gatedUrl, held, lastAI, openGate } from "./helpers.mjs";

const c = client(gatedUrl);

// Every gate a test holds runs on is opened at the end, so that no run (and
// no stream following it) is left waiting when a test fails early.
const gates = ["join", "join-wait", "multitask", "cancel", "disconnect", "continue", "thread-stream"];
after(() => Promise.all(gates.map(openGate)));

// untilPlanStarted reads a stream until its values show the run's first
// tool step, and returns the parts read.
async function untilPlanStarted(stream) {
  const parts = [];
  for await (const part of stream) {
    parts.push(part);
    const v = part.event === "values" && part.data;
    if (v && v.todos?.[0]?.status === "in_progress" && v.messages.some((m) => m.type === "tool")) return parts;
  }
  throw new Error(`the stream ended before the run's first step: ${JSON.stringify(parts.map((p) => p.event))}`);
}

test("joinStream: join a run in flight, leave, rejoin after the last event id, follow it to the end", async () => {
  const thread = await c.threads.create();
  const run = await c.runs.create(thread.thread_id, "/support/acme", { input: held("join"), streamMode: ["values", "messages-tuple"] });
  assert.equal((await c.runs.get(thread.thread_id, run.run_id)).status, "running");
  assert.equal((await c.threads.get(thread.thread_id)).status, "busy");

  const abort = new AbortController();
  const first = await untilPlanStarted(c.runs.joinStream(thread.thread_id, run.run_id, { signal: abort.signal }));
  abort.abort();
  assert.equal(first[0].event, "metadata");
  const lastEventId = first.at(-1).id;
  assert.ok(lastEventId, "the parts carry event ids");

  // The thread's state shows the run in flight.
  const state = await c.threads.getState(thread.thread_id);
  assert.equal(state.values.todos[0].status, "in_progress");
  assert.notEqual(state.checkpoint.checkpoint_id, run.run_id, "the run has not ended: its state is a step");

  const rest = c.runs.joinStream(thread.thread_id, run.run_id, { lastEventId });
  await openGate("join");
  const after = await collect(rest);
  assert.equal(after[0].event, "metadata");
  const values = after.filter((p) => p.event === "values");
  assert.notEqual(values[0].data.todos[0].status, "pending", "the rejoined stream starts after what was seen");
  const final = values.at(-1).data;
  assert.ok(final.todos.every((t) => t.status === "completed"));
  assert.deepEqual(await c.runs.join(thread.thread_id, run.run_id), final);
  assert.equal((await c.runs.get(thread.thread_id, run.run_id)).status, "success");
});

test("runs.join waits for a run in flight", async () => {
  const thread = await c.threads.create();
  const run = await c.runs.create(thread.thread_id, "/support/acme", { input: held("join-wait") });
  const joined = c.runs.join(thread.thread_id, run.run_id);
  await eventually("the run to reach its first step", async () => (await c.threads.getState(thread.thread_id)).values.todos?.[0]?.status === "in_progress");
  await openGate("join-wait");
  const values = await joined;
  assert.match(lastAI(values.messages).content, /^Offline model/);
});

test("multitask_strategy: reject answers 409, interrupt cancels the run in flight first", async () => {
  const thread = await c.threads.create();
  const first = await c.runs.create(thread.thread_id, "/support/acme", { input: held("multitask") });
  await assert.rejects(c.runs.create(thread.thread_id, "/support/acme", { input: held("multitask"), multitaskStrategy: "reject" }), /HTTP 409.*run_in_flight/);
  await assert.rejects(c.runs.wait(thread.thread_id, "/support/acme", { input: held("multitask"), multitaskStrategy: "reject" }), /HTTP 409/);

  const second = await c.runs.wait(thread.thread_id, "/blog", {
    input: { messages: [{ type: "human", content: "Start over" }] },
    multitaskStrategy: "interrupt",
  });
  assert.equal(lastAI(second.messages).type, "ai");
  assert.equal((await c.runs.get(thread.thread_id, first.run_id)).status, "interrupted");
  const runs = await c.runs.list(thread.thread_id);
  assert.deepEqual(runs.map((r) => r.status), ["success", "interrupted"]);
});

test("runs.cancel stops a run in flight; cancelling again is refused", async () => {
  const thread = await c.threads.create();
  const run = await c.runs.create(thread.thread_id, "/support/acme", { input: held("cancel") });
  await eventually("the run to reach its first step", async () => (await c.threads.getState(thread.thread_id)).values.todos?.[0]?.status === "in_progress");
  await c.runs.cancel(thread.thread_id, run.run_id, true);
  assert.equal((await c.runs.get(thread.thread_id, run.run_id)).status, "interrupted");
  assert.equal((await c.threads.get(thread.thread_id)).status, "idle");
  await assert.rejects(c.runs.cancel(thread.thread_id, run.run_id), /HTTP 409.*run_not_running/);
  await assert.rejects(c.runs.cancel(thread.thread_id, run.run_id, false, "rollback"), /HTTP 409.*run_not_running/);
  // The steps it saved stay.
  const state = await c.threads.getState(thread.thread_id);
  assert.equal(state.values.todos[0].status, "in_progress");
});

test("on_disconnect cancel: a streaming client that leaves cancels its run", async () => {
  const thread = await c.threads.create();
  const abort = new AbortController();
  let runId;
  await untilPlanStarted(
    c.runs.stream(thread.thread_id, "/support/acme", {
      input: held("disconnect"),
      onDisconnect: "cancel",
      signal: abort.signal,
      onRunCreated: (m) => (runId = m.run_id),
    }),
  );
  abort.abort();
  await eventually("the run to be cancelled", async () => (await c.runs.get(thread.thread_id, runId)).status === "interrupted");

  // The default is to go on.
  const abort2 = new AbortController();
  let runId2;
  await untilPlanStarted(
    c.runs.stream(thread.thread_id, "/support/acme", {
      input: held("continue"),
      signal: abort2.signal,
      onRunCreated: (m) => (runId2 = m.run_id),
    }),
  );
  abort2.abort();
  await openGate("continue");
  const values = await c.runs.join(thread.thread_id, runId2);
  assert.ok(values.todos.every((t) => t.status === "completed"));
});

test("threads.joinStream follows the run in flight on a thread", async () => {
  const thread = await c.threads.create();
  await c.runs.create(thread.thread_id, "/support/acme", { input: held("thread-stream") });
  const stream = c.threads.joinStream(thread.thread_id)[Symbol.asyncIterator]();
  const first = await stream.next(); // the request is made: the run is joined
  assert.equal(first.value.event, "metadata");
  await openGate("thread-stream");
  const parts = await collect(stream);
  assert.ok(parts.at(-1).data.todos.every((t) => t.status === "completed"));
});
