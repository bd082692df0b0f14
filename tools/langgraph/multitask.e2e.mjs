// multitask_strategy with the LangGraph SDK's client against two replicas
// of one Postgres database, on an echo model that answers "re: TEXT after
// N answers" (N: the answers its run saw). reliability/multitask_test.go
// starts them and passes DAWN_URL (replica A), DAWN_REPLICA_URL (replica
// B) and DAWN_MODEL_URL (POST /gate/NAME lets a message with [hold:NAME]
// be answered; [plan] makes the run save a writeTodos step first).
import { test } from "node:test";
import assert from "node:assert/strict";
import { Client } from "@langchain/langgraph-sdk";

function env(name) {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is not set: run these tests with \`go test ./reliability -run TestMultitaskAcrossReplicas\``);
  return value;
}

const a = new Client({ apiUrl: env("DAWN_URL"), callerOptions: { maxRetries: 0 } });
const b = new Client({ apiUrl: env("DAWN_REPLICA_URL"), callerOptions: { maxRetries: 0 } });
const modelUrl = env("DAWN_MODEL_URL");

const say = (text) => ({ messages: [{ type: "human", content: text }] });

async function openGate(name) {
  const res = await fetch(`${modelUrl}/gate/${name}`, { method: "POST" });
  if (!res.ok) throw new Error(`opening gate ${name}: HTTP ${res.status}`);
}

