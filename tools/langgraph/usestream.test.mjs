// React's useStream from @langchain/langgraph-sdk/react, rendered with
// react-dom in jsdom (a browser's window and sessionStorage), through
// whole runs on the gated server.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { JSDOM } from "jsdom";
import { client, eventually, gatedUrl, held, lastAI, openGate } from "./helpers.mjs";

const dom = new JSDOM("<!doctype html><html><body></body></html>", { url: "http://localhost/" });
globalThis.window = dom.window;
globalThis.document = dom.window.document;
if (!globalThis.navigator) globalThis.navigator = dom.window.navigator; // Node 20 has none
globalThis.IS_REACT_ACT_ENVIRONMENT = false;

const React = await import("react");
const { createRoot } = await import("react-dom/client");
const { useStream } = await import("@langchain/langgraph-sdk/react");

// mount renders a component that calls useStream with options and records
// what each render saw. It returns the recordings and the hook's latest
// result, for submit.
function mount(options) {
  const renders = [];
  const hook = { current: null };
  function Chat() {
    const stream = useStream({ apiUrl: gatedUrl, assistantId: "/support/acme", ...options });
    hook.current = stream;
    // Reading values and messages here is what asks for the values and
    // messages-tuple stream modes, as in an app.
    renders.push({ isLoading: stream.isLoading, values: stream.values, messages: stream.messages, error: stream.error });
    return React.createElement("pre", null, stream.messages.map((m) => `${m.type}: ${m.content}`).join("\n"));
  }
  const container = document.createElement("div");
  document.body.append(container);
  const root = createRoot(container);
  root.render(React.createElement(Chat));
  mounted.add(root);
  return { renders, hook, root, container, latest: () => renders.at(-1) };
}

// mounted roots are unmounted when the tests end, so no stream is left open.
const mounted = new Set();

// seen describes what a view last rendered, for a failure message.
const seen = (view) => () => {
  const r = view.renders.at(-1);
  if (!r) return "; nothing rendered";
  const todos = (r.values?.todos ?? []).map((t) => t.status).join(",");
  return `; last render: isLoading=${r.isLoading} todos=[${todos}] messages=[${r.messages.map((m) => m.type).join(",")}] error=${r.error}`;
};

const started = (r) => r.isLoading && r.values?.todos?.[0]?.status === "in_progress";

let errors;
before(() => {
  errors = [];
  const original = console.error;
  console.error = (...args) => {
    errors.push(args.map(String).join(" "));
    original(...args);
  };
});
after(() => {
  for (const root of mounted) root.unmount();
  dom.window.close();
});

test("useStream: messages appear during the run, the plan is in values, the answer ends it", async (t) => {
  t.after(() => openGate("ui"));
  let threadId = null;
  const view = mount({ onThreadId: (id) => (threadId = id) });
  await eventually("the first render", () => view.hook.current, 20000, seen(view));
  view.hook.current.submit(held("ui"));

  // The run holds after its first step: what the UI shows now, it showed
  // during the run.
  const during = await eventually("messages during the run", () => view.renders.find((r) => started(r) && r.messages.length >= 3), 20000, seen(view));
  assert.deepEqual(during.messages.slice(0, 3).map((m) => m.type), ["human", "ai", "tool"]);
  assert.equal(during.messages[1].tool_calls[0].name, "writeTodos");
  assert.ok(threadId, "useStream created the thread");
  assert.equal(view.container.textContent.split("\n")[0], "human: [hold:ui] Help me with my account");

  await openGate("ui");
  const done = await eventually("the end of the run", () => {
    const r = view.latest();
    return !r.isLoading && lastAI(r.messages)?.content.startsWith("Offline model") && r;
  }, 20000, seen(view));
  assert.ok(done.values.todos.every((t) => t.status === "completed"));
  const ids = done.messages.map((m) => m.id);
  assert.equal(new Set(ids).size, ids.length, "no message is shown twice");
  assert.equal(done.error, undefined);
  // What the UI ended with is the thread's state.
  const state = await client(gatedUrl).threads.getState(threadId);
  assert.deepEqual(done.values, state.values);
  view.root.unmount();
});

test("useStream: a remount rejoins the run in flight (reconnectOnMount)", async (t) => {
  t.after(() => openGate("remount"));
  const thread = await client(gatedUrl).threads.create();
  const threadId = thread.thread_id;
  const first = mount({ threadId, reconnectOnMount: true });
  await eventually("the first render", () => first.hook.current, 20000, seen(first));
  first.hook.current.submit(held("remount"));
  await eventually("the run's first step", () => first.renders.find(started), 20000, seen(first));
  const runId = window.sessionStorage.getItem(`lg:stream:${threadId}`);
  assert.ok(runId, "useStream kept the run id from Content-Location to rejoin it");
  first.root.unmount();

  // A new mount, as after a page reload: it finds the run id and joins the
  // run, which is still in flight.
  const second = mount({ threadId, reconnectOnMount: true });
  const rejoined = await eventually("the rejoined run's state", () => second.renders.find((r) => started(r) && r.messages.some((m) => m.type === "tool")), 20000, seen(second));
  assert.deepEqual(rejoined.messages.slice(0, 3).map((m) => m.type), ["human", "ai", "tool"], "it shows what the run did before the remount");
  assert.equal((await client(gatedUrl).runs.get(threadId, runId)).status, "running");

  await openGate("remount");
  const done = await eventually("the end of the rejoined run", () => {
    const r = second.latest();
    return !r.isLoading && lastAI(r.messages)?.content.startsWith("Offline model") && r;
  }, 20000, seen(second));
  assert.ok(done.values.todos.every((t) => t.status === "completed"));
  const ids = done.messages.map((m) => m.id);
  assert.equal(new Set(ids).size, ids.length, "no message is shown twice");
  assert.equal(window.sessionStorage.getItem(`lg:stream:${threadId}`), null, "the finished run is forgotten");
  assert.equal((await client(gatedUrl).runs.get(threadId, runId)).status, "success");
  second.root.unmount();
});

