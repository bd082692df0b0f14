// The LangGraph SDK's Client through a load balancer: three replicas of one
// app on one Postgres database behind HAProxy (round robin, no stickiness),
// whose slow model takes a few hundred milliseconds a step. The balancer
// test in reliability/ starts them and runs this file with
// DAWN_BALANCER_URL set; HAProxy names the replica that answered each
// request in a Dawn-Replica header. Without DAWN_BALANCER_URL (as under
// `node --test` of this folder for the other client tests) it is skipped.
import { test } from "node:test";
import assert from "node:assert/strict";
import { Client, overrideFetchImplementation } from "@langchain/langgraph-sdk";

const base = process.env.DAWN_BALANCER_URL;
const skip = !base && "DAWN_BALANCER_URL is not set: go test ./reliability -run TestBehindHAProxyClients starts the balancer";
const route = "/work";
const input = { messages: [{ type: "human", content: "Work" }] };

// answers records every response the client got: its method, path, status
// and the replica HAProxy sent the request to.
const answers = [];
overrideFetchImplementation(async (url, init) => {
  const res = await fetch(url, init);
  answers.push({ method: init?.method ?? "GET", path: new URL(url).pathname, status: res.status, replica: res.headers.get("dawn-replica") });
  return res;
});

const c = base && new Client({ apiUrl: base, callerOptions: { maxRetries: 0 } });

async function collect(stream) {
  const parts = [];
  for await (const part of stream) parts.push(part);
  return parts;
}

const lastAI = (messages) => [...messages].reverse().find((m) => m.type === "ai");

// completed checks a run's final values: the slow model ticked the plan's
// first items, then answered.
function completed(values) {
  assert.equal(values.todos[0].status, "completed", JSON.stringify(values.todos));
  assert.ok(values.messages.some((m) => m.type === "tool" && m.name === "writeTodos"), "the run's tool steps are in the thread");
  assert.equal(lastAI(values.messages).content, "Slow answer");
}

test("runs.wait and runs.stream (values, messages-tuple) on threads made through the balancer", { skip }, async () => {
  const threads = await Promise.all([1, 2, 3].map(() => c.threads.create()));
  const waited = await Promise.all(threads.map((th) => c.runs.wait(th.thread_id, route, { input })));
  waited.forEach(completed);

  const th = await c.threads.create();
  const parts = await collect(c.runs.stream(th.thread_id, route, { input, streamMode: ["values", "messages-tuple"] }));
  assert.equal(parts[0].event, "metadata");
  const values = parts.filter((p) => p.event === "values").map((p) => p.data);
  completed(values.at(-1));
  const answer = lastAI(values.at(-1).messages);
  const chunks = parts.filter((p) => p.event === "messages" && p.data[0].id === answer.id);
  assert.equal(chunks.map((p) => p.data[0].content).join(""), answer.content, "the answer's messages-tuple chunks make the answer");
  assert.equal((await c.runs.get(th.thread_id, parts[0].data.run_id)).status, "success");
  // The thread, read through whichever replica, holds the run's end.
  completed((await c.threads.getState(th.thread_id)).values);
});

test("a stream dropped after its first event is rejoined with joinStream on another replica and followed to the end", { skip }, async () => {
  const th = await c.threads.create();
  const abort = new AbortController();
  const first = [];
  try {
    for await (const part of c.runs.stream(th.thread_id, route, { input, streamMode: ["values", "messages-tuple"], signal: abort.signal })) {
      first.push(part);
      if (part.id) break; // the first part that ends one of the run's events
    }
  } finally {
    abort.abort();
  }
  const runId = first[0].data.run_id;
  const lastEventId = first.at(-1).id;
  assert.ok(runId && lastEventId, `the dropped stream's parts name their run and carry ids: ${JSON.stringify(first)}`);
  const streamedOn = answers.findLast((a) => a.path.endsWith("/runs/stream")).replica;

  const rest = await collect(c.runs.joinStream(th.thread_id, runId, { lastEventId, streamMode: ["values", "messages-tuple"] }));
  const rejoinedOn = answers.findLast((a) => a.path.endsWith(`/runs/${runId}/stream`)).replica;
  assert.notEqual(rejoinedOn, streamedOn, "round robin sent the rejoin to another replica than the run's stream");
  const seen = new Set(first.map((p) => p.id));
  assert.deepEqual(rest.filter((p) => p.id && seen.has(p.id)), [], "the rejoined stream starts after the last part seen");
  const values = rest.filter((p) => p.event === "values");
  assert.ok(values.length > 0, `the rejoined stream carries values: ${rest.map((p) => p.event)}`);
  completed(values.at(-1).data);
  assert.equal((await c.runs.get(th.thread_id, runId)).status, "success");
});

// Last, as node --test runs a file's tests in order.
test("no answer through the balancer was a 5xx, and all three replicas answered", { skip }, () => {
  assert.deepEqual(answers.filter((a) => a.status >= 500), []);
  const replicas = new Set(answers.map((a) => a.replica));
  assert.equal(replicas.size, 3, `the replicas that answered: ${[...replicas]}`);
});