// eventually polls check until it returns a truthy value; it bounds how
// long a test waits, it measures nothing.
async function eventually(what, check, limitMs = 20000) {
  const deadline = Date.now() + limitMs;
  for (;;) {
    const value = await check().catch(() => undefined);
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`gave up waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

// held waits until the model holds a request on gate name.
const held = (name) => eventually(`the model to hold a request on ${name}`, async () => Number(await (await fetch(`${modelUrl}/arrived/${name}`)).text()) > 0);

// texts are the user messages and the answers of a thread's state.
async function texts(client, threadId) {
  const state = await client.threads.getState(threadId);
  return state.values.messages.filter((m) => (m.type === "human" || m.type === "ai") && m.content).map((m) => m.content);
}

test("enqueue: messages sent while a run is in flight, through either replica, run in order, each seeing the answers before it", async () => {
  const thread = await a.threads.create();
  const first = await a.runs.create(thread.thread_id, "chat", { input: say("[hold:queue] zero") });
  assert.equal(first.status, "running");
  await held("queue");

  // docs:multitask enqueue begin
  const one = await b.runs.create(thread.thread_id, "chat", { input: say("one"), multitaskStrategy: "enqueue" });
  const two = await a.runs.create(thread.thread_id, "chat", { input: say("two") }); // LangGraph's default: enqueue
  const three = await b.runs.create(thread.thread_id, "chat", { input: say("three"), multitaskStrategy: "enqueue" });
  assert.deepEqual([one.status, two.status, three.status], ["pending", "pending", "pending"]);
  // docs:multitask enqueue end
  assert.equal(two.multitask_strategy, "enqueue");
  assert.deepEqual((await b.runs.list(thread.thread_id)).map((r) => r.status), ["pending", "pending", "pending", "running"]);
  assert.equal((await a.runs.get(thread.thread_id, one.run_id)).status, "pending");

  // A client of runs.wait and one of runs.stream wait for their runs.
  // docs:multitask wait begin
  const waited = b.runs.wait(thread.thread_id, "chat", { input: say("four"), multitaskStrategy: "enqueue" });
  // docs:multitask wait end
  await eventually("the waiting run to be queued", async () => (await a.runs.list(thread.thread_id)).filter((r) => r.status === "pending").length === 4);
  const streamed = (async () => {
    const parts = [];
    for await (const part of a.runs.stream(thread.thread_id, "chat", { input: say("five"), multitaskStrategy: "enqueue", streamMode: "values" })) parts.push(part);
    return parts;
  })();
  await eventually("the streaming run to be queued", async () => (await b.runs.list(thread.thread_id)).filter((r) => r.status === "pending").length === 5);

  await openGate("queue");
  const fourth = await waited;
  assert.equal(fourth.messages.at(-1).content, "re: four after 4 answers");
  const parts = await streamed;
  assert.equal(parts[0].event, "metadata");
  const last = parts.filter((p) => p.event === "values").at(-1).data;
  assert.equal(last.messages.at(-1).content, "re: five after 5 answers");

  assert.deepEqual(await texts(b, thread.thread_id), [
    "[hold:queue] zero", "re: zero after 0 answers",
    "one", "re: one after 1 answers",
    "two", "re: two after 2 answers",
    "three", "re: three after 3 answers",
    "four", "re: four after 4 answers",
    "five", "re: five after 5 answers",
  ]);
  const runs = await a.runs.list(thread.thread_id);
  assert.deepEqual(runs.map((r) => r.status), ["success", "success", "success", "success", "success", "success"]);
});

test("runs.cancel of a pending run takes it out of the queue: it never runs", async () => {
  const thread = await a.threads.create();
  await a.runs.create(thread.thread_id, "chat", { input: say("[hold:cancel] zero") });
  await held("cancel");
  const gone = await b.runs.create(thread.thread_id, "chat", { input: say("gone"), multitaskStrategy: "enqueue" });
  const kept = await b.runs.create(thread.thread_id, "chat", { input: say("kept"), multitaskStrategy: "enqueue" });
  // docs:multitask cancel begin
  await b.runs.cancel(thread.thread_id, gone.run_id);
  assert.equal((await a.runs.get(thread.thread_id, gone.run_id)).status, "interrupted");
  // docs:multitask cancel end
  await openGate("cancel");
  const values = await a.runs.join(thread.thread_id, kept.run_id);
  assert.equal(values.messages.at(-1).content, "re: kept after 1 answers");
  assert.deepEqual(await texts(a, thread.thread_id), ["[hold:cancel] zero", "re: zero after 0 answers", "kept", "re: kept after 1 answers"]);
});

test("interrupt through replica B stops the run on replica A and keeps the step it saved", async () => {
  const thread = await a.threads.create();
  const first = await a.runs.create(thread.thread_id, "chat", { input: say("[plan][hold:interrupt] start") });
  await held("interrupt");
  assert.equal((await b.threads.getState(thread.thread_id)).values.todos[0].status, "in_progress");

  // docs:multitask interrupt begin
  const second = await b.runs.wait(thread.thread_id, "chat", { input: say("instead"), multitaskStrategy: "interrupt" });
  assert.equal(second.messages.at(-1).content, "re: instead after 0 answers");
  assert.equal((await a.runs.get(thread.thread_id, first.run_id)).status, "interrupted");
  // docs:multitask interrupt end
  const state = await a.threads.getState(thread.thread_id);
  assert.equal(state.values.todos[0].status, "in_progress", "the interrupted run's plan step is kept");
  assert.ok(state.values.messages.some((m) => m.type === "tool"), "its tool call and result are kept");
  assert.deepEqual(await texts(a, thread.thread_id), ["[plan][hold:interrupt] start", "instead", "re: instead after 0 answers"]);
});

test("rollback through replica B stops the run on replica A, deletes it and its steps, and runs from the state before it", async () => {
  const thread = await a.threads.create();
  await a.runs.wait(thread.thread_id, "chat", { input: say("zero") });
  const doomed = await a.runs.create(thread.thread_id, "chat", { input: say("[plan][hold:rollback] start") });
  await held("rollback");
  assert.equal((await b.threads.getState(thread.thread_id)).values.todos[0].status, "in_progress");

  // docs:multitask rollback begin
  const after = await b.runs.wait(thread.thread_id, "chat", { input: say("again"), multitaskStrategy: "rollback" });
  assert.equal(after.messages.at(-1).content, "re: again after 1 answers");
  await assert.rejects(a.runs.get(thread.thread_id, doomed.run_id), /HTTP 404/);
  // docs:multitask rollback end
  const state = await b.threads.getState(thread.thread_id);
  assert.deepEqual(state.values.todos.map((t) => t.status), ["pending", "pending"], "the plan is back to before the rolled back run");
  assert.ok(!state.values.messages.some((m) => m.type === "tool"));
  assert.deepEqual(await texts(b, thread.thread_id), ["zero", "re: zero after 0 answers", "again", "re: again after 1 answers"]);
  assert.deepEqual((await b.runs.list(thread.thread_id)).map((r) => r.status), ["success", "success"]);
});

test("runs.cancel with action rollback through replica B deletes the run on replica A with its steps", async () => {
  const thread = await a.threads.create();
  await a.runs.wait(thread.thread_id, "chat", { input: say("zero") });
  const doomed = await a.runs.create(thread.thread_id, "chat", { input: say("[plan][hold:cancel-rollback] start") });
  await held("cancel-rollback");
  assert.equal((await b.threads.getState(thread.thread_id)).values.todos[0].status, "in_progress");

  // docs:multitask cancel-rollback begin
  await b.runs.cancel(thread.thread_id, doomed.run_id, true, "rollback");
  await assert.rejects(a.runs.get(thread.thread_id, doomed.run_id), /HTTP 404/);
  // docs:multitask cancel-rollback end
  const state = await a.threads.getState(thread.thread_id);
  assert.deepEqual(state.values.todos.map((t) => t.status), ["pending", "pending"]);
  assert.deepEqual(await texts(a, thread.thread_id), ["zero", "re: zero after 0 answers"]);
  assert.equal((await a.threads.get(thread.thread_id)).status, "idle");
});
