// runBash's permissions through the LangGraph dialect: the SDK's Client
// against the stock dawn binary on aimock, serving /coder with a local
// (bubblewrap) sandbox in interactive mode where only echo is allowed. A
// command no rule covers parks the run on an interrupt of kind "command";
// command.resume approves it once, denies it or edits it. Run by
// e2e/langgraph_sandbox_test.go, which passes the server in
// DAWN_SANDBOX_URL. (Not named *.test.mjs: TestLangGraphClients runs
// those against other servers.)
import { test } from "node:test";
import assert from "node:assert/strict";
import { Client } from "@langchain/langgraph-sdk";

const apiUrl = process.env.DAWN_SANDBOX_URL;
if (!apiUrl) {
  throw new Error("DAWN_SANDBOX_URL is not set: run these tests with `go test ./e2e -run TestLangGraphSandboxPermissions`, which starts the server");
}

function client() {
  return new Client({ apiUrl, callerOptions: { maxRetries: 0 } });
}

const human = (content) => ({ messages: [{ type: "human", content }] });

// parked starts a run on a new thread and returns the thread and the one
// interrupt its values end with.
async function parked(c, message) {
  const thread = await c.threads.create();
  let interrupts;
  for await (const { event, data } of c.runs.stream(thread.thread_id, "/coder", { input: human(message), streamMode: ["values"] })) {
    if (event === "values" && data.__interrupt__) interrupts = data.__interrupt__;
  }
  assert.ok(interrupts, "the run did not park");
  assert.equal(interrupts.length, 1);
  return { thread, interrupt: interrupts[0] };
}

// file reads a file of the thread's workspace: its text, or null when
// there is none.
async function file(threadId, path) {
  const res = await fetch(`${apiUrl}/threads/${threadId}/files/${path}`);
  if (res.status === 404) return null;
  assert.equal(res.status, 200);
  return res.text();
}

// bashResult is the runBash result the model was sent, from the thread's
// messages.
function bashResult(messages) {
  const tool = messages.find((m) => m.type === "tool" && m.name === "runBash");
  assert.ok(tool, "no runBash tool message");
  return tool.content;
}

test("a command no rule covers parks on kind command; resume once runs it in the box", async () => {
  const c = client();
  const { thread, interrupt } = await parked(c, "Make the marker");
  assert.equal(interrupt.value.type, "permission-request");
  assert.equal(interrupt.value.kind, "command");
  assert.equal(interrupt.value.detail.toolName, "runBash");
  assert.equal(interrupt.value.detail.command, "touch marker.txt && echo made");
  assert.deepEqual(interrupt.value.detail.suggestedPatterns, ["touch marker.txt"]);
  assert.equal(await file(thread.thread_id, "marker.txt"), null, "the command ran before it was approved");
  const done = await c.runs.wait(thread.thread_id, "/coder", { command: { resume: "once" } });
  assert.equal(done.__interrupt__, undefined);
  assert.match(bashResult(done.messages), /"exit_code":0/);
  assert.match(bashResult(done.messages), /made/);
  assert.equal(await file(thread.thread_id, "marker.txt"), "");
});

test("resume deny: the command never runs and the model is told", async () => {
  const c = client();
  const { thread } = await parked(c, "Make the marker");
  const done = await c.runs.wait(thread.thread_id, "/coder", { command: { resume: "deny" } });
  assert.equal(done.__interrupt__, undefined);
  assert.doesNotMatch(bashResult(done.messages), /"exit_code"/);
  assert.match(bashResult(done.messages), /denied|refused/i);
  assert.equal(await file(thread.thread_id, "marker.txt"), null);
});

test("resume edit: the edited command runs in place of the model's", async () => {
  const c = client();
  const { thread, interrupt } = await parked(c, "Make the marker");
  const done = await c.runs.wait(thread.thread_id, "/coder", {
    command: { resume: { [interrupt.id]: { decision: "edit", command: "echo edited > edited.txt" } } },
  });
  assert.equal(done.__interrupt__, undefined);
  assert.match(bashResult(done.messages), /"exit_code":0/);
  assert.equal(await file(thread.thread_id, "edited.txt"), "edited\n");
  assert.equal(await file(thread.thread_id, "marker.txt"), null);
});

test("an allowed command runs without asking", async () => {
  const c = client();
  const thread = await c.threads.create();
  const done = await c.runs.wait(thread.thread_id, "/coder", { input: human("Say hello") });
  assert.equal(done.__interrupt__, undefined);
  assert.match(bashResult(done.messages), /"stdout":"hello\\n"/);
});
