// Drives a Dawn for Go server that authenticates users with JWTs (auth.jwt
// in dawn.yaml) with the LangGraph SDK sending a user's bearer token.
// e2e/auth_clients_test.go starts the server and runs this file with
//   DAWN_URL    the server
//   DAWN_TOKEN  a valid JWT for user DAWN_USER
import { test } from "node:test";
import assert from "node:assert/strict";
import { Client } from "@langchain/langgraph-sdk";

const apiUrl = process.env.DAWN_URL;
const token = process.env.DAWN_TOKEN;
const user = process.env.DAWN_USER;
if (!apiUrl || !token || !user) throw new Error("DAWN_URL, DAWN_TOKEN and DAWN_USER must be set: run go test ./e2e -run TestClientsWithBearerJWT");

const as = (bearer) => new Client({ apiUrl, defaultHeaders: { Authorization: `Bearer ${bearer}` }, callerOptions: { maxRetries: 0 } });

test("a user's JWT: runs go, and the run config names the user as LangGraph's server does", async () => {
  const c = as(token);
  const thread = await c.threads.create();
  const run = await c.runs.create(thread.thread_id, "/blog", { input: { messages: [{ type: "human", content: "Write about tea" }] } });
  await c.runs.join(thread.thread_id, run.run_id);
  const got = await c.runs.get(thread.thread_id, run.run_id);
  const conf = got.kwargs.config.configurable;
  assert.equal(conf.langgraph_auth_user_id, user);
  assert.equal(conf.langgraph_auth_user.identity, user);
  assert.equal(conf.langgraph_auth_user.is_authenticated, true);
  const state = await c.threads.getState(thread.thread_id);
  assert.ok(state.values.messages.length >= 2, "the run answered");
});

test("a wrong token: 401 with the reason", async () => {
  await assert.rejects(as("not-a-jwt").threads.create(), (err) => {
    assert.equal(err.status, 401);
    assert.match(String(err.message), /malformed/);
    return true;
  });
});
