// The LangGraph SDK's Client against the stock dawn binary serving
// examples/app on the offline model. Each test names the SDK methods it
// covers.
import { test } from "node:test";
import assert from "node:assert/strict";
import { Client } from "@langchain/langgraph-sdk";
import { apiUrl, client, collect, eventually, lastAI } from "./helpers.mjs";

const ask = { messages: [{ type: "human", content: "Help me with my account" }] };

test("assistants: search, count, get, getSchemas, getGraph, getSubgraphs, create; a route's default assistant is its files", async () => {
  const c = client();
  const all = await c.assistants.search({ limit: 100 });
  const graphs = all.map((a) => a.graph_id).sort();
  assert.deepEqual(graphs, ["blog", "onboarding", "release", "release/subagents/notes", "research", "research/subagents/researcher", "returns", "scratchpad", "support/[tenant]"]);
  assert.equal(await c.assistants.count(), 9);
  const support = all.find((a) => a.graph_id === "support/[tenant]");
  assert.match(support.assistant_id, /^[0-9a-f-]{36}$/);
  assert.equal(support.metadata.route_id, "/support/[tenant]");
  assert.deepEqual(support.metadata.capabilities, ["planning"]);

  const byGraph = await c.assistants.search({ graphId: "/support/[tenant]" });
  assert.equal(byGraph.length, 1);
  const paged = await c.assistants.search({ limit: 2, includePagination: true });
  assert.equal(paged.assistants.length, 2);
  assert.equal(paged.next, "2");

  assert.deepEqual(await c.assistants.get(support.assistant_id), support);
  assert.equal((await c.assistants.get(encodeURIComponent("/support/[tenant]"))).assistant_id, support.assistant_id);

  const schemas = await c.assistants.getSchemas(support.assistant_id);
  assert.equal(schemas.graph_id, "support/[tenant]");
  assert.ok(schemas.state_schema.properties.todos.readOnly, "todos belong to planning: read-only");
  assert.ok(schemas.state_schema.properties.messages);
  assert.ok(schemas.input_schema.properties.ticket_id, "state.yaml fields are input");
  assert.equal(schemas.input_schema.properties.todos, undefined, "a run's input cannot set todos");
  assert.deepEqual(Object.keys(schemas.context_schema.properties).sort(), ["model", "temperature", "tenant", "tools"]);
  assert.deepEqual(schemas.config_schema.properties, schemas.context_schema.properties, "config_schema is config.configurable's schema, as LangGraph's");
  assert.deepEqual(schemas.context_schema.properties.tools.items.enum, ["lookupAccount", "writeTodos"], "the route's tools: the app's, then planning's");

  const graph = await c.assistants.getGraph(support.assistant_id);
  assert.deepEqual(graph.nodes.map((n) => n.id), ["__start__", "agent", "tools", "__end__"]);
  const research = all.find((a) => a.graph_id === "research");
  const subgraphs = await c.assistants.getSubgraphs(research.assistant_id);
  assert.deepEqual(Object.keys(subgraphs), ["researcher"]);

  assert.equal(support.name, "support/[tenant]", "a default assistant is named by its graph, without the leading /");
  const existing = await c.assistants.create({ graphId: "/support/[tenant]", assistantId: support.assistant_id, ifExists: "do_nothing" });
  assert.equal(existing.assistant_id, support.assistant_id);
  const created = await c.assistants.create({ graphId: "support/[tenant]", name: "acme desk", config: { configurable: { tenant: "acme" } } });
  assert.notEqual(created.assistant_id, support.assistant_id);
  assert.equal(created.graph_id, "support/[tenant]", "graph_id is the graph name, however the client named it");
  assert.equal(await c.assistants.count({ graphId: "/support/[tenant]" }), 2);
  await c.assistants.delete(created.assistant_id);
  await assert.rejects(c.assistants.update(support.assistant_id, { name: "x" }), /HTTP 405.*change the route's files/);
  await assert.rejects(c.assistants.get("nope"), /HTTP 404.*assistant_not_found/);
});

test("runs.stream: values, updates, messages-tuple and custom; the plan is state; Content-Location names the run", async () => {
  const c = client();
  const thread = await c.threads.create({ metadata: { user: "stream-test" } });
  let created;
  const parts = await collect(
    c.runs.stream(thread.thread_id, "/support/acme", {
      input: ask,
      streamMode: ["values", "updates", "messages-tuple", "custom"],
      onRunCreated: (meta) => {
        created = meta;
      },
    }),
  );
  assert.equal(parts[0].event, "metadata");
  const runId = parts[0].data.run_id;
  assert.deepEqual(created, { run_id: runId, thread_id: thread.thread_id });

  const events = new Set(parts.map((p) => p.event));
  assert.deepEqual([...events].sort(), ["custom", "messages", "metadata", "updates", "values"]);

  // The plan is an ordinary state field, and it moves through values.
  const values = parts.filter((p) => p.event === "values").map((p) => p.data);
  assert.equal(values[0].messages.length, 1, "the run starts from its input");
  assert.equal(values[0].messages[0].type, "human");
  assert.equal(values[0].todos[0].status, "pending", "the seed plan");
  // (How many values parts a live stream has depends on when the server
  // catches up with the run: it reports the state whenever it has.)
  const firstStep = values.findIndex((v) => v.todos[0].status === "in_progress");
  assert.ok(firstStep > 0 && firstStep < values.length - 1, "the plan moves during the run");
  assert.equal(values[firstStep].todos[1].status, "pending");
  const final = values.at(-1);
  assert.ok(final.todos.every((t) => t.status === "completed"));

  // custom carries Dawn's plan_update events.
  const custom = parts.filter((p) => p.event === "custom").map((p) => p.data);
  assert.equal(custom[0].event, "plan_update");
  assert.deepEqual(custom.at(-1).data.todos, final.todos);

  // updates name the nodes of the loop.
  const updates = parts.filter((p) => p.event === "updates").map((p) => Object.keys(p.data)[0]);
  assert.equal(updates[0], "agent");
  assert.equal(updates[1], "tools");
  assert.equal(updates.at(-1), "agent");
  const toolsUpdates = parts.filter((p) => p.event === "updates" && p.data.tools).map((p) => p.data.tools);
  assert.equal(toolsUpdates[0].messages[0].type, "tool");
  assert.ok(toolsUpdates.some((u) => u.todos), "a tools step's update carries the plan it changed");

  // messages-tuple: chunks of the answer with the id the state gives it.
  const tuples = parts.filter((p) => p.event === "messages").map((p) => p.data);
  const answer = lastAI(final.messages);
  const answerChunks = tuples.filter(([chunk]) => chunk.id === answer.id);
  assert.ok(answerChunks.length > 1, "the answer streams in chunks");
  assert.equal(answerChunks.map(([chunk]) => chunk.content).join(""), answer.content);
  assert.equal(answerChunks[0][1].langgraph_node, "agent");
  assert.equal(answerChunks[0][1].run_id, runId);
  const toolCallChunk = tuples.find(([chunk]) => chunk.tool_call_chunks?.length);
  assert.equal(toolCallChunk[0].tool_call_chunks[0].name, "writeTodos");
  assert.ok(tuples.some(([m]) => m.type === "tool" && m.name === "writeTodos"));

  // Every message id is unique, and every streamed id is in the final state.
  const ids = final.messages.map((m) => m.id);
  assert.equal(new Set(ids).size, ids.length);
  for (const [m] of tuples) assert.ok(ids.includes(m.id), `streamed message ${m.id} is in the final state`);

  // The same state afterwards, in both dialects' form.
  const state = await c.threads.getState(thread.thread_id);
  assert.deepEqual(state.values, final);
  assert.equal(state.metadata.run_id, runId, "a run's last step is a checkpoint of the run");
  assert.equal(state.checkpoint.thread_id, thread.thread_id);
  assert.equal(state.checkpoint.checkpoint_ns, "");
  assert.ok(state.checkpoint.step > 0, "Dawn's step is still there");
  assert.deepEqual(state.next, []);
  assert.deepEqual(state.tasks, []);
  for (const m of state.values.messages) {
    assert.ok(m.type && m.id && m.role, "each message has LangChain's type and id and Dawn's role");
  }
  const ai = state.values.messages.find((m) => m.tool_calls?.length);
  assert.equal(ai.tool_calls[0].type, "tool_call");
  assert.deepEqual(ai.tool_calls[0].args, ai.tool_calls[0].input);
  const t = await c.threads.get(thread.thread_id);
  assert.equal(t.status, "idle");
  // As LangGraph does, the thread names the graph and assistant it ran.
  const run = await c.runs.get(thread.thread_id, created.run_id);
  assert.deepEqual(t.metadata, { user: "stream-test", graph_id: "support/[tenant]", assistant_id: run.assistant_id });
});

test("runs.stream: a plan the harness owns moves through values.plan", async () => {
  const c = client();
  const thread = await c.threads.create();
  const parts = await collect(
    c.runs.stream(thread.thread_id, "/onboarding", { input: { messages: [{ type: "human", content: "Set up my account" }] }, streamMode: ["values", "custom"] }),
  );
  const plans = parts.filter((p) => p.event === "values").map((p) => p.data.plan);
  assert.equal(plans[0].state, "draft");
  const moving = plans.slice(1, -1).map((p) => p.items.map((i) => i.status).slice(0, 2).join(","));
  assert.ok(moving.includes("completed,in_progress"), `the plan moves during the run: ${moving}`);
  assert.equal(plans.at(-1).state, "paused", "budget: 3 pauses the plan");
  assert.ok(parts.some((p) => p.event === "custom" && p.data.event === "plan_paused"), "the harness's events are custom");
  assert.deepEqual(plans.at(-1), (await c.threads.getState(thread.thread_id)).values.plan);
});

test("runs.stream: the messages mode streams messages/partial and messages/complete", async () => {
  const c = client();
  const thread = await c.threads.create();
  const parts = await collect(c.runs.stream(thread.thread_id, "/blog", { input: ask, streamMode: "messages" }));
  const kinds = new Set(parts.map((p) => p.event));
  assert.ok(kinds.has("messages/metadata") && kinds.has("messages/partial") && kinds.has("messages/complete"), [...kinds].join(","));
  const complete = parts.filter((p) => p.event === "messages/complete").at(-1).data[0];
  assert.equal(complete.type, "ai");
  const state = await c.threads.getState(thread.thread_id);
  assert.equal(lastAI(state.values.messages).content, complete.content);
});

// The lines between the readme:langgraph markers are the README's example
// in "Use a LangGraph client" (e2e's TestReadmeLangGraphExample checks).
test("README example: stream a run with the LangGraph SDK", async () => {
  // readme:langgraph begin
  const client = new Client({ apiUrl });
  let todos = [];
  let text = "";
  const thread = await client.threads.create();
  for await (const { event, data } of client.runs.stream(thread.thread_id, "/support/acme", {
    input: { messages: [{ type: "human", content: "Help me with my account" }] },
    streamMode: ["values", "messages-tuple"],
  })) {
    if (event === "values") todos = data.todos; // the plan, as it changes
    if (event === "messages" && data[0].type === "AIMessageChunk") text += data[0].content;
  }
  // readme:langgraph end
  assert.ok(todos.length === 4 && todos.every((t) => t.status === "completed"));
  assert.match(text, /^Offline model: worked through 4 plan items/);
});

test("runs.wait and stateless runs: the final state; the temporary thread is deleted", async () => {
  const c = client();
  const thread = await c.threads.create();
  let created;
  const values = await c.runs.wait(thread.thread_id, "/support/acme", { input: ask, onRunCreated: (m) => (created = m) });
  assert.equal(values.messages.at(-1).type, "ai");
  assert.ok(values.todos.every((t) => t.status === "completed"));
  assert.equal(created.thread_id, thread.thread_id);
  const state = await c.threads.getState(thread.thread_id);
  assert.deepEqual(state.values, values);

  // A string input message, a run param from context, and no thread.
  let stateless;
  const out = await c.runs.wait(null, (await c.assistants.search({ graphId: "/support/[tenant]" }))[0].assistant_id, {
    input: { messages: "Hello" },
    context: { tenant: "globex" },
    onRunCreated: (m) => (stateless = m),
  });
  assert.equal(out.messages[0].content, "Hello");
  await eventually("the stateless run's thread to be deleted", async () => {
    try {
      await c.threads.get(stateless.thread_id);
      return false;
    } catch (err) {
      return /HTTP 404/.test(err.message);
    }
  });

  const parts = await collect(c.runs.stream(null, "/blog", { input: ask }));
  assert.equal(parts[0].event, "metadata");
  assert.equal(lastAI(parts.at(-1).data.messages).type, "ai");

  // A stateless background run: its thread goes when it ends.
  const background = await c.runs.create(null, "/blog", { input: ask });
  assert.ok(background.run_id && background.thread_id);
  await eventually("the stateless background run's thread to be deleted", async () => {
    try {
      await c.threads.get(background.thread_id);
      return false;
    } catch (err) {
      return /HTTP 404/.test(err.message);
    }
  });
});

test("background runs: runs.create, get, join, list, joinStream replay with lastEventId", async () => {
  const c = client();
  const thread = await c.threads.create();
  const run = await c.runs.create(thread.thread_id, "/support/acme", { input: ask, metadata: { source: "test" }, streamMode: ["values", "updates"] });
  assert.equal(run.thread_id, thread.thread_id);
  assert.ok(["running", "success"].includes(run.status));
  assert.deepEqual(run.metadata, { source: "test" });
  const joined = await c.runs.join(thread.thread_id, run.run_id);
  assert.ok(joined.todos.every((t) => t.status === "completed"));
  const got = await c.runs.get(thread.thread_id, run.run_id);
  assert.equal(got.status, "success");
  assert.equal(got.assistant_id, run.assistant_id);
  assert.deepEqual(got.kwargs.stream_mode, ["values", "updates"]);
  const listed = await c.runs.list(thread.thread_id);
  assert.deepEqual(listed.map((r) => r.run_id), [run.run_id]);
  assert.deepEqual(await c.runs.list(thread.thread_id, { status: "error" }), []);

  // A finished run's stream is replayed from the store, in the modes the
  // run was started with.
  const replay = await collect(c.runs.joinStream(thread.thread_id, run.run_id));
  assert.equal(replay[0].event, "metadata");
  assert.deepEqual([...new Set(replay.slice(1).map((p) => p.event))].sort(), ["updates", "values"]);
  assert.deepEqual(replay.at(-1).data, joined);
  // From an event id on: only what came after it.
  // (The SDK gives each part the last id seen; an event's last part
  // carries its id.)
  const plain = (parts) => parts.map(({ event, data }) => ({ event, data }));
  const cut = replay.findIndex((p, i) => i > 2 && p.id && replay[i - 1].id !== p.id);
  const rest = await collect(c.runs.joinStream(thread.thread_id, run.run_id, { lastEventId: replay[cut].id }));
  assert.equal(rest[0].event, "metadata");
  assert.deepEqual(plain(rest.slice(1)), plain(replay.slice(cut + 1)));
  // And in other modes when the client asks.
  const custom = await collect(c.runs.joinStream(thread.thread_id, run.run_id, { streamMode: ["custom"] }));
  assert.ok(custom.slice(1).every((p) => p.event === "custom"));
  assert.ok(custom.length > 1);
});

test("history and checkpoints: getHistory, getState at a checkpoint, before, parents, forks", async () => {
  const c = client();
  const thread = await c.threads.create();
  const first = await c.runs.wait(thread.thread_id, "/blog", { input: ask });
  const second = await c.runs.wait(thread.thread_id, "/blog", { input: { messages: [{ role: "user", content: "And now?" }] } });
  assert.equal(second.messages.length, first.messages.length + 2, "Dawn's {role, content} input works too");
  const runs = await c.runs.list(thread.thread_id);

  // Newest first, a checkpoint per node of LangGraph's agent graph: each
  // run's answer, the input applied, and before it the input (the state
  // before the run).
  const history = await c.threads.getHistory(thread.thread_id);
  assert.equal(history.length, 6);
  assert.deepEqual(history.map((h) => h.metadata.source), ["loop", "loop", "input", "loop", "loop", "input"]);
  assert.deepEqual(history.map((h) => h.next), [[], ["agent"], ["__start__"], [], ["agent"], ["__start__"]]);
  assert.deepEqual(history.map((h) => h.metadata.step), [3, 2, 1, 1, 0, -1]);
  assert.deepEqual(history.map((h) => h.metadata.run_id), [runs[0].run_id, runs[0].run_id, runs[0].run_id, runs[1].run_id, runs[1].run_id, runs[1].run_id]);
  assert.deepEqual(history[0].values, second);
  assert.deepEqual(history[3].values, first);
  assert.deepEqual(history[2].values, first);
  assert.deepEqual(history[5].values.messages, []);
  assert.deepEqual(history[1].values.messages.map((m) => m.content), [...first.messages.map((m) => m.content), "And now?"]);
  for (let i = 0; i + 1 < history.length; i++) {
    assert.equal(history[i].parent_checkpoint.checkpoint_id, history[i + 1].checkpoint.checkpoint_id);
  }
  assert.equal(history[5].parent_checkpoint, null);
  // Message ids do not change between checkpoints.
  assert.deepEqual(history[0].values.messages.slice(0, first.messages.length).map((m) => m.id), first.messages.map((m) => m.id));

  const older = await c.threads.getState(thread.thread_id, history[3].checkpoint.checkpoint_id);
  assert.deepEqual(older.values, first);
  const viaPost = await c.threads.getState(thread.thread_id, { checkpoint_id: history[3].checkpoint.checkpoint_id });
  assert.deepEqual(viaPost.values, first);
  const beforeInput = await c.threads.getState(thread.thread_id, history[2].checkpoint.checkpoint_id);
  assert.deepEqual([beforeInput.values, beforeInput.next], [first, ["__start__"]]);
  const before = await c.threads.getHistory(thread.thread_id, { before: history[0].config });
  assert.deepEqual(before.map((h) => h.checkpoint.checkpoint_id), history.slice(1).map((h) => h.checkpoint.checkpoint_id));
  assert.equal((await c.threads.getHistory(thread.thread_id, { limit: 1 })).length, 1);
  const filtered = await c.threads.getHistory(thread.thread_id, { metadata: { run_id: runs[1].run_id } });
  assert.deepEqual(filtered.map((h) => h.checkpoint.checkpoint_id), history.slice(3).map((h) => h.checkpoint.checkpoint_id));
  await assert.rejects(c.threads.getState(thread.thread_id, "no-such-checkpoint"), /HTTP 404.*checkpoint_not_found/);

  // A run from the latest checkpoint goes on; one from an older checkpoint
  // starts a new branch there, and the old branch stays in the history.
  await c.runs.wait(thread.thread_id, "/blog", { input: ask, checkpointId: history[0].checkpoint.checkpoint_id });
  const forked = await c.runs.wait(thread.thread_id, "/blog", { input: ask, checkpointId: history[3].checkpoint.checkpoint_id });
  assert.deepEqual(forked.messages.slice(0, first.messages.length), first.messages);
  assert.equal(forked.messages.length, first.messages.length + 2);
  assert.deepEqual((await c.threads.getState(thread.thread_id, history[0].checkpoint.checkpoint_id)).values, second);
  await assert.rejects(c.runs.wait(thread.thread_id, "/blog", { input: ask, checkpointId: "no-such-checkpoint" }), /HTTP 404.*checkpoint_not_found/);
});

test("updateState and threads.copy", async () => {
  const c = client();
  const thread = await c.threads.create();
  await c.runs.wait(thread.thread_id, "/blog", { input: ask });
  const updated = await c.threads.updateState(thread.thread_id, { values: { messages: [{ type: "human", content: "A note" }] }, asNode: "agent" });
  const state = await c.threads.getState(thread.thread_id);
  assert.equal(state.checkpoint.checkpoint_id, updated.checkpoint.checkpoint_id);
  assert.equal(state.values.messages.at(-1).content, "A note");
  assert.equal(state.metadata.source, "update");
  await assert.rejects(c.threads.updateState(thread.thread_id, { values: { mood: "calm" } }), /HTTP 400.*mood/);

  const copy = await c.threads.copy(thread.thread_id);
  assert.notEqual(copy.thread_id, thread.thread_id);
  const copied = await c.threads.getState(copy.thread_id);
  assert.deepEqual(copied.values, state.values);
  assert.equal(copied.checkpoint.thread_id, copy.thread_id);
  assert.equal((await c.threads.getHistory(copy.thread_id)).length, (await c.threads.getHistory(thread.thread_id)).length);
});

test("threads: create with ifExists, search, count, get, delete", async () => {
  const c = client();
  const tag = `search-${Date.now()}`;
  const a = await c.threads.create({ metadata: { tag, n: 1 } });
  const b = await c.threads.create({ metadata: { tag, n: 2 } });
  const again = await c.threads.create({ threadId: a.thread_id, ifExists: "do_nothing" });
  assert.equal(again.thread_id, a.thread_id);
  await assert.rejects(c.threads.create({ threadId: a.thread_id }), /HTTP 409/);

  const found = await c.threads.search({ metadata: { tag }, sortBy: "created_at", sortOrder: "asc" });
  assert.deepEqual(found.map((t) => t.thread_id), [a.thread_id, b.thread_id]);
  assert.deepEqual(found[0].values, { messages: [] });
  assert.deepEqual((await c.threads.search({ metadata: { tag, n: 2 } })).map((t) => t.thread_id), [b.thread_id]);
  assert.deepEqual((await c.threads.search({ ids: [b.thread_id] })).map((t) => t.thread_id), [b.thread_id]);
  assert.equal(await c.threads.count({ metadata: { tag } }), 2);
  assert.equal(await c.threads.count({ metadata: { tag }, status: "busy" }), 0);
  await assert.rejects(c.threads.search({ status: "sleepy" }), /HTTP 400.*status/);

  await c.threads.delete(b.thread_id);
  await assert.rejects(c.threads.get(b.thread_id), /HTTP 404/);
});

test("subgraphs: a subagent streams as the subgraph tools:<call id>", async () => {
  const c = client();
  const thread = await c.threads.create();
  const parts = await collect(
    c.runs.stream(thread.thread_id, "/research", {
      input: { messages: [{ type: "human", content: "What is known about solar sails?" }] },
      streamMode: ["values", "updates", "messages-tuple", "custom"],
      streamSubgraphs: true,
    }),
  );
  const final = parts.filter((p) => p.event === "values").at(-1).data;
  const task = final.messages.find((m) => m.tool_calls?.some((t) => t.name === "task")).tool_calls[0];
  const ns = `tools:${task.id}`;
  const sub = parts.filter((p) => p.event.endsWith(`|${ns}`));
  assert.deepEqual([...new Set(sub.map((p) => p.event.split("|")[0]))].sort(), ["custom", "messages", "updates", "values"]);
  const subValues = sub.filter((p) => p.event === `values|${ns}`).map((p) => p.data);
  assert.equal(subValues[0].messages[0].type, "human");
  assert.equal(subValues[0].messages[0].content, "What is known about solar sails?");
  assert.ok(subValues.at(-1).todos.every((t) => t.status === "completed"), "the subagent's own plan");
  const subAnswer = lastAI(subValues.at(-1).messages).content;
  const toolMessage = final.messages.find((m) => m.type === "tool" && m.tool_call_id === task.id);
  assert.equal(toolMessage.content, subAnswer, "the subagent's answer is the task's result");
  const subTuple = parts.find((p) => p.event === `messages|${ns}`).data;
  assert.equal(subTuple[1].langgraph_checkpoint_ns, ns);

  // Without subgraphs the subagent's plan still reaches custom.
  const flat = await collect(
    c.runs.stream((await c.threads.create()).thread_id, "/research", { input: ask, streamMode: ["values", "custom"] }),
  );
  assert.ok(flat.every((p) => !p.event.includes("|")));
  assert.ok(flat.some((p) => p.event === "custom" && p.data.event === "subagent.plan_update"));
});

test("bad requests are refused with a clear 4xx", async () => {
  const c = client();
  const thread = await c.threads.create();
  const cases = [
    [{ input: ask, command: { resume: "yes" } }, /HTTP 400.*not both/],
    [{ command: { resume: "yes" } }, /HTTP 409.*no_interrupt_pending/],
    [{ input: ask, multitaskStrategy: "later" }, /HTTP 400.*multitask_strategy must be one of/],
    [{ input: ask, afterSeconds: -1 }, /HTTP 400.*after_seconds must be 0 or more/],
    [{ input: { messages: [{ type: "human", content: [{ type: "image_url", image_url: "x" }] }] } }, /HTTP 400.*text only/],
    [{ input: { messages: [{ type: "ai", content: "hi" }] } }, /HTTP 400.*must be user or system/],
  ];
  for (const [payload, want] of cases) {
    await assert.rejects(c.runs.wait(thread.thread_id, "/blog", payload), want);
  }
  await assert.rejects(c.runs.create(thread.thread_id, "/blog", { input: ask, streamMode: ["nonsense"] }), /HTTP 400.*stream_mode \\"nonsense\\"/);
  await assert.rejects(c.runs.wait(thread.thread_id, "/nowhere", { input: ask }), /HTTP 404.*assistant_not_found/);
  await assert.rejects(c.runs.wait("no-such-thread", "/blog", { input: ask }), /HTTP 404.*if_not_exists/);
  const made = await c.runs.wait("made-on-demand-" + Date.now(), "/blog", { input: ask, ifNotExists: "create" });
  assert.equal(made.messages.length, 2);
});

test("Dawn's own dialect is unchanged on the same endpoints", async () => {
  const id = `dawn-${Date.now()}`;
  const res = await fetch(`${apiUrl}/threads/${id}/runs/stream`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ route: "/support/acme", input: { messages: [{ role: "user", content: "Help me with my account" }] } }),
  });
  const text = await res.text();
  assert.match(text, /^id: 1\nevent: model_call\n.*\n\nid: 2\nevent: tool_call\n/);
  assert.match(text, /event: plan_update\n/);
  assert.match(text, /event: done\n/);
  assert.doesNotMatch(text, /event: (values|metadata)\n/);
  const state = await (await fetch(`${apiUrl}/threads/${id}/state`)).json();
  assert.equal(state.values.messages[0].role, "user");
  assert.equal(state.values.messages[0].type, "human");
  assert.ok(state.checkpoint.step > 0);
  // LangGraph clients read a run Dawn's dialect started.
  const c = client();
  const [run] = await c.runs.list(id);
  assert.equal(run.status, "success");
  const parts = await collect(c.runs.joinStream(id, run.run_id, { streamMode: ["values"] }));
  assert.deepEqual(parts.at(-1).data, (await c.threads.getState(id)).values);
});

test("calls Dawn does not serve answer 405 with why", async () => {
  const c = client();
  const thread = await c.threads.create();
  const [assistant] = await c.assistants.search();
  const cases = [
    [() => c.assistants.delete(assistant.assistant_id), /HTTP 405.*route's files/],
  ];
  for (const [call, want] of cases) await assert.rejects(call, want);
});
