// Drives a running Dawn for Go server with AG-UI's own client, HttpAgent
// from @ag-ui/client, as a CopilotKit front end does. The server is the
// example app (examples/app) on the offline model; e2e/agui_client_test.go
// starts it and runs this file with DAWN_URL (and DAWN_API_KEY) set:
//
//   DAWN_URL=http://127.0.0.1:PORT node --test tools/clients/agui.test.mjs
import { test } from "node:test";
import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { HttpAgent } from "@ag-ui/client";
import { EventSchemas } from "@ag-ui/core/schemas";

const base = process.env.DAWN_URL;
if (!base) throw new Error("DAWN_URL is not set: start a server (dawn start --app examples/app) and pass its URL");
const headers = process.env.DAWN_API_KEY ? { Authorization: `Bearer ${process.env.DAWN_API_KEY}` } : {};

// aguiURL is the endpoint for a Dawn route key, URL-encoded as Dawn's own
// front ends do: /support/acme#agent -> /agui/%2Fsupport%2Facme%23agent.
const aguiURL = (routeKey) => `${base}/agui/${encodeURIComponent(routeKey)}`;

// recordingFetch keeps a copy of each response body's text, so a test can
// check the raw wire events before the client's own processing.
function recordingFetch() {
  const bodies = [];
  const responses = [];
  const fetchCopy = async (url, init) => {
    const res = await fetch(url, init);
    responses.push(res);
    if (!res.body) return res;
    const [mine, theirs] = res.body.tee();
    bodies.push(new Response(mine).text());
    return new Response(theirs, { status: res.status, statusText: res.statusText, headers: res.headers });
  };
  return { fetch: fetchCopy, bodies, responses };
}

// parseSSE splits an SSE body into the JSON of its data lines, as the
// client's parser does.
function parseSSE(text) {
  return text
    .split("\n\n")
    .map((block) => block.split("\n").filter((l) => l.startsWith("data:")).map((l) => l.slice(5).replace(/^ /, "")))
    .filter((data) => data.length > 0)
    .map((data) => JSON.parse(data.join("\n")));
}

// checkWireEvent validates one raw event against @ag-ui/core's schema, and
// that it carries no field the schema does not define (the client would
// strip those with a warning).
function checkWireEvent(event) {
  const parsed = EventSchemas.safeParse(event);
  assert.ok(parsed.success, `event ${JSON.stringify(event)} fails EventSchemas: ${parsed.error?.message}`);
  const schema = EventSchemas.options.find((o) => o.shape.type.value === event.type);
  for (const key of Object.keys(event)) {
    assert.ok(key in schema.shape, `${event.type} carries ${key}, which the protocol does not define`);
  }
}

// withWarnings runs fn and returns what it printed with console.warn: the
// client warns when it strips or drops what the server sent.
async function withWarnings(fn) {
  const warnings = [];
  const warn = console.warn;
  console.warn = (...args) => warnings.push(args.map(String).join(" "));
  try {
    return { result: await fn(), warnings };
  } finally {
    console.warn = warn;
  }
}

async function threadState(threadId) {
  const res = await fetch(`${base}/threads/${threadId}/state`, { headers });
  assert.equal(res.status, 200, `GET /threads/${threadId}/state`);
  return (await res.json()).values;
}

// dawnEvents replays a run's Dawn events (the runs/stream dialect).
async function dawnEvents(threadId, runId) {
  const res = await fetch(`${base}/threads/${threadId}/runs/${runId}/stream`, { headers });
  assert.equal(res.status, 200);
  const events = [];
  for (const block of (await res.text()).split("\n\n")) {
    const type = block.match(/^event: (.*)$/m)?.[1];
    const data = block.match(/^data: (.*)$/m)?.[1];
    if (type) events.push({ type, data: JSON.parse(data) });
  }
  return events;
}

