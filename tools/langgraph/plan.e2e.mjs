// A harness-owned plan's revisions through the LangGraph dialect: the
// SDK's Client against the stock dawn binary on aimock, serving /feature,
// whose plan has two items; the model drops the hard one ("Write the
// tests") while it completes the other. The SDK reads the revisions and
// the dropped item from the thread's values (the dialect's view of the
// plan), the same as Dawn's GET /threads/:id/plan/revisions; and the
// same of a plain plan.md plan on /chores, whose revisions are the
// thread's plan_revisions value. Run by
// e2e/langgraph_plan_test.go, which passes the server in DAWN_PLAN_URL.
// (Not named *.test.mjs: TestLangGraphClients runs those against other
// servers.)
import { test } from "node:test";
import assert from "node:assert/strict";
import { Client } from "@langchain/langgraph-sdk";

const apiUrl = process.env.DAWN_PLAN_URL;
if (!apiUrl) {
  throw new Error("DAWN_PLAN_URL is not set: run these tests with `go test ./e2e -run TestLangGraphPlanRevisions`, which starts the server");
}

const human = (content) => ({ messages: [{ type: "human", content }] });

test("a revision that drops an unfinished item is read from the thread's values, with its diff", async () => {
  const c = new Client({ apiUrl, callerOptions: { maxRetries: 0 } });
  const thread = await c.threads.create();
  let streamed;
  for await (const { event, data } of c.runs.stream(thread.thread_id, "/feature", { input: human("Ship the feature"), streamMode: ["values"] })) {
    if (event === "values" && data.plan) streamed = data.plan;
  }
  const state = await c.threads.getState(thread.thread_id);
  const plan = state.values.plan;
  assert.deepEqual(streamed.revisions, plan.revisions, "the last values event and the state disagree");

  const drift = plan.revisions.find((r) => r.source === "model" && r.diff?.removed);
  assert.ok(drift, `no model revision removed an item: ${JSON.stringify(plan.revisions)}`);
  assert.equal(drift.reason, "the tests are not needed");
  assert.deepEqual(drift.diff.removed.map((r) => [r.content, r.status, r.dropped]), [["Write the tests", "pending", true]]);
  assert.deepEqual(plan.dropped.map((d) => [d.content, d.revision]), [["Write the tests", drift.n]]);
  assert.deepEqual(plan.items.map((i) => [i.content, i.status]), [["Write the code", "completed"]]);

  // Dawn's own endpoint pages the same revisions.
  const res = await fetch(`${apiUrl}/threads/${thread.thread_id}/plan/revisions`);
  assert.equal(res.status, 200);
  const page = await res.json();
  assert.deepEqual(page.revisions, plan.revisions);
});

test("a plain plan's revision that drops an unfinished item is read from the thread's values, with its diff", async () => {
  const c = new Client({ apiUrl, callerOptions: { maxRetries: 0 } });
  const thread = await c.threads.create();
  let streamed;
  for await (const { event, data } of c.runs.stream(thread.thread_id, "/chores", { input: human("Do the chores"), streamMode: ["values"] })) {
    if (event === "values" && data.plan_revisions) streamed = data.plan_revisions;
  }
  const state = await c.threads.getState(thread.thread_id);
  const log = state.values.plan_revisions;
  assert.ok(log, `the thread's values have no plan_revisions: ${JSON.stringify(Object.keys(state.values))}`);
  assert.deepEqual(streamed.revisions, log.revisions, "the last values event and the state disagree");

  assert.equal(log.revisions.length, 1);
  const drift = log.revisions[0];
  assert.equal(drift.source, "model");
  assert.deepEqual(drift.diff.removed.map((r) => [r.content, r.status, r.dropped]), [["Clean the windows", "pending", true]]);
  assert.deepEqual(log.dropped.map((d) => [d.content, d.revision]), [["Clean the windows", drift.n]]);
  assert.deepEqual(state.values.todos, [{ content: "Sweep the floor", status: "completed" }]);

  const res = await fetch(`${apiUrl}/threads/${thread.thread_id}/plan/revisions`);
  assert.equal(res.status, 200);
  const page = await res.json();
  assert.deepEqual(page.revisions, log.revisions);
});
