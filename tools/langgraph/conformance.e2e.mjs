// LangGraph conformance: the SDK's Client against the stock dawn binary on
// aimock, serving /agent (its model calls writeTodos on "Plan it", then
// answers "Planned."; readSkill on "Look it up", then "Found it.") and /teams/[team] (a prompt template reading the
// team). Run by e2e/langgraph_conformance_test.go, which passes the server
// in DAWN_CONFORMANCE_URL and aimock in DAWN_AIMOCK_URL. (Not named
// *.test.mjs: TestLangGraphClients runs those against other servers.)
import { test } from "node:test";
import assert from "node:assert/strict";
import { Client } from "@langchain/langgraph-sdk";

const apiUrl = process.env.DAWN_CONFORMANCE_URL;
const mockUrl = process.env.DAWN_AIMOCK_URL;
if (!apiUrl || !mockUrl) {
  throw new Error("DAWN_CONFORMANCE_URL or DAWN_AIMOCK_URL is not set: run these tests with `go test ./e2e -run TestLangGraphConformance`, which starts the servers");
}

function client() {
  return new Client({ apiUrl, callerOptions: { maxRetries: 0 } });
}

async function collect(stream) {
  const parts = [];
  for await (const part of stream) parts.push(part);
  return parts;
}

const human = (content) => ({ messages: [{ type: "human", content }] });
const lastAI = (messages) => [...messages].reverse().find((m) => m.type === "ai");

// lastModelRequest is the last chat request aimock received.
async function lastModelRequest() {
  const res = await fetch(`${mockUrl}/__aimock/journal?path=/v1/chat/completions`);
  const entries = await res.json();
  return entries.at(-1).body;
}