// run sends text as the next user message and runs the agent, recording
// every event the client applied.
async function run(agent, text) {
  const events = [];
  agent.addMessage({ id: randomUUID(), role: "user", content: text });
  const { result, warnings } = await withWarnings(() => agent.runAgent({ runId: randomUUID() }, { onEvent: ({ event }) => void events.push(event) }));
  return { events, warnings, result };
}

// The README's example is the code between the readme markers, word for
// word (e2e/agui_client_test.go checks that).
test("the README example: an HttpAgent on a Dawn route, with the live plan", async () => {
  const threadId = `readme-${randomUUID()}`;
  const plans = [];
  const render = (todos) => plans.push(todos);
  // readme:begin
  const agent = new HttpAgent({
    url: `${base}/agui/${encodeURIComponent("/support/acme#agent")}`,
    headers: { Authorization: `Bearer ${process.env.DAWN_API_KEY}` },
    threadId,
  });
  agent.subscribe({ onStateChanged: ({ state }) => render(state.todos) });
  agent.addMessage({ id: randomUUID(), role: "user", content: "My invoice is wrong" });
  await agent.runAgent();
  const answer = agent.messages.at(-1).content; // "Offline model: worked through 4 plan items …"
  // readme:end
  assert.match(answer, /^Offline model: worked through 4 plan items/);
  assert.equal(plans[0].length, 4);
  assert.ok(plans[0].every((t) => t.status === "pending"), "the first plan shown is the seed");
  assert.ok(plans.some((todos) => todos.some((t) => t.status === "in_progress")), "no plan in progress was shown");
  assert.deepEqual(plans.at(-1), (await threadState(threadId)).todos);
});

test("a support run streams the plan as shared state, tool calls and the answer", async () => {
  const threadId = `agui-${randomUUID()}`;
  const wire = recordingFetch();
  const agent = new HttpAgent({ url: aguiURL("/support/acme#agent"), headers, threadId, fetch: wire.fetch });
  const { events, warnings } = await run(agent, "My invoice is wrong");

  assert.deepEqual(warnings, [], "the client warned about what the server sent");
  const types = events.map((e) => e.type);
  assert.equal(types[0], "RUN_STARTED");
  assert.equal(types[1], "STATE_SNAPSHOT");
  assert.equal(types.at(-1), "RUN_FINISHED");
  assert.deepEqual(events.at(-1).outcome, { type: "success" });
  assert.equal(types.filter((t) => t === "RUN_FINISHED" || t === "RUN_ERROR").length, 1);
  assert.equal(events[0].threadId, threadId);

  // The raw stream: every event valid and nothing the protocol lacks.
  const raw = parseSSE(await wire.bodies[0]);
  assert.deepEqual(raw.map((e) => e.type), types);
  raw.forEach(checkWireEvent);

  // Tool calls: the offline model works through the plan item by item with
  // writeTodos, calling the route's Go tool lookupAccount once, with the
  // user's text, while the first item is in progress.
  const starts = events.filter((e) => e.type === "TOOL_CALL_START");
  const names = starts.map((e) => e.toolCallName);
  assert.ok(names.length >= 3, `tool calls: ${types.join(" ")}`);
  assert.equal(names[0], "writeTodos", `tool calls: ${names.join(" ")}`);
  assert.equal(names[1], "lookupAccount", `tool calls: ${names.join(" ")}`);
  assert.ok(names.slice(2).every((n) => n === "writeTodos"), `tool calls: ${names.join(" ")}`);
  assert.equal(names.filter((n) => n === "lookupAccount").length, 1, `tool calls: ${names.join(" ")}`);
  const results = events.filter((e) => e.type === "TOOL_CALL_RESULT");
  assert.deepEqual(results.map((e) => e.toolCallId), starts.map((e) => e.toolCallId));
  const calls = agent.messages.flatMap((m) => m.toolCalls ?? []);
  assert.deepEqual(calls.map((c) => c.id), starts.map((e) => e.toolCallId));
  assert.ok(calls.filter((c) => c.function.name === "writeTodos").every((c) => Array.isArray(JSON.parse(c.function.arguments).todos)));
  assert.deepEqual(JSON.parse(calls[1].function.arguments), { email: "My invoice is wrong" });

  // The answer is an assistant message built from the text events.
  const answer = agent.messages.filter((m) => m.role === "assistant" && m.content).at(-1);
  assert.match(answer.content, /^Offline model: worked through 4 plan items/);
  const streamed = events.filter((e) => e.type === "TEXT_MESSAGE_CONTENT").map((e) => e.delta).join("");
  assert.equal(streamed, answer.content);

  // The plan as the client holds it, every delta applied by HttpAgent
  // itself, is the thread's saved plan.
  assert.ok(types.filter((t) => t === "STATE_DELTA").length >= 2, "the plan changed without STATE_DELTA events");
  const values = await threadState(threadId);
  assert.deepEqual(agent.state.todos, values.todos);
  assert.ok(values.todos.every((t) => t.status === "completed"), JSON.stringify(values.todos));
});

