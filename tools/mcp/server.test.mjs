// The official MCP TypeScript client against Dawn's /mcp endpoint: the
// stock dawn binary serves DAWN_URL behind the API key DAWN_KEY, on a model
// that aimock answers (see e2e/mcp_server_test.go).
import { test } from "node:test";
import assert from "node:assert/strict";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

const url = new URL("/mcp", process.env.DAWN_URL);
const key = process.env.DAWN_KEY;

async function connect(headers = { Authorization: `Bearer ${key}` }) {
  const client = new Client({ name: "dawn-e2e", version: "1.0.0" });
  await client.connect(new StreamableHTTPClientTransport(url, { requestInit: { headers } }));
  return client;
}

const text = (result) => result.content.filter((c) => c.type === "text").map((c) => c.text).join("");

test("listTools shows every route but subagents", async () => {
  const client = await connect();
  try {
    const { tools } = await client.listTools();
    const names = tools.map((t) => t.name).sort();
    assert.deepEqual(names, ["lead", "ops", "support_tenant"]);
    const support = tools.find((t) => t.name === "support_tenant");
    assert.deepEqual([...support.inputSchema.required].sort(), ["message", "tenant"]);
  } finally {
    await client.close();
  }
});

test("callTool answers, with plan updates as progress", async () => {
  const client = await connect();
  try {
    const progress = [];
    const result = await client.callTool(
      { name: "support_tenant", arguments: { tenant: "acme", message: "Help me with my account" } },
      undefined,
      { onprogress: (p) => progress.push(p) },
    );
    assert.equal(result.isError ?? false, false, text(result));
    assert.equal(text(result), "Your account is in good standing.");
    assert.match(result.structuredContent.thread_id, /.+/);
    const plans = progress.filter((p) => p.message?.startsWith("plan_update "));
    assert.ok(plans.length > 0, `no plan_update among ${JSON.stringify(progress)}`);
    assert.match(plans.at(-1).message, /"Write the final response","status":"in_progress"/);
  } finally {
    await client.close();
  }
});

test("a run parked for approval is reported with its interrupt", async () => {
  const client = await connect();
  try {
    const result = await client.callTool({ name: "ops", arguments: { message: "Ship 1.4.2 to prod" } });
    assert.equal(result.isError ?? false, false, text(result));
    const [interrupt] = result.structuredContent.interrupts;
    assert.ok(interrupt?.interruptId, JSON.stringify(result.structuredContent));
    assert.ok(text(result).includes(interrupt.interruptId));
    assert.ok(text(result).includes(`POST /threads/${result.structuredContent.thread_id}/resume`));
  } finally {
    await client.close();
  }
});

test("the API key is required", async () => {
  await assert.rejects(connect({}));
});
