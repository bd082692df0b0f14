// Interrupts through the LangGraph dialect: the SDK's Client and React
// useStream against the stock dawn binary on aimock, serving /ops, whose
// writeTodos calls wait for a person (approve: [writeTodos]). Run by
// e2e/langgraph_interrupt_test.go, which passes the server in
// DAWN_APPROVAL_URL. (Not named *.test.mjs: TestLangGraphClients runs
// those against other servers.)
import { test, after } from "node:test";
import assert from "node:assert/strict";
import { JSDOM } from "jsdom";
import { Client } from "@langchain/langgraph-sdk";

const apiUrl = process.env.DAWN_APPROVAL_URL;
if (!apiUrl) {
  throw new Error("DAWN_APPROVAL_URL is not set: run these tests with `go test ./e2e -run TestLangGraphInterrupts`, which starts the server");
}

const dom = new JSDOM("<!doctype html><html><body></body></html>", { url: "http://localhost/" });
globalThis.window = dom.window;
globalThis.document = dom.window.document;
if (!globalThis.navigator) globalThis.navigator = dom.window.navigator; // Node 20 has none
globalThis.IS_REACT_ACT_ENVIRONMENT = false;
const React = await import("react");
const { createRoot } = await import("react-dom/client");
const { useStream } = await import("@langchain/langgraph-sdk/react");

const mounted = new Set();
after(() => {
  for (const root of mounted) root.unmount();
  dom.window.close();
});

function client() {
  return new Client({ apiUrl, callerOptions: { maxRetries: 0 } });
}

async function collect(stream) {
  const parts = [];
  for await (const part of stream) parts.push(part);
  return parts;
}