test("the next run on the thread starts from the saved plan and does not repeat history", async () => {
  const threadId = `agui-${randomUUID()}`;
  const agent = new HttpAgent({ url: aguiURL("/support/acme#agent"), headers, threadId });
  await run(agent, "First question");
  const first = await threadState(threadId);

  // HttpAgent sends every message and the whole state back.
  const { events, warnings } = await run(agent, "Second question");
  assert.deepEqual(warnings, []);
  const snapshot = events.find((e) => e.type === "STATE_SNAPSHOT").snapshot;
  assert.deepEqual(snapshot.todos, first.todos);
  const values = await threadState(threadId);
  assert.deepEqual(values.messages.filter((m) => m.role === "user").map((m) => m.content), ["First question", "Second question"]);
  assert.deepEqual(agent.state.todos, values.todos);
});

test("a subagent's plan is shared state under its task call id", async () => {
  const threadId = `agui-${randomUUID()}`;
  const wire = recordingFetch();
  const agent = new HttpAgent({ url: aguiURL("/research"), headers, threadId, fetch: wire.fetch });
  const { events, warnings } = await run(agent, "Compare SQLite and Postgres");
  assert.deepEqual(warnings, []);
  assert.equal(events.at(-1).type, "RUN_FINISHED");

  const task = events.find((e) => e.type === "TOOL_CALL_START" && e.toolCallName === "task");
  assert.ok(task, `no task call: ${events.map((e) => e.type).join(" ")}`);
  const sub = agent.state.subagents?.[task.toolCallId];
  assert.ok(sub, `no subagents/${task.toolCallId} in ${JSON.stringify(agent.state)}`);
  assert.equal(sub.subagent, "researcher");
  assert.equal(sub.route_id, "/research/subagents/researcher");

  // The subagent's plan in the shared state is its last plan_update.
  const dawnRun = wire.responses[0].headers.get("dawn-run-id");
  const updates = (await dawnEvents(threadId, dawnRun)).filter((e) => e.type === "subagent.plan_update" && e.data.call_id === task.toolCallId);
  assert.ok(updates.length > 0);
  assert.deepEqual(sub.todos, updates.at(-1).data.todos);

  const values = await threadState(threadId);
  assert.deepEqual(agent.state.todos, values.todos);
});

test("an unknown route is a JSON 404 before any event", async () => {
  const agent = new HttpAgent({ url: aguiURL("/nope#agent"), headers, threadId: `agui-${randomUUID()}` });
  agent.addMessage({ id: randomUUID(), role: "user", content: "hello" });
  const { warnings } = await withWarnings(() =>
    assert.rejects(
      withQuietErrors(() => agent.runAgent()),
      (err) => err.status === 404 && err.payload?.error?.kind === "route_not_found",
    ),
  );
  assert.deepEqual(warnings, []);
});

// withQuietErrors keeps the client's console.error report of a failed run
// out of the test output.
async function withQuietErrors(fn) {
  const error = console.error;
  console.error = () => {};
  try {
    return await fn();
  } finally {
    console.error = error;
  }
}
