// Drives a Dawn for Go server that authenticates users with JWTs (auth.jwt
// in dawn.yaml) with AG-UI's HttpAgent sending a user's bearer token, as a
// signed-in front end does. e2e/auth_clients_test.go starts the server and
// runs this file with DAWN_URL and DAWN_TOKEN set.
import { test } from "node:test";
import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { HttpAgent } from "@ag-ui/client";

const base = process.env.DAWN_URL;
const token = process.env.DAWN_TOKEN;
if (!base || !token) throw new Error("DAWN_URL and DAWN_TOKEN must be set: run go test ./e2e -run TestClientsWithBearerJWT");
const url = `${base}/agui/${encodeURIComponent("/blog")}`;

function agent(bearer) {
  return new HttpAgent({ url, headers: { Authorization: `Bearer ${bearer}` }, threadId: randomUUID() });
}

test("HttpAgent with a user's JWT runs the route", async () => {
  const a = agent(token);
  a.messages = [{ id: randomUUID(), role: "user", content: "Write about tea" }];
  const result = await a.runAgent({ runId: randomUUID() });
  const text = result.newMessages.filter((m) => m.role === "assistant").map((m) => m.content ?? "").join("");
  assert.ok(text.length > 0, "the assistant answered");
});

test("HttpAgent with a bad token is refused with 401", async () => {
  const a = agent("not-a-jwt");
  a.messages = [{ id: randomUUID(), role: "user", content: "hi" }];
  await assert.rejects(a.runAgent({ runId: randomUUID() }), (err) => {
    assert.match(String(err.message ?? err), /401/);
    return true;
  });
});