// eventually polls check until it returns a truthy value, failing after
// about limitMs; it bounds how long a test waits, it measures nothing.
async function eventually(what, check, limitMs = 20000, describe = () => "") {
  const deadline = Date.now() + limitMs;
  for (;;) {
    const value = await check();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`gave up waiting for ${what}${describe()}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

const human = (content) => ({ messages: [{ type: "human", content }] });
const lastAI = (messages) => [...messages].reverse().find((m) => m.type === "ai");

test("runs.stream: a parked run ends with __interrupt__ in values and updates; command.resume answers it", async () => {
  const c = client();
  const thread = await c.threads.create();
  // readme:langgraph-interrupt begin
  let interrupt;
  for await (const { event, data } of c.runs.stream(thread.thread_id, "/ops", {
    input: { messages: [{ type: "human", content: "Plan one release" }] },
    streamMode: ["values", "updates"],
  })) {
    if (event === "values" && data.__interrupt__) interrupt = data.__interrupt__[0];
  }
  // interrupt.value is Dawn's interrupt: {interruptId, type, kind, detail}
  const resumed = await c.runs.wait(thread.thread_id, "/ops", {
    command: { resume: "once" }, // or "deny", or {"status": "cancelled"}
  });
  // readme:langgraph-interrupt end
  assert.equal(interrupt.id, interrupt.value.interruptId);
  assert.equal(interrupt.value.type, "permission-request");
  assert.equal(interrupt.value.kind, "tool");
  assert.equal(interrupt.value.detail.toolName, "writeTodos");
  assert.match(interrupt.value.detail.argsPreview, /Tag 1\.4\.2/);
  assert.equal(resumed.__interrupt__, undefined);
  assert.equal(lastAI(resumed.messages).content, "The release is planned.");
  assert.deepEqual(resumed.todos.map((t) => t.content), ["Tag 1.4.2", "Publish 1.4.2"]);
  assert.equal((await c.threads.get(thread.thread_id)).status, "idle");
});

test("a parked thread: values, updates, getState tasks, threads.get/search interrupts, run status, 409 on input", async () => {
  const c = client();
  const thread = await c.threads.create();
  const parts = await collect(
    c.runs.stream(thread.thread_id, "/ops", { input: human("Plan one release"), streamMode: ["values", "updates"] }),
  );
  const runId = parts[0].data.run_id;
  const values = parts.filter((p) => p.event === "values").map((p) => p.data);
  const updates = parts.filter((p) => p.event === "updates").map((p) => p.data);
  const last = values.at(-1);
  assert.deepEqual(Object.keys(last), ["__interrupt__"], "the last values part is the interrupt, after the state");
  const [interrupt] = last.__interrupt__;
  assert.equal(values.at(-2).messages.at(-1).tool_calls[0].name, "writeTodos", "the state before it holds the held-back call");
  assert.deepEqual(updates.at(-1), { __interrupt__: [interrupt] });

  const state = await c.threads.getState(thread.thread_id);
  assert.deepEqual(state.next, ["tools"]);
  assert.equal(state.tasks.length, 1);
  assert.equal(state.tasks[0].name, "tools");
  assert.deepEqual(state.tasks[0].interrupts, [interrupt]);
  const got = await c.threads.get(thread.thread_id);
  assert.equal(got.status, "interrupted");
  assert.deepEqual(got.interrupts, { [state.tasks[0].id]: [interrupt] });
  const found = await c.threads.search({ status: "interrupted", limit: 100 });
  assert.ok(found.some((t) => t.thread_id === thread.thread_id && t.interrupts[state.tasks[0].id]?.[0].id === interrupt.id));
  assert.equal((await c.runs.get(thread.thread_id, runId)).status, "success", "as a LangGraph run that reached an interrupt");
  const joined = await c.runs.join(thread.thread_id, runId);
  assert.deepEqual(joined.__interrupt__, [interrupt]);

  await assert.rejects(c.runs.wait(thread.thread_id, "/ops", { input: human("Plan one release") }), /HTTP 409.*interrupt_pending/);
  await assert.rejects(c.runs.wait(thread.thread_id, "/ops", { command: { resume: "sometimes" } }), /HTTP 400.*invalid_resume/);
  await assert.rejects(c.runs.wait(thread.thread_id, "/ops", { command: { resume: { "perm-nope": "once", other: 1 } } }), /HTTP 400.*invalid_resume/);
  assert.deepEqual((await c.threads.getState(thread.thread_id)).tasks[0].interrupts, [interrupt], "refused answers changed nothing");

  const resumed = await collect(
    c.runs.stream(thread.thread_id, "/ops", { command: { resume: { status: "cancelled" } }, streamMode: ["values"] }),
  );
  const end = resumed.filter((p) => p.event === "values").at(-1).data;
  assert.equal(end.__interrupt__, undefined);
  const tool = end.messages.find((m) => m.type === "tool");
  assert.match(tool.content, /denied/, "a cancel is a denial the model reads");
  assert.equal(lastAI(end.messages).content, "The release is planned.");
  await assert.rejects(c.runs.wait(thread.thread_id, "/ops", { command: { resume: "once" } }), /HTTP 409.*no_interrupt_pending/);
});

test("two interrupts: command.resume is a map by interrupt id", async () => {
  const c = client();
  const thread = await c.threads.create();
  const parked = await c.runs.wait(thread.thread_id, "/ops", { input: human("Plan two releases") });
  assert.equal(parked.__interrupt__.length, 2);
  const [first, second] = parked.__interrupt__.map((i) => i.id);
  await assert.rejects(c.runs.wait(thread.thread_id, "/ops", { command: { resume: "once" } }), /HTTP 400.*2 pending interrupts/);
  const done = await c.runs.wait(thread.thread_id, "/ops", { command: { resume: { [first]: "once", [second]: "deny" } } });
  assert.equal(done.__interrupt__, undefined);
  assert.deepEqual(done.todos.map((t) => t.content), ["Tag 1.4.2"], "only the approved plan ran");
  assert.equal(lastAI(done.messages).content, "One release is planned.");
});

test("useStream: stream.interrupt is set when the run parks; submit with command.resume finishes it", async () => {
  const renders = [];
  const hook = { current: null };
  let threadId = null;
  function Approval() {
    const stream = useStream({ apiUrl, assistantId: "/ops", onThreadId: (id) => (threadId = id) });
    hook.current = stream;
    renders.push({ isLoading: stream.isLoading, interrupt: stream.interrupt, messages: stream.messages, error: stream.error });
    return React.createElement("pre", null, stream.interrupt ? `approve ${stream.interrupt.value.detail.toolName}?` : "");
  }
  const container = document.createElement("div");
  document.body.append(container);
  const root = createRoot(container);
  root.render(React.createElement(Approval));
  mounted.add(root);
  const seen = () => {
    const r = renders.at(-1);
    return r ? `; last render: isLoading=${r.isLoading} interrupt=${JSON.stringify(r.interrupt)} messages=[${r.messages.map((m) => m.type)}] error=${r.error}` : "; nothing rendered";
  };
  await eventually("the first render", () => hook.current, 20000, seen);

  hook.current.submit({ messages: [{ type: "human", content: "Plan it in the browser" }] });
  // ...once the run parks, stream.interrupt is {id, value: {interruptId, kind, detail}}
  const parked = await eventually("the interrupt", () => {
    const r = renders.at(-1);
    return !r.isLoading && r.interrupt && r;
  }, 20000, seen);
  assert.equal(parked.interrupt.value.kind, "tool");
  assert.equal(parked.interrupt.id, parked.interrupt.value.interruptId);
  assert.equal(container.textContent, "approve writeTodos?");

  // A page loaded on the parked thread finds the interrupt in the
  // thread's state (its pending task), with no stream.
  const reloaded = [];
  function Reloaded() {
    const stream = useStream({ apiUrl, assistantId: "/ops", threadId });
    reloaded.push({ isThreadLoading: stream.isThreadLoading, interrupt: stream.interrupt });
    return null;
  }
  const other = createRoot(document.createElement("div"));
  other.render(React.createElement(Reloaded));
  mounted.add(other);
  const found = await eventually("the interrupt after a reload", () => reloaded.find((r) => !r.isThreadLoading && r.interrupt));
  assert.deepEqual(found.interrupt, parked.interrupt);
  other.unmount();
  mounted.delete(other);

  hook.current.submit(undefined, { command: { resume: "once" } });

  const done = await eventually("the end of the resumed run", () => {
    const r = renders.at(-1);
    return !r.isLoading && lastAI(r.messages)?.content === "Planned from the browser." && r;
  }, 20000, seen);
  assert.equal(done.interrupt, undefined);
  assert.equal(done.error, undefined);
  assert.deepEqual(done.messages.map((m) => m.type), ["human", "ai", "tool", "ai"]);
  assert.equal(container.textContent, "");
  root.unmount();
  mounted.delete(root);
});
