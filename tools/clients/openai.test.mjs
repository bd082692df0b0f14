// Drives a running Dawn for Go server with the official OpenAI SDK (the
// openai npm package): a route is a model. The server is the example app
// (examples/app) with aimock behind it; e2e/openai_client_test.go starts
// both and runs this file with DAWN_URL and DAWN_API_KEY set:
//
//   DAWN_URL=http://127.0.0.1:PORT DAWN_API_KEY=KEY node --test tools/clients/openai.test.mjs
import { test } from "node:test";
import assert from "node:assert/strict";
import OpenAI from "openai";

const base = process.env.DAWN_URL;
if (!base) throw new Error("DAWN_URL is not set: start a server (dawn start --app examples/app) and pass its URL");

// docs:begin
const client = new OpenAI({ baseURL: `${base}/v1`, apiKey: process.env.DAWN_API_KEY });

const completion = await client.chat.completions.create({
  model: "support/acme",
  messages: [{ role: "user", content: "Which plan is ada@acme.com on?" }],
});
console.log(completion.choices[0].message.content);

const stream = await client.chat.completions.create({
  model: "support/acme",
  messages: [{ role: "user", content: "Say hello in three words." }],
  stream: true,
});
let text = "";
for await (const chunk of stream) text += chunk.choices[0]?.delta?.content ?? "";
console.log(text);
// docs:end

test("a completion runs the route, its tool call inside the server", () => {
  assert.equal(completion.object, "chat.completion");
  assert.equal(completion.model, "support/acme");
  assert.equal(completion.choices[0].finish_reason, "stop");
  assert.equal(completion.choices[0].message.role, "assistant");
  assert.equal(completion.choices[0].message.content, "ada@acme.com is on the business plan with 25 seats.");
  assert.equal(completion.choices[0].message.tool_calls, undefined);
});

test("a stream sends the answer as chunks", () => {
  assert.equal(text, "Hello from Dawn.");
});

test("the routes are the models", async () => {
  const ids = [];
  for await (const m of client.models.list()) ids.push(m.id);
  assert.ok(ids.includes("support/[tenant]"), `models: ${ids}`);
  assert.ok(!ids.some((id) => id.includes("/subagents/")), `subagents listed: ${ids}`);
});

test("an unknown model is the SDK's NotFoundError", async () => {
  await assert.rejects(
    client.chat.completions.create({ model: "nope", messages: [{ role: "user", content: "Hi" }] }),
    (err) => err instanceof OpenAI.NotFoundError && err.code === "model_not_found" && err.param === "model",
  );
});

test("a wrong key is the SDK's AuthenticationError", async () => {
  const wrong = new OpenAI({ baseURL: `${base}/v1`, apiKey: "wrong", maxRetries: 0 });
  await assert.rejects(wrong.models.list(), OpenAI.AuthenticationError);
});