test("useStream: stop() cancels the run in flight", async (t) => {
  t.after(() => openGate("stop"));
  const thread = await client(gatedUrl).threads.create();
  const view = mount({ threadId: thread.thread_id, reconnectOnMount: true });
  await eventually("the first render", () => view.hook.current, 20000, seen(view));
  view.hook.current.submit(held("stop"));
  await eventually("the run's first step", () => view.renders.find(started), 20000, seen(view));
  const runId = window.sessionStorage.getItem(`lg:stream:${thread.thread_id}`);
  view.hook.current.stop();
  await eventually("the run to be cancelled", async () => (await client(gatedUrl).runs.get(thread.thread_id, runId)).status === "interrupted");
  await eventually("the UI to stop loading", () => !view.latest().isLoading, 20000, seen(view));
  view.root.unmount();
});

test("useStream with fetchStateHistory: a second message continues from the latest checkpoint", async () => {
  const thread = await client(gatedUrl).threads.create();
  const view = mount({ threadId: thread.thread_id, assistantId: "/blog", fetchStateHistory: true });
  await eventually("the first render", () => view.hook.current && !view.latest().isLoading, 20000, seen(view));
  const answered = (n) => () => {
    const r = view.latest();
    return !r.isLoading && r.messages.filter((m) => m.type === "ai").length === n && r;
  };
  view.hook.current.submit({ messages: [{ type: "human", content: "First question" }] });
  await eventually("the first answer", answered(1), 20000, seen(view));
  view.hook.current.submit({ messages: [{ type: "human", content: "Second question" }] });
  const done = await eventually("the second answer", answered(2), 20000, seen(view));
  assert.deepEqual(done.messages.map((m) => m.type), ["human", "ai", "human", "ai"]);
  assert.equal(done.messages[2].content, "Second question");
  assert.equal(view.hook.current.history.length, 6, "six checkpoints: each run's input, the input applied, then its answer");
  view.root.unmount();
});

test("useStream branching: regenerating an answer starts a branch, setBranch shows the old one", async () => {
  const thread = await client(gatedUrl).threads.create();
  const view = mount({ threadId: thread.thread_id, assistantId: "/blog", fetchStateHistory: { limit: 100 } });
  await eventually("the first render", () => view.hook.current && !view.latest().isLoading, 20000, seen(view));
  const idle = (check) => () => {
    const r = view.latest();
    return !r.isLoading && check(r) && r;
  };
  view.hook.current.submit({ messages: [{ type: "human", content: "First question" }] });
  await eventually("the first answer", idle((r) => r.messages.length === 2), 20000, seen(view));
  view.hook.current.submit({ messages: [{ type: "human", content: "Second question" }] });
  const before = await eventually("the second answer", idle((r) => r.messages.length === 4), 20000, seen(view));

  // Regenerate the first answer as a chat UI does: a run without input
  // from the parent of the first checkpoint that holds the answer.
  const answer = before.messages[1];
  const meta = view.hook.current.getMessagesMetadata(answer, 1);
  const parent = meta?.firstSeenState?.parent_checkpoint;
  assert.ok(parent?.checkpoint_id, "the answer's first checkpoint has a parent");
  view.hook.current.submit(undefined, { checkpoint: parent });
  const regenerated = await eventually("the regenerated branch", idle((r) => r.messages.length === 2 && r.messages[1].id !== answer.id), 20000, seen(view));
  assert.deepEqual(regenerated.messages.map((m) => m.type), ["human", "ai"]);
  assert.equal(regenerated.messages[0].id, before.messages[0].id, "the question keeps its id on the new branch");

  const branched = view.hook.current.getMessagesMetadata(regenerated.messages[1], 1);
  assert.equal(branched.branchOptions?.length, 2, "the answer has two versions");
  const old = branched.branchOptions.find((b) => b !== branched.branch);
  view.hook.current.setBranch(old);
  const back = await eventually("the old branch", () => view.latest().messages.length === 4 && view.latest(), 20000, seen(view));
  assert.deepEqual(back.messages.map((m) => m.id), before.messages.map((m) => m.id), "the old branch is as it was");
  assert.equal(back.messages[2].content, "Second question");
  const history = await client(gatedUrl).threads.getHistory(thread.thread_id, { limit: 100 });
  assert.equal(history.length, 7, "both branches stay in the history: each run's input, the input applied and answer, and the regenerated answer");
  view.root.unmount();
});

test("useStream: no React errors were logged", () => {
  assert.deepEqual(errors, []);
});
