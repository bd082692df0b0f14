// Drives the A2A endpoints of a running Dawn for Go server with the
// JavaScript SDK (@a2a-js/sdk): every route is an A2A agent at
// /a2a/{route}. e2e/a2a_client_test.go starts the stock binary on a test
// app (scripted model, JWT auth) and runs this file with DAWN_URL and two
// users' tokens set:
//
//   DAWN_URL=http://127.0.0.1:PORT DAWN_TOKEN_ANN=… DAWN_TOKEN_BOB=… node --test tools/clients/a2a.test.mjs
import { test } from "node:test";
import assert from "node:assert/strict";
import {
  ClientFactory,
  ClientFactoryOptions,
  DefaultAgentCardResolver,
  JsonRpcTransportFactory,
  TaskNotFoundError,
} from "@a2a-js/sdk/client";

const base = process.env.DAWN_URL;
if (!base) throw new Error("DAWN_URL is not set: start a server (dawn start) and pass its URL");

// agent is a user's client of one route's agent, made from its card.
async function agent(route, token) {
  // docs:begin
  // Every request carries the user's token, the agent card's fetch too.
  const authFetch = (url, init = {}) => {
    const headers = new Headers(init.headers);
    headers.set("Authorization", `Bearer ${token}`);
    return fetch(url, { ...init, headers });
  };
  const factory = new ClientFactory(
    ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
      transports: [new JsonRpcTransportFactory({ fetchImpl: authFetch })],
      cardResolver: new DefaultAgentCardResolver({ fetchImpl: authFetch }),
    }),
  );
  // The card is at /a2a/support/acme/.well-known/agent-card.json: the
  // agent's URL ends with a slash.
  const client = await factory.createFromUrl(`${base}/a2a/${route}/`);
  // docs:end
  return client;
}

const ann = process.env.DAWN_TOKEN_ANN;
const bob = process.env.DAWN_TOKEN_BOB;

function userMessage(text, extra = {}) {
  return { message: { kind: "message", role: "user", messageId: crypto.randomUUID(), parts: [{ kind: "text", text }], ...extra } };
}

function textOf(parts = []) {
  return parts.filter((p) => p.kind === "text").map((p) => p.text).join("");
}

async function collect(events) {
  const out = [];
  for await (const e of events) out.push(e);
  return out;
}

test("the card names the route, its plan and tools, and the bearer scheme", async () => {
  const client = await agent("support/acme", ann);
  const card = await client.getAgentCard();
  assert.equal(card.name, "/support/[tenant]");
  assert.equal(card.description, "Answers customer questions.");
  assert.equal(card.protocolVersion, "0.3.0");
  assert.equal(card.url, `${base}/a2a/support/acme/`);
  assert.ok(card.capabilities.streaming);
  assert.ok(card.skills[0].tags.includes("planning"), JSON.stringify(card.skills[0]));
  assert.ok(card.skills.some((s) => s.name === "writeTodos"));
  assert.equal(card.securitySchemes.bearer.type, "http");
  assert.equal(card.securitySchemes.bearer.bearerFormat, "JWT");
});

test("send answers with the completed task and its answer", async () => {
  const client = await agent("support/acme", ann);
  const task = await client.sendMessage(userMessage("hi"));
  assert.equal(task.kind, "task");
  assert.equal(task.status.state, "completed");
  assert.equal(textOf(task.status.message.parts), "Hello from Dawn over A2A.");
  assert.equal(textOf(task.artifacts.find((a) => a.name === "answer").parts), "Hello from Dawn over A2A.");
});

test("a stream carries the plan as status updates, then the answer and the plan as artifacts; get reads the task", async () => {
  const client = await agent("support/acme", ann);
  const events = await collect(client.sendMessageStream(userMessage("make a plan")));
  assert.equal(events[0].kind, "task");
  assert.equal(events[0].status.state, "working");
  const plans = events
    .filter((e) => e.kind === "status-update" && e.status.message?.metadata?.dawn_event === "plan_update")
    .map((e) => e.status.message.parts[0].data.todos);
  assert.equal(plans.length, 1);
  assert.deepEqual(plans[0].map((t) => t.status), ["completed", "completed", "completed", "completed"]);
  const artifacts = Object.fromEntries(events.filter((e) => e.kind === "artifact-update").map((e) => [e.artifact.name, e.artifact]));
  assert.equal(textOf(artifacts.answer.parts), "Planned and answered.");
  assert.equal(artifacts.todos.parts[0].data.todos.length, 4);
  const last = events.at(-1);
  assert.equal(last.kind, "status-update");
  assert.equal(last.final, true);
  assert.equal(last.status.state, "completed");

  const got = await client.getTask({ id: last.taskId });
  assert.equal(got.status.state, "completed");
  assert.equal(got.contextId, events[0].contextId);
});

test("a dropped stream's task goes on; resubscribe picks it up and cancel stops it", async () => {
  const client = await agent("slow", ann);
  const drop = new AbortController();
  let first;
  for await (const e of client.sendMessageStream(userMessage("slow"), { signal: drop.signal })) {
    first = e;
    break;
  }
  drop.abort();
  assert.equal(first.kind, "task");
  const working = await client.getTask({ id: first.id });
  assert.equal(working.status.state, "working");

  const resumed = collect(client.resubscribeTask({ id: first.id }));
  await new Promise((r) => setTimeout(r, 200));
  const cancelled = await client.cancelTask({ id: first.id });
  assert.equal(cancelled.status.state, "canceled");
  const events = await resumed;
  assert.equal(events[0].kind, "task");
  assert.equal(events.at(-1).final, true);
  assert.equal(events.at(-1).status.state, "canceled");
});

test("an approval is input-required; a message on the task with the decision resumes it", async () => {
  const client = await agent("ops", ann);
  const task = await client.sendMessage(userMessage("save a note"));
  assert.equal(task.status.state, "input-required");
  const asked = task.status.message.parts.find((p) => p.kind === "data").data.interrupts[0];
  assert.equal(asked.kind, "tool");
  assert.equal(asked.detail.toolName, "writeFile");

  const events = await collect(
    client.sendMessageStream(userMessage("once", { taskId: task.id, contextId: task.contextId })),
  );
  const last = events.at(-1);
  assert.equal(last.taskId, task.id);
  assert.equal(last.status.state, "completed");
  assert.equal(textOf(last.status.message.parts), "Saved notes.md.");
});

test("another user's contextId and task read as missing", async () => {
  const mine = await agent("support/acme", ann);
  const theirs = await agent("support/acme", bob);
  const task = await mine.sendMessage(userMessage("hi"));
  await assert.rejects(theirs.sendMessage(userMessage("hi", { contextId: task.contextId })), /not found/);
  await assert.rejects(theirs.getTask({ id: task.id }), TaskNotFoundError);
  await assert.rejects(theirs.cancelTask({ id: task.id }), TaskNotFoundError);
  assert.equal((await mine.getTask({ id: task.id })).status.state, "completed");
});
