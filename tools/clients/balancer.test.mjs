// AG-UI's HttpAgent through a load balancer: three replicas of one app on
// one Postgres database behind HAProxy (round robin, no stickiness), whose
// slow model takes a few hundred milliseconds a step. The balancer test in
// reliability/ starts them and runs this file with DAWN_BALANCER_URL set;
// HAProxy names the replica that answered each request in a Dawn-Replica
// header.
//
//   DAWN_BALANCER_URL=http://127.0.0.1:PORT node --test tools/clients/balancer.test.mjs
import { test } from "node:test";
import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { HttpAgent } from "@ag-ui/client";

const base = process.env.DAWN_BALANCER_URL;
if (!base) throw new Error("DAWN_BALANCER_URL is not set: go test ./reliability -run TestBehindHAProxyClients starts the balancer");

// answers records every response the agents got: status and replica.
const answers = [];
async function recordingFetch(url, init) {
  const res = await fetch(url, init);
  answers.push({ url, status: res.status, replica: res.headers.get("dawn-replica") });
  return res;
}

function agent(threadId) {
  return new HttpAgent({ url: `${base}/agui/${encodeURIComponent("/work")}`, threadId, fetch: recordingFetch });
}

// turn sends text as the next user message and runs the agent to its end,
// returning the answer and the last plan the agent was shown.
async function turn(a, text) {
  let plan;
  a.addMessage({ id: randomUUID(), role: "user", content: text });
  await a.runAgent({ runId: randomUUID() }, { onStateChanged: ({ state }) => void (plan = state.todos) });
  return { answer: a.messages.at(-1).content, plan };
}

test("HttpAgent.runAgent through the balancer: three threads at once, each continued on the next replica in turn", async () => {
  const agents = [1, 2, 3].map(() => agent(`lb-agui-${randomUUID()}`));
  const firsts = await Promise.all(agents.map((a) => turn(a, "Work")));
  for (const { answer, plan } of firsts) {
    assert.equal(answer, "Slow answer");
    assert.equal(plan?.[0]?.status, "completed", `the plan shown last: ${JSON.stringify(plan)}`);
  }
  // The second turn reads the thread the first one saved, on whichever
  // replica the balancer picks.
  const seconds = await Promise.all(agents.map((a) => turn(a, "Again")));
  for (const [i, { answer }] of seconds.entries()) {
    assert.equal(answer, "Slow answer");
    const users = agents[i].messages.filter((m) => m.role === "user").map((m) => m.content);
    assert.deepEqual(users, ["Work", "Again"]);
  }

  assert.deepEqual(answers.filter((a) => a.status >= 500), [], "no answer through the balancer is a 5xx");
  assert.equal(answers.length, 6);
  const replicas = new Set(answers.map((a) => a.replica));
  assert.equal(replicas.size, 3, `the replicas that answered: ${[...replicas]}`);
});