test("assistants: create, get, update (a new version), versions, set latest, search, count, delete", async () => {
  const c = client();
  const [system] = await c.assistants.search({ graphId: "agent", metadata: { created_by: "system" } });
  assert.equal(system.name, "agent", "the default assistant is named by its graph, without the leading /");
  assert.equal(system.graph_id, "agent", "graph_id is the graph name, without the leading /");

  const created = await c.assistants.create({
    graphId: "agent",
    config: { configurable: { model_name: "gpt" } },
    description: "foo",
    metadata: { team: "red" },
  });
  assert.equal(created.graph_id, "agent");
  assert.equal(created.name, "Untitled");
  assert.equal(created.version, 1);
  assert.deepEqual(created.config, { configurable: { model_name: "gpt" } });
  assert.notEqual(created.assistant_id, system.assistant_id);

  const updated = await c.assistants.update(created.assistant_id, { metadata: { name: "woof" }, description: "bar" });
  assert.equal(updated.version, 2);
  const got = await c.assistants.get(created.assistant_id);
  assert.deepEqual(got.metadata, { team: "red", name: "woof" }, "metadata is merged");
  assert.equal(got.description, "bar");
  assert.deepEqual(got.config, { configurable: { model_name: "gpt" } }, "config is kept");

  assert.deepEqual((await c.assistants.getVersions(created.assistant_id)).map((v) => v.version), [2, 1]);
  assert.deepEqual((await c.assistants.getVersions(created.assistant_id, { limit: 1 })).map((v) => v.version), [2]);
  assert.deepEqual((await c.assistants.getVersions(created.assistant_id, { offset: 1 })).map((v) => v.version), [1]);
  assert.deepEqual((await c.assistants.getVersions(created.assistant_id, { metadata: { name: "woof" } })).map((v) => v.version), [2]);

  const back = await c.assistants.setLatest(created.assistant_id, 1);
  assert.equal(back.version, 1);
  assert.equal(back.description, "foo");
  assert.equal((await c.assistants.update(created.assistant_id, {})).version, 3);
  await assert.rejects(c.assistants.setLatest(created.assistant_id, 9), /HTTP 404.*Assistant version not found/);

  const named = await c.assistants.create({ graphId: "/agent", name: "woof" });
  const byGraph = await c.assistants.search({ graphId: "agent", limit: 100 });
  assert.deepEqual(new Set(byGraph.map((a) => a.assistant_id)), new Set([system.assistant_id, created.assistant_id, named.assistant_id]));
  assert.ok(byGraph.every((a) => a.graph_id === "agent"), "created as \"agent\" or \"/agent\", graph_id is \"agent\"");
  assert.deepEqual((await c.assistants.search({ name: "woof" })).map((a) => a.assistant_id), [named.assistant_id]);
  assert.deepEqual((await c.assistants.search({ metadata: { team: "red" } })).map((a) => a.assistant_id), [created.assistant_id]);
  assert.equal(await c.assistants.count({ graphId: "/agent" }), 3);
  assert.equal((await c.assistants.search({ graphId: "agent", limit: 1, offset: 1 })).length, 1);

  await c.assistants.delete(created.assistant_id);
  await c.assistants.delete(named.assistant_id);
  await assert.rejects(c.assistants.get(created.assistant_id), /HTTP 404.*Assistant not found/);
  await assert.rejects(c.assistants.getVersions(created.assistant_id), /HTTP 404/);
  await assert.rejects(c.assistants.update(system.assistant_id, { name: "x" }), /HTTP 405.*change the route's files/);
  await assert.rejects(c.assistants.create({ graphId: "nowhere" }), /HTTP 404.*graph_id \\"nowhere\\" is no route/);
});

test("assistants: deleting one with deleteThreads deletes the threads whose metadata names it", async () => {
  const c = client();
  const created = await c.assistants.create({ graphId: "agent" });
  const mine = await c.threads.create({ metadata: { assistant_id: created.assistant_id } });
  const other = await c.threads.create({ metadata: { assistant_id: "someone-else" } });
  await c.assistants.delete(created.assistant_id, { deleteThreads: true });
  await assert.rejects(c.threads.get(mine.thread_id), /HTTP 404/);
  assert.equal((await c.threads.get(other.thread_id)).thread_id, other.thread_id);
});

test("threads: a run names its graph and assistant in the thread's metadata, as chat UIs search threads by them", async () => {
  const c = client();
  const created = await c.assistants.create({ graphId: "agent", name: "by metadata" });
  const thread = await c.threads.create({ metadata: { owner: "ann" } });
  await c.runs.wait(thread.thread_id, created.assistant_id, { input: human("Plan it") });
  const got = await c.threads.get(thread.thread_id);
  assert.deepEqual(got.metadata, { owner: "ann", graph_id: "agent", assistant_id: created.assistant_id });
  const byAssistant = await c.threads.search({ metadata: { assistant_id: created.assistant_id } });
  assert.deepEqual(byAssistant.map((t) => t.thread_id), [thread.thread_id]);
  const byGraph = await c.threads.search({ metadata: { graph_id: "agent", owner: "ann" } });
  assert.deepEqual(byGraph.map((t) => t.thread_id), [thread.thread_id]);
  await c.assistants.delete(created.assistant_id, { deleteThreads: true });
  await assert.rejects(c.threads.get(thread.thread_id), /HTTP 404/);
});

test("assistants: config and context overrides are checked against the route, naming the field", async () => {
  const c = client();
  await assert.rejects(c.assistants.create({ graphId: "agent", config: { configurable: { temperature: 5 } } }),
    /HTTP 400.*config\.configurable\.temperature: must be a number from 0 to 2/);
  await assert.rejects(c.assistants.create({ graphId: "agent", context: { tools: ["rm"] } }),
    /HTTP 400.*context\.tools: tools\[0\] \\"rm\\" is not a tool of the route; it has .*writeTodos/);
  await assert.rejects(c.assistants.create({ graphId: "agent", config: { configurable: { model: "gpt" } } }),
    /HTTP 400.*config\.configurable\.model/);
  await assert.rejects(c.assistants.create({ graphId: "teams/[team]", config: { configurable: { team: 7 } } }),
    /HTTP 400.*config\.configurable\.team must be a string/);
  const thread = await c.threads.create();
  await assert.rejects(c.runs.wait(thread.thread_id, "agent", { input: human("Which model"), config: { configurable: { temperature: -1 } } }),
    /HTTP 400.*config\.configurable\.temperature/);
  await assert.rejects(c.runs.wait(thread.thread_id, "agent", { input: human("Which model"), config: { recursion_limit: 0 } }),
    /HTTP 400.*config\.recursion_limit/);
});

test("assistants: a run with an assistant gets its model, temperature, tools and prompt variables; the run's config wins", async () => {
  const c = client();
  const override = await c.assistants.create({
    graphId: "agent",
    config: { configurable: { model: "openai:gpt-4o-override", temperature: 0.3 } },
    context: { tools: [] },
  });
  const thread = await c.threads.create();
  const out = await c.runs.wait(thread.thread_id, override.assistant_id, { input: human("Which model") });
  assert.equal(lastAI(out.messages).content, "Override model.");
  let sent = await lastModelRequest();
  assert.equal(sent.model, "gpt-4o-override");
  assert.equal(sent.temperature, 0.3);
  assert.equal(sent.tools, undefined, "an empty tool list leaves the model no tools");
  const runs = await c.runs.list(thread.thread_id);
  assert.equal(runs[0].assistant_id, override.assistant_id);

  await c.runs.wait(thread.thread_id, override.assistant_id, { input: human("Which model"), config: { configurable: { temperature: 0.1 } } });
  sent = await lastModelRequest();
  assert.equal(sent.temperature, 0.1, "the run's own config is over the assistant's");

  const plain = await c.runs.wait(null, "agent", { input: human("Which model") });
  assert.equal(lastAI(plain.messages).content, "Route model.");
  sent = await lastModelRequest();
  assert.equal(sent.model, "gpt-4o-mini");
  assert.ok(sent.tools.some((t) => t.function.name === "writeTodos"));

  const blue = await c.assistants.create({ graphId: "teams/[team]", config: { configurable: { team: "blue" } } });
  const served = await c.runs.wait(null, blue.assistant_id, { input: human("Who do you serve") });
  assert.equal(lastAI(served.messages).content, "Team blue.");
});

test("threads.update merges metadata", async () => {
  const c = client();
  const thread = await c.threads.create({ metadata: { a: 1, b: "x" } });
  const updated = await c.threads.update(thread.thread_id, { metadata: { b: "y", c: true } });
  assert.deepEqual(updated.metadata, { a: 1, b: "y", c: true });
  assert.deepEqual((await c.threads.get(thread.thread_id)).metadata, { a: 1, b: "y", c: true });
  await assert.rejects(c.threads.update("00000000-0000-0000-0000-000000000000", { metadata: {} }), /HTTP 404/);
});

test("input: {messages: []} runs on from the thread's messages", async () => {
  const c = client();
  const thread = await c.threads.create();
  await c.runs.wait(thread.thread_id, "agent", { input: human("Plan it") });
  const before = (await c.threads.getState(thread.thread_id)).values.messages.length;
  const out = await c.runs.wait(thread.thread_id, "agent", { input: { messages: [] } });
  assert.equal(lastAI(out.messages).content, "Planned.");
  assert.equal(out.messages.length, before + 1, "no new human message; one more answer");
});

test("errors: the error event carries the error's name; recursion_limit is the turn limit (GraphRecursionError)", async () => {
  const c = client();
  const thread = await c.threads.create();
  const parts = await collect(c.runs.stream(thread.thread_id, "agent", { input: human("Fail now") }));
  const last = parts.at(-1);
  assert.equal(last.event, "error");
  assert.equal(last.data.error, "ModelError");
  assert.match(last.data.message, /Boo!/);

  const limited = await c.threads.create();
  await assert.rejects(c.runs.wait(limited.thread_id, "agent", { input: human("Plan it"), config: { recursion_limit: 2 } }), /GraphRecursionError/);
  assert.equal((await c.threads.get(limited.thread_id)).status, "error");
  const ok = await c.runs.wait(null, "agent", { input: human("Plan it"), config: { recursion_limit: 4 } });
  assert.equal(lastAI(ok.messages).content, "Planned.");
});

test("unknown assistant: LangGraph's message", async () => {
  const c = client();
  const thread = await c.threads.create();
  await assert.rejects(c.runs.wait(thread.thread_id, "non-existent", { input: human("hi") }), /HTTP 404.*No assistant found for/);
  await assert.rejects(collect(c.runs.stream(thread.thread_id, "non-existent", { input: human("hi") })), /No assistant found for/);
  await assert.rejects(c.assistants.get("00000000-0000-0000-0000-000000000000"), /HTTP 404.*Assistant not found/);
});

test("stream values: one state per step, the model's turn included", async () => {
  const c = client();
  const thread = await c.threads.create();
  const parts = await collect(c.runs.stream(thread.thread_id, "agent", { input: human("Look it up"), streamMode: "values" }));
  const values = parts.filter((p) => p.event === "values").map((p) => p.data.messages.map((m) => m.type));
  assert.deepEqual(values, [["human"], ["human", "ai"], ["human", "ai", "tool"], ["human", "ai", "tool", "ai"]]);
  // Each state's ids are the last one's plus one, as LangGraph's test of it checks.
  let previous = [];
  for (const p of parts.filter((p) => p.event === "values")) {
    const ids = p.data.messages.map((m) => m.id);
    assert.deepEqual(ids.slice(0, -1), previous);
    previous = ids;
  }
  assert.equal(parts.at(-1).event, "values");
  assert.deepEqual(new Set(parts.map((p) => p.event)), new Set(["metadata", "values"]));
});

test("stream updates: agent, tools, agent", async () => {
  const c = client();
  const parts = await collect(c.runs.stream(null, "agent", { input: human("Look it up"), streamMode: "updates" }));
  const updates = parts.filter((p) => p.event === "updates");
  assert.deepEqual(updates.map((p) => Object.keys(p.data)[0]), ["agent", "tools", "agent"]);
  assert.equal(updates[0].data.agent.messages[0].tool_calls[0].name, "readSkill");
  assert.equal(updates[1].data.tools.messages[0].type, "tool");
  assert.match(updates[1].data.tools.messages[0].content, /Say hello/);
  assert.equal(updates[2].data.agent.messages[0].content, "Found it.");
});

test("stream tasks, checkpoints and debug: one task and one checkpoint per step", async () => {
  const c = client();
  const thread = await c.threads.create();
  const parts = await collect(c.runs.stream(thread.thread_id, "agent", { input: human("Look it up"), streamMode: ["tasks", "checkpoints", "debug"] }));
  const tasks = parts.filter((p) => p.event === "tasks").map((p) => p.data);
  assert.deepEqual(tasks.map((t) => [t.name, "result" in t ? "result" : "input"]), [
    ["agent", "input"], ["agent", "result"], ["tools", "input"], ["tools", "result"], ["agent", "input"], ["agent", "result"],
  ]);
  for (const t of tasks) {
    assert.match(t.id, /^[0-9a-f-]{36}$/);
    assert.deepEqual(t.interrupts, []);
  }
  assert.equal(tasks[0].id, tasks[1].id, "a task's result has its id");
  assert.deepEqual(tasks[0].triggers, ["branch:to:agent"]);
  assert.deepEqual(Object.keys(tasks[3].result), ["messages"], "a task's result is its writes by channel");
  assert.equal(tasks[1].result.messages[0].type, "ai");

  const checkpoints = parts.filter((p) => p.event === "checkpoints").map((p) => p.data);
  assert.deepEqual(checkpoints.map((cp) => cp.next), [["__start__"], ["agent"], ["tools"], ["agent"], []]);
  assert.deepEqual(checkpoints.map((cp) => cp.metadata.step), [-1, 0, 1, 2, 3]);
  assert.deepEqual(checkpoints.map((cp) => cp.metadata.source), ["input", "loop", "loop", "loop", "loop"]);
  assert.deepEqual(checkpoints.map((cp) => cp.values.messages.length), [0, 1, 2, 3, 4]);
  for (const cp of checkpoints) assert.equal(cp.config.configurable.thread_id, thread.thread_id);
  assert.equal(checkpoints[2].tasks[0].name, "tools");

  const debug = parts.filter((p) => p.event === "debug").map((p) => p.data);
  assert.deepEqual(debug.map((d) => d.type), [
    "checkpoint", "checkpoint", "task", "task_result", "checkpoint", "task", "task_result", "checkpoint", "task", "task_result", "checkpoint",
  ]);
  for (const d of debug) {
    assert.equal(typeof d.timestamp, "string");
    assert.equal(typeof d.step, "number");
  }
});

test("stream events: chain, chat model and tool events, LangChain's shapes", async () => {
  const c = client();
  const parts = await collect(c.runs.stream(null, "agent", { input: human("Look it up"), streamMode: "events" }));
  assert.deepEqual(new Set(parts.map((p) => p.event)), new Set(["metadata", "events"]));
  const events = parts.filter((p) => p.event === "events").map((p) => p.data);
  assert.deepEqual(new Set(events.map((e) => e.event)), new Set([
    "on_chain_start", "on_chain_end", "on_chat_model_start", "on_chat_model_stream", "on_chat_model_end", "on_tool_start", "on_tool_end",
  ]));
  assert.equal(events[0].event, "on_chain_start");
  assert.equal(events.at(-1).event, "on_chain_end");
  assert.equal(events[0].run_id, events.at(-1).run_id);
  assert.equal(events.at(-1).data.output.messages.length, 4);
  const tool = events.find((e) => e.event === "on_tool_start");
  assert.equal(tool.name, "readSkill");
  assert.deepEqual(tool.data.input, { name: "greet" });
  for (const e of events) {
    assert.ok(Array.isArray(e.tags) && Array.isArray(e.parent_ids) && typeof e.metadata === "object", JSON.stringify(e));
  }
  const nodes = events.filter((e) => e.event === "on_chain_start" && e.metadata.langgraph_node).map((e) => e.name);
  assert.deepEqual(nodes, ["agent", "tools", "agent"]);
});

test("stream [messages, values]: ends with messages/complete, as LangGraph's does", async () => {
  const c = client();
  const parts = await collect(c.runs.stream(null, "agent", { input: human("Look it up"), streamMode: ["messages", "values"] }));
  assert.equal(parts.at(-1).event, "messages/complete");
  assert.equal(parts.at(-1).data[0].content, "Found it.");
  assert.equal(parts.filter((p) => p.event === "values").at(-1).data.messages.length, 4);
  assert.deepEqual(new Set(parts.map((p) => p.event)), new Set(["metadata", "messages/metadata", "messages/partial", "messages/complete", "values"]));
});

test("interrupt_before tools (after agent): the run parks before its tool calls run; input null goes on", async () => {
  const c = client();
  const thread = await c.threads.create();
  const parked = await c.runs.wait(thread.thread_id, "agent", { input: human("Look it up"), interruptBefore: ["tools"] });
  assert.equal((await c.threads.get(thread.thread_id)).status, "interrupted");
  assert.equal(parked.messages.at(-1).tool_calls[0].name, "readSkill", "the call is held back");
  const state = await c.threads.getState(thread.thread_id);
  assert.deepEqual(state.next, ["tools"]);
  const done = await c.runs.wait(thread.thread_id, "agent", { input: null });
  assert.deepEqual(done.messages.map((m) => m.type), ["human", "ai", "tool", "ai"]);
  assert.equal(lastAI(done.messages).content, "Found it.");
  assert.equal((await c.threads.get(thread.thread_id)).status, "idle");

  const again = await c.threads.create();
  await c.runs.wait(again.thread_id, "agent", { input: human("Look it up"), interruptAfter: ["agent"] });
  assert.equal((await c.threads.get(again.thread_id)).status, "interrupted");
  await assert.rejects(c.runs.wait(again.thread_id, "agent", { input: human("Look it up"), interruptBefore: ["model"] }),
    /HTTP 400.*interrupt_before\[0\] \\"model\\" is not a node of the agent graph/);
});

test("interrupt_after tools: the run parks after its tools step; command.resume goes on", async () => {
  const c = client();
  const thread = await c.threads.create();
  const parts = await collect(c.runs.stream(thread.thread_id, "agent", { input: human("Look it up"), interruptAfter: ["tools"], streamMode: ["values"] }));
  const states = parts.filter((p) => p.event === "values").map((p) => p.data);
  assert.ok(states.at(-1).__interrupt__, "the stream ends with the pause");
  assert.deepEqual(states.at(-2).messages.map((m) => m.type), ["human", "ai", "tool"], "the tools step ran");
  assert.equal((await c.threads.get(thread.thread_id)).status, "interrupted");
  const done = await c.runs.wait(thread.thread_id, "agent", { command: { resume: "go on" } });
  assert.equal(lastAI(done.messages).content, "Found it.");
});

test("Studio: info, ok, graph, schemas and subgraphs answer", async () => {
  const info = await (await fetch(`${apiUrl}/info`)).json();
  assert.equal(info.flags.assistants, true);
  assert.deepEqual(await (await fetch(`${apiUrl}/ok`)).json(), { ok: true });
  const c = client();
  const created = await c.assistants.create({ graphId: "agent" });
  const graph = await c.assistants.getGraph(created.assistant_id, { xray: true });
  assert.deepEqual(graph.nodes.map((n) => n.id), ["__start__", "agent", "tools", "__end__"]);
  const schemas = await c.assistants.getSchemas(created.assistant_id);
  assert.ok(schemas.state_schema.properties.todos);
  assert.deepEqual(await c.assistants.getSubgraphs(created.assistant_id, { recurse: true }), {});
  await c.assistants.delete(created.assistant_id);
});

test("assistants: LANGGRAPH_CONFIG configures a graph's default assistant; graph_id is the graph name", async () => {
  const c = client();
  const [team] = await c.assistants.search({ graphId: "/teams/[team]", metadata: { created_by: "system" } });
  assert.equal(team.graph_id, "teams/[team]");
  assert.deepEqual(team.config, { configurable: { team: "blue" } }, "the test server runs with LANGGRAPH_CONFIG naming teams/[team]");
  const served = await c.runs.wait(null, team.assistant_id, { input: human("Who do you serve") });
  assert.equal(lastAI(served.messages).content, "Team blue.", "the default assistant's run renders the team LANGGRAPH_CONFIG gives it");
  const [agent] = await c.assistants.search({ graphId: "agent", metadata: { created_by: "system" } });
  assert.deepEqual(agent.config, { configurable: {} }, "a graph LANGGRAPH_CONFIG does not name keeps its route's files");
});

test("Studio: the state schema marks messages langgraph_type messages; runs.createBatch starts each run", async () => {
  const c = client();
  const schemas = await c.assistants.getSchemas("agent");
  assert.equal(schemas.graph_id, "agent");
  assert.equal(schemas.state_schema.properties.messages.langgraph_type, "messages");
  assert.equal(schemas.state_schema.properties.todos.langgraph_type, undefined);
  const runs = await c.runs.createBatch([
    { assistantId: "agent", input: human("Which model"), on_completion: "keep" },
    { assistantId: "agent", input: human("Which model"), on_completion: "keep" },
  ]);
  assert.equal(runs.length, 2);
  assert.notEqual(runs[0].thread_id, runs[1].thread_id);
  for (const run of runs) {
    const out = await c.runs.join(run.thread_id, run.run_id);
    assert.equal(lastAI(out.messages).content, "Route model.");
  }
  await assert.rejects(c.runs.createBatch([{ assistantId: "nowhere", input: human("Which model") }]), /HTTP 404.*\[0\]: No assistant found/);
});
